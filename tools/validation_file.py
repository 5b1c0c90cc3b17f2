"""The text of a scenarios/validation/*.json file, as the generators write it.

One row per line, so that a regenerated file diffs row by row: the layout every bundled
validation file keeps. Python 3 standard library only.
"""

import json


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
