#!/usr/bin/env python3
"""Writes scenarios/validation/inference.json: published inference, MIG and 2:4 sparsity rows (issue 17).

    python3 tools/inference_rows.py           # write the file, print row counts per (group, role)
    python3 tools/inference_rows.py --check   # exit 1 if the file is not what this writes
    python3 tools/inference_rows.py --reference PATH --output PATH

Transcribes the markdown tables of ../shared/reference/inference-public.md (groups inference/*,
mig/* and sparsity/*; training-1gpu/* lives in training-public.json) into validation rows of kind
"inference", in the markdown's order. Every figure is the source's; every mapping that is not
printed by the source (a GPU name, a MIG profile name, a sequence length) is an assumption that the
row's note states. The script fails loudly on a reference row it does not know how to map, and
checks that ids are unique across scenarios/validation/*.json and that every source id is declared.
Python 3 standard library only.
"""

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

import validation_file

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT.parent / "shared" / "reference" / "inference-public.md"
OUTPUT = ROOT / "scenarios" / "validation" / "inference.json"

# Row id -> id of the fitted constant the row pins. A listed row gets role "calibration" and
# "pins"; every other row that topsim can express is a check. Empty until the predictor is fitted.
CALIBRATION = {
    # The largest GEMMs of the demo (BERT-large, sequence 128, batch 128, INT8): math-bound.
    "inference/trt-demobert-8.5.1-a100-bert_large-s128-b128/int8": "compute:ampere.int8_gemm_efficiency",
    # The smallest engine of the demo (BERT-base, sequence 128, batch 1, INT8): every kernel at its floor.
    "inference/trt-demobert-8.5.1-a100-bert_base-s128-b1/int8": "compute:ampere.launch",
    # Eager BERT-base at batch 4: host-bound, one dispatch per operator.
    "sparsity/pt-tutorial-bert-base-squad-eager-bs4/dense": "frameworks:pytorch.dispatch",
    # A query's host round trip: ResNet-50 SingleStream, whose engine is at its kernel floor.
    "inference/mlperf-v3_0-A100-PCIe-80GBx1_TRT-resnet50-SingleStream": "frameworks:tensorrt.query",
}

# Relative uncertainty of one published figure: MLPerf, demoBERT and the tutorial print single
# runs, so the 5% of kernel.json's single-run rows applies.
TOLERANCE = 0.05

# Copied verbatim from the former scenarios/validation/pending-inference.json.
SOURCES = {
    "pytorch-semi-structured-sparse-prototype": (
        "pytorch/tutorials prototype_source/semi_structured_sparse.rst (commit "
        "11af4a04ea3f8069f3caf901e2f15c560773ea37), results table on an A100 80GB: bert-base-cased SQuAD "
        "forward (sequence 384), all encoder nn.Linear 2:4, fp16, CUTLASS backend forced, eager, batch "
        "4-256; shared/reference/inference-public.md"
    ),
    "pytorch-semi-structured-sparse": (
        "pytorch/tutorials advanced_source/semi_structured_sparse.py (commit "
        "065c9d23d25d18f003d986a5fbb1c7fd25270f1e), results on an A100 80GB with the CUTLASS backend "
        "forced: one fp16 nn.Linear 10240->3072 on a 3072x10240 input, 0.870 ms dense and 0.630 ms 2:4 "
        "sparse (1.38x); bert-base-cased SQuAD forward, eager and torch.compile, batch 4-256; "
        "shared/reference/measurements.md and shared/reference/inference-public.md"
    ),
    "trt-demobert": (
        "NVIDIA/TensorRT demo/BERT/README.md (commit 768d994b7305b69eb5db2397337ae96e36586b41), "
        "'Inference performance' tables, TensorRT 8.5.1, CUDA 11.6, scripts/inference_benchmark.sh: "
        "BERT-Base and BERT-Large (FP16 and INT8) and 2:4-sparse Megatron-LM Large (INT8 QAT) on A100 "
        "40GB and A30, sequence 128/384, batch 1-128; shared/reference/inference-public.md"
    ),
    "mlperf-inference-v1-0-nvidia": (
        "mlcommons/inference_results_v1.0 "
        "closed/NVIDIA/results/*/{bert-99,bert-99.9,resnet50}/*/performance/run_1/mlperf_log_summary.txt "
        "(commit f7759baf2fdb9e17d97f07326db6d461d6dc1ef2), gpu_batch_size from closed/NVIDIA/configs: "
        "NVIDIA's MLPerf Inference v1.0 closed submission (TensorRT) on A100-SXM-80GB, A100-PCIe-40GB, "
        "A30 and MIG 1g instances; shared/reference/inference-public.md"
    ),
    "mlperf-inference-v3-0-nvidia": (
        "mlcommons/inference_results_v3.0 "
        "closed/NVIDIA/results/*/{bert-99,bert-99.9,resnet50}/*/performance/run_1/mlperf_log_summary.txt "
        "(commit 1948f9b5b93c5b4dcafe15de0faa08cdf1439fca), gpu_batch_size from closed/NVIDIA/configs: "
        "NVIDIA's MLPerf Inference v3.0 closed submission (TensorRT) on DGX A100 and DGX H100 (1 and 8 "
        "GPUs), A100-PCIe-80GB, H100-PCIe-80GB and L4; shared/reference/inference-public.md"
    ),
}

