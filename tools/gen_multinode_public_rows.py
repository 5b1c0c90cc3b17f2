#!/usr/bin/env python3
"""Write scenarios/validation/nccl-multinode-public.json from shared/reference/nccl-multinode-public.md.

Usage: python3 tools/gen_multinode_public_rows.py [MD] [OUT]

One row per table line: sizes below 64 MiB compare time_us, from 64 MiB busbw_GBps. How each
table maps onto a bundled topology (or why it cannot) is the TABLES dict below; the roles are
fixed per table by what topsim can express, never by how well a row is predicted.
"""
import json
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MD = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "..", "shared", "reference", "nccl-multinode-public.md")
if not os.path.exists(MD):
    MD = "/work/shared/reference/nccl-multinode-public.md"
OUT = sys.argv[2] if len(sys.argv) > 2 else os.path.join(REPO, "scenarios", "validation", "nccl-multinode-public.json")
MIB = 1 << 20
# NCCL releases the validator models (models/nccl_versions.json); another release goes in the note.
# Each line's description names the releases it covers ("NCCL 2.23-2.27 ...").
RANGES = []
for _line in json.load(open(os.path.join(REPO, "models", "nccl_versions.json")))["nccl_versions"].values():
    _m = re.match(r"NCCL (\d+)\.(\d+)-(\d+)\.(\d+)", _line["description"])
    RANGES.append(((int(_m.group(1)), int(_m.group(2))), (int(_m.group(3)), int(_m.group(4)))))


def modelled(release):
    mm = tuple(int(x) for x in release.split(".")[:2])
    return any(lo <= mm <= hi for lo, hi in RANGES)

# The one calibration row: links:efa-100g.efficiency, pinned by the largest size of the smallest
# node count of the p5 EFA tables. Of the 2-server tables the allgather is taken, not the
# allreduce: the source itself notes that the 2-server allreduce (477.7 GB/s) exceeds the 400 GB/s
# EFA line rate (NCCL's tree/NVLS-tree halves the network traffic), so it does not isolate the
# EFA's fraction of line rate; the ring allgather's 2 GiB figure is bound by the EFAs.
CALIBRATION = {("p5-efa-2n-allgather-cg", 2147483648): "links:efa-100g.efficiency"}


