#!/usr/bin/env python3
"""Every argument name Megatron-LM's pretrain parser defines, read from a local git mirror.

Usage: tools/megatron_arg_names.py MIRROR [--where | --check MODELS_JSON]

MIRROR is a (bare) clone of github.com/NVIDIA/Megatron-LM; the files are read at its HEAD with
`git show`. The parser is megatron/training/arguments.py (add_megatron_arguments, with
allow_abbrev=False): its literal add_argument('--...') calls, plus the groups that
ArgumentGroupFactory builds from config dataclasses (megatron/training/argument_utils.py: one
'--field-name' per init field not excluded, '--no-X' and '--disable-X' instead for a bool field
that defaults to True, "argparse_meta" arg_names replacing those).

Prints a JSON object for models/megatron.json's "known_arguments": the commit, the files read and
the sorted names. With --where, prints "NAME FILE:LINE DEFAULT" lines instead (the default as the
source writes it), the look-up used to cite each accepted argument's default by hand.
With --check, exits 1 unless MODELS_JSON's "known_arguments" are what it would print, and 77
(skipped) when MIRROR is "" or missing (ctest's megatron.argument_names passes $MEGATRON_LM_MIRROR).
Nothing is imported from Megatron: the sources are parsed with Python's ast module.
"""
import ast
import json
import os
import subprocess
import sys

ARGUMENTS = "megatron/training/arguments.py"


REV = "HEAD"  # --check reads at the commit models/megatron.json cites


def show(mirror, path):
    return subprocess.run(["git", "-C", mirror, "show", REV + ":" + path], check=True, capture_output=True,
                          text=True).stdout


def find_class(mirror, name):
    out = subprocess.run(["git", "-C", mirror, "grep", "-n", "^class " + name + r"\b", REV, "--", "megatron/*.py"],
                         capture_output=True, text=True).stdout.splitlines()
    if len(out) != 1:
        sys.exit("class %s: expected one definition, found %d" % (name, len(out)))
    return out[0].split(":")[1]


def literal(node, constants):
    if isinstance(node, ast.Name) and node.id in constants:
        return constants[node.id]
    return ast.literal_eval(node)


def keyword(call, name):
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return None


def dataclass_fields(mirror, class_name, seen_files):
    """(name, line, file, default source, bool default, argparse_meta) of every init field, bases first."""
    path = find_class(mirror, class_name)
    source = show(mirror, path)
    seen_files.add(path)
    tree = ast.parse(source)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name)
    fields = []
    for base in cls.bases:
        if isinstance(base, ast.Name) and base.id != "object":
            fields += dataclass_fields(mirror, base.id, seen_files)
    for stmt in cls.body:
        if not isinstance(stmt, ast.AnnAssign) or not isinstance(stmt.target, ast.Name):
            continue
        name = stmt.target.id
        annotation = ast.get_source_segment(source, stmt.annotation)
        if annotation.startswith("ClassVar"):
            continue
        default, meta, init = stmt.value, {}, True
        if isinstance(stmt.value, ast.Call) and getattr(stmt.value.func, "id", "") == "field":
            default = keyword(stmt.value, "default")
            init_node = keyword(stmt.value, "init")
            init = init_node is None or ast.literal_eval(init_node)
            metadata = keyword(stmt.value, "metadata")
            if isinstance(metadata, ast.Dict):
                for k, v in zip(metadata.keys, metadata.values):
                    if isinstance(k, ast.Constant) and k.value == "argparse_meta" and isinstance(v, ast.Dict):
                        for mk, mv in zip(v.keys, v.values):
                            meta[mk.value] = mv
        if not init:
            continue
        default_text = ast.get_source_segment(source, default) if default is not None else "<factory>"
        is_bool = annotation in ("bool", "Optional[bool]", "bool | None")
        fields = [f for f in fields if f[0] != name]
        fields.append((name, stmt.lineno, path, default_text, is_bool, meta))
    return fields


def factory_names(mirror, call, constants, seen_files):
    class_name = call.args[0].id
    exclude_node = keyword(call, "exclude")
    exclude = set(literal(exclude_node, constants)) if exclude_node is not None else set()
    out = []
    for name, line, path, default_text, is_bool, meta in dataclass_fields(mirror, class_name, seen_files):
        if name in exclude:
            continue
        if "default" in meta:
            default_text = ast.unparse(meta["default"])
        names = ["--" + name.replace("_", "-")]
        if is_bool and default_text == "True":
            names = ["--no-" + name.replace("_", "-"), "--disable-" + name.replace("_", "-")]
        if "arg_names" in meta:
            names = ast.literal_eval(meta["arg_names"])
        for n in names:
            out.append((n, "%s:%d" % (path, line), default_text))
    return out


def main():
    global REV
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    mirror = sys.argv[1]
    if "--check" in sys.argv and not (mirror and os.path.isdir(mirror)):
        print("no Megatron-LM mirror (set MEGATRON_LM_MIRROR): skipped")
        sys.exit(77)
    if "--check" in sys.argv:
        REV = json.load(open(sys.argv[sys.argv.index("--check") + 1]))["megatron_arguments"]["commit"]
    source = show(mirror, ARGUMENTS)
    tree = ast.parse(source)
    seen_files = {ARGUMENTS}
    entries = []
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef):
            continue
        # list constants assigned in the function (the factories' exclude lists)
        constants = {}
        for node in ast.walk(func):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                try:
                    constants[node.targets[0].id] = ast.literal_eval(node.value)
                except ValueError:
                    pass
        for node in ast.walk(func):
            if not isinstance(node, ast.Call):
                continue
            attr = getattr(node.func, "attr", "") or getattr(node.func, "id", "")
            if attr == "add_argument":
                default = keyword(node, "default")
                action = keyword(node, "action")
                text = ast.get_source_segment(source, default) if default is not None else None
                if text is None and action is not None:
                    act = ast.literal_eval(action)
                    text = {"store_true": "False", "store_false": "True"}.get(act, "None")
                for a in node.args:
                    if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("--"):
                        entries.append((a.value, "%s:%d" % (ARGUMENTS, node.lineno), text or "None"))
            elif attr == "ArgumentGroupFactory":
                entries += factory_names(mirror, node, constants, seen_files)
    commit = subprocess.run(["git", "-C", mirror, "rev-parse", REV], check=True, capture_output=True,
                            text=True).stdout.strip()
    if "--where" in sys.argv:
        for name, where, default in sorted(entries):
            print(name, where, default.replace("\n", " "))
        return
    names = sorted({e[0] for e in entries})
    known = {"repository": "github.com/NVIDIA/Megatron-LM", "commit": commit[:12], "files": sorted(seen_files),
             "tool": "tools/megatron_arg_names.py", "names": names}
    if "--check" in sys.argv:
        written = json.load(open(sys.argv[sys.argv.index("--check") + 1]))["megatron_arguments"]["known_arguments"]
        if written != known:
            sys.exit("models/megatron.json's known_arguments differ from the mirror's (rerun this tool)")
        print("known_arguments match Megatron-LM at " + commit[:12])
        return
    print(json.dumps({"repository": "github.com/NVIDIA/Megatron-LM", "commit": commit[:12],
                      "files": sorted(seen_files), "tool": "tools/megatron_arg_names.py", "names": names},
                     indent=2))


if __name__ == "__main__":
    main()