# A "- source:" line of the markdown -> source id; None: a group this file does not hold.
SOURCE_LINES = (
    ("GitHub pytorch/tutorials prototype_source/semi_structured_sparse.rst ", "pytorch-semi-structured-sparse-prototype"),
    ("GitHub pytorch/tutorials advanced_source/semi_structured_sparse.py ", "pytorch-semi-structured-sparse"),
    ("GitHub NVIDIA/TensorRT demo/BERT/README.md ", "trt-demobert"),
    ("GitHub mlcommons/inference_results_v1.0 ", "mlperf-inference-v1-0-nvidia"),
    ("GitHub mlcommons/inference_results_v3.0 ", "mlperf-inference-v3-0-nvidia"),
    ("GitHub lambdal/deeplearning-benchmark ", None),
)

# The reference's GPU names -> models/gpus.json names, with the assumption the mapping makes
# (empty when the source names the part exactly).
GPUS = {
    "NVIDIA A100 (40GB)": ("a100", "the source prints 'A100 40GB' without the form factor: taken as the SXM part (a100), an assumption"),
    "NVIDIA A100 80GB": ("a100-80gb", "the tutorial's 'A100 80GB' does not say SXM or PCIe: taken as SXM (a100-80gb) as kernel.json does, an assumption"),
    "NVIDIA A100-PCIe-40GB": ("a100-pcie", ""),
    "NVIDIA A100-PCIe-80GB": ("a100-pcie-80gb", ""),
    "NVIDIA A100-SXM-80GB (DGX A100)": ("a100-80gb", ""),
    "NVIDIA A30": ("a30", ""),
    "NVIDIA H100-SXM-80GB (DGX H100)": ("h100", ""),
    "NVIDIA H100-PCIe-80GB": ("h100-pcie", ""),
    "NVIDIA L4": ("l4", ""),
}

# The reference's MIG column -> (profile, assumption).
MIGS = {
    "": (None, ""),
    "1g.10gb (one instance)": ("1g.10gb", "one 1g.10gb MIG instance serving alone (MLPerf system 1x1g.10gb)"),
    "1g.3gb (one instance)": (
        "1g.6gb",
        "one MIG instance serving alone; MLPerf v1.0 names the A30's one-slice instance 1g.3gb: mapped to 1g.6gb, "
        "the documented A30 one-slice profile (a quarter of the GPU's compute), an assumption",
    ),
}

FP8_NOTE = ("precision fp8 as the source's precision column prints it (NVIDIA's config sets precision fp16 and "
            "use_fp8); bert-99.9 runs fp16 on the other GPUs")

