"""Checks (or rewrites) the examples of docs/errors.md: every ```console block that starts with
`$ topsim ARGS` is run from the repository root with TOPSIM_DATA_DIR=.; its standard error must
be the block's lines before the last, verbatim, standard output empty, and the exit status the
last line's `[exit N]`.

    python3 tools/error_catalogue.py TOPSIM            check (what ctest runs)
    python3 tools/error_catalogue.py TOPSIM --update   rewrite the blocks from what topsim prints
"""
import os
import re
import shlex
import subprocess
import sys

BLOCK = re.compile(r"```console\n\$ topsim (?P<args>[^\n]*)\n(?P<body>.*?)```\n", re.S)


def run(topsim, args):
    env = dict(os.environ, TOPSIM_DATA_DIR=".")
    done = subprocess.run([topsim] + shlex.split(args), capture_output=True, text=True, env=env, timeout=120)
    return done.stdout, done.stderr, done.returncode


def main():
    topsim, update = sys.argv[1], "--update" in sys.argv[2:]
    path = "docs/errors.md"
    text = open(path).read()
    failures, count = [], 0

    def check(match):
        nonlocal count
        count += 1
        args = match.group("args")
        stdout, stderr, code = run(topsim, args)
        actual = stderr + f"[exit {code}]\n"
        if update:
            return f"```console\n$ topsim {args}\n{actual}```\n"
        if actual != match.group("body") or stdout:
            failures.append(f"$ topsim {args}\n  expected:\n{match.group('body')}  actual:\n{actual}"
                            + (f"  and standard output:\n{stdout}" if stdout else ""))
        return match.group(0)

    new = BLOCK.sub(check, text)
    if count == 0:
        sys.exit(f"{path}: no examples found")
    if update:
        open(path, "w").write(new)
        print(f"{path}: {count} examples rewritten")
        return
    for f in failures:
        print(f)
    if failures:
        sys.exit(f"{path}: {len(failures)} of {count} examples differ from what topsim prints")
    print(f"{path}: {count} examples print what the catalogue says")


main()
