#!/usr/bin/env python3
"""Writes scenarios/validation/nccl-aiconfigurator.json: NVIDIA's per-release one-server nccl-tests sweeps.

    python3 tools/aiconfigurator_rows.py           # write the file, print row counts per source
    python3 tools/aiconfigurator_rows.py --check   # exit 1 if the file is not what this writes
    python3 tools/aiconfigurator_rows.py --reference PATH --output PATH

Reads tests/data/aiconfigurator/nccl-aiconfigurator-public.json (a verbatim copy of
../shared/reference/nccl-aiconfigurator-public.json, so that the check runs in a clean clone; --check
also fails when ../shared/reference holds a different copy) and writes one validation row of kind
"coll" per table row, in the reference's order.

What nccl-tests measured, and how a row says it:
  * size: nccl-tests' -b S, in bytes, is what every row's "size" is (topsim's coll rows take the
    requested size as nccl-tests does: allreduce moves S bytes per rank; allgather and alltoall
    receive S bytes per rank, S/n from each peer; reducescatter reduces S bytes per rank into S/n;
    nccl-tests prints that total as its "size" column). The sweeps' sizes are powers of two from
    512 B, so nccl-tests' per-rank count (count/n rounded down to 16 bytes) loses nothing at 2, 4
    or 8 GPUs and the printed size is S for every op and dtype.
  * metric: time_us below 64 MiB (the out-of-place time nccl-tests printed, as the table holds it);
    busbw_GBps from 64 MiB, computed from that time exactly as nccl-tests' *_perf.cu getBw do:
    algbw = S / time (allgather, alltoall, reducescatter: count * typesize * n, which is S),
    busbw = algbw * 2(n-1)/n (allreduce) or (n-1)/n (allgather, reducescatter, alltoall), in
    1e9 bytes/s, printed with two decimals as nccl-tests prints it (%6.2f).
  * GPUs: "gpus": N, the first N GPUs of the server in topsim's ordinal order, as the collector ran
    nccl-tests -t N (one process, one thread per GPU, CUDA devices 0..N-1).
  * dtype: nccl-tests' name (half, int8).
  * nccl: the release the table names. WRITE_NCCL_ALWAYS is the one switch: False writes the key
    only where models/nccl_versions.json has a line that covers the release (what topsim's
    Catalog::nccl_version accepts today); other rows say the release in their note and run the
    default line. Flip it to True once nearest-older release mapping lands.

Bad input -> a message naming the file and JSON pointer, exit 2. Python 3 standard library only.
"""

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "tests" / "data" / "aiconfigurator" / "nccl-aiconfigurator-public.json"
SHARED = ROOT.parent / "shared" / "reference" / "nccl-aiconfigurator-public.json"
OUTPUT = ROOT / "scenarios" / "validation" / "nccl-aiconfigurator.json"
NCCL_VERSIONS = ROOT / "models" / "nccl_versions.json"

# The one switch (see the module docstring): True writes "nccl" on every row.
WRITE_NCCL_ALWAYS = False

LARGE_MESSAGE_B = 64 * 1024 * 1024  # the validation split: busbw from 64 MiB up, time below

# How nccl-tests turns algbw into busbw (src/*_perf.cu getBw), by op.
BUSBW_FACTOR = {
    "allreduce": lambda n: 2 * (n - 1) / n,
    "allgather": lambda n: (n - 1) / n,
    "reducescatter": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
}
DTYPES = ("half", "int8")

# Repeatability of an nccl-tests time: each figure is the mean of 100 timed iterations (60 above
# 16 MiB) after 40 warm-up ones, median over 1-3 collections. Where the dtype cannot matter (allgather
# and alltoall move bytes, they reduce nothing), the half and int8 tables of the same bytes are two
# collections of one figure: they agree to a median 0.5% (90th percentile 3% for allgather, 10% for
# alltoall, the spread sitting at latency-bound sizes). 5% is that repeatability at the sizes that are
# not at their latency floor.
TOLERANCE = 0.05