MLPERF_ID = re.compile(
    r"^(?P<group>inference|mig)/mlperf-v(?P<major>\d)_(?P<minor>\d)-(?P<system>.+)-"
    r"(?P<benchmark>bert-99_9|bert-99|resnet50)-(?P<scenario>Offline|Server|SingleStream)$")
MLPERF_SCENARIOS = {
    # scenario -> (topsim scenario, metric, key of the measured dict, what the figure is)
    "Offline": ("offline", "throughput", "offline_samples_per_s", "Offline samples/s"),
    "Server": ("server", "throughput", "server_scheduled_samples_per_s",
               "Server scheduled samples/s (the query rate that met the Server latency bound)"),
    "SingleStream": ("single-stream", "latency_ms", "p90_latency_ms", "SingleStream 90th-percentile latency of one query, ms"),
}
DEMOBERT_ID = re.compile(r"^inference/trt-demobert-8\.5\.1-(?P<gpu>a100|a30)-(?P<model>bert_base|bert_large)-s(?P<seq>\d+)-b(?P<batch>\d+)$")
SPARSE_DEMOBERT_ID = re.compile(r"^sparsity/trt-demobert-8\.5\.1-(?P<gpu>a100|a30)-s(?P<seq>\d+)-b(?P<batch>\d+)$")
TUTORIAL_ID = re.compile(r"^sparsity/pt-tutorial-(?:v2-)?bert-base-squad-(?P<mode>eager|compiled)-bs(?P<batch>\d+)$")
TUTORIAL_LINEAR_ID = "sparsity/pt-tutorial-linear-10240x3072"
# The bundled SQuAD v1.1 length distribution of MLPerf's BERT harness, relative to the output's directory.
SQUAD_SEQ_DIST = "../../models/datasets/squad-v1.1-mlperf.json"

COMPILE_MISSING = "torch.compile's fusion: infer models tensorrt and eager pytorch only"

ALLOWED_KEYS = ("id", "kind", "model", "gpu", "mig", "count", "batch", "seq", "seq_dist", "precision", "sparsity", "framework",
                "scenario", "metric", "measured", "role", "pins", "missing", "tolerance", "source", "note")

DESCRIPTION = (
    "Published inference, MIG and 2:4 sparsity figures of shared/reference/inference-public.md (issue 17) that "
    "topsim infer predicts, generated by tools/inference_rows.py (do not edit by hand): kind 'inference', one row "
    "per figure of a model (resnet50, bert-base, bert-large at sequence seq) on a GPU of models/gpus.json, whole "
    "or one MIG instance (mig), count data-parallel copies (omitted: one GPU), at batch (omitted: the source "
    "prints none, topsim picks the best), precision, sparsity (2:4 or omitted: dense) and framework (tensorrt "
    "or eager pytorch). Metrics: time_ms of one batch (TensorRT demoBERT average, PyTorch tutorial forward), "
    "speedup of 2:4 sparse over dense (dense time / sparse time), throughput in samples/s (MLPerf Offline, and "
    "Server's scheduled rate) and latency_ms (MLPerf SingleStream, 90th percentile, batch 1) in the MLPerf "
    "scenario named. demoBERT's seq_per_s columns are its avg_ms inverted and its sparsity tables repeat the "
    "dense times, so neither is added again; the PyTorch tutorial's single Linear is in kernel.json and "
    "Lambda's single-GPU training table in training-public.json. tolerance 0.05: every figure is a single "
    "published run. role: calibration (a fitted constant was solved on the row; pins names it), check (an "
    "independent figure nothing was solved on), repeat (a row is a repeat when the source publishes one figure "
    "for several GPU pairs and another row already carries it; repeats names that row, and the row adds no "
    "independent evidence), informational (not an independent measurement or not comparable like-for-like) or "
    "pending (topsim cannot express it yet; missing says what is missing). tolerance is the relative "
    "uncertainty of the published figure, against the midpoint of a measured range. Cross-validation leaves "
    "out all rows of one source id at once."
)


