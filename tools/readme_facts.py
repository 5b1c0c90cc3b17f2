"""Keeps the README's facts true: what it says of the bundled topologies is generated from
`topsim topo list`, and the rest is checked against the files it describes.

    python3 tools/readme_facts.py TOPSIM            check (what ctest runs); exit 1 naming each fault
    python3 tools/readme_facts.py TOPSIM --update   rewrite the generated parts of README.md

Generated (between `<!-- topo-list:NAME -->` and `<!-- /topo-list -->` lines, and the counts in
"N bundled servers and M clusters"):
  - the tables of bundled servers, cloud instances and clusters, one row per `topo list` row.
Checked:
  - no path outside the repository (`../`, `shared/reference`) in README.md or docs/README.md;
  - docs/README.md (the docs index) links every page of docs/, and each link it has exists;
  - README.md links the docs index, docs/cloud.md and docs/limits.md;
  - the limits README.md states are the constants of the source (src/topology/cluster.hpp,
    src/topology/flat.hpp), and docs/limits.md states the same.
"""
import json
import os
import re
import subprocess
import sys

README = "README.md"
DOCS_INDEX = "docs/README.md"
# Cloud instances are the bundled servers of the providers docs/cloud.md describes; their names
# begin with the provider (the convention of tools/gen_cloud_topologies.py).
CLOUD_PREFIXES = ("aws-", "azure-", "gcp-", "oci-")
COUNTS = re.compile(r"\b(\d+) bundled servers and (\d+) (?:bundled )?clusters\b")
RELATIVE = re.compile(r"(?:\.\./)+[\w.-]*")


def topo_list(topsim):
    env = dict(os.environ, TOPSIM_DATA_DIR=".")
    done = subprocess.run([topsim, "topo", "list", "--format", "json"], capture_output=True, text=True, env=env,
                          timeout=300)
    if done.returncode != 0:
        sys.exit(f"readme_facts: topsim topo list failed: {done.stderr.strip()}")
    return json.loads(done.stdout)


def first_sentence(text, longest=160):
    """The description's first sentence, or its first clause when that sentence is long; a stop
    inside parentheses ends nothing."""
    def cut(stops):
        depth = 0
        for i, c in enumerate(text):
            depth += (c == "(") - (c == ")")
            if depth == 0 and c in stops and (i + 1 == len(text) or text[i + 1] == " "):
                return text[:i]
        return text.rstrip(".")
    sentence = cut(".")
    return cut(".:;") if len(sentence) > longest else sentence


def nvlink_cell(row):
    if row["nvlinks_per_gpu"] == 0:
        return "none"
    return f"{row['nvlinks_per_gpu']} ({row['nvlink_GBps'] * 2:.0f} GB/s both ways)"


def nic_cell(row):
    return "none" if row["nics_per_server"] == 0 else f"{row['nics_per_server']} x `{row['nic']}`"


def server_table(rows):
    lines = ["| topology | GPUs | NVLinks per GPU | NICs per server | what it is |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| `{r['name']}` | {r['gpus']} x `{r['gpu']}` | {nvlink_cell(r)} | {nic_cell(r)} | "
                     f"{first_sentence(r['description'])} |")
    return lines


def cluster_table(rows):
    lines = ["| cluster | servers | GPUs | NVLinks per GPU | NICs per server | what it is |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| `{r['name']}` | {r['servers']:,} | {r['gpus']:,} x `{r['gpu']}` | {nvlink_cell(r)} | "
                     f"{nic_cell(r)} | {first_sentence(r['description'])} |")
    return lines


def generated_blocks(rows):
    servers = [r for r in rows if r["kind"] == "server"]
    return {
        "servers": server_table([r for r in servers if not r["name"].startswith(CLOUD_PREFIXES)]),
        "cloud": server_table([r for r in servers if r["name"].startswith(CLOUD_PREFIXES)]),
        "clusters": cluster_table([r for r in rows if r["kind"] == "cluster"]),
    }


