#!/usr/bin/env python3
"""Generate the bundled server topology files under topologies/.

Usage:
    python3 tools/gen_topologies.py            # write topologies/*.json, then check them
    python3 tools/gen_topologies.py --check    # only check the files already on disk
    python3 tools/gen_topologies.py --outdir DIR

Standard library only. Every file is checked after it is written (see check_topology):
schema keys, id syntax and uniqueness, device order, link endpoints, link kinds,
per-GPU NVLink counts (must equal the GPU model's link count: every bundled machine
wires all of its GPUs' NVLinks), NVSwitch ports, PCIe lanes on switches and CPUs, and
that every GPU and NIC reaches a CPU over PCIe. When models/*.json is present the
model names and limits are also cross-checked against it.
"""

import argparse
import json
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# --------------------------------------------------------------------------------------
# Model tables (mirrors of models/*.json, used by the checker)
# --------------------------------------------------------------------------------------

GPU_NVLINKS = {  # model -> (nvlink link model or None, links, pcie link model)
    "p100": ("nvlink1", 4, "pcie3-x16"),
    "v100": ("nvlink2", 6, "pcie3-x16"),
    "v100-sxm3": ("nvlink2", 6, "pcie3-x16"),
    "a100": ("nvlink3", 12, "pcie4-x16"),
    "a800": ("nvlink3", 8, "pcie4-x16"),
    "h100": ("nvlink4", 18, "pcie5-x16"),
    "h800": ("nvlink4", 8, "pcie5-x16"),
    "rtx4090": (None, 0, "pcie4-x16"),
    "b200": ("nvlink5", 18, "nvlink-c2c"),
}
NVSWITCH_PORTS = {"nvswitch-gen1": 18, "nvswitch-gen2": 36, "nvswitch-gen3": 64}
PCIE_SWITCH = {  # model -> (lanes, uplink link model)
    "pcie3-switch": (96, "pcie3-x16"),
    "pcie4-switch": (98, "pcie4-x16"),
    "pcie5-switch": (144, "pcie5-x16"),
}
CPU_LANES = {
    "xeon-e5-2698v4": 40,
    "xeon-platinum-8168": 48,
    "xeon-platinum-8358": 64,
    "xeon-platinum-8380": 64,
    "xeon-platinum-8480c": 80,
    "epyc-7742": 128,
    "grace": 64,
}
NIC_PCIE = {
    "connectx4-edr": "pcie3-x16",
    "connectx5-edr": "pcie3-x16",
    "connectx6-hdr": "pcie4-x16",
    "connectx6-dx-100g": "pcie4-x16",
    "connectx7-ndr": "pcie5-x16",
}
NVLINK_MODELS = {"nvlink1", "nvlink2", "nvlink3", "nvlink4", "nvlink5"}
PCIE_MODELS = {"pcie3-x16": 16, "pcie4-x16": 16, "pcie5-x16": 16, "nvlink-c2c": 16}
SOCKET_MODELS = {"qpi-9.6", "upi-10.4", "upi-11.2", "upi-16", "xgmi2", "grace-c2c-socket"}

DEVICE_TYPES = ["gpu", "nvswitch", "pcie_switch", "cpu", "nic"]  # also the required order
TYPE_MODELS = {
    "gpu": GPU_NVLINKS,
    "nvswitch": NVSWITCH_PORTS,
    "pcie_switch": PCIE_SWITCH,
    "cpu": CPU_LANES,
    "nic": NIC_PCIE,
}

# --------------------------------------------------------------------------------------
# Builder
# --------------------------------------------------------------------------------------


class Topo:
    def __init__(self, name, description, sources):
        self.name = name
        self.description = description
        self.sources = list(sources)
        self.devices = []
        self.nvlinks = []
        self.pcie_leaf = []  # GPU/NIC -> switch or CPU
        self.pcie_up = []  # switch -> switch
        self.pcie_root = []  # switch -> CPU
        self.sockets = []

    def dev(self, id_, type_, model, cores=None, numa_node=None):
        d = {"id": id_, "type": type_, "model": model}
        if cores is not None:
            d["cores"] = cores
        if numa_node is not None:
            d["numa_node"] = numa_node
        self.devices.append(d)
        return id_

    @staticmethod
    def _link(a, b, model, count):
        # NVLink and socket links always state their count; PCIe links are single x16 (no count)
        l = {"a": a, "b": b, "model": model}
        if count is not None:
            l["count"] = count
        return l

    def nvlink(self, a, b, model, count=1):
        self.nvlinks.append(self._link(a, b, model, count))

    def pcie(self, a, b, model):
        ta, tb = self._type(a), self._type(b)
        if ta in ("gpu", "nic"):
            self.pcie_leaf.append(self._link(a, b, model, None))
        elif tb == "cpu":
            self.pcie_root.append(self._link(a, b, model, None))
        else:
            self.pcie_up.append(self._link(a, b, model, None))

    def socket(self, a, b, model, count=1):
        self.sockets.append(self._link(a, b, model, count))

    def _type(self, id_):
        for d in self.devices:
            if d["id"] == id_:
                return d["type"]
        raise KeyError(id_)

    def to_dict(self):
        order = {t: i for i, t in enumerate(DEVICE_TYPES)}
        devices = sorted(self.devices, key=lambda d: order[d["type"]])  # stable
        out = {"name": self.name, "description": self.description}
        if self.sources:
            out["sources"] = self.sources
        out["devices"] = devices
        out["links"] = self.nvlinks + self.pcie_leaf + self.pcie_up + self.pcie_root + self.sockets
        return out