class RefRow:
    """One table row of the markdown, with the source line it sits under and its line number."""

    def __init__(self, cells, source_line, line_no):
        self.id, gpu, self.mig, self.shape, self.precision, batch, measured = cells
        self.source_line = source_line
        self.line_no = line_no
        match = re.fullmatch(r"(?P<name>.+?) x(?P<count>\d+)", gpu)
        if not match:
            self.fail(f"gpu cell {gpu!r} does not end in 'xN'")
        self.gpu_name = re.sub(r" \((?:tutorial|later note).*\)$", "", match["name"])
        self.count = int(match["count"])
        self.batch = None if batch == "None" else int(batch)
        self.measured = json.loads(measured)

    def fail(self, message):
        raise SystemExit(f"inference_rows: line {self.line_no} ({self.id}): {message}")

    def figure(self, key):
        if key not in self.measured:
            self.fail(f"measured has no {key!r}; it has {sorted(self.measured)}")
        return self.measured[key]


def read_reference(path):
    """Every table row of the markdown, in order, each with its '- source:' line."""
    rows = []
    source_line = None
    for line_no, line in enumerate(path.read_text().splitlines(), start=1):
        if line.startswith("- source: "):
            source_line = line[len("- source: "):]
        elif line.startswith("| ") and not line.startswith("| id |"):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if len(cells) != 7:
                raise SystemExit(f"inference_rows: {path}:{line_no}: expected 7 cells, got {len(cells)}")
            if source_line is None:
                raise SystemExit(f"inference_rows: {path}:{line_no}: a table row before any '- source:' line")
            rows.append(RefRow(cells, source_line, line_no))
    return rows


def source_id(ref):
    for prefix, sid in SOURCE_LINES:
        if ref.source_line.startswith(prefix):
            if sid is not None:
                commit = re.search(r"\(commit ([0-9a-f]{40})\)", ref.source_line)
                if not commit or commit[1] not in SOURCES[sid]:
                    ref.fail(f"source commit of {ref.source_line!r} is not the one {sid!r} cites")
            return sid
    ref.fail(f"unknown source {ref.source_line!r}")


def gpu_of(ref):
    """(models/gpus.json name or None, assumption note); None: a GPU outside the mapped list."""
    if ref.gpu_name not in GPUS:
        return None, ""
    return GPUS[ref.gpu_name]


def join_notes(*parts):
    return "; ".join(part for part in parts if part)


def base_row(ref, sid, model, batch, seq, precision):
    """A row's keys up to precision, in ALLOWED_KEYS order; the caller adds the rest."""
    gpu, _ = gpu_of(ref)
    row = {"id": ref.id, "kind": "inference", "model": model, "gpu": gpu if gpu else ref.gpu_name}
    mig = MIGS.get(ref.mig)
    if mig is None:
        ref.fail(f"unknown mig cell {ref.mig!r}")
    if mig[0]:
        row["mig"] = mig[0]
    if ref.count > 1:
        row["count"] = ref.count
    if batch is not None:
        row["batch"] = batch
    if seq is not None:
        row["seq"] = seq
    row["precision"] = precision
    row["_source"] = sid
    return row


def finish(row, metric, measured, notes, missing=None):
    """Adds metric, measured, role (check, calibration or pending), tolerance, source and note."""
    sid = row.pop("_source")
    if row["gpu"] not in {name for name, _ in GPUS.values()}:
        missing = missing or f"GPU model {row['gpu']}"
    row["metric"] = metric
    row["measured"] = measured
    if missing:
        row.update({"role": "pending", "missing": missing})
    elif row["id"] in CALIBRATION:
        row.update({"role": "calibration", "pins": CALIBRATION[row["id"]], "tolerance": TOLERANCE})
    else:
        row.update({"role": "check", "tolerance": TOLERANCE})
    row["source"] = sid
    row["note"] = join_notes(*notes)
    return row