# system -> (topology, id part, the GPU the table must name, how the bundled topology stands for the server)
SYSTEMS = {
    "a100_sxm": ("dgx-a100", "a100-sxm", "NVIDIA A100-SXM4-80GB",
                 "HGX A100 8-GPU with A100-SXM4-80GB, modelled by the bundled dgx-a100 (A100-SXM4-40GB): the "
                 "NVLink3 / 6-NVSwitch fabric is the same and memory size does not enter a collective"),
    "h100_sxm": ("dgx-h100", "h100-sxm", "NVIDIA H100 80GB HBM3",
                 "HGX H100 8-GPU (H100 80GB HBM3), modelled by the bundled dgx-h100: the same baseboard "
                 "(NVLink4, 4 NVSwitches)"),
    "l40s": ("pcie-8x-l40s", "l40s", "NVIDIA L40S",
             "8 x L40S PCIe server (no NVLink), modelled by the bundled pcie-8x-l40s, whose PCIe layout (2 GPUs "
             "per switch, 2 switches per socket) is an assumption; the collector's server is not described"),
    "b200_sxm": ("hgx-b200", "b200-sxm", "NVIDIA B200",
                 "HGX B200 8-GPU, modelled by the bundled hgx-b200 (NVLink5, 2 NVSwitch chips)"),
}

DESCRIPTION = (
    "NVIDIA's per-release single-server nccl-tests sweeps collected for aiconfigurator "
    "(shared/reference/nccl-aiconfigurator-public.md), generated by tools/aiconfigurator_rows.py from "
    "tests/data/aiconfigurator/nccl-aiconfigurator-public.json (do not edit by hand): one row per table row, "
    "out-of-place, the first N GPUs of the server (nccl-tests -t N, one process). size is nccl-tests' -b in "
    "bytes (for allgather, alltoall and reducescatter the total over ranks, as nccl-tests prints it). Sizes "
    "below 64 MiB compare time_us as printed; from 64 MiB busbw_GBps computed from that time as nccl-tests "
    "does (algbw = size / time; busbw = algbw * 2(n-1)/n for allreduce, (n-1)/n for allgather, reducescatter "
    "and alltoall). dtype as nccl-tests ran it (half, int8). nccl is the release the table names, written "
    "where topsim models a line covering it (models/nccl_versions.json); a row's note names the release "
    "otherwise and the row runs the default line. tolerance 0.05: the repeatability of an nccl-tests time, "
    "from the half and int8 tables of allgather and alltoall (where the dtype cannot matter), which agree "
    "to a median 0.5%. role: check for every row (no constant is solved on them). One source id per "
    "(system, release); cross-validation leaves out all rows of one source id at once."
)

CITATION = (
    "NVIDIA ai-dynamo/aiconfigurator @095f58a51 (Apache-2.0), aic-core/src/aiconfigurator_core/systems/data/"
    "{system}/comm/nccl/<dir>/nccl_perf.parquet, rows recording NCCL {nccl}{named}: {server}, {gpu}; collected by "
    "collector/network/collect_nccl.py as all_gather_perf, alltoall_perf, reduce_scatter_perf and all_reduce_perf "
    "-b S -e S -t GPUS -d half|int8 -w 40 -n 100 (60 above 16 MiB) -c 0 (one process, one thread per GPU, the "
    "first N GPUs, out-of-place time; median over repeated collections); shared/reference/"
    "nccl-aiconfigurator-public.json (tables aic-{system}-nccl{nccl}-*)"
)


class BadInput(Exception):
    def __init__(self, path, pointer, message):
        super().__init__(f"{path}:{pointer or '/'}: {message}")


def size_text(size_B):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size_B >= scale and size_B % scale == 0:
            return f"{size_B // scale}{unit}"
    return f"{size_B}B"


def version_parts(text):
    return [int(p) if p.isdigit() else -1 for p in text.split(".")]


def modelled_lines(path):
    """[(first, last)] of models/nccl_versions.json: the releases topsim accepts in a row's "nccl"."""
    lines = []
    for name, line in json.loads(path.read_text(encoding="utf-8"))["nccl_versions"].items():
        first, last = line["covers"]
        lines.append((version_parts(first), version_parts(last)))
    return lines