def parse(md):
    sections, cur = [], None
    for line in open(md, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("## "):
            cur = {"name": line[3:].strip(), "meta": {}, "rows": []}
            sections.append(cur)
        elif cur and line.startswith("- ") and ":" in line:
            k, _, v = line[2:].partition(":")
            cur["meta"][k.strip()] = v.strip()
        elif cur and re.match(r"^\| *\d", line):
            cells = [c.strip() for c in line.strip("|").split("|")]
            cur["rows"].append((int(cells[0]), float(cells[1]), float(cells[2])))
    return sections


def nccl_release(meta):
    m = re.match(r"(\d+\.\d+\.\d+)", meta.get("NCCL", ""))
    return m.group(1) if m else None


def human(n):
    for unit, s in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if n % unit == 0:
            return "%d%s" % (n // unit, s)
    return "%dB" % n


def mapping(name, meta):
    """(topology fields, role, missing, note, source id) for one table."""
    ops = meta["operation"]
    op = re.match(r"(\w+)", ops).group(1)
    servers = int(re.search(r"servers: (\d+)", ops).group(1))
    gpus = int(re.search(r"GPUs: (\d+)", ops).group(1))
    conf = re.search(r"confidence: (\w+)", ops).group(1)
    f = {"op": op, "gpus": gpus}
    role, missing, note = "check", None, []
    if name.startswith("p5-efa"):
        f.update(topology="aws-p5", nodes=servers)
        src = "crazyguitar-aws-gpu-communication-benchmark"
        note.append("AWS p5.48xlarge, 32 x 100 Gb/s EFA, aws-ofi-nccl 1.16.3 (its tuner plugin loaded); time derived from algbw by the transcriber")
        if op == "alltoall" and servers >= 32:
            role, missing = "pending", "a 256-rank alltoall: topsim's direct plan simulates its 65,280 GPU pairs as flows, over two minutes a size on this machine (more than validate's time budget); it runs with topsim coll"
    elif name.startswith("h100-ib400"):
        f.update(topology="dgx-h100", nodes=servers)
        src = "nccl-tests-issue-309-gj"
        note.append("8-GPU H100 servers with 8 x IB 400G (model not stated: the DGX H100 layout); NCCL version not printed")
        if "ctas24" in name:
            role, missing = "pending", "NCCL_MIN_CTAS=24 and NCCL_IB_QPS_PER_CONNECTION=2: a row cannot set NCCL's minimum channel count or QPs per connection"
        if "ring" in name:
            f["algo"] = "ring"
    elif name.startswith("gb200-oci"):
        src = "oci-gpu-quickstarts-gb200"
        trays = servers
        if trays <= 18:
            f.update(topology="gb200-nvl72")
            note.append("OCI BM.GPU.GB200.4: %d tray(s) of one NVL72 rack, the first %d GPUs of the bundled gb200-nvl72 cluster (one NVLink domain)" % (trays, gpus))
        else:
            f.update(topology="gb200-nvl72-rack")
            role, missing = "pending", "%d GB200 trays over %d racks: topsim joins whole NVL72 racks (gb200-nvl72-rack --nodes N) or up to 18 trays of one rack, not a part-filled rack set" % (trays, -(-trays // 18))
        if name == "gb200-oci-2tray-allreduce":
            role = "informational"
            note.append("not comparable like-for-like: the printed busbw/algbw = 1.969 = 2*63/64 implies 64 ranks while the heading and command say 2 trays (the source's INCONSISTENT note)")
    elif name.startswith("b300-oci"):
        f.update(topology="oci-bm-gpu-b300-8")
        if servers > 1:
            f["nodes"] = servers
        src = "oci-gpu-quickstarts-b300"
        note.append("OCI BM.GPU.B300.8 (16 x 400 GbE RoCE as 8 dual-port ConnectX-8)")
    elif name.startswith("a100-azure"):
        f.update(topology="azure-ndm-a100-v4", nodes=servers)
        src = "jingchaozhang-aks-ndmv4"
        note.append("Azure NDm A100 v4 on AKS, 8 x HDR per VM; NCCL from the pytorch:23.03 container, version not printed")
    elif name.startswith("v100-p3dn"):
        f.update(topology="dgx1-v100", nodes=servers, nics_per_node=1, nic="aws-efa-100g", algo="ring", gpu_direct=False)
        src = "cybertronai-aws-network-benchmarks"
        note.append("AWS p3dn.24xlarge (8 V100-SXM2-32GB, DGX-1-like hybrid cube-mesh) as the bundled dgx1-v100 with its one NIC replaced by a 100 Gb/s EFA; first-generation EFA, no GPUDirect RDMA; NCCL_TREE_THRESHOLD=0 (ring)")
    else:
        raise SystemExit("no mapping for table " + name)
    note.append("confidence %s" % conf)
    return f, role, missing, note, src


SOURCES = {
    "crazyguitar-aws-gpu-communication-benchmark": "crazyguitar/aws-gpu-communication-benchmark@a77f70db668034b75db9a430b3cd718f59a6c232:data/nccl_all_reduce.csv, nccl_all_gather.csv, nccl_all_to_all.csv (unchanged at HEAD fd167f9); AWS p5.48xlarge (SageMaker HyperPod), 2-32 servers, NCCL 2.27.7, aws-ofi-nccl v1.16.3, EFA installer 1.43.2, nccl-tests v2.16.9; shared/reference/nccl-multinode-public.md (p5-efa-*-cg)",
    "nccl-tests-issue-309-gj": "https://github.com/NVIDIA/nccl-tests/issues/309 (read via index mirror id 69388150450), commenter gj-aion: all_reduce_perf -b 1M -e 8G -f 2 -g 1 on 2-8 H100 servers with IB 400G, NCCL version not printed; shared/reference/nccl-multinode-public.md (h100-ib400-*-gj-nt309)",
    "oci-gpu-quickstarts-gb200": "oracle-quickstart/oci-gpu-quickstarts@6a0abdc78b574b28eb10926387615c8414ed8c1d:nvidia/GB200/README-GB200.md (NCCL All Reduce / All to All sections), OCI BM.GPU.GB200.4 trays, NCCL 2.27.3+cuda12.8 where printed; shared/reference/nccl-multinode-public.md (gb200-oci-*)",
    "oci-gpu-quickstarts-b300": "oracle-quickstart/oci-gpu-quickstarts@6a0abdc78b574b28eb10926387615c8414ed8c1d:nvidia/B300/README-B300.md (All Reduce / All-to-All sections), OCI BM.GPU.B300.8, NCCL 2.28.9+cuda13.1 where printed; shared/reference/nccl-multinode-public.md (b300-oci-*)",
    "jingchaozhang-aks-ndmv4": "JingchaoZhang/JingchaoZhang.github.io@13ee2f273936abecf4cb60edf2cd369c9c0a70ac:_posts/2023-09-11-NCCL test on AKS NDmV4 VM.md: 2 x Azure Standard_ND96amsr_A100_v4 on AKS, all_reduce_perf -b 8 -f 2 -g 1 -e 8G; shared/reference/nccl-multinode-public.md (a100-azure-ndmv4-2n-hdr-allreduce-aks)",
    "cybertronai-aws-network-benchmarks": "cybertronai/aws-network-benchmarks@95c0bfdc5ce19666d5dd7ab20b2c3cbb01268684:nccltest_output.txt (2019-06-08): 2 x AWS p3dn.24xlarge over EFA, NCCL 2.4.6+cuda10.0, NCCL_TREE_THRESHOLD=0; shared/reference/nccl-multinode-public.md (v100-p3dn-2n-efa-allreduce-ring-nccl246)",
}


def main():
    rows = []
    for s in parse(MD):
        f, role, missing, note, src = mapping(s["name"], s["meta"])
        rel = nccl_release(s["meta"])
        for size, time_us, busbw in s["rows"]:
            r = {"id": "%s/%s" % (re.sub(r"-(cg|gj-nt309|aks|nccl246)$", "", s["name"]), human(size)), "kind": "coll"}
            r.update({k: f[k] for k in ("topology", "nodes", "nics_per_node", "nic") if k in f})
            r.update(op=f["op"], gpus=f["gpus"], size=human(size), dtype="float")
            if "algo" in f:
                r["algo"] = f["algo"]
            if "gpu_direct" in f:
                r["gpu_direct"] = f["gpu_direct"]
            r["peer_access"] = True
            if rel and modelled(rel):
                r["nccl"] = rel
            small = size < 64 * MIB
            r["metric"] = "time_us" if small else "busbw_GBps"
            r["measured"] = time_us if small else busbw
            row_role, pins = role, CALIBRATION.get((s["name"], size))
            if pins and row_role == "check":
                row_role = "calibration"
            r["role"] = row_role
            if pins:
                r["pins"] = pins
            if missing:
                r["missing"] = missing
            r["tolerance"] = 0.25 if not rel else 0.15
            r["source"] = src
            n = list(note)
            if rel and not modelled(rel):
                n.append("NCCL %s (not a modelled release: the validator's default is used)" % rel)
            elif rel:
                n.append("NCCL %s" % rel)
            if pins:
                n.append("pins %s: the largest size of the smallest node count of the p5 EFA tables; the allgather, since the source notes the 2-server allreduce exceeds the EFA line rate (tree/NVLS-tree)" % pins)
            if s["name"].startswith("h100-ib400-8n-allreduce") and size == 8388608:
                n.append("the source calls this size an outlier")
            r["note"] = "; ".join(n)
            rows.append(r)
    doc = {
        "description": "Published multi-server nccl-tests tables of shared/reference/nccl-multinode-public.md (AWS p5 over EFA at 2-32 servers, H100 over IB 400G at 2-8 servers, GB200 on OCI at 1-48 trays, B300 on OCI at 1-2 servers, A100 on Azure NDm v4 at 2 servers, V100 p3dn over first-generation EFA), one row per table line: sizes below 64 MiB compare time_us, from 64 MiB busbw_GBps (out-of-place). op, gpus and dtype as nccl-tests ran them (float); NCCL's own algorithm choice unless the table forced one. nccl names the release where the table prints one and the validator models it; otherwise the release is in the note. tolerance 0.15 where the NCCL release is printed, 0.25 where it is not. role: calibration (a fitted constant was solved on the row; pins names it), check (an independent figure nothing was solved on), informational (not comparable like-for-like) or pending (topsim cannot express it yet; missing says what is missing). Cross-validation leaves out all rows of one source id at once. Generated by tools/gen_multinode_public_rows.py.",
        "sources": SOURCES,
        "rows": rows,
    }
    text = json.dumps(doc, indent=2, ensure_ascii=False)
    # one row per line, as the other validation files
    text = re.sub(r'\n    \{\n(.*?)\n    \}', lambda m: "\n    {" + " ".join(x.strip() for x in m.group(1).split("\n")) + "}", text, flags=re.S)
    with open(OUT, "w", encoding="utf-8") as fh:
        fh.write(text + "\n")
    from collections import Counter
    print(len(rows), "rows", dict(Counter(r["role"] for r in rows)))


if __name__ == "__main__":
    main()
