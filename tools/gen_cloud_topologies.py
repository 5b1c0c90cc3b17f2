#!/usr/bin/env python3
"""Generate the bundled cloud-instance and Blackwell Ultra server topologies under topologies/.

Usage:
    python3 tools/gen_cloud_topologies.py            # write the files, then check them
    python3 tools/gen_cloud_topologies.py --check    # only check the files already on disk

Standard library only. It reuses tools/gen_topologies.py's builder, canonical format and checker
(extending its model tables with the models these machines use), so every file passes the same
checks as the generated DGX files. Every machine cites the provider's published specification as
transcribed in shared/reference/specs/cloud-and-network.md (section and source key); where that
is silent (PCIe tree, CPU part, NIC host link) the source says "Assumption: ...".
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_topologies as g  # noqa: E402

SPEC = "shared/reference/specs/cloud-and-network.md"

# Model tables of gen_topologies.py, extended with what these machines use (cross-checked
# against models/*.json by gen_topologies.cross_check_models).
g.GPU_NVLINKS.update({
    "a100-80gb": ("nvlink3", 12, "pcie4-x16"),
    "h200": ("nvlink4", 18, "pcie5-x16"),
    "b200-sxm": ("nvlink5", 18, "pcie5-x16"),
    "b300": ("nvlink5", 18, "pcie6-x16"),
    "gb300": ("nvlink5", 18, "nvlink-c2c"),
})
g.NVSWITCH_PORTS.update({"nvswitch-gen4": 72})
g.CPU_LANES.update({
    "xeon-gold-6248": 48,
    "xeon-platinum-8468": 80,
    "xeon-platinum-8570": 80,
    "xeon-platinum-8580": 80,
    "xeon-6776p": 88,
    "epyc-7763": 128,
})
g.NIC_PCIE.update({
    "aws-efa-100g": "pcie4-x16",
    "aws-efa-4x100g": "pcie5-x16",
    "aws-efa-2x200g": "pcie5-x16",
    "aws-efa-400g": "pcie5-x16",
    "aws-efa-2x400g": "pcie5-x16",
    "connectx7-400gbe": "pcie5-x16",
    "connectx7-2x200gbe": "pcie5-x16",
    "connectx8-800g": "pcie6-x16",
    "connectx8-2x400gbe": "pcie6-x16",
    "gcp-gpu-nic-200g": "pcie5-x16",
})
g.PCIE_MODELS.update({"pcie6-x16": 16})
g.PCIE_SWITCH.update({"pcie6-switch": (144, "pcie6-x16")})
g.SOCKET_MODELS.update({"upi-20", "upi-24", "xgmi3"})

# Host CPUs: (model, cores of socket 0, cores of socket 1, socket link, count, assumption text).
# Core strings number hyperthreads after the physical cores of both sockets, as dgx-h100.
def cores(n):
    return ("0-%d,%d-%d" % (n - 1, 2 * n, 3 * n - 1), "%d-%d,%d-%d" % (n, 2 * n - 1, 3 * n, 4 * n - 1))


CPU = {
    "cascade": ("xeon-gold-6248", 24, "upi-10.4", 3,
                "Assumption: the Xeon P-8275CL (Cascade Lake, 24 cores per socket, 96 vCPU in all, %s section 1a, source key EC2OLD) is modelled as xeon-gold-6248, the Cascade Lake part in models/cpus.json (48 PCIe Gen3 lanes); the socket link as 3 UPI at 10.4 GT/s, from memory" % SPEC),
    "milan": ("epyc-7763", 48, "xgmi3", 4,
              "Assumption: the host is AMD, 96 cores in 2 sockets (%s section 1a, source key K); the part (EPYC 7R13, Milan) is only in third-party captures, modelled as epyc-7763, the Milan part in models/cpus.json; socket link as 4 xGMI-3, from memory" % SPEC),
    "spr48": ("xeon-platinum-8468", 48, "upi-16", 4,
              "Assumption: the host is Intel, 192 vCPU = 2 x 48 cores (%s section 1a, source key K; Sapphire Rapids for p5en per a third-party title); modelled as xeon-platinum-8468 (Sapphire Rapids, 48 cores), socket link as dgx-h100's 4 UPI at 16 GT/s" % SPEC),
    "emr48": ("xeon-platinum-8580", 48, "upi-20", 4,
              "Assumption: the host is Intel, 192 vCPU = 2 x 48 cores (%s section 1a, source key K); the part is n/f in AWS text (a third-party capture of an 8 x B200 host shows Xeon Platinum 8559C, Emerald Rapids), modelled as xeon-platinum-8580 (Emerald Rapids) with 48 of its cores listed; socket link 4 UPI at 20 GT/s as hgx-b200" % SPEC),
    "rome": ("epyc-7742", 48, "xgmi2", 4,
             "Assumption: AMD EPYC 7V12 (Rome), 96 vCPU (%s section 1b, source key AZ), modelled as epyc-7742, the Rome part in models/cpus.json, 48 cores per socket listed; PCIe tree and socket link as the bundled dgx-a100" % SPEC),
    "spr56": ("xeon-platinum-8480c", 56, "upi-16", 4,
              "Assumption: Sapphire Rapids host (%s), modelled as xeon-platinum-8480c (56 cores per socket) with dgx-h100's socket link" % SPEC),
    "emr56": ("xeon-platinum-8570", 56, "upi-20", 4,
              "Assumption: the host CPU is n/f in the provider's text (%s); modelled as hgx-b200's xeon-platinum-8570 (Emerald Rapids, 56 cores) and socket link" % SPEC),
    "emr64": ("xeon-platinum-8580", 60, "upi-20", 4,
              "Assumption: 2 x Xeon Platinum 8592+ (Emerald Rapids, 64 cores each, %s section 1d, source key OCIQ) is modelled as xeon-platinum-8580, the Emerald Rapids part in models/cpus.json (60 cores, same 80 PCIe Gen5 lanes); socket link 4 UPI at 20 GT/s" % SPEC),
    "gnr": ("xeon-6776p", 64, "upi-24", 4,
            "Assumption: the host of DGX B300, Intel Xeon 6776P (%s section 4, third-party), socket link 4 UPI at 24 GT/s, from memory" % SPEC),
}


def hgx8(name, description, sources, gpu, nvswitch, split, nvlink, sw_model, nic_model, nics_per_gpu,
         cpu_key, per_gpu_switch=False):
    """An 8-GPU NVSwitch baseboard. PCIe: 4 switches of 2 GPUs (or 8 of 1 GPU when per_gpu_switch),
    each GPU's NICs on its switch, half the switches on each socket."""
    cpu_model, ncores, link, count, cpu_note = CPU[cpu_key]
    t = g.Topo(name, description, list(sources) + [cpu_note])
    g.gpus(t, 8, gpu)
    nvs = [t.dev("nvswitch%d" % k, "nvswitch", nvswitch) for k in range(len(split))]
    nsw = 8 if per_gpu_switch else 4
    sw = [t.dev("pcie%d" % s, "pcie_switch", sw_model) for s in range(nsw)]
    c0, c1 = cores(ncores)
    cpu = g.two_cpus(t, cpu_model, c0, c1, link, count)
    nic = [t.dev("nic%d" % i, "nic", nic_model) for i in range(8 * nics_per_gpu)] if nics_per_gpu >= 1 else \
        [t.dev("nic%d" % i, "nic", nic_model) for i in range(int(8 * nics_per_gpu))]
    for gi in range(8):
        for k, n in enumerate(split):
            t.nvlink("gpu%d" % gi, nvs[k], nvlink, n)
    per_sw = 8 // nsw
    for gi in range(8):
        t.pcie("gpu%d" % gi, sw[gi // per_sw], g.GPU_NVLINKS[gpu][2])
    nics_per_sw = len(nic) // nsw
    for i in range(len(nic)):
        t.pcie(nic[i], sw[i // nics_per_sw], g.NIC_PCIE[nic_model])
    for s in range(nsw):
        t.pcie(sw[s], cpu[s // (nsw // 2)], g.PCIE_SWITCH[sw_model][1])
    return t


A100_WIRING = "NVLink/NVSwitch wiring as the bundled dgx-a100 (6 NVSwitch gen 2, 2 NVLink 3.0 from each GPU to each): the HGX A100 8-GPU baseboard"
H100_WIRING = "NVLink/NVSwitch wiring as the bundled dgx-h100 (4 NVSwitch gen 3, 18 NVLink 4.0 per GPU split 5/4/4/5): the HGX H100/H200 8-GPU baseboard"
B200_WIRING = "NVLink wiring as the bundled hgx-b200 (2 NVLink 5 switch chips, 9 NVLink 5.0 from each GPU to each, 1.8 TB/s per GPU): the HGX B200/B300 8-GPU baseboard"
TREE_6 = ("Assumption: the GPU-NIC PCIe (each B300's Gen6 x16 to its ConnectX-8's built-in Gen6 switch, %s section 3) as four Gen6 switches (pcie6-switch), each with 2 GPUs and their NICs, two per socket, as the bundled dgx-h100 pairs them; the uplinks to the Gen5 host CPUs are modelled as Gen6 x16 (optimistic for host-memory traffic only)" % SPEC)
TREE_4 = "Assumption: PCIe tree of four Gen%s switches, each with 2 GPUs and their NICs, two per socket, as the bundled dgx-h100; the provider does not publish it"
AWS_FABRIC = "Assumption: scale-out as a non-blocking fat-tree of %s switches: AWS publishes no switch, rail or fat-tree description of the EFA fabric and recommends cluster placement groups (%s section 1a, 'AWS common'); SRD sprays each message over many paths, which a non-blocking fat-tree approximates"
A100 = ("a100", "nvswitch-gen2", [2] * 6, "nvlink3")
A100_80 = ("a100-80gb", "nvswitch-gen2", [2] * 6, "nvlink3")
H100 = ("h100", "nvswitch-gen3", [5, 4, 4, 5], "nvlink4")
H200 = ("h200", "nvswitch-gen3", [5, 4, 4, 5], "nvlink4")
B200 = ("b200-sxm", "nvswitch-gen4", [9, 9], "nvlink5")
B300 = ("b300", "nvswitch-gen4", [9, 9], "nvlink5")


def m(name, desc, sources, board, rest, scale_out, **kw):
    gpu, nvs, split, nvl = board
    sw_model, nic_model, per_gpu, cpu_key = rest
    t = hgx8(name, desc, sources, gpu, nvs, split, nvl, sw_model, nic_model, per_gpu, cpu_key, **kw)
    t.scale_out = scale_out
    return t


def machines():
    out = []
    # ------------------------------ AWS ------------------------------
    for name, board, mem in (("aws-p4d", A100, "A100 40 GB (40960 MiB)"), ("aws-p4de", A100_80, "A100 80 GB (81920 MiB)")):
        out.append(m(name,
            "AWS %s.24xlarge: 8 %s on an HGX A100 board (6 NVSwitch gen 2), 4 x 100 Gb/s EFA, one per GPU pair under the pair's PCIe switch (AWS's own NCCL topology file), two Cascade Lake sockets. NCCL runs over EFA/SRD through aws-ofi-nccl (SENDRECV protocol on this platform)." % (name[4:], mem),
            ["%s section 1a (source keys K, EC2OLD): %s.24xlarge, 8 x %s, NVSwitch GPU interconnect, 4 x 100 Gb/s EFA ('4x 100 Gigabit ENA/EFA'), 400 Gb/s in all, GPUDirect RDMA" % (SPEC, name[4:], mem),
             "%s section 1a (source key OFI topology/%s-24xl-topo.xml): 1 EFA per 2 GPUs behind one PCIe switch, 2 switches per socket, 2 NUMA nodes" % (SPEC, name[4:]),
             "%s section 2 (source key OFI src/platform-aws.cpp): plugin protocol SENDRECV on p4d/p4de; NCCL net latency reported 75 us (a tuner constant, not modelled)" % SPEC,
             A100_WIRING,
             "Assumption: PCIe switches modelled as Gen4 (pcie4-switch) with Gen4 uplinks; AWS's topology XML writes 8 GT/s for GPUs and NICs (CONFLICT with A100's Gen4, %s section 1a)" % SPEC,
             AWS_FABRIC % ("efa-fabric-100g", SPEC)],
            board, ("pcie4-switch", "aws-efa-100g", 0.5, "cascade"), {"kind": "fat-tree", "switch": "efa-fabric-100g"}))
    out.append(m("aws-p5",
        "AWS p5.48xlarge: 8 H100-SXM5 80 GB on an HGX H100 board (4 NVSwitch gen 3), 32 x 100 Gb/s EFA (EFAv2), 4 per GPU, four PCIe Gen5 switches each with 2 GPUs and their 8 EFAs, two AMD sockets. NCCL runs over EFA/SRD through aws-ofi-nccl (RDMA protocol), which stripes a GPU's messages over its 4 EFAs as rails of one NCCL net device, so the 4 EFAs of a GPU are one 4-port NIC device (nic<i>).",
        ["%s section 1a (source key K, DescribeInstanceTypes MaximumEfaInterfaces 32, 3200 Gb/s): p5.48xlarge, 8 x H100 80 GB, 32 EFA of 100 Gb/s (inferred 3200/32), 32 network cards, 2048 GiB" % SPEC,
         "%s section 1a (source key OFI src/tuner/nccl_ofi_model.cpp): 4 EFA per GPU (num_rails=4 for P5/P5e); 1 GPU + 4 EFA per PCIe switch (third-party write-up, as the spec notes)" % SPEC,
         "%s section 2 (source key OFI src/platform-aws.cpp): plugin protocol RDMA on p5/p5e, NCCL_BUFFSIZE 8 MiB, P2P net chunk 512 KiB" % SPEC,
         H100_WIRING,
         "Assumption: four PCIe Gen5 switches, each with 2 GPUs and their 2 x 4 EFAs, two per socket, as the other HGX H100 servers; the EFA host link as Gen5 x16 (PCIe generation n/f in AWS text). Not the third-party layout of 1 GPU + 4 EFA per switch: topsim's rail search (src/collectives/rails.cpp) enters and leaves a server's ring through one NIC, so with one GPU per PCIe switch the leaving GPU would reach that NIC through the CPU, which NCCL does not do (it sends from the leaving GPU's own NIC)",
         AWS_FABRIC % ("efa-fabric-100g", SPEC)],
        H100, ("pcie5-switch", "aws-efa-4x100g", 1, "milan"), {"kind": "fat-tree", "switch": "efa-fabric-100g"}))
    out.append(m("aws-p5en",
        "AWS p5en.48xlarge: 8 H200 141 GB on an HGX H200 board (4 NVSwitch gen 3), 16 x 200 Gb/s EFA (EFAv3), 2 per GPU (one 2-port NIC device per GPU, as aws-ofi-nccl stripes over them), four PCIe Gen5 switches each with 2 GPUs and their 4 EFAs, two Intel sockets. NCCL over EFA/SRD through aws-ofi-nccl (RDMA protocol).",
        ["%s section 1a (source key K): p5en.48xlarge, 8 x H200 (144384 MiB), 16 EFA of 200 Gb/s (inferred 3200/16), 16 network cards, 2048 GiB" % SPEC,
         "%s section 1a (source key OFI): tuner num_rails=2 (2 EFA per GPU); plugin block p5en: RDMA protocol, NCCL_NETDEVS_POLICY=max:1. CONFLICT: src/platform-aws.cpp's comment says '2 GPUs and 2 NICs per PCIe switch, such as P5en and P6-B200', which with 16 EFA would need 8 switches of 1 GPU; modelled as 2 GPUs and 4 EFA per switch (2 per GPU)" % SPEC,
         H100_WIRING.replace("H100/H200", "H200"),
         TREE_4 % "5",
         AWS_FABRIC % ("efa-fabric-200g", SPEC)],
        H200, ("pcie5-switch", "aws-efa-2x200g", 1, "spr48"), {"kind": "fat-tree", "switch": "efa-fabric-200g"}))
    out.append(m("aws-p6-b200",
        "AWS p6-b200.48xlarge: 8 B200 (179 GiB) on an HGX B200 board (2 NVLink 5 switch chips), 8 x 400 Gb/s EFA (EFAv4), one per GPU, four PCIe Gen5 switches each with 2 GPUs and 2 EFAs, two Intel sockets.",
        ["%s section 1a (source key K): p6-b200.48xlarge, 8 x B200 (183359 MiB), 8 EFA of 400 Gb/s (inferred 3200/8), 8 network cards, 2048 GiB" % SPEC,
         "%s section 1a (source key OFI src/platform-aws.cpp): 1 EFA per GPU, '2 GPUs and 2 NICs per PCIe switch, such as P5en and P6-B200'; plugin block p6-b200: RDMA, 35 us" % SPEC,
         B200_WIRING,
         TREE_4 % "5",
         AWS_FABRIC % ("efa-fabric-400g", SPEC)],
        B200, ("pcie5-switch", "aws-efa-400g", 1, "emr48"), {"kind": "fat-tree", "switch": "efa-fabric-400g"}))
    out.append(m("aws-p6-b300",
        "AWS p6-b300.48xlarge: 8 B300 (268.6 GiB) on an HGX B300 board (2 NVLink 5 switch chips), 16 x 400 Gb/s EFA, 2 per GPU (one 2-port NIC device per GPU, as aws-ofi-nccl stripes over them), four PCIe Gen5 switches each with 2 GPUs and 4 EFAs, two Intel sockets.",
        ["%s section 1a (source key K): p6-b300.48xlarge, 8 x B300 (275040 MiB), 16 EFA of 400 Gb/s (inferred 6400/16), 17 network cards, 4096 GiB; plugin block p6-b300: RDMA, 35 us (source key OFI)" % SPEC,
         "Assumption: 2 EFA per GPU (inferred 16/8 in the spec) on the GPU pair's PCIe switch; the EFA generation is n/f (EFAv4 per a third-party summary)",
         B200_WIRING,
         TREE_6,
         AWS_FABRIC % ("efa-fabric-400g", SPEC)],
        B300, ("pcie6-switch", "aws-efa-2x400g", 1, "emr48"), {"kind": "fat-tree", "switch": "efa-fabric-400g"}))
    # ------------------------------ Azure ------------------------------
    AZ_FAB = "Assumption: Azure describes its InfiniBand as 'dedicated, topology-agnostic' within a VM Scale Set (%s section 1b, source keys AZ, AZ-A100) and names no switch; modelled as a rail-optimised %s fabric, as NVIDIA's reference architectures for 8-NIC HGX servers" % (SPEC, "%s")
    for name, board, gpu_txt in (("azure-nd-a100-v4", A100, "Standard_ND96asr_v4, 8 x A100 40 GB"), ("azure-ndm-a100-v4", A100_80, "Standard_ND96amsr_A100_v4, 8 x A100 80 GB")):
        out.append(m(name,
            "Azure %s: HGX A100 (6 NVSwitch gen 2), 8 x 200 Gb/s HDR InfiniBand (ConnectX-6), one per GPU, two AMD Rome sockets; PCIe as DGX A100." % gpu_txt,
            ["%s section 1b (source keys AZ, AZ-A100): %s, 'NVLINK 3.0', 8 x 200 Gb/s HDR InfiniBand, 1.6 Tb/s, GPUDirect RDMA, AMD EPYC 7V12 96 vCPU%s" % (SPEC, gpu_txt, "; NDm: 4 GPUs per socket (DeepSpeed blog copy, third-party)" if "amsr" in gpu_txt else ""),
             A100_WIRING,
             "Assumption: the HDR adapter as connectx6-hdr (Azure does not name it); PCIe tree of four Gen4 switches of 2 GPUs and 2 NICs, two per socket, as the bundled dgx-a100",
             AZ_FAB % "QM8700 HDR"],
            board, ("pcie4-switch", "connectx6-hdr", 1, "rome"), {"kind": "rail", "switch": "qm8700"}))
    for name, board, gpu_txt in (("azure-nd-h100-v5", H100, "Standard_ND96isr_H100_v5, 8 x H100 80 GB, 'NVLINK 4.0'"), ("azure-nd-h200-v5", H200, "Standard_ND96isr_H200_v5, 8 x H200 141 GB, 900 GB/s NVLink")):
        out.append(m(name,
            "Azure %s: 4 NVSwitch gen 3, 8 x 400 Gb/s NDR InfiniBand (Quantum-2 ConnectX-7), one per GPU, two Sapphire Rapids sockets." % gpu_txt.split(",")[0],
            ["%s section 1b (source key AZ): %s, 8 x 400 Gb/s NVIDIA Quantum-2 CX7 InfiniBand, 3.2 Tb/s, GPUDirect RDMA, 96 Sapphire Rapids cores" % (SPEC, gpu_txt),
             H100_WIRING, TREE_4 % "5", AZ_FAB % "QM9700 NDR"],
            board, ("pcie5-switch", "connectx7-ndr", 1, "spr56"), {"kind": "rail", "switch": "qm9700"}))
    # ------------------------------ GCP ------------------------------
    GCP_FAB = "Assumption: a non-blocking fat-tree of %s: Google describes clusters as blocks on a non-blocking east-west fabric (Jupiter, optical circuit switches; %s section 1c, source key GCP-TERM) and names no switch"
    out.append(m("gcp-a3",
        "Google Cloud a3-highgpu-8g: 8 H100 80 GB (4 NVSwitch gen 3), 4 GPU NICs (one per GPU pair) of 200 Gb/s for GPUDirect-TCPX, which is TCP, not RDMA; two Sapphire Rapids sockets.",
        ["%s section 1c (source keys CT, GCP-NET): a3-highgpu-8g, 8 x H100 80 GB, 4 secondary VPC interfaces for GPU-to-GPU traffic (network_count 4, MTU 8244), 1,000 Gb/s in all, GPUDirect-TCPX" % SPEC,
         "Assumption: 200 Gb/s per NIC (the spec's 'usual figure', not read; CONFLICT: the CT README says '200 Gbps per GPU'); TCPX's CPU-driven TCP path and its efficiency are not modelled (eth-200g as RoCE)",
         H100_WIRING, TREE_4 % "5" + "; one NIC per switch",
         GCP_FAB % ("SN3700 200 GbE switches", SPEC)],
        H100, ("pcie5-switch", "gcp-gpu-nic-200g", 0.5, "spr56"), {"kind": "fat-tree", "switch": "sn3700"}))
    out.append(m("gcp-a3-mega",
        "Google Cloud a3-megagpu-8g: 8 H100 80 GB (4 NVSwitch gen 3), 8 GPU NICs of 200 Gb/s (one per GPU) for GPUDirect-TCPXO; two Sapphire Rapids sockets.",
        ["%s section 1c (source keys CT, GCP-NET): a3-megagpu-8g, 8 GPU NICs (network_count 8, MTU 8244), GPUDirect-TCPXO; CONFLICT on the total: 1,800 Gb/s vs 'up to 1,600 Gbps' (8 x 200 = 1,600 is used)" % SPEC,
         "Assumption: 200 Gb/s per NIC (not read, see the spec's Not found); TCPXO's efficiency is not modelled (eth-200g as RoCE)",
         H100_WIRING, TREE_4 % "5", GCP_FAB % ("SN3700 200 GbE switches", SPEC)],
        H100, ("pcie5-switch", "gcp-gpu-nic-200g", 1, "spr56"), {"kind": "fat-tree", "switch": "sn3700"}))
    out.append(m("gcp-a3-ultra",
        "Google Cloud a3-ultragpu-8g: 8 H200 141 GB (4 NVSwitch gen 3), 8 x 400 Gb/s ConnectX-7 RoCE NICs, each aligned to one GPU, GPUDirect RDMA.",
        ["%s section 1c (source keys GCP-NET, CT): a3-ultragpu-8g, 8 x H200, 8 x NVIDIA ConnectX-7, 3,200 Gb/s RoCE (8 x 400 inferred), each CX7 aligned to one GPU, GPUDirect RDMA, gpu-rdma-vpc 8 subnets" % SPEC,
         H100_WIRING.replace("H100/H200", "H200"), TREE_4 % "5",
         "Assumption: the host CPU is n/f in Google's text (224 vCPU only in test fixtures); modelled as Sapphire Rapids (xeon-platinum-8480c)",
         GCP_FAB % ("SN5600 400 GbE switches", SPEC)],
        H200, ("pcie5-switch", "connectx7-400gbe", 1, "spr56"), {"kind": "fat-tree", "switch": "sn5600"}))
    out.append(m("gcp-a4",
        "Google Cloud a4-highgpu-8g: 8 B200 (2 NVLink 5 switch chips), 8 x 400 Gb/s ConnectX-7 RoCE NICs, one per GPU, GPUDirect RDMA (the A3 Ultra NIC arrangement).",
        ["%s section 1c (source keys GCP-NET, CT): a4-highgpu-8g, 8 x B200, 8 x CX7, 3,200 Gb/s RoCE, same NIC arrangement as A3 Ultra, GPUDirect RDMA; CPU n/f" % SPEC,
         B200_WIRING, TREE_4 % "5", GCP_FAB % ("SN5600 400 GbE switches", SPEC)],
        B200, ("pcie5-switch", "connectx7-400gbe", 1, "emr56"), {"kind": "fat-tree", "switch": "sn5600"}))
    # ------------------------------ OCI ------------------------------
    OCI_FAB = "Assumption: OCI's RoCE cluster network (%s section 1d, source keys OCIQ, OCIHPC) is modelled as a non-blocking fat-tree of %s; Oracle does not name its switches in these sources"
    out.append(m("oci-bm-gpu-h100-8",
        "OCI BM.GPU.H100.8: 8 H100 80 GB (4 NVSwitch gen 3), 8 dual-port ConnectX-7 cards at 2 x 200 Gb/s RoCE (16 ports, 3.2 Tb/s), one card per GPU under the GPU's PCIe Gen5 switch; two Xeon Platinum 8480+ sockets.",
        ["%s section 1d (source key OCIQ): BM.GPU.H100.8, 8 x H100 80 GB, '8 x 2 x 200 Gb/s = 3.2 Tb/s' RoCE, 2 x Xeon Platinum 8480+ (112 cores), 2 TB DDR5" % SPEC,
         "%s section 1d (source keys OKE, OCIHPC samples/gpu/H100-topology.xml): 16 PFs, dual-port ConnectX-7 (15b3:1021), one card per GPU under the same Broadcom PCIe switch at 32 GT/s x16" % SPEC,
         H100_WIRING, TREE_4 % "5" + " (each GPU's card beside it)",
         OCI_FAB % (SPEC, "SN3700 200 GbE switches")],
        H100, ("pcie5-switch", "connectx7-2x200gbe", 1, "spr56"), {"kind": "fat-tree", "switch": "sn3700"}))
    out.append(m("oci-bm-gpu-h200-8",
        "OCI BM.GPU.H200.8: 8 H200 141 GB (4 NVSwitch gen 3), 8 single-port 400 Gb/s RoCE NICs, one per GPU; two Xeon Platinum 8480+ sockets.",
        ["%s section 1d (source keys OCIQ, OKE): BM.GPU.H200.8, 8 x H200 141 GB, '8 x 1 x 400 Gb/s = 3.2 Tb/s' RoCE, 8 single-port PFs, 2 x Xeon 8480+, 3 TB DDR5" % SPEC,
         "Assumption: the adapter as connectx7-400gbe (the PF model is not given for H200)",
         H100_WIRING.replace("H100/H200", "H200"), TREE_4 % "5", OCI_FAB % (SPEC, "SN5600 400 GbE switches")],
        H200, ("pcie5-switch", "connectx7-400gbe", 1, "spr56"), {"kind": "fat-tree", "switch": "sn5600"}))
    out.append(m("oci-bm-gpu-b200-8",
        "OCI BM.GPU.B200.8: 8 B200 (2 NVLink 5 switch chips), 8 single-port RDMA NICs taken as 400 Gb/s RoCE, one per GPU.",
        ["%s section 1d (source keys OCIQ, OKE): BM.GPU.B200.8, 8 x B200 ('192 GB', CONFLICT with NVIDIA's 180 GB), 8 single-port RDMA PFs, 128 vCPU, 2048 GB" % SPEC,
         "Assumption: 400 Gb/s per port (the RDMA speed is n/f; 8 x 400 Gb/s is the spec's inference), adapter as connectx7-400gbe",
         B200_WIRING, TREE_4 % "5", OCI_FAB % (SPEC, "SN5600 400 GbE switches")],
        B200, ("pcie5-switch", "connectx7-400gbe", 1, "emr56"), {"kind": "fat-tree", "switch": "sn5600"}))
    out.append(m("oci-bm-gpu-b300-8",
        "OCI BM.GPU.B300.8: 8 B300 'SXM6 AC' (2 NVLink 5 switch chips), 8 dual-port NICs at 2 x 400 Gb/s RoCE (16 ports, 6.4 Tb/s), one per GPU; two Xeon Platinum 8592+ sockets.",
        ["%s section 1d (source keys OCIQ, OKE): BM.GPU.B300.8, 8 x B300 SXM6 AC 268 GB, '8 x 2 x 400 Gb/s = 6.4 Tb/s' RoCE, 16 PFs dual-port, 2 x Xeon Platinum 8592+ (128 cores), 4 TB DDR5" % SPEC,
         "Assumption: the NIC model is not named by OCI; modelled as ConnectX-8 at 2 x 400GbE (connectx8-2x400gbe: the Ethernet speed ConnectX-8 firmware supports, %s section 3, source key NV-CX8)" % SPEC,
         B200_WIRING.replace("B200/B300", "B300"), TREE_6, OCI_FAB % (SPEC, "SN5600 400 GbE switches")],
        B300, ("pcie6-switch", "connectx8-2x400gbe", 1, "emr64"), {"kind": "fat-tree", "switch": "sn5600"}))
    # ------------------------------ HGX B300 ------------------------------
    out.append(m("hgx-b300",
        "HGX B300 8-GPU server as in DGX B300 (NVIDIA's 2-8-9-800 shape): 8 B300 on 2 NVLink 5 switch chips, 8 single-port ConnectX-8 SuperNICs at 800 Gb/s XDR InfiniBand, one per GPU, two Xeon 6776P sockets; scale-out a rail-optimised Quantum-X800 (Q3400) XDR fabric.",
        ["%s section 3 (source key NV-RA): HGX B300 '2-8-9-800' = 2 CPUs, 8 GPUs, 9 NICs, 800 Gb/s per GPU with ConnectX-8; rail-optimized east-west leaf-spine fabric, full non-blocking fat tree (the RA uses Spectrum-X Ethernet; XDR InfiniBand is modelled here: ConnectX-8 firmware runs 800 Gb/s only as XDR IB, Ethernet as 2 x 400GbE, source key NV-CX8)" % SPEC,
         "%s section 4 (source keys AIC, NV-BU, NV-RA): B300 NVLink5 1.8 TB/s per GPU (18 links), HGX total 14.4 TB/s" % SPEC,
         "The ninth NIC (BlueField-3, north-south) is left out: it carries no NCCL traffic",
         B200_WIRING.replace("B200/B300", "B300"), TREE_6],
        B300, ("pcie6-switch", "connectx8-800g", 1, "gnr"), {"kind": "rail", "switch": "q3400"}))
    return out


def gb300_tray():
    t = g.Topo(
        "gb300-tray",
        "One compute tray of a GB300 NVL72 rack (Azure ND GB300 v6 VM, OCI BM.GPU.GB300.4): two GB300 superchips, each a Grace CPU joined to two B300 GPUs by NVLink-C2C, and four ConnectX-8 SuperNICs at 800 Gb/s XDR InfiniBand, one per GPU, on the Graces. Every B300 has 18 NVLink 5 links that leave the tray for the rack's NVLink switch trays (its scale_out). Run it with --nodes N (N <= 18) or as gb300-nvl72-rack.",
        ["%s section 1b (source key AZ): Standard_ND128isr_GB300_v6, 4 x B300 288 GB, NVLink5 4 x 1.8 TB/s per VM, 130 TB/s intra-rack, 18 VMs per rack, 4 x 800 Gb/s InfiniBand ('Scale-Out 4x800 Gbps'), 2 x Grace" % SPEC,
         "%s section 4 (source keys AZ, AIC): GB300 NVL72 = 72 GPUs + 36 Grace; 72 ConnectX-8 (third-party glennklockwood); CX-8 Gen5 x16 to Grace, Gen6 x16 to B300 (third-party reports); modelled as the NIC's Gen6 x16 to its Grace" % SPEC,
         "Assumption: NIC placement on the Graces' PCIe and the two Graces' link (grace-c2c-socket) as the bundled gb200-tray; OCI's BM.GPU.GB300.4 runs 8 x 400 Gb/s RoCE instead (%s section 1d), not modelled" % SPEC],
    )
    g.gpus(t, 4, "gb300")
    cpu = [t.dev("cpu%d" % c, "cpu", "grace", cores="%d-%d" % (72 * c, 72 * c + 71), numa_node=c) for c in range(2)]
    t.socket(cpu[0], cpu[1], "grace-c2c-socket", 1)
    nic = [t.dev("nic%d" % i, "nic", "connectx8-800g") for i in range(4)]
    for gi in range(4):
        t.pcie("gpu%d" % gi, cpu[gi // 2], "nvlink-c2c")
    for i in range(4):
        t.pcie(nic[i], cpu[i // 2], g.NIC_PCIE["connectx8-800g"])
    t.scale_out = {"kind": "nvlink", "switch": "nvswitch-gen4", "planes": 18}
    return t


def azure_nd_gb200_v6():
    t = g.gb200_tray()
    t.name = "azure-nd-gb200-v6"
    t.description = ("Azure Standard_ND128isr_NDR_GB200_v6: one compute tray of a GB200 NVL72 rack, 4 B200 on 2 Grace "
                     "(NVLink-C2C), 4 x 400 Gb/s NDR InfiniBand (ConnectX-7), 18 VMs per NVL72 NVLink domain. The same "
                     "wiring as gb200-tray; run it with --nodes N (N <= 18).")
    t.sources = ["%s section 1b (source key AZ): Standard_ND128isr_NDR_GB200_v6, 4 x Blackwell 192 GiB, NVLink5 4 x 1.8 TB/s per VM, 72 GPUs per NVL72 rack = 18 VMs, 4 x 400 Gb/s Quantum-2 CX7 InfiniBand (1.6 Tb/s per VM), 2 x Grace, 900 GiB LPDDR5X" % SPEC] + t.sources
    t.scale_out = {"kind": "nvlink", "switch": "nvswitch-gen4", "planes": 18}
    return t


def gb300_rack():
    tray = gb300_tray()
    td = tray.to_dict()
    t = g.Topo(
        "gb300-nvl72-rack",
        "One GB300 NVL72 rack as one server: 18 compute trays (gb300-tray: 4 B300, 2 Grace, 4 ConnectX-8 XDR NICs each; GPUs numbered gpu0..gpu71 tray by tray, the other devices t<k>.*) and the 18 fourth-generation NVSwitch chips of its 9 NVLink switch trays, every B300 with one NVLink 5 link to each chip, as gb200-nvl72-rack. Racks join over a Quantum-X800 (Q3400) XDR fat-tree.",
        td["sources"] + ["NVLink switch trays as the bundled gb200-nvl72-rack: 9 switch trays, 2 NVSwitch chips each, 72 NVLink 5 ports per chip; 130 TB/s per 72-GPU domain (%s section 1b, source key AZ)" % SPEC,
                         "Assumption: scale-out as a non-blocking fat-tree of Q3400 XDR switches (Azure: 4 x 800 Gb/s InfiniBand per VM; the switch is not named)"],
    )
    # devices in type order: gpus, nvswitches, cpus, nics (to_dict sorts by type, stable)
    for k in range(18):
        for d in td["devices"]:
            nd = dict(d)
            nd["id"] = "t%d.%s" % (k, d["id"])
            if d["type"] == "cpu":
                base = 144 * k
                nd["cores"] = "%d-%d" % (base + 72 * int(d["id"][3:]), base + 72 * int(d["id"][3:]) + 71)
                nd["numa_node"] = 2 * k + d["numa_node"]
            t.devices.append(nd)
    for c in range(18):
        t.dev("nvswitch%d" % c, "nvswitch", "nvswitch-gen4")
    return t, td


def gb300_rack_dict():
    t, td = gb300_rack()
    d = t.to_dict()
    # GPU ids must be gpu0..: renumber the trays' GPUs globally, keeping t<k>. for the rest
    gpu_ids = {}
    n = 0
    for dev in d["devices"]:
        if dev["type"] == "gpu":
            gpu_ids[dev["id"]] = "gpu%d" % n
            dev["id"] = "gpu%d" % n
            n += 1
    links = []
    for c in range(18):
        for k in range(18):
            for gi in range(4):
                links.append({"a": gpu_ids["t%d.gpu%d" % (k, gi)], "b": "nvswitch%d" % c, "model": "nvlink5", "count": 1})
    for k in range(18):
        for l in td["links"]:
            nl = dict(l)
            for e in ("a", "b"):
                i = "t%d.%s" % (k, l[e])
                nl[e] = gpu_ids.get(i, i)
            links.append(nl)
    # order links like the Topo builder: nvlink, pcie leaf, socket
    kind = lambda l: 0 if l["model"] == "nvlink5" else (2 if l["model"] == "grace-c2c-socket" else 1)
    d["links"] = sorted(links, key=kind)
    d["scale_out"] = {"kind": "fat-tree", "switch": "q3400"}
    return d


SEGMENT_SOURCE = ("Megatron-Bridge's launcher asks Slurm for --segment = the largest tray count <= 18 that divides the "
                  "job's trays on 4-GPU (GB200/GB300) nodes (NVIDIA-NeMo/Megatron-Bridge "
                  "scripts/performance/utils/executors.py:168-177@067f987df03b): 64 trays run as 4 segments of 16, each "
                  "segment the trays of one rack's NVLink domain")


def segment_rack(rack, trays):
    """The first `trays` compute trays of an NVL72 rack with all 18 NVSwitch chips: the NVLink domain a Slurm
    segment of `trays` trays gives a job (each GPU keeps its 18 links, one to each chip)."""
    gpus_kept = set()
    n = 0
    for dev in rack["devices"]:
        if dev["type"] == "gpu":
            if n < 4 * trays:
                gpus_kept.add(dev["id"])
            n += 1

    def kept(dev_id):
        if dev_id.startswith("nvswitch"):
            return True
        if dev_id in gpus_kept:
            return True
        return dev_id.startswith("t") and "." in dev_id and int(dev_id[1:dev_id.index(".")]) < trays and not dev_id.split(".")[1].startswith("gpu")
    d = {
        "name": "%s-seg%d" % (rack["name"], trays),
        "description": ("%d of the 18 compute trays of %s with its 18 NVSwitch chips: the NVLink domain of %d GPUs that a "
                        "Slurm segment of %d trays gives a job in one rack (the other trays idle or another job's). "
                        "Derived from topologies/%s.json by tools/gen_cloud_topologies.py." %
                        (trays, rack["name"], 4 * trays, trays, rack["name"])),
        "sources": list(rack["sources"]) + [SEGMENT_SOURCE],
        "devices": [dict(dev) for dev in rack["devices"] if kept(dev["id"])],
        "links": [dict(l) for l in rack["links"] if kept(l["a"]) and kept(l["b"])],
        "scale_out": rack["scale_out"],
    }
    # GPU ids run gpu0.. in device order (the checker's rule; gb200-nvl72-rack names them t<k>.gpu<i>)
    rename = {}
    for dev in d["devices"]:
        if dev["type"] == "gpu":
            rename[dev["id"]] = "gpu%d" % len(rename)
            dev["id"] = rename[dev["id"]]
    for l in d["links"]:
        l["a"], l["b"] = rename.get(l["a"], l["a"]), rename.get(l["b"], l["b"])
    # one NUMA node and core range per Grace of the segment, as gb300_rack numbers them (the
    # gb200-nvl72-rack file repeats each tray's own 0 and 1)
    for dev in d["devices"]:
        if dev["type"] == "cpu":
            k, c = int(dev["id"][1:dev["id"].index(".")]), int(dev["id"].rsplit("cpu", 1)[1])
            dev["cores"] = "%d-%d" % (144 * k + 72 * c, 144 * k + 72 * c + 71)
            dev["numa_node"] = 2 * k + c
    # the builder's orders: devices gpus, nvswitches, cpus, nics; links nvlink, pcie leaf, socket
    rank = {"gpu": 0, "nvswitch": 1, "cpu": 2, "nic": 3}
    d["devices"].sort(key=lambda dev: rank[dev["type"]])
    kind = lambda l: 0 if l["model"] == "nvlink5" else (2 if l["model"] == "grace-c2c-socket" else 1)
    d["links"].sort(key=kind)
    return d


def all_dicts():
    out = []
    for t in machines() + [gb300_tray(), azure_nd_gb200_v6()]:
        d = t.to_dict()
        d["scale_out"] = t.scale_out
        out.append(d)
    gb300 = gb300_rack_dict()
    out.append(gb300)
    with open(os.path.join(g.REPO, "topologies", "gb200-nvl72-rack.json"), encoding="utf-8") as f:
        gb200 = json.load(f)
    out += [segment_rack(gb200, 16), segment_rack(gb300, 16)]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--outdir", default=os.path.join(g.REPO, "topologies"))
    ap.add_argument("--check", action="store_true", help="only check existing files")
    args = ap.parse_args()
    print(g.cross_check_models(os.path.join(g.REPO, "models")))
    names = []
    for d in all_dicts():
        g.check_topology(d, d["name"])
        if not args.check:
            with open(os.path.join(args.outdir, d["name"] + ".json"), "w", encoding="utf-8", newline="\n") as f:
                f.write(g.format_topology(d))
        names.append(d["name"])
    for n in names:
        print(g.check_file(os.path.join(args.outdir, n + ".json")))
    print("%d topologies OK" % len(names))


if __name__ == "__main__":
    sys.exit(main())
