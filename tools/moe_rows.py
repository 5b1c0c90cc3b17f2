#!/usr/bin/env python3
"""Writes scenarios/validation/training-moe-public.json: published MoE training runs (issue 50).

    python3 tools/moe_rows.py           # write the file, print row counts per (model, role)
    python3 tools/moe_rows.py --check   # exit 1 if the file is not what this writes (77: no reference)
    python3 tools/moe_rows.py --reference PATH --output PATH

Transcribes every entry of ../shared/reference/training-moe-public.md (Megatron-Bridge and NeMo
performance summaries, the Megatron-Core MoE report) into validation rows of kind "llm", in the
markdown's order, metric tokens_per_s_per_gpu. Every figure is the source's; every layout detail
the source does not print (distributed optimizer, overlap, recomputation, ETP, the pipeline split
of 94 layers, the fp8 recipe where unnamed) is an assumption the row's note states. An entry
topsim cannot represent (hybrid Mamba layers, multi-head latent attention, NVFP4, no layout or no
tokens/s printed) becomes a "pending" row whose "missing" says why; none is dropped. The script
fails loudly on an entry it does not know how to map, and checks that ids are unique across
scenarios/validation/*.json. Python 3 standard library only.
"""

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import validation_file

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT.parent / "shared" / "reference" / "training-moe-public.md"
OUTPUT = ROOT / "scenarios" / "validation" / "training-moe-public.json"

# Reference model name -> models/transformers.json key (shapes from the cited HF config copies).
MODELS = {
    "Qwen3-30B-A3B": "qwen3-30b-a3b",
    "Qwen3-235B-A22B": "qwen3-235b-a22b",
    "gpt-oss-120b": "gpt-oss-120b",
    "Mixtral-8x7B": "mixtral-8x7b",
    "Mixtral-8x22B": "mixtral-8x22b",
    "Llama-4-Scout-17B-16E": "llama4-scout-17b-16e",
}
# Reference model name -> what topsim lacks to predict it.
UNREPRESENTABLE = {
    "DeepSeek-V3": "multi-head latent attention (low-rank q/kv projections, 192-wide qk and 128-wide v heads): "
                   "topsim's attention is one head_dim for q, k and v, and no choice of heads matches both MLA's "
                   "parameters (187 M a layer) and its attention-core FLOPs (deepseek-v3-like overstates them by "
                   "~49% of a layer's GEMM work); multi-token prediction not modelled",
    "Kimi-K2": "multi-head latent attention (DeepSeek-V3's MLA, 64 heads): topsim's attention is one head_dim for "
               "q, k and v; multi-token prediction not modelled",
    "DeepSeek-V4-Flash": "DeepSeek-V4's compressed sparse attention (CSA/HCA), hyper-connections and hash-routed "
                         "layers: topsim has none of them",
    "Nemotron-3-Nano-30B-A3B": "a hybrid Mamba-2/MoE/attention stack: topsim has no Mamba (SSM) layer",
    "Nemotron-3.5-Lightning-30B-A3B": "a hybrid Mamba-2/MoE/attention stack: topsim has no Mamba (SSM) layer",
    "Nemotron-3-Super-120B-A12B": "a hybrid Mamba-2/latent-MoE/attention stack: topsim has no Mamba (SSM) layer "
                                  "nor latent (down-projected) experts",
    "Nemotron-3-Ultra-550B-A55B": "a hybrid Mamba-2/latent-MoE/attention stack: topsim has no Mamba (SSM) layer "
                                  "nor latent (down-projected) experts",
}
TOPOLOGIES = {"DGX-B200": "hgx-b200", "DGX-B300": "hgx-b300", "DGX-GB200": "gb200-nvl72-rack",
              "DGX-GB300": "gb300-nvl72-rack"}
