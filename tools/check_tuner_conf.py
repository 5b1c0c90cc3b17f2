"""Checks what `topsim nccl tuner-conf` writes against the format NCCL's example tuner plugin
reads, as documented and parsed at v2.30.7-1 (plugins/tuner/example/README.md:22-95,
plugin.c:14-33, 59-122, 136, 197-254, 381-387 of ../shared/reference/nccl-src/v2.30.7-1):

- a line is a comment when it starts with '#', skipped when empty; every other line is a config
  of 8 to 10 comma-separated fields (fewer or more would be dropped silently by the plugin);
- every line is shorter than the plugin's 256-byte read, newline included (a longer one is split
  and its tail read as a config);
- collective, algorithm and protocol are names the plugin knows (it turns an unknown one into
  allreduce, ring or simple without a word);
- min_bytes <= max_bytes, integers; channels a positive count or -1; nNodes, nRanks positive or
  -1; numPipeOps positive or -1; regBuff 0, 1 or -1;
- per collective the ranges are contiguous and non-overlapping, from 0 to at least 4294967295
  (README.md:36), so that no size falls to the plugin's unmatched default of one channel.

It also checks what topsim says: nNodes and nRanks are the communicator's, and the entries
equal the rows `--format json` prints. `--self-test` feeds broken files and fails unless each
is rejected, so that the checks themselves can fail.

    python3 tools/check_tuner_conf.py TOPSIM            (what ctest runs, from the repository root)
"""
import json
import os
import subprocess
import sys

COLLECTIVES = {"broadcast", "reduce", "allgather", "reducescatter", "allreduce"}
ALGORITHMS = {"tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"}
PROTOCOLS = {"ll", "ll128", "simple"}
MAX_LINE = 256          # MAX_LINE_LENGTH, fgets buffer including the newline and the NUL
DOCUMENTED_MAX = 4294967295
FIELDS = ["collective_type", "min_bytes", "max_bytes", "algorithm", "protocol", "channels", "nNodes", "nRanks",
          "numPipeOps", "regBuff"]

# (arguments, expected nNodes, expected nRanks)
CASES = [
    (["dgx-a100"], 1, 8),
    (["dgx-h100", "--nodes", "2"], 2, 16),
    (["dgx1-v100", "-o", "allreduce,broadcast", "-b", "1K", "-e", "8G"], 1, 8),
]


def integer(text, where):
    try:
        return int(text, 10)
    except ValueError:
        raise ValueError(f"{where}: '{text}' is not an integer")