def gpus(t, n, model):
    return [t.dev("gpu%d" % i, "gpu", model) for i in range(n)]


def two_cpus(t, model, cores0, cores1, link, count):
    c0 = t.dev("cpu0", "cpu", model, cores=cores0, numa_node=0)
    c1 = t.dev("cpu1", "cpu", model, cores=cores1, numa_node=1)
    t.socket(c0, c1, link, count)
    return c0, c1


# --------------------------------------------------------------------------------------
# The nine machines
# --------------------------------------------------------------------------------------


def dgx1_pcie_tree(t, gpu_pcie):
    """DGX-1 (P100 and V100): 4 PCIe3 switches, 2 GPUs + 1 EDR NIC each, 2 per socket."""
    sw = [t.dev("pcie%d" % s, "pcie_switch", "pcie3-switch") for s in range(4)]
    cpu = two_cpus(t, "xeon-e5-2698v4", "0-19,40-59", "20-39,60-79", "qpi-9.6", 2)
    nic = [t.dev("mlx5_%d" % s, "nic", "connectx4-edr") for s in range(4)]
    for g in range(8):
        t.pcie("gpu%d" % g, sw[g // 2], gpu_pcie)
    for s in range(4):
        t.pcie(nic[s], sw[s], NIC_PCIE["connectx4-edr"])
    for s in range(4):
        t.pcie(sw[s], cpu[s // 2], "pcie3-x16")


def dgx1_p100():
    t = Topo(
        "dgx1-p100",
        "NVIDIA DGX-1 with 8 Tesla P100-SXM2 in a hybrid cube-mesh of NVLink 1.0 (4 links per GPU: "
        "one to each quad-mate and one to GPU i+-4). GPUs sit in pairs behind four PCIe Gen3 switches, "
        "each with one EDR InfiniBand NIC, under two Xeon E5-2698 v4 sockets joined by QPI.",
        [
            "Tartan connectivity matrix (DGX-1 P100): each GPU one NVLink to each quad-mate and to GPU i+-4",
            "NVIDIA DGX-1 whitepaper: GPUs in pairs behind PCIe switches, 4x EDR InfiniBand, "
            "two Xeon E5-2698 v4 joined by QPI",
        ],
    )
    gpus(t, 8, "p100")
    for quad in (range(0, 4), range(4, 8)):
        q = list(quad)
        for i in range(4):
            for j in range(i + 1, 4):
                t.nvlink("gpu%d" % q[i], "gpu%d" % q[j], "nvlink1")
    for i in range(4):
        t.nvlink("gpu%d" % i, "gpu%d" % (i + 4), "nvlink1")
    # order NVLinks by (a, b) so the list reads row by row like the matrix
    t.nvlinks.sort(key=lambda l: (int(l["a"][3:]), int(l["b"][3:])))
    dgx1_pcie_tree(t, "pcie3-x16")
    return t


DGX1_V100_NVLINKS = [
    (0, 1, 1), (0, 2, 1), (0, 3, 2), (0, 4, 2),
    (1, 2, 2), (1, 3, 1), (1, 5, 2),
    (2, 3, 2), (2, 6, 1),
    (3, 7, 1),
    (4, 5, 1), (4, 6, 1), (4, 7, 2),
    (5, 6, 2), (5, 7, 1),
    (6, 7, 2),
]


def dgx1_v100():
    t = Topo(
        "dgx1-v100",
        "NVIDIA DGX-1 with 8 Tesla V100-SXM2 in the Volta hybrid cube-mesh: 6 NVLink 2.0 links per GPU, "
        "some GPU pairs joined by two links (NV2) and some by one (NV1). GPUs sit in pairs behind four "
        "PCIe Gen3 switches, each with one EDR InfiniBand NIC, under two Xeon E5-2698 v4 sockets joined by QPI.",
        [
            "DGX-1 V100 nvidia-smi topo -m (NVIDIA/nccl issue 671): GPU0: X NV1 NV1 NV2 NV2 SYS SYS SYS / "
            "GPU1: NV1 X NV2 NV1 SYS NV2 SYS SYS / GPU2: NV1 NV2 X NV2 SYS SYS NV1 SYS / "
            "GPU3: NV2 NV1 NV2 X SYS SYS SYS NV1 / GPU4: NV2 SYS SYS SYS X NV1 NV1 NV2 / "
            "GPU5: SYS NV2 SYS SYS NV1 X NV2 NV1 / GPU6: SYS SYS NV1 SYS NV1 NV2 X NV2 / "
            "GPU7: SYS SYS SYS NV1 NV2 NV1 NV2 X",
            "NVIDIA DGX-1 whitepaper: GPUs in pairs behind PCIe switches, 4x EDR InfiniBand, "
            "two Xeon E5-2698 v4 joined by QPI",
        ],
    )
    gpus(t, 8, "v100")
    for a, b, n in DGX1_V100_NVLINKS:
        t.nvlink("gpu%d" % a, "gpu%d" % b, "nvlink2", n)
    dgx1_pcie_tree(t, "pcie3-x16")
    return t


def dgx2():
    t = Topo(
        "dgx2",
        "NVIDIA DGX-2 with 16 Tesla V100-SXM3 on two baseboards of 8. Each baseboard has 6 first-generation "
        "NVSwitches; every GPU has one NVLink 2.0 link to each switch of its board, and each switch has 8 "
        "ports to its twin on the other board. PCIe is two levels of Gen3 switches per board (leaf: 2 GPUs + "
        "1 EDR NIC), one board per Xeon Platinum 8168 socket.",
        [
            "NVIDIA DGX-2 datasheet and NVSwitch technical overview: 16 V100 on 2 baseboards, 6 NVSwitches per "
            "board, each GPU one NVLink to each switch of its board, 8 ports from each switch to its twin",
            "DGX-2 PCIe: two levels of PCIe switches under each CPU, 8x 100 Gb EDR NICs, one per GPU pair",
        ],
    )
    gpus(t, 16, "v100-sxm3")
    nvs = [t.dev("nvswitch%d" % k, "nvswitch", "nvswitch-gen1") for k in range(12)]
    leaf = [t.dev("pcie_leaf%d" % i, "pcie_switch", "pcie3-switch") for i in range(8)]
    up = [t.dev("pcie_up%d" % j, "pcie_switch", "pcie3-switch") for j in range(4)]
    cpu = two_cpus(t, "xeon-platinum-8168", "0-23,48-71", "24-47,72-95", "upi-10.4", 2)
    nic = [t.dev("mlx5_%d" % i, "nic", "connectx5-edr") for i in range(8)]
    for g in range(16):
        board = g // 8
        for k in range(6):
            t.nvlink("gpu%d" % g, nvs[6 * board + k], "nvlink2")
    for k in range(6):
        t.nvlink(nvs[k], nvs[k + 6], "nvlink2", 8)
    for g in range(16):
        t.pcie("gpu%d" % g, leaf[g // 2], "pcie3-x16")
    for i in range(8):
        t.pcie(nic[i], leaf[i], NIC_PCIE["connectx5-edr"])
    for i in range(8):
        t.pcie(leaf[i], up[i // 2], "pcie3-x16")
    for j in range(4):
        t.pcie(up[j], cpu[j // 2], "pcie3-x16")
    return t


def dgx_a100_board(t, gpu, split):
    """DGX A100's board in `t`: 8 `gpu` with split[k] NVLink 3.0 links to NVSwitch k, four PCIe
    Gen4 switches of 2 GPUs and 2 HDR NICs each, two EPYC 7742 sockets."""
    gpus(t, 8, gpu)
    nvs = [t.dev("nvswitch%d" % k, "nvswitch", "nvswitch-gen2") for k in range(6)]
    sw = [t.dev("pcie%d" % c, "pcie_switch", "pcie4-switch") for c in range(4)]
    cpu = two_cpus(t, "epyc-7742", "0-63,128-191", "64-127,192-255", "xgmi2", 4)
    nic = [t.dev("mlx5_%d" % i, "nic", "connectx6-hdr") for i in range(8)]
    for g in range(8):
        for k in range(6):
            t.nvlink("gpu%d" % g, nvs[k], "nvlink3", split[k])
    for g in range(8):
        t.pcie("gpu%d" % g, sw[g // 2], "pcie4-x16")
    for i in range(8):
        t.pcie(nic[i], sw[i // 2], NIC_PCIE["connectx6-hdr"])
    for c in range(4):
        t.pcie(sw[c], cpu[c // 2], "pcie4-x16")
    return t


def dgx_a100():
    t = Topo(
        "dgx-a100",
        "NVIDIA DGX A100 with 8 A100-SXM4 and 6 second-generation NVSwitches; each GPU has 12 NVLink 3.0 "
        "links, 2 to each switch. PCIe is four Gen4 switches, each with 2 GPUs and 2 HDR InfiniBand NICs, "
        "two per AMD EPYC 7742 socket. (nvidia-smi prints PXB between a GPU and its NICs because of the "
        "switch chip's internal bridges; topsim models each chip as one switch and prints PIX.)",
        [
            "NVIDIA DGX A100 user guide / nccl issue 1505 topology: 6 NVSwitches, 2 links from each GPU to each",
            "DGX A100: 4 PCIe switch complexes, each 2 GPUs and 2 HDR NICs on one Broadcom PEX88096-class chip",
        ],
    )
    return dgx_a100_board(t, "a100", [2] * 6)


def dgx_a800():
    # DGX A100's board with A800 GPUs: a like-for-like what-if against dgx-a100 (only NVLink differs).
    split = [2, 2, 1, 1, 1, 1]
    t = Topo(
        "dgx-a800",
        "DGX A100 with its 8 A100 replaced by A800 80GB: each A800 uses 8 of the board's 12 NVLink 3.0 ports "
        "(400 GB/s), every other part as topologies/dgx-a100.json (6 second-generation NVSwitches, four PCIe "
        "Gen4 switches each with 2 GPUs and 2 HDR InfiniBand NICs, two AMD EPYC 7742). A what-if for comparing "
        "A100 with A800 like for like (same board, memory and NICs; only NVLink differs); NVIDIA sold a DGX "
        "A800, but its datasheet is not transcribed here.",
        [
            "Board, NICs, PCIe and CPUs: topologies/dgx-a100.json, unchanged",
            "A800 NVLink: 8 links per GPU, 400 GB/s (as topologies/hgx-a800.json); "
            + SPLIT_ASSUMPTION.format(n=8, split="2 links to nvswitch0 and nvswitch1, 1 to nvswitch2..5"),
        ],
    )
    return dgx_a100_board(t, "a800", split)


def hgx_8gpu_nvswitch(name, description, sources, gpu, nvlink, nvswitch, split,
                      sw_model, nic_model, nics_per_switch, cpu_model, cores0, cores1,
                      socket_link, socket_count):
    t = Topo(name, description, sources)
    gpus(t, 8, gpu)
    nvs = [t.dev("nvswitch%d" % k, "nvswitch", nvswitch) for k in range(len(split))]
    sw = [t.dev("pcie%d" % s, "pcie_switch", sw_model) for s in range(4)]
    cpu = two_cpus(t, cpu_model, cores0, cores1, socket_link, socket_count)
    nic = [t.dev("mlx5_%d" % i, "nic", nic_model) for i in range(4 * nics_per_switch)]
    for g in range(8):
        for k, n in enumerate(split):
            t.nvlink("gpu%d" % g, nvs[k], nvlink, n)
    gpu_pcie = GPU_NVLINKS[gpu][2]
    for g in range(8):
        t.pcie("gpu%d" % g, sw[g // 2], gpu_pcie)
    for i in range(len(nic)):
        t.pcie(nic[i], sw[i // nics_per_switch], NIC_PCIE[nic_model])
    for s in range(4):
        t.pcie(sw[s], cpu[s // 2], PCIE_SWITCH[sw_model][1])
    return t


SPLIT_ASSUMPTION = (
    "Assumption: only the total of {n} active NVLinks per GPU is published, not how they are spread over "
    "the NVSwitches; the split used here ({split}) is a guess. The simulator stripes traffic over all links "
    "of a GPU, so the split does not change results."
)


def hgx_a800():
    split = [2, 2, 1, 1, 1, 1]
    return hgx_8gpu_nvswitch(
        "hgx-a800",
        "HGX A800 8-GPU server: 8 A800-SXM4 (the export variant of A100 with NVLink capped at 400 GB/s, "
        "8 active NVLink 3.0 links per GPU) on 6 second-generation NVSwitches. Four PCIe Gen4 switches, each "
        "with 2 GPUs and 1 HDR InfiniBand NIC, two per Xeon Platinum 8358 socket.",
        [
            "A800 NVLink capped at 400 GB/s: nvidia-smi shows NV8 (third-party topo dump)",
            SPLIT_ASSUMPTION.format(n=8, split="2 links to nvswitch0 and nvswitch1, 1 to nvswitch2..5"),
            "HGX A100/A800 baseboard: 6 second-generation NVSwitches",
        ],
        "a800", "nvlink3", "nvswitch-gen2", split,
        "pcie4-switch", "connectx6-hdr", 1,
        "xeon-platinum-8358", "0-31,64-95", "32-63,96-127", "upi-11.2", 3,
    )


def dgx_h100():
    return hgx_8gpu_nvswitch(
        "dgx-h100",
        "NVIDIA DGX H100 with 8 H100-SXM5 and 4 third-generation NVSwitches; each GPU has 18 NVLink 4.0 "
        "links split 5/4/4/5 over the switches. Four PCIe Gen5 switches, each with 2 GPUs and 2 ConnectX-7 "
        "400 Gb/s NDR NICs, two per Xeon Platinum 8480C socket.",
        [
            "NVIDIA DGX H100 user guide: 4 third-generation NVSwitches, 18 NVLink4 per GPU split 5/4/4/5 over "
            "them, 8x ConnectX-7 400 Gb/s, two Xeon 8480C",
        ],
        "h100", "nvlink4", "nvswitch-gen3", [5, 4, 4, 5],
        "pcie5-switch", "connectx7-ndr", 2,
        "xeon-platinum-8480c", "0-55,112-167", "56-111,168-223", "upi-16", 4,
    )


def hgx_h800():
    split = [2, 2, 2, 2]
    return hgx_8gpu_nvswitch(
        "hgx-h800",
        "HGX H800 8-GPU server: 8 H800-SXM5 (the export variant of H100 with NVLink capped at 400 GB/s, "
        "8 active NVLink 4.0 links per GPU) on 4 third-generation NVSwitches. PCIe, CPUs and NICs as in the "
        "DGX H100: four Gen5 switches, each with 2 GPUs and 2 ConnectX-7 NDR NICs, two Xeon Platinum 8480C.",
        [
            "H800: NVLink capped at 400 GB/s bidirectional (8 links)",
            SPLIT_ASSUMPTION.format(n=8, split="2 links to each of the 4 NVSwitches"),
            "PCIe, CPU and NIC layout taken from the DGX H100 user guide",
        ],
        "h800", "nvlink4", "nvswitch-gen3", split,
        "pcie5-switch", "connectx7-ndr", 2,
        "xeon-platinum-8480c", "0-55,112-167", "56-111,168-223", "upi-16", 4,
    )


def dgx_station_v100():
    t = Topo(
        "dgx-station-v100",
        "NVIDIA DGX Station (V100): 4 Tesla V100 fully connected by NVLink 2.0, two links per GPU pair. "
        "GPUs in pairs behind two PCIe Gen3 switches under a single Xeon E5-2698 v4. No NICs: the "
        "Station's two 10 GbE ports are not an RDMA fabric.",
        ["NVIDIA DGX Station datasheet: 4 V100 fully connected by NVLink"],
    )
    gpus(t, 4, "v100")
    sw = [t.dev("pcie%d" % s, "pcie_switch", "pcie3-switch") for s in range(2)]
    cpu0 = t.dev("cpu0", "cpu", "xeon-e5-2698v4", cores="0-39", numa_node=0)
    for a in range(4):
        for b in range(a + 1, 4):
            t.nvlink("gpu%d" % a, "gpu%d" % b, "nvlink2", 2)
    for g in range(4):
        t.pcie("gpu%d" % g, sw[g // 2], "pcie3-x16")
    for s in range(2):
        t.pcie(sw[s], cpu0, "pcie3-x16")
    return t


def pcie_8x_rtx4090():
    t = Topo(
        "pcie-8x-rtx4090",
        "A typical 8-GPU PCIe box: 4U server with 8 GeForce RTX 4090 and no NVLink, one PCIe Gen4 switch "
        "per Xeon Platinum 8380 socket holding 4 GPUs (the first also a 100 GbE ConnectX-6 Dx). GeForce "
        "drivers disable peer access, so GPU-to-GPU copies are staged through host memory.",
        [
            "Generic 4U 8-GPU PCIe server layout: one Gen4 PCIe switch per socket, 4 GPUs each",
            "RTX 4090 has no NVLink connector; GeForce drivers do not enable CUDA peer-to-peer access",
        ],
    )
    gpus(t, 8, "rtx4090")
    sw = [t.dev("pcie%d" % s, "pcie_switch", "pcie4-switch") for s in range(2)]
    cpu = two_cpus(t, "xeon-platinum-8380", "0-39,80-119", "40-79,120-159", "upi-11.2", 3)
    nic0 = t.dev("mlx5_0", "nic", "connectx6-dx-100g")
    for g in range(8):
        t.pcie("gpu%d" % g, sw[g // 4], "pcie4-x16")
    t.pcie(nic0, sw[0], NIC_PCIE["connectx6-dx-100g"])
    for s in range(2):
        t.pcie(sw[s], cpu[s], "pcie4-x16")
    return t


def gb200_tray():
    t = Topo(
        "gb200-tray",
        "One compute tray of a GB200 NVL72 rack: two GB200 superchips, each a Grace CPU joined to two B200 "
        "GPUs by NVLink-C2C, and four ConnectX-7 NDR 400 Gb/s NICs on the Graces' PCIe Gen5. Every B200 has "
        "18 NVLink 5 links that leave the tray for the rack's NVLink switch trays (its scale_out): on its own "
        "a tray's GPUs reach each other only through the Graces. Run it with --nodes N (N <= 18) or as "
        "topologies/clusters/gb200-nvl72.json.",
        [
            "NVIDIA GB200 NVL72 datasheet: 18 compute trays of 2 GB200 superchips (1 Grace + 2 B200 each), "
            "9 NVLink switch trays, 72 GPUs in one NVLink domain, 1.8 TB/s NVLink per GPU",
            "NVIDIA GB200 datasheet: NVLink-C2C 900 GB/s between Grace and each B200",
            "NIC placement on the Graces' PCIe is assumed; the two Graces' link is assumed (grace-c2c-socket)",
        ],
    )
    gpus(t, 4, "b200")
    cpu = [t.dev("cpu%d" % c, "cpu", "grace", cores="%d-%d" % (72 * c, 72 * c + 71), numa_node=c) for c in range(2)]
    t.socket(cpu[0], cpu[1], "grace-c2c-socket", 1)
    nic = [t.dev("mlx5_%d" % i, "nic", "connectx7-ndr") for i in range(4)]
    for g in range(4):
        t.pcie("gpu%d" % g, cpu[g // 2], "nvlink-c2c")
    for i in range(4):
        t.pcie(nic[i], cpu[i // 2], NIC_PCIE["connectx7-ndr"])
    return t


MACHINES = [
    dgx1_p100,
    dgx1_v100,
    dgx2,
    dgx_a100,
    dgx_a800,
    hgx_a800,
    dgx_h100,
    hgx_h800,
    dgx_station_v100,
    pcie_8x_rtx4090,
    gb200_tray,
]

# Expected (GPUs, NVSwitches, NICs) per machine, as a guard against wiring slips.
EXPECTED_COUNTS = {
    "dgx1-p100": (8, 0, 4),
    "dgx1-v100": (8, 0, 4),
    "dgx2": (16, 12, 8),
    "dgx-a100": (8, 6, 8),
    "dgx-a800": (8, 6, 8),
    "hgx-a800": (8, 6, 4),
    "dgx-h100": (8, 4, 8),
    "hgx-h800": (8, 4, 8),
    "dgx-station-v100": (4, 0, 0),
    "pcie-8x-rtx4090": (8, 0, 1),
    "gb200-tray": (4, 0, 4),
}

# --------------------------------------------------------------------------------------
# Output: json with indent 2, each device/link object on one line
# --------------------------------------------------------------------------------------


def format_topology(d):
    one = lambda o: json.dumps(o, ensure_ascii=False)
    lines = ["{"]
    keys = list(d.keys())
    for ki, k in enumerate(keys):
        comma = "," if ki < len(keys) - 1 else ""
        v = d[k]
        if isinstance(v, list):
            if not v:
                lines.append("  %s: []%s" % (one(k), comma))
                continue
            lines.append("  %s: [" % one(k))
            for i, item in enumerate(v):
                lines.append("    %s%s" % (one(item), "," if i < len(v) - 1 else ""))
            lines.append("  ]%s" % comma)
        else:
            lines.append("  %s: %s%s" % (one(k), one(v), comma))
    lines.append("}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------
# Checker
# --------------------------------------------------------------------------------------

TOP_KEYS = {"name", "description", "sources", "devices", "links", "scale_out"}

# Default fabric of each server for `topsim coll --nodes N` (a server without NICs has none).
SCALE_OUT = {
    "dgx1-p100": {"kind": "fat-tree", "switch": "sb7800"},
    "dgx1-v100": {"kind": "fat-tree", "switch": "sb7800"},
    "dgx2": {"kind": "fat-tree", "switch": "sb7800"},
    "dgx-a100": {"kind": "rail", "switch": "qm8700"},
    "dgx-a800": {"kind": "rail", "switch": "qm8700"},
    "hgx-a800": {"kind": "rail", "switch": "qm8700"},
    "dgx-h100": {"kind": "rail", "switch": "qm9700"},
    "hgx-h800": {"kind": "rail", "switch": "qm9700"},
    "pcie-8x-rtx4090": {"kind": "fat-tree", "switch": "sn2700"},
    "gb200-tray": {"kind": "nvlink", "switch": "nvswitch-gen4", "planes": 18},
}
DEV_KEYS = {"id", "type", "model", "cores", "numa_node"}
LINK_KEYS = {"a", "b", "model", "count", "bandwidth", "latency", "efficiency"}
ID_RE = re.compile(r"^[A-Za-z0-9_.\-]+$")


def check_topology(d, stem):
    """Assert every structural rule; returns a one-line summary."""
    def fail(msg):
        raise AssertionError("%s: %s" % (stem, msg))

    def need(cond, msg):
        if not cond:
            fail(msg)

    need(isinstance(d, dict), "top level must be an object")
    need(set(d) <= TOP_KEYS, "unknown top-level keys %s" % sorted(set(d) - TOP_KEYS))
    for k in ("name", "description", "devices", "links"):
        need(k in d, "missing %s" % k)
    need(d["name"] == stem, "name %r != file stem %r" % (d["name"], stem))
    need(isinstance(d["description"], str) and d["description"].strip(), "empty description")
    if "sources" in d:
        need(isinstance(d["sources"], list) and all(isinstance(s, str) and s for s in d["sources"]),
             "sources must be an array of non-empty strings")

    devs = {}
    order = {t: i for i, t in enumerate(DEVICE_TYPES)}
    last_rank = -1
    gpu_i = nic_i = 0
    for dev in d["devices"]:
        need(set(dev) <= DEV_KEYS, "unknown device keys %s" % sorted(set(dev) - DEV_KEYS))
        i = dev.get("id")
        need(isinstance(i, str) and ID_RE.match(i), "bad id %r" % i)
        need(i not in devs, "duplicate id %s" % i)
        t = dev.get("type")
        need(t in TYPE_MODELS, "%s: bad type %r" % (i, t))
        need(dev.get("model") in TYPE_MODELS[t], "%s: unknown %s model %r" % (i, t, dev.get("model")))
        if t != "cpu":
            need("cores" not in dev and "numa_node" not in dev, "%s: cores/numa_node only on cpus" % i)
        else:
            if "cores" in dev:
                need(re.match(r"^\d+(-\d+)?(,\d+(-\d+)?)*$", dev["cores"]), "%s: bad cores" % i)
            if "numa_node" in dev:
                need(isinstance(dev["numa_node"], int) and dev["numa_node"] >= 0, "%s: bad numa_node" % i)
        need(order[t] >= last_rank, "device order: %s (%s) after a later type" % (i, t))
        last_rank = order[t]
        if t == "gpu":
            need(i == "gpu%d" % gpu_i, "GPU ids must run gpu0.. in order, got %s" % i)
            gpu_i += 1
        if t == "nic":
            nic_i += 1
        devs[i] = dev

    typ = lambda i: devs[i]["type"]
    model = lambda i: devs[i]["model"]
    nvl = {i: 0 for i in devs}
    lanes = {i: 0 for i in devs}
    pcie_adj = {i: set() for i in devs}
    seen = set()
    for l in d["links"]:
        need(set(l) <= LINK_KEYS, "unknown link keys %s" % sorted(set(l) - LINK_KEYS))
        need(not (set(l) & {"bandwidth", "latency", "efficiency"}), "overrides not allowed in bundled files")
        a, b, m = l.get("a"), l.get("b"), l.get("model")
        need(a in devs and b in devs, "link endpoint missing: %s-%s" % (a, b))
        need(a != b, "self link %s" % a)
        pair = tuple(sorted((a, b)))
        need(pair not in seen, "duplicate link %s-%s (merge into count)" % pair)
        seen.add(pair)
        n = l.get("count", 1)
        need(isinstance(n, int) and n >= 1, "bad count on %s-%s" % (a, b))
        ta, tb = typ(a), typ(b)
        kinds = {ta, tb}
        if m in NVLINK_MODELS:
            need("cpu" not in kinds and "nic" not in kinds and "pcie_switch" not in kinds,
                 "NVLink %s-%s must join GPUs/NVSwitches" % (a, b))
            need(kinds != {"nvswitch"} or ta == tb, "bad nvlink")
            for x in (a, b):
                if typ(x) == "gpu":
                    need(GPU_NVLINKS[model(x)][0] == m, "%s: NVLink model %s != %s" % (x, m, GPU_NVLINKS[model(x)][0]))
                nvl[x] += n
        elif m in PCIE_MODELS:
            endpoint = {"gpu", "nic"}
            upstream = {"pcie_switch", "cpu"}
            ok = (
                (ta in endpoint and tb in upstream)
                or (tb in endpoint and ta in upstream)
                or (ta == "pcie_switch" and tb in upstream)
                or (tb == "pcie_switch" and ta in upstream)
            )
            need(ok, "illegal PCIe link %s(%s)-%s(%s)" % (a, ta, b, tb))
            need(n == 1, "PCIe link %s-%s: count must be 1" % (a, b))
            # generation checks
            for x, y in ((a, b), (b, a)):
                if typ(x) == "gpu":
                    need(m == GPU_NVLINKS[model(x)][2], "%s: PCIe model %s != GPU's %s" % (x, m, GPU_NVLINKS[model(x)][2]))
                if typ(x) == "nic":
                    need(m == NIC_PCIE[model(x)], "%s: PCIe model %s != NIC's %s" % (x, m, NIC_PCIE[model(x)]))
            if kinds == {"pcie_switch", "cpu"}:
                sw = a if ta == "pcie_switch" else b
                need(m == PCIE_SWITCH[model(sw)][1], "%s uplink model %s != switch generation" % (sw, m))
            for x in (a, b):
                lanes[x] += PCIE_MODELS[m] * n
            pcie_adj[a].add(b)
            pcie_adj[b].add(a)
        elif m in SOCKET_MODELS:
            need(ta == "cpu" and tb == "cpu", "socket link %s-%s must join CPUs" % (a, b))
        else:
            fail("unknown link model %r" % m)

    # NVLink counts
    for i, dev in devs.items():
        if dev["type"] == "gpu":
            want = GPU_NVLINKS[dev["model"]][1]
            # A server whose NVLinks all leave it for NVLink switch planes wires none inside.
            leaves = d.get("scale_out", {}).get("kind") == "nvlink" and d["scale_out"].get("planes") and nvl[i] == 0
            need(leaves or nvl[i] == want, "%s (%s) uses %d NVLinks, model has %d" % (i, dev["model"], nvl[i], want))
        elif dev["type"] == "nvswitch":
            need(nvl[i] <= NVSWITCH_PORTS[dev["model"]], "%s uses %d ports > %d" % (i, nvl[i], NVSWITCH_PORTS[dev["model"]]))
        elif dev["type"] == "pcie_switch":
            need(lanes[i] <= PCIE_SWITCH[dev["model"]][0], "%s uses %d lanes > %d" % (i, lanes[i], PCIE_SWITCH[dev["model"]][0]))
            need(pcie_adj[i], "%s has no PCIe links" % i)
        elif dev["type"] == "cpu":
            need(lanes[i] <= CPU_LANES[dev["model"]], "%s uses %d lanes > %d" % (i, lanes[i], CPU_LANES[dev["model"]]))

    # every GPU and NIC reaches a CPU over PCIe (without passing through another GPU/NIC)
    for i, dev in devs.items():
        if dev["type"] in ("gpu", "nic"):
            frontier, seen_n, found = [i], {i}, False
            while frontier and not found:
                x = frontier.pop()
                for y in pcie_adj[x]:
                    if typ(y) == "cpu":
                        found = True
                        break
                    if typ(y) == "pcie_switch" and y not in seen_n:
                        seen_n.add(y)
                        frontier.append(y)
            need(found, "%s does not reach a CPU over PCIe" % i)

    # cpus: distinct numa nodes, non-overlapping cores
    cpus = [dv for dv in devs.values() if dv["type"] == "cpu"]
    numas = [c["numa_node"] for c in cpus if "numa_node" in c]
    need(len(numas) == len(set(numas)), "duplicate numa_node")
    used = set()
    for c in cpus:
        if "cores" in c:
            s = set()
            for part in c["cores"].split(","):
                lo, _, hi = part.partition("-")
                s |= set(range(int(lo), int(hi or lo) + 1))
            need(not (s & used), "%s cores overlap another cpu" % c["id"])
            used |= s

    counts = (gpu_i, sum(1 for v in devs.values() if v["type"] == "nvswitch"), nic_i)
    if stem in EXPECTED_COUNTS:
        need(counts == EXPECTED_COUNTS[stem], "counts (gpus, nvswitches, nics) %s != %s" % (counts, EXPECTED_COUNTS[stem]))
    nvs_ports = {i: nvl[i] for i in devs if typ(i) == "nvswitch"}
    sw_lanes = {i: lanes[i] for i in devs if typ(i) in ("pcie_switch", "cpu")}
    return "%-18s %2d gpus %2d nvswitches %d nics; max nvswitch ports %s; lanes %s" % (
        stem, counts[0], counts[1], counts[2],
        max(nvs_ports.values()) if nvs_ports else "-",
        ", ".join("%s=%d" % kv for kv in sorted(sw_lanes.items())),
    )


def cross_check_models(models_dir):
    """If models/*.json is present, check that the tables above agree with it."""
    paths = {k: os.path.join(models_dir, k + ".json") for k in ("gpus", "switches", "cpus", "nics", "links")}
    if not all(os.path.exists(p) for p in paths.values()):
        return "models/ not found, skipped cross-check"
    load = lambda k: json.load(open(paths[k]))
    gm = load("gpus")["gpu_models"]
    for name, (nvm, n, pcie) in GPU_NVLINKS.items():
        assert name in gm, "models/gpus.json lacks %s" % name
        nv = gm[name].get("nvlink")
        assert (nv["model"], nv["links"]) == (nvm, n) if nv else nvm is None, "nvlink mismatch for %s" % name
        assert gm[name].get("pcie") == pcie, "pcie mismatch for %s" % name
    sm = load("switches")["switch_models"]
    for name, ports in NVSWITCH_PORTS.items():
        assert sm[name]["ports"] == ports, "ports mismatch for %s" % name
    for name, (lanes, _) in PCIE_SWITCH.items():
        assert sm[name]["lanes"] == lanes, "lanes mismatch for %s" % name
    cm = load("cpus")["cpu_models"]
    for name, lanes in CPU_LANES.items():
        assert cm[name]["pcie_lanes"] == lanes, "lanes mismatch for %s" % name
    nm = load("nics")["nic_models"]
    for name, pcie in NIC_PCIE.items():
        assert nm[name]["pcie"] == pcie, "pcie mismatch for %s" % name
    lm = load("links")["link_models"]
    for name in NVLINK_MODELS:
        assert lm[name]["kind"] == "nvlink", name
    for name, lanes in PCIE_MODELS.items():
        assert lm[name]["kind"] == "pcie" and lm[name]["lanes"] == lanes, name
    for name in SOCKET_MODELS:
        assert lm[name]["kind"] == "socket", name
    return "model tables agree with models/*.json"


def check_file(path):
    stem = os.path.splitext(os.path.basename(path))[0]
    with open(path, encoding="utf-8") as f:
        text = f.read()
    d = json.loads(text)
    assert text.endswith("\n"), "%s: missing final newline" % stem
    assert format_topology(d) == text, "%s: not in canonical format" % stem
    return check_topology(d, stem)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--outdir", default=os.path.join(REPO, "topologies"))
    ap.add_argument("--check", action="store_true", help="only check existing files")
    args = ap.parse_args()

    print(cross_check_models(os.path.join(REPO, "models")))
    names = []
    if not args.check:
        os.makedirs(args.outdir, exist_ok=True)
        for fn in MACHINES:
            d = fn().to_dict()
            if d["name"] in SCALE_OUT:
                d["scale_out"] = SCALE_OUT[d["name"]]
            check_topology(d, d["name"])  # check before writing
            path = os.path.join(args.outdir, d["name"] + ".json")
            with open(path, "w", encoding="utf-8", newline="\n") as f:
                f.write(format_topology(d))
            names.append(d["name"])
    else:
        names = [fn().name for fn in MACHINES]
    for n in names:
        print(check_file(os.path.join(args.outdir, n + ".json")))
    print("%d topologies OK" % len(names))


if __name__ == "__main__":
    sys.exit(main())