SOURCES = {
    "mbridge-26-08": "NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md at 067f987df03b (NeMo container 26.08), Pre-Training Performance tables; shared/reference/training-moe-public.md",
    "mbridge-26-06-01": "NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md, NeMo container 26.06.01 tables (commit per row in the reference); shared/reference/training-moe-public.md",
    "mbridge-26-06": "NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md, NeMo container 26.06 tables (commit per row in the reference); shared/reference/training-moe-public.md",
    "mbridge-26-04-01": "NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md, NeMo container 26.04.01 tables (commit per row in the reference); shared/reference/training-moe-public.md",
    "mbridge-26-04": "NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md, NeMo container 26.04 tables (commit per row in the reference); shared/reference/training-moe-public.md",
    "mbridge-26-02-01": "NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md, NeMo container 26.02.01 tables (commit per row in the reference); shared/reference/training-moe-public.md",
    "mbridge-26-02": "NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md, NeMo container 26.02 tables (commit per row in the reference); shared/reference/training-moe-public.md",
    "mbridge-25-11": "NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md, NeMo container 25.11 tables (commit per row in the reference); shared/reference/training-moe-public.md",
    "mbridge-25-09": "NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md, NeMo container 25.09 tables, parenthesised values as _alt rows (commit per row in the reference); shared/reference/training-moe-public.md",
    "nemo-docs-25-02": "NVIDIA NeMo Framework user guide, Performance Summary, container NeMo 25.02, DGX-B200 pre-training table (docs.nvidia.com stored copy); shared/reference/training-moe-public.md",
    "nemo-docs-25-04": "NVIDIA NeMo Framework user guide, Performance Summary, container NeMo 25.04, DGX-GB200 pre-training table (docs.nvidia.com stored copy); shared/reference/training-moe-public.md",
    "nemo-docs-25-07": "NVIDIA NeMo Framework user guide, Performance Summary, container NeMo 25.07, DGX-GB200 pre-training table (docs.nvidia.com stored copy); shared/reference/training-moe-public.md",
    "mcore-moe-report": "Scalable Training of Mixture-of-Experts Models with Megatron Core (NVIDIA, arXiv:2603.07685), Table 11/17 as summarised in shared/reference/training-moe-public.md",
}
DESCRIPTION_HEAD = (
    "Published MoE training throughput on B200, B300, GB200 and GB300 (shared/reference/training-moe-public.md, "
    "all of its entries, written by tools/moe_rows.py) that topsim train predicts (kind llm): the model of "
    "models/transformers.json under the layout the source prints, on as many servers of the topology as its GPUs "
    "fill. Metric tokens_per_s_per_gpu as printed. Megatron-Bridge benchmarks force-balance the router "
    "(dropless), as topsim's MoE layer assumes. Layout details no source prints are assumptions stated in each "
    "row's note: distributed optimizer (zero 1) with gradient-reduce and parameter-gather overlap, no "
    "recomputation, flash attention, sequence parallelism with tp > 1, ETP = 1 where EP x TP exceeds GPUs / PP "
    "(folding; otherwise Megatron's default ETP = TP), the embedding and loss each taking a layer's slot where "
    "94 layers do not split evenly, GB200/GB300 jobs of more than 72 GPUs on racks of 16 trays (-seg16: Megatron-Bridge's "
    "launcher asks Slurm for segments of 16 trays), EP spanning NVLink domains allowed, the 1F1B all-to-all overlap only "
    "where the release's recipe is in the mirror and sets it (26.08 MXFP8 on GB200/GB300). Cross-validation leaves out one source (one container release) at once. ")


def entries(path):
    """The reference's entries: id -> {key: value}, JSON-valued keys parsed."""
    out, current = [], None
    for line in path.read_text().splitlines():
        if line.startswith("## "):
            current = {"id": line[3:].strip()}
            out.append(current)
        elif current is not None and line.startswith("- ") and ": " in line:
            key, value = line[2:].split(": ", 1)
            current[key] = json.loads(value) if value.startswith("{") else value
    return [e for e in out if "hardware" in e]