def regenerate(text, rows):
    """README.md with its generated parts rewritten from `rows`; ValueError when a marker is missing."""
    blocks = generated_blocks(rows)
    for name, lines in blocks.items():
        pattern = re.compile(r"(<!-- topo-list:%s -->\n).*?(<!-- /topo-list -->\n)" % name, re.S)
        if not pattern.search(text):
            raise ValueError(f"{README} has no <!-- topo-list:{name} --> ... <!-- /topo-list --> block")
        text = pattern.sub(lambda m: m.group(1) + "\n".join(lines) + "\n" + m.group(2), text)
    servers = sum(1 for r in rows if r["kind"] == "server")
    clusters = sum(1 for r in rows if r["kind"] == "cluster")
    if not COUNTS.search(text):
        raise ValueError(f"{README} never says 'N bundled servers and M clusters'")
    return COUNTS.sub(f"{servers} bundled servers and {clusters} clusters", text)


def outside(page, relative):
    """Whether `relative`, written in `page`, leaves the repository (the working directory)."""
    target = os.path.normpath(os.path.join(os.path.dirname(page), relative))
    return target == ".." or target.startswith("../")


def source_constant(path, name):
    text = open(path).read()
    match = re.search(r"\b%s\s*=\s*([^;]+);" % name, text)
    if not match:
        sys.exit(f"readme_facts: {path} no longer defines {name}")
    expression = re.sub(r"(?<=\d)[uUlL]+\b", "", match.group(1))
    if not re.fullmatch(r"[\d\s<>()*+]+", expression):
        sys.exit(f"readme_facts: {path}: {name} = {expression} is not a plain integer expression")
    return int(eval(expression))  # digits, shifts and products only, checked above


def states(text, value):
    """Whether `text` states the integer `value` (written 262144 or 262,144)."""
    return re.search(r"(?<![\d,])(%d|%s)(?![\d,])" % (value, f"{value:,}"), text) is not None


def faults(readme, rows):
    found = []
    try:
        if regenerate(readme, rows) != readme:
            found.append(f"{README}: the bundled topologies or their counts are not what `topo list` says "
                         f"(run: python3 tools/readme_facts.py build/topsim --update)")
    except ValueError as e:
        found.append(str(e))
    for path, text in ((README, readme), (DOCS_INDEX, open(DOCS_INDEX).read() if os.path.exists(DOCS_INDEX) else "")):
        for number, line in enumerate(text.splitlines(), 1):
            if "shared/reference" in line or any(outside(path, p) for p in RELATIVE.findall(line)):
                found.append(f"{path}:{number}: a path outside the repository: {line.strip()[:100]}")
    if not os.path.exists(DOCS_INDEX):
        found.append(f"{DOCS_INDEX}: missing (the docs index)")
    else:
        index = open(DOCS_INDEX).read()
        linked = set(re.findall(r"\]\(([^)#]+\.md)\)", index))
        for page in sorted(p for p in os.listdir("docs") if p.endswith(".md") and p != "README.md"):
            if page not in linked:
                found.append(f"{DOCS_INDEX}: docs/{page} is not in the index")
        for page in sorted(linked):
            if not os.path.exists(os.path.join("docs", page)):
                found.append(f"{DOCS_INDEX}: links {page}, which docs/ does not have")
    for page in ("docs/README.md", "docs/cloud.md", "docs/limits.md"):
        if f"]({page})" not in readme:
            found.append(f"{README}: never links {page}")
    limits = open("docs/limits.md").read()
    section = readme.split("## Limits and known weaknesses", 1)[-1]
    for path, name in (("src/topology/cluster.hpp", "max_cluster_devices"), ("src/topology/flat.hpp", "kMaxFlatGpus")):
        value = source_constant(path, name)
        if not states(section, value):
            found.append(f"{README}: its Limits section does not state {name} = {value:,} ({path})")
        if not states(limits, value):
            found.append(f"docs/limits.md does not state {name} = {value:,} ({path})")
    return found


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    topsim, update = sys.argv[1], "--update" in sys.argv[2:]
    rows = topo_list(topsim)
    readme = open(README).read()
    if update:
        try:
            new = regenerate(readme, rows)
        except ValueError as e:
            sys.exit(f"readme_facts: {e}")
        if new != readme:
            open(README, "w").write(new)
        readme = new
    found = faults(readme, rows)
    for f in found:
        print(f, file=sys.stderr)
    if found:
        sys.exit(1)
    print(f"README.md: {len(rows)} bundled topologies as `topo list` has them; docs index, paths and limits checked")


if __name__ == "__main__":
    main()
