#!/usr/bin/env python3
"""Checks every citation of models/nccl_versions.json against NCCL's source.

Each line's "sources" maps a dotted path of its values (e.g. "factors.tree", "hw_latency") to
"path:line@tag" or "path:first-last@tag". For each, this reads <path> at <tag> from a local git
snapshot of NVIDIA/nccl with its tags (the directory in $TOPSIM_NCCL_GIT, else <repo>/../.mirror/
NVIDIA+nccl/repo, where the fetch tool puts it; or an unpacked tree <repo>/../shared/reference/
nccl-src/<tag>/<path>, as older checkouts had), checks that the lines exist, and that every number under the cited value
appears in them, in any of NCCL's spellings: 20 or 20.0 or .92, 512 KiB as 1 << 19 or 512*1024,
a product (2*141.0) or a quotient (1.0/3.8 for 0.2632, to 4 digits). Exit 0 when all hold, 1 with
one line per mismatch, 77 (ctest's SKIP_RETURN_CODE) when no NCCL source is present.
"""
import json
import os
import re
import subprocess
import sys

SKIP = 77

def numbers_of(value):
    """The numbers written under a value, each as its accepted spellings (20.6 of "20.6GBps";
    16 or 16384 of "16KiB")."""
    if isinstance(value, bool):
        return []
    if isinstance(value, (int, float)):
        return [(float(value),)]
    if isinstance(value, str):
        m = re.fullmatch(r"([0-9.]+)\s*([A-Za-z]+)", value)
        if not m:
            return []  # a name (an algorithm, a row): nothing to find by number
        n = float(m.group(1))
        return [(n, n * 1024)] if m.group(2) == "KiB" else [(n,)]
    if isinstance(value, list):
        return [x for v in value for x in numbers_of(v)]
    if isinstance(value, dict):
        return [x for v in value.values() for x in numbers_of(v)]
    return []


def spellings(text):
    """Every number the text states: literals, shifts, products and quotients of two literals."""
    text = re.sub(r"(?<=\d)[fFuUlL]+\b", "", text)
    lit = r"(\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?"
    found = set()
    for m in re.finditer(r"(?<![\w.])" + lit, text):
        found.add(float(m.group(0)))
    for m in re.finditer(r"(\d+)\s*<<\s*(\d+)", text):
        found.add(float(int(m.group(1)) << int(m.group(2))))
    for m in re.finditer(r"(?<![\w.])(" + lit + r")\s*([*/])\s*(" + lit + r")", text):
        a, op, b = float(m.group(1)), m.group(3), float(m.group(4))
        if op == "*":
            found.add(a * b)
        elif b != 0:
            found.add(a / b)
    return found


def matches(number, found):
    return any(abs(number - f) <= 1e-9 + 5e-4 * abs(f) for f in found)


def resolve(line, path):
    value = line
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def source_reader(repo):
    """A function (tag, path) -> the file's text or None, over whichever NCCL source is present;
    None when there is none."""
    git = os.environ.get("TOPSIM_NCCL_GIT") or os.path.join(repo, "..", ".mirror", "NVIDIA+nccl", "repo")
    if os.path.isdir(git):
        cache = {}
        def from_git(tag, path):
            if (tag, path) not in cache:
                done = subprocess.run(["git", "-C", git, "show", f"{tag}:{path}"], capture_output=True)
                cache[(tag, path)] = done.stdout.decode(errors="replace") if done.returncode == 0 else None
            return cache[(tag, path)]
        return from_git
    tree = os.path.join(repo, "..", "shared", "reference", "nccl-src")
    if os.path.isdir(tree):
        def from_tree(tag, path):
            full = os.path.join(tree, tag, path)
            return open(full, errors="replace").read() if os.path.isfile(full) else None
        return from_tree
    return None


def main():
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    models = sys.argv[1] if len(sys.argv) > 1 else os.path.join(repo, "models", "nccl_versions.json")
    read = source_reader(repo)
    if read is None:
        print("SKIP: no NCCL source (a git snapshot in $TOPSIM_NCCL_GIT or ../.mirror/NVIDIA+nccl/repo); "
              "NCCL citations not checked")
        return SKIP
    data = json.load(open(models))
    problems, checked = [], 0
    cite_form = re.compile(r"^([A-Za-z0-9_./-]+):(\d+)(?:-(\d+))?@(v[0-9.]+-\d+)$")
    for name, line in data["nccl_versions"].items():
        for path, cite in line["sources"].items():
            where = f"{models}: /nccl_versions/{name}/sources/{path}"
            m = cite_form.match(cite)
            if not m:
                problems.append(f"{where}: '{cite}' is not path:line@tag")
                continue
            file, first, last, tag = m.group(1), int(m.group(2)), int(m.group(3) or m.group(2)), m.group(4)
            if tag != line["tag"]:
                problems.append(f"{where}: cites {tag}, the line reads {line['tag']}")
            source = read(tag, file)
            if source is None:
                problems.append(f"{where}: {tag}/{file} does not exist")
                continue
            text = source.split("\n")
            if first < 1 or last > len(text) or last < first:
                problems.append(f"{where}: lines {first}-{last} outside {tag}/{file} ({len(text)} lines)")
                continue
            value = resolve(line, path)
            if value is None:
                problems.append(f"{where}: cites '{path}', which the line does not have")
                continue
            found = spellings("\n".join(text[first - 1:last]))
            for spelled in numbers_of(value):
                if not any(matches(n, found) for n in spelled):
                    problems.append(f"{where}: {spelled[0]:g} is not in {tag}/{file}:{first}-{last}")
            checked += 1
    for p in problems:
        print(p)
    print(f"{checked} citations checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