def source_id(entry):
    ident = entry["id"]
    if ident.startswith("mbridge_moe_"):
        return "mbridge-" + ident.split("_")[2].replace(".", "-")
    if ident.startswith("nemo_docs_"):
        return "nemo-docs-" + ident.split("_")[2].replace(".", "-")
    if ident.startswith("mcore_moe_report_"):
        return "mcore-moe-report"
    raise SystemExit(f"moe_rows: {ident}: no source id for this entry")


def precision(entry):
    """(precision, fp8_recipe, note, missing) from the entry's precision text."""
    text = entry["precision"]
    if text == "BF16":
        return "bf16", None, "BF16", None
    if text in ("MXFP8", "FP8-MX"):
        return "fp8", "mxfp8", "MXFP8 (fp8_recipe mxfp8)", None
    if text.startswith("FP8, per-tensor current scaling"):
        return "fp8", "tensorwise", "FP8 per-tensor current scaling (fp8_recipe tensorwise)", None
    if text.startswith("FP8 ("):
        return "fp8", "delayed", "FP8 without a named recipe: taken as delayed scaling, NeMo 2.0's default then (an assumption)", None
    if text.startswith("not in table"):
        return "fp8", "mxfp8", "FP8 implied by the release footnote, recipe not printed: taken as MXFP8 on Blackwell (an assumption)", None
    if text.startswith("alternative quantization granularity"):
        return "fp8", "blockwise", "FP8 with 32x32 blocks for weights and activations (the footnote's alternative granularity): fp8_recipe blockwise, the nearest recipe topsim names (an approximation)", None
    if text == "NVFP4":
        return None, None, "NVFP4", "NVFP4 GEMMs: topsim's precisions are bf16, fp16 and fp8 (no fp4 kernel model)"
    raise SystemExit(f"moe_rows: {entry['id']}: unknown precision {text!r}")


def layout(entry, model_layers):
    """The row's layout and the assumptions it states."""
    par, batch, model = entry["parallel"], entry["batch"], entry["model"]
    derived = entry.get("derived", {})
    gpus = entry["hardware"]["gpus"]
    tp, pp, cp, ep = par["tp"], par["pp"], par.get("cp", 1), par["ep"]
    vp = par.get("interleave", 1)
    notes = []
    L = {"tp": tp, "pp": pp, "cp": cp, "ep": ep}
    if vp > 1:
        L["vp"] = vp
    if "etp" in par:
        L["etp"] = par["etp"]
    elif ep * tp > gpus // pp:
        L["etp"] = 1
        notes.append(f"EP x TP = {ep * tp} exceeds GPUs / PP = {gpus // pp}: expert tensor parallel 1 (folding), as the reference's check says")
    L["sp"] = tp > 1
    domain = (64 if gpus > 72 else 72) if entry["hardware"]["gpus_per_node"] == 4 else entry["hardware"]["gpus_per_node"]
    if ep * L.get("etp", tp) > domain:
        L["allow_cross_server_tp"] = True
        notes.append(f"EP {ep} spans NVLink domains of {domain} GPUs: its all-to-all crosses the network (allow_cross_server_tp)")
    gbs = derived.get("gbs_consistent", batch["global"])
    mbs = derived.get("mbs_consistent", batch["micro"])
    if "gbs_consistent" in derived:
        notes.append(f"the page prints GBS {batch['global']} / MBS {batch['micro']}; GBS {gbs} / MBS {mbs} is the reading consistent with its GA (the reference's derived values)")
    L.update({"global_batch": gbs, "micro_batch": mbs, "seq_len": model["seq_len"]})
    if model_layers % (pp * vp) != 0:
        if (model_layers + 2) % (pp * vp) != 0:
            raise SystemExit(f"moe_rows: {entry['id']}: {model_layers} layers split over pp {pp} x vp {vp} neither evenly nor with embedding and loss slots")
        L["account_for_embedding"] = True
        L["account_for_loss"] = True
        notes.append(f"{model_layers} layers over pp {pp} x vp {vp}: embedding and loss each take a layer's slot ({model_layers} + 2 = {(model_layers + 2) // (pp * vp)} x {pp * vp}), Megatron's --account-for-embedding/loss-in-pipeline-split (an assumption; no table prints the split)")
    L.update({"zero": 1, "overlap_grad_reduce": True, "overlap_param_gather": True, "recompute": "none", "attention": "flash"})
    return L, notes


