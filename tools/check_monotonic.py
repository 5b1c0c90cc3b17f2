#!/usr/bin/env python3
"""Curves that obey physics (issue 49): on every bundled server, for every operation, under
NCCL's choice of algorithm, protocol and channels, a larger message never finishes sooner than a
smaller one by more than 2%: time(size_j) >= 0.98 x time(size_i) for every i < j, 8 B to 8 GiB
in steps of 2 (nccl-tests' -b 8 -e 8G -f 2). One server each, and two servers where the server
has NICs. Prints one line per break and exits 1 when any; 0 otherwise.
With --known FILE (tests/monotonic-breaks.txt): the breaks not yet fixed, one key per line
("SERVER xNODES: OP: SIZE B"); exits 1 on a break the file does not list (a new one) and on a
listed break that no longer happens (fixed: take it out), so the list only shrinks. --write FILE
writes the keys found.
  tools/check_monotonic.py TOPSIM [--known FILE | --write FILE] [TOPOLOGY...]
Run from the repository root."""
import csv
import glob
import io
import os
import subprocess
import sys

TOLERANCE = 0.02  # the 2%


def sweep(topsim, topology, nodes):
    args = [topsim, "coll", topology, "-o", "all", "-b", "8", "-e", "8G", "-f", "2", "--format", "csv"]
    if nodes > 1:
        args += ["--nodes", str(nodes)]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        return None, done.stderr.strip()
    return list(csv.DictReader(io.StringIO(done.stdout))), ""


def breaks(rows):
    out = []
    by_op = {}
    for r in rows:
        by_op.setdefault((r["op"], r["root"]), []).append(r)
    for (op, _), points in by_op.items():
        points.sort(key=lambda r: float(r["size_B"]))
        slowest = None
        for r in points:
            t = float(r["time_us"])
            if slowest is not None and t < (1 - TOLERANCE) * float(slowest["time_us"]):
                out.append(f"{op}: {r['size_B']} B|takes {t:g} us ({r['algo']}/{r['proto']}, {r['channels']} channels), "
                           f"{slowest['size_B']} B took {float(slowest['time_us']):g} us ({slowest['algo']}/{slowest['proto']}, "
                           f"{slowest['channels']} channels)")
            if slowest is None or t > float(slowest["time_us"]):
                slowest = r
    return out


def main():
    args = sys.argv[1:]
    topsim = args.pop(0)
    known = write = None
    if args[:1] == ["--known"]:
        known = set(l.strip() for l in open(args[1]) if l.strip() and not l.startswith("#"))
        args = args[2:]
    elif args[:1] == ["--write"]:
        write = args[1]
        args = args[2:]
    names = args or sorted(os.path.splitext(os.path.basename(p))[0] for p in glob.glob("topologies/*.json"))
    problems, found = 0, []
    for name in names:
        for nodes in (1, 2):
            rows, error = sweep(topsim, name, nodes)
            if rows is None:
                if nodes == 1:
                    print(f"{name}: coll failed: {error}")
                    problems += 1
                continue  # a server without NICs does not scale out
            for b in breaks(rows):
                key, detail = b.split("|")
                key = f"{name} x{nodes}: {key}"
                found.append(key)
                if known is None or key not in known:
                    print(f"{key} {detail}" + (" (new)" if known is not None else ""))
                    problems += 1
    if write:
        with open(write, "w") as out:
            out.write("# Known breaks of tools/check_monotonic.py (a larger message sooner than a smaller one by more\n"
                      "# than 2%, under NCCL's choice): the list only shrinks. docs/validation.md says why each family\n"
                      "# breaks. Written by tools/check_monotonic.py TOPSIM --write FILE.\n")
            out.writelines(k + "\n" for k in found)
    if known is not None:
        for key in sorted(known - set(found)):
            if key.split(":")[0].split(" x")[0] in names:
                print(f"{key}: no longer breaks; take it out of the known list")
                problems += 1
    print(f"{len(names)} servers checked, {len(found)} breaks, {problems} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
