"""The text of a scenarios/validation/*.json file, as the generators write it.

One row per line, so that a regenerated file diffs row by row: the layout every bundled
validation file keeps. Python 3 standard library only.
"""

import json
import sys
from collections import Counter


def render(description, sources, rows):
    """The file's text: description, sources (id -> citation), then the rows, one per line."""
    lines = ["{", f'  "description": {json.dumps(description)},', '  "sources": {']
    lines += [f"    {json.dumps(k)}: {json.dumps(v)}," for k, v in sources.items()]
    lines[-1] = lines[-1].rstrip(",")
    lines += ["  },", '  "rows": [']
    lines += [f"    {json.dumps(row)}," for row in rows]
    lines[-1] = lines[-1].rstrip(",")
    lines += ["  ]", "}"]
    return "\n".join(lines) + "\n"


def check_ids_unique(rows, output, tool):
    """Exit naming the ids a generator writes twice, or that another scenarios/validation/*.json holds."""
    ids = Counter(row["id"] for row in rows)
    duplicates = [i for i, n in ids.items() if n > 1]
    if duplicates:
        raise SystemExit(f"{tool}: duplicate ids {duplicates[:5]}")
    for path in sorted(output.parent.glob("*.json")):
        if path.resolve() == output.resolve():
            continue
        clash = ids.keys() & {row["id"] for row in json.loads(path.read_text(encoding="utf-8")).get("rows", [])}
        if clash:
            raise SystemExit(f"{tool}: ids also in {path}: {sorted(clash)[:5]}")


def is_stale(text, output, tool):
    """True (said on stderr) when `output` is not `text`: the generator's --check."""
    if output.exists() and output.read_text(encoding="utf-8") == text:
        return False
    print(f"{tool}: {output} is stale: run python3 tools/{tool}.py", file=sys.stderr)
    return True