def demobert_rows(ref, sid):
    """A demoBERT inference row: one time_ms row per engine (INT8 and FP16)."""
    match = DEMOBERT_ID.match(ref.id)
    if not match or ref.precision != "int8 and fp16 (two engines)":
        ref.fail("not a demoBERT inference row of two engines")
    seq, batch = int(match["seq"]), int(match["batch"])
    if ref.batch != batch or f"fixed seq {seq}" not in ref.shape:
        ref.fail("batch or sequence of the id disagrees with the row")
    model = match["model"].replace("_", "-")
    rows = []
    for precision in ("int8", "fp16"):
        row = base_row(ref, sid, model, batch, seq, precision)
        row["id"] = f"{ref.id}/{precision}"
        row["framework"] = "tensorrt"
        notes = (f"reference row {ref.id}, {precision.upper()} engine",
                 f"TensorRT 8.5.1 demoBERT {model} SQuAD at a fixed sequence {seq}, batch {batch}: average time of one "
                 f"batch from scripts/inference_benchmark.sh (p99 {ref.figure(precision + '_p99_ms')} ms)",
                 gpu_of(ref)[1])
        rows.append(finish(row, "time_ms", ref.figure(f"{precision}_avg_ms"), notes))
    return rows


def sparse_demobert_row(ref, sid, dense_int8_ms):
    """A demoBERT sparsity row: one speedup row (dense BERT-large INT8 over 2:4 Megatron-LM Large INT8)."""
    match = SPARSE_DEMOBERT_ID.match(ref.id)
    if not match or ref.precision != "int8":
        ref.fail("not a demoBERT sparsity row")
    seq, batch = int(match["seq"]), int(match["batch"])
    if ref.batch != batch or f"seq {seq}" not in ref.shape:
        ref.fail("batch or sequence of the id disagrees with the row")
    dense_ms, sparse_ms = ref.figure("dense_int8_avg_ms"), ref.figure("sparse_int8qat_avg_ms")
    speedup = ref.figure("speedup")
    if abs(dense_ms / sparse_ms - speedup) > 5e-4:
        ref.fail(f"speedup {speedup} is not dense/sparse = {dense_ms / sparse_ms:.4f}")
    dense_id = f"inference/trt-demobert-8.5.1-{match['gpu']}-bert_large-s{seq}-b{batch}/int8"
    if dense_int8_ms.get(dense_id) != dense_ms:
        ref.fail(f"dense INT8 {dense_ms} ms is not the {dense_int8_ms.get(dense_id)} ms of {dense_id}")
    row = base_row(ref, sid, "bert-large", batch, seq, "int8")
    row.update({"sparsity": "2:4", "framework": "tensorrt"})
    notes = (f"reference row {ref.id}",
             f"TensorRT 8.5.1 demoBERT, sequence {seq}, batch {batch}: speedup = dense BERT-large INT8 (PTQ) {dense_ms} ms "
             f"/ 2:4-sparse Megatron-LM Large INT8 (QAT) {sparse_ms} ms, averages",
             "the sparse network is Megatron-LM Large, taken to have BERT-large's GEMM shapes (24 layers of hidden 1024, "
             "as the source states); its INT8 QAT against the dense INT8 PTQ is taken to change no kernel time",
             f"the dense time is {dense_id}'s",
             gpu_of(ref)[1])
    return finish(row, "speedup", speedup, notes)