# The 26.08 table is at Megatron-Bridge 067f987df03b, whose MXFP8 perf recipes for these runs on
# GB200/GB300 turn on Megatron-Core's 1F1B all-to-all overlap (overlap_moe_expert_parallel_comm):
# model -> the recipe lines that say so. Other releases' recipes are not in the mirror: Megatron's
# default (off) is kept there.
OVERLAP_A2A_2608 = {
    "qwen3-30b-a3b": "perf_recipes/qwen/gb{200,300}/qwen3_moe.py:302-328/301-327 call _enable_hybridep_full_iteration_mxfp8, perf_recipes/qwen/common.py:58",
    "qwen3-235b-a22b": "perf_recipes/qwen/gb{200,300}/qwen3_moe.py:462-488/461-487 call _enable_hybridep_full_iteration_mxfp8, perf_recipes/qwen/common.py:58",
    "gpt-oss-120b": "perf_recipes/gpt_oss/gb{200,300}/gpt_oss.py:221-239/216-231 call _apply_gpt_oss_120b_full_iter_fp8mx_configs, perf_recipes/gpt_oss/common.py:49",
}

MODEL_LAYERS = {"qwen3-30b-a3b": 48, "qwen3-235b-a22b": 94, "gpt-oss-120b": 36, "mixtral-8x7b": 32, "mixtral-8x22b": 56,
                "llama4-scout-17b-16e": 48}
MODEL_NOTES = {
    "gpt-oss-120b": "gpt-oss's 18 sliding-window (128) layers run as full causal attention in topsim (overstating attention-core FLOPs by ~6% of the model's), attention sinks and biases left out",
    "llama4-scout-17b-16e": "Llama 4's chunked attention (chunk 8192) equals full attention at sequence 8192",
}