def parse(text):
    """The configs of a file as the plugin reads them; ValueError naming the line otherwise."""
    configs = []
    for number, line in enumerate(text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"), 1):
        where = f"line {number}"
        if len(line) + 2 > MAX_LINE:
            raise ValueError(f"{where}: {len(line)} characters; the plugin reads {MAX_LINE - 2} at most")
        if line.startswith("#") or line == "":
            continue
        if line.strip() == "":
            raise ValueError(f"{where}: blank but not empty: the plugin would count it as a config")
        fields = [f.strip(" \t") for f in line.split(",")]
        if not 8 <= len(fields) <= 10:
            raise ValueError(f"{where}: {len(fields)} fields; the plugin takes 8 to 10")
        c = dict(zip(FIELDS, fields))
        c.setdefault("numPipeOps", "-1")
        c.setdefault("regBuff", "-1")
        if c["collective_type"] not in COLLECTIVES:
            raise ValueError(f"{where}: collective '{c['collective_type']}' is not one of {sorted(COLLECTIVES)}")
        if c["algorithm"] not in ALGORITHMS:
            raise ValueError(f"{where}: algorithm '{c['algorithm']}' is not one of {sorted(ALGORITHMS)}")
        if c["protocol"] not in PROTOCOLS:
            raise ValueError(f"{where}: protocol '{c['protocol']}' is not one of {sorted(PROTOCOLS)}")
        for key in ["min_bytes", "max_bytes", "channels", "nNodes", "nRanks", "numPipeOps", "regBuff"]:
            c[key] = integer(c[key], f"{where}: {key}")
        if c["min_bytes"] < 0 or c["max_bytes"] < c["min_bytes"]:
            raise ValueError(f"{where}: size range {c['min_bytes']}-{c['max_bytes']} is empty or negative")
        for key in ["channels", "nNodes", "nRanks", "numPipeOps"]:
            if c[key] != -1 and c[key] < 1:
                raise ValueError(f"{where}: {key} {c[key]} is neither a positive count nor -1 (any)")
        if c["regBuff"] not in (-1, 0, 1):
            raise ValueError(f"{where}: regBuff {c['regBuff']} is not 0, 1 or -1")
        c["line"] = number
        configs.append(c)
    if not configs:
        raise ValueError("no config lines")
    return configs


def check_ranges(configs):
    by_collective = {}
    for c in configs:
        by_collective.setdefault(c["collective_type"], []).append(c)
    for name, entries in by_collective.items():
        if entries[0]["min_bytes"] != 0:
            raise ValueError(f"{name}: the first range starts at {entries[0]['min_bytes']}, not 0")
        for a, b in zip(entries, entries[1:]):
            if b["min_bytes"] != a["max_bytes"] + 1:
                raise ValueError(f"{name}: line {b['line']} starts at {b['min_bytes']}, line {a['line']} ends at "
                                 f"{a['max_bytes']}: ranges must be contiguous and not overlap")
        if entries[-1]["max_bytes"] < DOCUMENTED_MAX:
            raise ValueError(f"{name}: the last range ends at {entries[-1]['max_bytes']}, below {DOCUMENTED_MAX}")


def check_topsim(topsim):
    env = dict(os.environ, TOPSIM_DATA_DIR=".")
    for args, nodes, ranks in CASES:
        command = [topsim, "nccl", "tuner-conf"] + args
        text = subprocess.run(command, capture_output=True, text=True, env=env, check=True).stdout
        rows = json.loads(subprocess.run(command + ["--format", "json"], capture_output=True, text=True, env=env,
                                         check=True).stdout)
        configs = parse(text)
        check_ranges(configs)
        for c in configs:
            if c["nNodes"] != nodes or c["nRanks"] != ranks:
                raise ValueError(f"{' '.join(args)}: line {c['line']}: nNodes {c['nNodes']}, nRanks {c['nRanks']}; "
                                 f"the communicator has {nodes} and {ranks}")
            if c["channels"] < 1:
                raise ValueError(f"{' '.join(args)}: line {c['line']}: channels must be a count (-1 gives one channel)")
        seen = [(c["collective_type"], c["min_bytes"], c["max_bytes"], c["algorithm"], c["protocol"], c["channels"])
                for c in configs]
        said = [(r["op"], r["min_B"], r["max_B"], r["algo"], r["proto"], r["channels"]) for r in rows]
        if seen != said:
            raise ValueError(f"{' '.join(args)}: the file's entries differ from --format json's rows")
        print(f"tuner-conf {' '.join(args)}: {len(configs)} entries read as the plugin reads them")


def self_test():
    good = "# c\nallreduce,0,4095,ring,ll,1,1,8,-1,-1\n\nallreduce,4096,4294967295,ring,simple,24,1,8\n"
    check_ranges(parse(good))
    broken = {
        "unknown collective": good.replace("allreduce,0", "all_reduce,0"),
        "unknown algorithm": good.replace("ring,ll,", "rings,ll,"),
        "unknown protocol": good.replace("ring,ll,", "ring,LL,"),
        "seven fields": good.replace(",1,8,-1,-1", ",1"),
        "eleven fields": good.replace(",-1,-1", ",-1,-1,0"),
        "gap": good.replace("4096,4294967295", "4097,4294967295"),
        "overlap": good.replace("4096,4294967295", "4000,4294967295"),
        "not from 0": good.replace("allreduce,0,", "allreduce,8,"),
        "short of the maximum": good.replace("4294967295", "1073741823"),
        "channels 0": good.replace("simple,24", "simple,0"),
        "regBuff 2": good.replace("-1,-1\n", "-1,2\n"),
        "long line": "#" + "x" * 300 + "\n" + good,
        "blank line": good.replace("\n\n", "\n  \n"),
    }
    for name, text in broken.items():
        try:
            check_ranges(parse(text))
        except ValueError:
            continue
        sys.exit(f"self-test: a file with {name} was accepted")
    print(f"self-test: {len(broken)} broken files rejected")


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: check_tuner_conf.py TOPSIM [--self-test]")
    self_test()
    if "--self-test" in sys.argv[2:]:
        return
    try:
        check_topsim(sys.argv[1])
    except ValueError as e:
        sys.exit(f"tuner-conf: {e}")


main()