def tutorial_rows(ref, sid):
    """A PyTorch tutorial BERT-base row: a speedup row and a dense time_ms row; torch.compile rows pending."""
    match = TUTORIAL_ID.match(ref.id)
    if not match or not ref.precision.startswith("fp16") or "seq 384" not in ref.shape:
        ref.fail("not a PyTorch tutorial bert-base fp16 row at sequence 384")
    batch = int(match["batch"])
    if ref.batch != batch:
        ref.fail("batch of the id disagrees with the row")
    compiled = match["mode"] == "compiled"
    if compiled != ("torch.compile" in ref.precision):
        ref.fail("the id's mode disagrees with the precision column")
    dense_ms, sparse_ms = ref.figure("dense_ms"), ref.figure("sparse_ms")
    speedup = ref.figure("speedup")
    if abs(dense_ms / sparse_ms - speedup) > 5e-4:
        ref.fail(f"speedup {speedup} is not dense/sparse = {dense_ms / sparse_ms:.4f}")
    runner = "torch.compile" if compiled else "eager PyTorch"
    workload = (f"bert-base-cased SQuAD question answering (HF transformers) forward at sequence 384, batch {batch}, fp16, "
                f"CUTLASS backend forced, {runner}")
    missing = COMPILE_MISSING if compiled else None
    sparse = base_row(ref, sid, "bert-base", batch, 384, "fp16")
    sparse.update({"sparsity": "2:4", "framework": "pytorch"})
    sparse_notes = (f"reference row {ref.id}",
                    f"speedup = dense {dense_ms} ms / 2:4 sparse {sparse_ms} ms of a {workload}, every encoder nn.Linear "
                    "2:4 (to_sparse_semi_structured)",
                    gpu_of(ref)[1])
    dense = base_row(ref, sid, "bert-base", batch, 384, "fp16")
    dense["id"] = f"{ref.id}/dense"
    dense["framework"] = "pytorch"
    dense_notes = (f"reference row {ref.id}, its dense figure", f"time of one {workload}", gpu_of(ref)[1])
    return [finish(sparse, "speedup", speedup, sparse_notes, missing),
            finish(dense, "time_ms", dense_ms, dense_notes, missing)]


def mlperf_row(ref, sid):
    """An MLPerf Inference row: throughput (Offline, Server) or latency_ms (SingleStream)."""
    match = MLPERF_ID.match(ref.id)
    if not match:
        ref.fail("not an MLPerf row id")
    version = f"v{match['major']}.{match['minor']}"
    benchmark = match["benchmark"].replace("_", ".")
    if f"inference_results_{version} " not in ref.source_line or f"/{benchmark}/{match['scenario']}/" not in ref.source_line:
        ref.fail("id disagrees with the source path")
    if f"scenario {match['scenario']}" not in ref.shape or f"MLPerf Inference {version} closed" not in ref.shape:
        ref.fail("id disagrees with the model / shape column")
    scenario, metric, key, what = MLPERF_SCENARIOS[match["scenario"]]
    notes = [f"reference row {ref.id}",
             f"MLPerf Inference {version} closed, NVIDIA TensorRT, system {match['system']}, {benchmark}: {what}"]
    if benchmark == "resnet50":
        model, seq, precision = "resnet50", None, ref.precision
        if precision != "int8":
            ref.fail(f"resnet50 at precision {precision!r}")
        notes.append("ResNet-50 v1.5, ImageNet 224x224")
    else:
        model, seq = "bert-large", 384
        expected = "int8" if benchmark == "bert-99" else "fp16"
        precision = "fp8" if ref.precision == "fp8 (config precision fp16 + use_fp8)" else ref.precision
        if precision != expected and not (precision == "fp8" and benchmark == "bert-99.9"):
            ref.fail(f"{benchmark} at precision {ref.precision!r}")
        notes.append("BERT-large SQuAD v1.1, at most 384 tokens (MLPerf's maximum): NVIDIA's harness packs the "
                     "dataset's variable sequence lengths without padding; seq_dist gives them as one point at the "
                     "mean real length, 177 tokens, derived from a published padding share, not counted (E[s^2] "
                     "understated)")
        if precision == "fp8":
            notes.append(FP8_NOTE)
    batch = ref.batch
    if match["scenario"] == "SingleStream":
        if batch != 1:
            ref.fail(f"SingleStream at batch {batch}")
    elif batch is not None and match["scenario"] == "Offline":
        notes.append(f"batch {batch} is gpu_batch_size of NVIDIA's Offline config")
    elif batch is None:
        notes.append("the source prints no batch: topsim picks it")
    if ref.count > 1:
        notes.append(f"count {ref.count}: {ref.count} data-parallel copies, one per GPU, no communication")
    notes.append(MIGS[ref.mig][1])
    notes.append(gpu_of(ref)[1])
    row = base_row(ref, sid, model, batch, seq, precision)
    if model == "bert-large":
        # MLPerf's SQuAD v1.1 harness: its sequence lengths (models/datasets, docs/inference.md).
        row = {**{k: v for k, v in row.items() if k != "precision" and k != "_source"}, "seq_dist": SQUAD_SEQ_DIST,
               "precision": row["precision"], "_source": row["_source"]}
    row.update({"framework": "tensorrt", "scenario": scenario})
    return finish(row, metric, ref.figure(key), notes)