def covered(release, lines):
    parts = version_parts(release)
    if len(parts) < 2 or min(parts[:2]) < 0:
        return False
    minor = parts[:2]  # only major.minor decides, as NcclVersion::covers
    return any(first <= minor <= last for first, last in lines)


def expect(path, pointer, ok, message):
    if not ok:
        raise BadInput(path, pointer, message)


def field(path, table, pointer, key, kind):
    expect(path, pointer, isinstance(table, dict), "expected an object")
    expect(path, f"{pointer}/{key}", key in table, f'missing key "{key}"')
    value = table[key]
    good = isinstance(value, kind) and not isinstance(value, bool)
    expect(path, f"{pointer}/{key}", good, f"expected {kind.__name__ if isinstance(kind, type) else 'a number'}, got {value!r}")
    return value


def build_rows(reference_path, lines):
    try:
        document = json.loads(reference_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise BadInput(reference_path, "", f"cannot read: {e}")
    except json.JSONDecodeError as e:
        raise BadInput(reference_path, "", f"not JSON: {e}")
    tables = field(reference_path, document, "", "tables", list)
    sources, rows, ids = {}, [], set()
    for t, table in enumerate(tables):
        at = f"/tables/{t}"
        system = field(reference_path, table, at, "system", str)
        expect(reference_path, f"{at}/system", system in SYSTEMS,
               f"unknown system '{system}' (known: {', '.join(sorted(SYSTEMS))}): add it to SYSTEMS with its topology")
        topology, system_id, gpu_name, stands_for = SYSTEMS[system]
        gpu = field(reference_path, table, at, "gpu", str)
        expect(reference_path, f"{at}/gpu", gpu == gpu_name, f"system {system} is expected to name GPU '{gpu_name}', got '{gpu}'")
        server = field(reference_path, table, at, "server", str)
        release = field(reference_path, table, at, "nccl", str)
        expect(reference_path, f"{at}/nccl", len(version_parts(release)) >= 2 and min(version_parts(release)) >= 0,
               f"expected an NCCL release such as 2.27.3, got '{release}'")
        op = field(reference_path, table, at, "op", str)
        expect(reference_path, f"{at}/op", op in BUSBW_FACTOR, f"unknown op '{op}' (known: {', '.join(BUSBW_FACTOR)})")
        dtype = field(reference_path, table, at, "dtype", str)
        expect(reference_path, f"{at}/dtype", dtype in DTYPES, f"unknown dtype '{dtype}' (known: {', '.join(DTYPES)})")
        gpus = field(reference_path, table, at, "gpus", int)
        expect(reference_path, f"{at}/gpus", 2 <= gpus <= 8, f"expected 2 to 8 GPUs of one 8-GPU server, got {gpus}")
        source = f"aic-{system_id}-nccl-{release.replace('.', '-')}"
        named = "" if system != "h100_sxm" or release != "2.23" else " (no release recorded: the directory's name)"
        citation = CITATION.format(system=system, nccl=release, named=named, server=server, gpu=gpu)
        expect(reference_path, f"{at}/server", sources.setdefault(source, citation) == citation,
               f"tables of {system} NCCL {release} name different servers")
        with_nccl = WRITE_NCCL_ALWAYS or covered(release, lines)
        for r, measured in enumerate(field(reference_path, table, at, "rows", list)):
            rat = f"{at}/rows/{r}"
            size_B = field(reference_path, measured, rat, "size_B", int)
            expect(reference_path, f"{rat}/size_B", size_B >= 16 * gpus and size_B & (size_B - 1) == 0,
                   f"expected a power of two of at least 16 bytes per GPU, got {size_B}")
            time_us = field(reference_path, measured, rat, "time_us", (int, float))
            expect(reference_path, f"{rat}/time_us", time_us > 0, f"expected a positive time, got {time_us}")
            samples = field(reference_path, measured, rat, "samples", int)
            expect(reference_path, f"{rat}/samples", samples >= 1, f"expected at least one sample, got {samples}")
            row_id = f"aic/{system_id}/{release}/{op}/{dtype}/{gpus}gpu/{size_text(size_B)}"
            expect(reference_path, rat, row_id not in ids, f"a second row {row_id}")
            ids.add(row_id)
            if size_B >= LARGE_MESSAGE_B:
                metric = "busbw_GBps"
                value = round(size_B / (time_us * 1e-6) / 1e9 * BUSBW_FACTOR[op](gpus), 2)
                how = f"busbw from the printed {time_us:g} us"
            else:
                metric, value, how = "time_us", time_us, "time as printed"
            note = f"{stands_for}; NCCL {release}"
            if not with_nccl:
                note += " (no modelled line covers it yet: runs topsim's default line)"
            note += f"; {how}, " + ("one collection" if samples == 1 else f"median of {samples} collections")
            row = {"id": row_id, "kind": "coll", "topology": topology, "op": op, "gpus": gpus, "size": size_text(size_B),
                   "dtype": dtype}
            if with_nccl:
                row["nccl"] = release
            row.update({"peer_access": True, "metric": metric, "measured": value, "role": "check", "tolerance": TOLERANCE,
                        "source": source, "note": note})
            rows.append(row)
    return sources, rows


def check_unique(rows, sources, output):
    """Ids unique across scenarios/validation/*.json; a source id cited elsewhere must be cited alike."""
    ours = {row["id"] for row in rows}
    for path in sorted(OUTPUT.parent.glob("*.json")):
        if path.resolve() in (output.resolve(), OUTPUT.resolve()):
            continue
        other = json.loads(path.read_text(encoding="utf-8"))
        clash = ours & {row["id"] for row in other.get("rows", [])}
        if clash:
            raise SystemExit(f"aiconfigurator_rows: ids also in {path}: {sorted(clash)[:3]}")
        for source, text in other.get("sources", {}).items():
            if source in sources and sources[source] != text:
                raise SystemExit(f"aiconfigurator_rows: source {source} is cited differently in {path}")


def render(sources, rows):
    """The file's text: the layout of the other validation files (one row per line)."""
    lines = ["{", f'  "description": {json.dumps(DESCRIPTION)},', '  "sources": {']
    lines += [f"    {json.dumps(k)}: {json.dumps(v)}," for k, v in sources.items()]
    lines[-1] = lines[-1].rstrip(",")
    lines += ["  },", '  "rows": [']
    lines += [f"    {json.dumps(row)}," for row in rows]
    lines[-1] = lines[-1].rstrip(",")
    lines += ["  ]", "}"]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the output file differs from what this writes")
    parser.add_argument("--reference", type=Path, default=REFERENCE, help=f"tables to read (default {REFERENCE})")
    parser.add_argument("--output", type=Path, default=OUTPUT, help=f"file to write (default {OUTPUT})")
    args = parser.parse_args()
    try:
        sources, rows = build_rows(args.reference, modelled_lines(NCCL_VERSIONS))
    except BadInput as e:
        print(f"aiconfigurator_rows: {e}", file=sys.stderr)
        return 2
    check_unique(rows, sources, args.output)
    text = render(sources, rows)
    if args.check:
        if args.reference == REFERENCE and SHARED.exists() and SHARED.read_bytes() != REFERENCE.read_bytes():
            print(f"aiconfigurator_rows: {REFERENCE} is not a copy of {SHARED}: copy it again and regenerate", file=sys.stderr)
            return 1
        if not args.output.exists() or args.output.read_text(encoding="utf-8") != text:
            print(f"aiconfigurator_rows: {args.output} is stale: run python3 tools/aiconfigurator_rows.py", file=sys.stderr)
            return 1
        return 0
    args.output.write_text(text, encoding="utf-8")
    counts = Counter((row["source"], "nccl" in row) for row in rows)
    for (source, with_nccl), count in sorted(counts.items()):
        print(f"{source:32} {count:5} rows{'' if with_nccl else ' (release in the note only)'}")
    print(f"{'total':32} {len(rows):5} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
