"""Checks both sides of issue 30's rule for model files: in the bundled data folder every model
says what it is ("description") and cites every figure ("sources", "source"), or topsim stops
(exit 2); the same file in a user's --models DIR, or a transformer file given by path, loads
with a note on stderr for what it leaves uncited.

It copies models/ to a temporary data folder, strips one GPU's and one transformer's
description and sources, and runs topsim on it both ways.

    python3 tools/check_user_models.py TOPSIM     (what ctest runs, from the repository root)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

GPU = "a100"
TRANSFORMER = "bert-base"


def run(topsim, args, data_dir):
    env = dict(os.environ, TOPSIM_DATA_DIR=data_dir)
    done = subprocess.run([topsim] + args, capture_output=True, text=True, env=env, timeout=120)
    return done.returncode, done.stdout, done.stderr


def expect(what, condition, detail):
    if not condition:
        sys.exit(f"check_user_models: {what}\n{detail}")
    print(f"ok: {what}")


def main():
    topsim = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "data")
        shutil.copytree("models", os.path.join(data, "models"))
        shutil.copytree("topologies", os.path.join(data, "topologies"))
        gpus_path = os.path.join(data, "models", "gpus.json")
        gpus = json.load(open(gpus_path))
        del gpus["gpu_models"][GPU]["sources"]
        del gpus["gpu_models"][GPU]["description"]
        json.dump(gpus, open(gpus_path, "w"), indent=2)
        transformers_path = os.path.join(data, "models", "transformers.json")
        transformers = json.load(open(transformers_path))
        model = transformers["transformers"][TRANSFORMER]
        del model["source"]
        del model["description"]
        json.dump(transformers, open(transformers_path, "w"), indent=2)
        user_model = dict(model, name="my-" + TRANSFORMER)
        user_model_path = os.path.join(tmp, "my-model.json")
        json.dump(user_model, open(user_model_path, "w"), indent=2)
        # The first uncited model stops the bundled load: gpus.json is read before transformers.json.
        code, out, err = run(topsim, ["models", "list", "gpus"], data)
        expect("a bundled GPU without sources stops topsim (exit 2, nothing on stdout)",
               code == 2 and out == "" and f"/gpu_models/{GPU}: missing required key 'description'" in err, err)
        shutil.copy(os.path.join("models", "gpus.json"), gpus_path)  # the GPU cited again: now the transformer
        code, out, err = run(topsim, ["models", "list", "cpus"], data)
        expect("a bundled transformer without a source stops topsim (exit 2)",
               code == 2 and out == "" and f"/transformers/{TRANSFORMER}: missing required key 'description'" in err, err)
        # The same folder as the user's own: notes, and the figures as given.
        gpus = json.load(open(os.path.join("models", "gpus.json")))
        del gpus["gpu_models"][GPU]["sources"]
        del gpus["gpu_models"][GPU]["description"]
        json.dump(gpus, open(gpus_path, "w"), indent=2)
        user_dir = os.path.join(data, "models")
        code, out, err = run(topsim, ["--models", user_dir, "models", "list", "gpus", "--format", "csv"], data)
        expect("the same GPU in --models DIR loads, with a note",
               code == 0 and f"\n{GPU}," in out and
               f"note: {gpus_path}:/gpu_models/{GPU}: no \"sources\"; its figures are used as given, uncited" in err
               and f"/transformers/{TRANSFORMER}: no \"source\"" in err, err)
        for name in ("gpus.json", "transformers.json"):  # the bundled folder cited again
            shutil.copy(os.path.join("models", name), os.path.join(data, "models", name))
        code, out, err = run(topsim, ["train", user_model_path, "--topology", "dgx-a100", "--gpus", "8",
                                      "--global-batch", "8"], data)
        expect("a transformer file by path without description and source trains, with a note",
               code == 0 and f"note: {user_model_path}: no \"source\"; the shape is used as given, uncited" in err
               and out.startswith("# topsim train: my-" + TRANSFORMER), err + out[:200])


main()
