"""Writes one table of ../shared/reference/nccl-tests-public.md as nccl-tests output (the format
of tests/data/nccl-tests/*.txt, util.cu's columns), so that calibrate --measured and validate
--measured read it. Rows with busbw 0 (nccl-tests rounds tiny sizes to 0.00) are kept as time rows.

    python3 tools/public_table_log.py TABLES.md SECTION PROGRAM GPU_NAME GPUS OUT.txt
"""
import sys


def main():
    path, section, program, gpu, gpus, out = sys.argv[1:7]
    gpus = int(gpus)
    lines = open(path).read().split("\n## ")
    body = next(b for b in lines if b.startswith(section + "\n"))
    rows = [l for l in body.splitlines() if l.startswith("| ") and l[2].isdigit()]
    text = ["# nccl-tests version 2.19.6 nccl-headers=21805 nccl-library=21805",
            f"# Collective test starting: {program}",
            f"# nThread 1 nGpus {gpus} minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0",
            "#", "# Using devices"]
    for r in range(gpus):
        text.append(f"#  Rank {r:2d} Group  0 Pid   {1000 + r} on      node1 device  {r} [0000:{r:02x}:00] {gpu}")
    text += ["#", "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong",
             "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)"]
    for l in rows:
        size, time_us, busbw = [c.strip() for c in l.strip("|").split("|")]
        size, t, b = int(size), float(time_us), float(busbw)
        alg = size / t / 1e3
        text.append(f"{size:12d}  {size // 4:12d}     float     sum      -1  {t:9.2f}  {alg:7.2f}  {b:7.2f}       0  {t:9.2f}  {alg:7.2f}  {b:7.2f}       0")
    text += [f"# Collective test concluded: {program}", "#"]
    open(out, "w").write("\n".join(text) + "\n")


if __name__ == "__main__":
    main()
