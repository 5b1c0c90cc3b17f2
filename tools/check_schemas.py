"""Checks real `--format json` outputs of topsim against the JSON Schemas in docs/schemas/.

A small validator for the part of JSON Schema (draft 2020-12) those files use, stdlib only:
type (one name or a list; "integer" is written without a fraction or exponent, so 1024.0 is
not one; booleans are never numbers), enum, minimum, maximum, minItems, required, properties, additionalProperties (false
or a schema), items. Annotations ($schema, $id, title, description) are read and ignored; any
other keyword is an error, so that a schema never relies on a keyword nothing checks.

    python3 tools/check_schemas.py TOPSIM      (what ctest runs, from the repository root)

It first checks that the validator rejects broken rows (each must fail), then every case below.
"""
import json
import os
import subprocess
import sys

ANNOTATIONS = {"$schema", "$id", "title", "description"}
KEYWORDS = {"type", "enum", "minimum", "maximum", "minItems", "required", "properties", "additionalProperties",
            "items"} | ANNOTATIONS

# (schema, topsim arguments): real outputs, each option that adds or drops a column covered.
CASES = [
    ("coll", ["coll", "dgx-a100", "-o", "all", "-b", "8", "-e", "64M", "-f", "64"]),
    ("coll", ["coll", "dgx-h100", "--nodes", "2", "-b", "1M", "-e", "1G", "-f", "32", "--explain"]),
    ("coll", ["coll", "dgx-a100", "--nodes", "2", "-b", "1G", "-e", "1G", "--fail", "n0.mlx5_3"]),
    ("p2p", ["p2p", "dgx1-v100"]),
    ("p2p", ["p2p", "dgx-a100", "--src", "0", "--dst", "1", "-b", "1K", "-e", "1G", "-f", "32"]),
    ("scale", ["scale", "dgx-a100", "-b", "1G", "--nodes", "1,2,4"]),
    ("nccl-tuner-conf", ["nccl", "tuner-conf", "dgx-a100"]),
    ("nccl-tuner-conf", ["nccl", "tuner-conf", "dgx-h100", "--nodes", "2", "-e", "8G"]),
    ("topo-list", ["topo", "list"]),
    ("models-list-gpus", ["models", "list", "gpus"]),
    ("models-list-gpus", ["--models", "tests/data/user-models", "models", "list", "gpus"]),
    ("models-list-nics", ["models", "list", "nics"]),
    ("models-list-links", ["models", "list", "links"]),
    ("models-list-cpus", ["models", "list", "cpus"]),
]


class Invalid(Exception):
    pass


def is_type(value, name):
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    return {"string": lambda v: isinstance(v, str),
            "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
            "boolean": lambda v: isinstance(v, bool),
            "null": lambda v: v is None,
            "array": lambda v: isinstance(v, list),
            "object": lambda v: isinstance(v, dict)}[name](value)


def validate(value, schema, where="$"):
    unknown = set(schema) - KEYWORDS
    if unknown:
        raise Invalid(f"schema at {where} uses {sorted(unknown)}, which this validator does not check")
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(is_type(value, n) for n in names):
            raise Invalid(f"{where}: {json.dumps(value)[:60]} is not of type {' or '.join(names)}")
    if "enum" in schema and value not in schema["enum"]:
        raise Invalid(f"{where}: {json.dumps(value)} is not one of {schema['enum']}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise Invalid(f"{where}: {value} is below the minimum {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            raise Invalid(f"{where}: {value} is above the maximum {schema['maximum']}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            raise Invalid(f"{where}: {len(value)} items, fewer than {schema['minItems']}")
        if "items" in schema:
            for i, item in enumerate(value):
                validate(item, schema["items"], f"{where}[{i}]")
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                raise Invalid(f"{where}: missing required key '{key}'")
        properties = schema.get("properties", {})
        for key, item in value.items():
            if key in properties:
                validate(item, properties[key], f"{where}.{key}")
            elif schema.get("additionalProperties", True) is False:
                raise Invalid(f"{where}: key '{key}' is not in the schema")
            elif isinstance(schema.get("additionalProperties"), dict):
                validate(item, schema["additionalProperties"], f"{where}.{key}")


def load(name):
    return json.load(open(os.path.join("docs", "schemas", name + ".schema.json")))


def self_test():
    schema = load("coll")
    good = json.loads(subprocess.run([sys.argv[1], "coll", "dgx-a100", "--format", "json"], capture_output=True,
                                     text=True, env=dict(os.environ, TOPSIM_DATA_DIR="."), check=True).stdout)
    validate(good, schema)
    row = good[0]
    broken = {
        "a missing key": [{k: v for k, v in row.items() if k != "busbw_GBps"}],
        "an extra key": [dict(row, busbw=1)],
        "a number as a string": [dict(row, time_us="12.5")],
        "a fraction where an integer belongs": [dict(row, channels=2.5)],
        "an integer written as a double": [dict(row, size_B=float(row["size_B"]))],
        "a boolean as a number": [dict(row, time_us=True)],
        "a name outside the enum": [dict(row, algo="ring2")],
        "a count below its minimum": [dict(row, gpus=0)],
        "an object instead of rows": row,
    }
    for name, value in broken.items():
        try:
            validate(value, schema)
        except Invalid:
            continue
        sys.exit(f"self-test: {name} was accepted")
    try:
        validate([], {"type": "array", "uniqueItems": True})
        sys.exit("self-test: a keyword the validator does not know was accepted")
    except Invalid:
        pass
    print(f"self-test: {len(broken) + 1} broken rows or schemas rejected")


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: check_schemas.py TOPSIM")
    self_test()
    env = dict(os.environ, TOPSIM_DATA_DIR=".")
    failures = 0
    for name, args in CASES:
        done = subprocess.run([sys.argv[1]] + args + ["--format", "json"], capture_output=True, text=True, env=env)
        if done.returncode != 0:
            print(f"{' '.join(args)}: exit {done.returncode}: {done.stderr.strip()}")
            failures += 1
            continue
        try:
            rows = json.loads(done.stdout)
            validate(rows, load(name))
            if not rows:
                raise Invalid("no rows: nothing was checked")
        except (Invalid, json.JSONDecodeError) as e:
            print(f"{' '.join(args)} against docs/schemas/{name}.schema.json: {e}")
            failures += 1
            continue
        print(f"ok: {' '.join(args)}: {len(rows)} rows match docs/schemas/{name}.schema.json")
    if failures:
        sys.exit(f"{failures} of {len(CASES)} outputs do not match their schema")


main()
