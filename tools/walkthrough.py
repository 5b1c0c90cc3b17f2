"""Runs the walk-through of docs/calibrate-your-cluster.md as a test: every ```console block that
starts with `$ topsim ARGS` is run in order from the repository root (TOPSIM_DATA_DIR=.), after
emptying /tmp/topsim-walkthrough (where the walk-through writes); the block's lines after the
command must be what topsim prints, standard output then standard error, verbatim, and its last
line the exit status `[exit N]`. Blocks may depend on files earlier blocks wrote.

    python3 tools/walkthrough.py TOPSIM DOC            check (what ctest runs)
    python3 tools/walkthrough.py TOPSIM DOC --update   rewrite the blocks from what topsim prints
"""
import os
import re
import shlex
import shutil
import subprocess
import sys

BLOCK = re.compile(r"```console\n\$ topsim (?P<args>[^\n]*)\n(?P<body>.*?)```\n", re.S)
WORK = "/tmp/topsim-walkthrough"


def main():
    topsim, path, update = sys.argv[1], sys.argv[2], "--update" in sys.argv[3:]
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    env = dict(os.environ, TOPSIM_DATA_DIR=".")
    text = open(path).read()
    failures, count = [], 0

    def run(match):
        nonlocal count
        count += 1
        args = match.group("args")
        done = subprocess.run([topsim] + shlex.split(args), capture_output=True, text=True, env=env, timeout=300)
        actual = done.stdout + done.stderr + f"[exit {done.returncode}]\n"
        if update:
            return f"```console\n$ topsim {args}\n{actual}```\n"
        if actual != match.group("body"):
            failures.append(f"$ topsim {args}\n  expected:\n{match.group('body')}  actual:\n{actual}")
        return match.group(0)

    new = BLOCK.sub(run, text)
    if count == 0:
        sys.exit(f"{path}: no walk-through commands found")
    if update:
        open(path, "w").write(new)
        print(f"{path}: {count} commands rewritten")
        return
    for f in failures:
        print(f, file=sys.stderr)
    if failures:
        sys.exit(f"{path}: {len(failures)} of {count} commands print something else "
                 f"(python3 tools/walkthrough.py TOPSIM {path} --update rewrites them on purpose)")
    print(f"{path}: {count} commands as documented")


if __name__ == "__main__":
    main()