def build_rows(reference):
    rows = []
    for e in entries(reference):
        name = e["model"]["name"]
        hw = e["hardware"]
        system = hw["system"]
        if system not in TOPOLOGIES:
            raise SystemExit(f"moe_rows: {e['id']}: unknown system {system}")
        prec, recipe, prec_note, missing = precision(e)
        measured = e["measured"].get("tokens_per_s_per_gpu")
        row = {"id": e["id"], "kind": "llm"}
        notes = [f"reference entry {e['id']}", f"{hw['gpu']}, {system}", prec_note]
        model = MODELS.get(name)
        if name in UNREPRESENTABLE:
            missing = UNREPRESENTABLE[name] + ("; " + missing if missing else "")
        elif model is None:
            raise SystemExit(f"moe_rows: {e['id']}: unknown model {name}")
        if not e.get("parallel") or "gpus" not in hw:
            missing = (missing + "; " if missing else "") + "the source's layout or GPU count is not in the reference (only the abstract's TFLOP/s figure)"
        topology = TOPOLOGIES[system]
        if hw["gpus_per_node"] == 4 and hw.get("gpus", 0) > 72:
            # Megatron-Bridge's launcher asks for the largest Slurm segment <= 18 trays dividing the
            # job's trays (scripts/performance/utils/executors.py:168-177@067f987df03b): 64 trays
            # run as 4 NVLink domains of 16 trays, the -seg16 racks.
            trays = hw["gpus"] // 4
            segment = max(s for s in range(1, 19) if trays % s == 0)
            if segment == 16:
                topology = topology + "-seg16"
                notes.append(f"{trays} trays as {trays // segment} Slurm segments of {segment} trays, each one rack's NVLink domain of {4 * segment} GPUs ({topology}), as Megatron-Bridge's launcher asks (scripts/performance/utils/executors.py:168-177@067f987df03b)")
            else:
                missing = (missing + "; " if missing else "") + (
                    f"{trays} trays as {trays // segment} Slurm segments of {segment} trays: no bundled rack of {segment} trays")
        if measured is None:
            missing = (missing + "; " if missing else "") + "no tokens/s printed (only the source's own TFLOP/s count)"
        row["model"] = model or name
        row["topology"] = topology
        if "gpus" in hw:
            row["gpus"] = hw["gpus"]
        if e.get("parallel") and model is not None:
            L, layout_notes = layout(e, MODEL_LAYERS[model])
            if prec:
                L["precision"] = prec
            if recipe:
                L["fp8_recipe"] = recipe
            if source_id(e) == "mbridge-26-08" and recipe == "mxfp8" and model in OVERLAP_A2A_2608 and hw["gpus_per_node"] == 4:
                L["overlap_moe_ep_comm"] = True
                layout_notes.append("MoE all-to-alls overlapped with another micro-batch's compute (overlap_moe_expert_parallel_comm), as Megatron-Bridge@067f987df03b src/megatron/bridge/" + OVERLAP_A2A_2608[model] + " set it")
            row["layout"] = L
            notes += layout_notes
        elif e.get("parallel"):
            row["layout"] = dict(e["parallel"], global_batch=e["batch"].get("global"), micro_batch=e["batch"].get("micro"))
        if model in MODEL_NOTES:
            notes.append(MODEL_NOTES[model])
        row["metric"] = "tokens_per_s_per_gpu"
        row["measured"] = measured if measured is not None else e["measured"].get("model_tflops_per_gpu")
        if missing:
            row["role"] = "pending"
            row["missing"] = missing
            if measured is None:
                row["metric"] = "tflops_per_gpu"
        else:
            row["role"] = "check"
        row["source"] = source_id(e)
        notes.append("confidence: " + e["notes"].split("Confidence: ", 1)[1].split(")", 1)[0] + ")" if "Confidence: " in e.get("notes", "") else "")
        row["note"] = "; ".join(n for n in notes if n)
        rows.append(row)
    return rows


def check_rows(rows, output):
    validation_file.check_ids_unique(rows, output, "moe_rows")
    for row in rows:
        if row["source"] not in SOURCES:
            raise SystemExit(f"moe_rows: {row['id']}: source {row['source']} not declared")


def description(rows):
    roles = Counter(row["role"] for row in rows)
    why = Counter(row["missing"].split(":")[0].split(" (")[0] for row in rows if row["role"] == "pending")
    reasons = "; ".join(f"{n} {reason}" for reason, n in sorted(why.items(), key=lambda kv: (-kv[1], kv[0])))
    return DESCRIPTION_HEAD + (f"{len(rows)} rows: {roles['check']} check, {roles['pending']} pending ({reasons}).")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the output file differs from what this writes")
    parser.add_argument("--reference", type=Path, default=REFERENCE, help=f"markdown to read (default {REFERENCE})")
    parser.add_argument("--output", type=Path, default=OUTPUT, help=f"file to write (default {OUTPUT})")
    args = parser.parse_args()
    if args.check and not args.reference.exists():
        print(f"moe_rows: {args.reference} is absent: nothing to check against (skipped)", file=sys.stderr)
        return 77  # ctest's SKIP_RETURN_CODE
    rows = build_rows(args.reference)
    check_rows(rows, args.output)
    text = validation_file.render(description(rows), SOURCES, rows)
    if args.check:
        return 1 if validation_file.is_stale(text, args.output, "moe_rows") else 0
    args.output.write_text(text)
    counts = Counter((row["model"], row["role"]) for row in rows)
    for (model, role), count in sorted(counts.items()):
        print(f"{model:32} {role:10} {count}")
    print(f"{'total':32} {'':10} {len(rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