def note_equal_figures(rows):
    """Edge and datacenter submissions of one system may print one figure twice: both stay checks, noted."""
    same = {}
    for row in rows:
        if row["role"] == "pending" or "scenario" not in row:
            continue
        key = tuple(row.get(k) for k in ("model", "gpu", "mig", "count", "precision", "scenario", "metric", "measured"))
        same.setdefault(key, []).append(row)
    for group in same.values():
        for row in group:
            others = [other["id"] for other in group if other is not row]
            if others:
                row["note"] += (f"; the same figure as {', '.join(others)} (edge and datacenter are separate "
                                "submissions: both kept as checks)")


def build_rows(refs):
    rows = []
    dense_int8_ms = {}
    for ref in refs:
        sid = source_id(ref)
        if sid is None or ref.id == TUTORIAL_LINEAR_ID:
            continue  # Lambda's training table: training-public.json; the single Linear: kernel.json
        if ref.id.startswith("inference/trt-demobert-"):
            made = demobert_rows(ref, sid)
            dense_int8_ms.update({row["id"]: row["measured"] for row in made if row["precision"] == "int8"})
        elif ref.id.startswith("sparsity/trt-demobert-"):
            made = [(ref, sid)]  # needs the dense rows, which come later in the markdown
        elif ref.id.startswith("sparsity/pt-tutorial-"):
            made = tutorial_rows(ref, sid)
        elif ref.id.startswith(("inference/mlperf-", "mig/mlperf-")):
            made = [mlperf_row(ref, sid)]
        else:
            ref.fail("a row of no known group")
        rows.extend(made)
    rows = [sparse_demobert_row(*row, dense_int8_ms) if isinstance(row, tuple) else row for row in rows]
    note_equal_figures(rows)
    return rows


def check_rows(rows, output):
    """Keys, unique ids across every validation file, declared sources, calibration ids."""
    validation_file.check_ids_unique(rows, output, "inference_rows")
    for row in rows:
        unknown = set(row) - set(ALLOWED_KEYS)
        if unknown or row["source"] not in SOURCES:
            raise SystemExit(f"inference_rows: {row['id']}: keys {sorted(unknown)} or source {row['source']!r}")
        if list(row) != [k for k in ALLOWED_KEYS if k in row]:
            raise SystemExit(f"inference_rows: {row['id']}: keys out of order")
    stray = set(CALIBRATION) - {row["id"] for row in rows if row["role"] == "calibration"}
    if stray:
        raise SystemExit(f"inference_rows: CALIBRATION names rows that are not calibration rows: {sorted(stray)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the output file differs from what this writes")
    parser.add_argument("--reference", type=Path, default=REFERENCE, help=f"markdown to read (default {REFERENCE})")
    parser.add_argument("--output", type=Path, default=OUTPUT, help=f"file to write (default {OUTPUT})")
    args = parser.parse_args()
    rows = build_rows(read_reference(args.reference))
    check_rows(rows, args.output)
    text = validation_file.render(DESCRIPTION, SOURCES, rows)
    if args.check:
        return 1 if validation_file.is_stale(text, args.output, "inference_rows") else 0
    args.output.write_text(text)
    counts = Counter((row["id"].split("/")[0], row["role"]) for row in rows)
    for (group, role), count in sorted(counts.items()):
        print(f"{group:10} {role:12} {count}")
    print(f"{'total':10} {'':12} {len(rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
