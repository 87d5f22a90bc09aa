#!/usr/bin/env python3
# build/bench/pager_bench.py: `make bench-pager`: the remote pager's figures under TCG: swap-in
# latency and sequential read bandwidth vs block size per backend (memseq), sort time vs local
# limit (no limit / NVM / disk / node), LRU vs FIFO swap volume; writes build/out/bench/pager.*;
# then the pager against Linux swap (pager_vs_linux.py: build/out/bench/pager_vs_linux.*)
import argparse
import csv
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from runner import client  # noqa: E402
import node_throughput  # noqa: E402
import pager_vs_linux  # noqa: E402
from bench_output import OUT, add_smoke_option, disk_copy  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
BLOCKS = ["4K", "16K", "64K", "256K", "1M"]
SORT_RECORDS = 10000           # ~1 MiB working set (line records, scratch, text)
SORT_LIMITS = ["256K", "512K"]  # a quarter and a half of it
SORT_POLICIES = ["lru", "fifo"]
# --smoke: memseq at one block size, a small sort at one limit, policy and block size, the
# memory-node runs at one block without the baseline build, and pager_vs_linux's smoke run.
SMOKE = {"blocks": ["64K"], "memseq_bytes": "2M", "sort_records": 2000, "sort_limits": ["128K"],
         "sort_policies": ["lru"], "node_blocks": "64K", "node_repeats": 1, "baseline": ""}
SEED = {"mb_per_s": 603, "swap_in_ms_1m": 1.2, "lru_fifo_volume": "6.5-19 %"}


def arguments():
    parser = argparse.ArgumentParser(description="remote pager benchmark")
    parser.add_argument("--timeout", type=int, default=1200)
    parser.add_argument("--backends", default="nvm,disk", help="comma list of nvm, disk, node")
    parser.add_argument("--memseq-bytes", default="8M")
    parser.add_argument("--node-blocks", default=",".join(BLOCKS),
                        help="block sizes of the memory-node throughput runs ('' for none)")
    parser.add_argument("--node-repeats", type=int, default=3)
    parser.add_argument("--nic-blocks", default="64K,1M",
                        help="block sizes of the memory-node runs over each network card ('' for none)")
    parser.add_argument("--baseline", default=node_throughput.BASELINE_REVISION,
                        help="git revision to compare memory-node throughput with ('' for none)")
    parser.add_argument("--no-vs-linux", action="store_true", help="leave out the comparison with Linux swap")
    parser.add_argument("--only-vs-linux", action="store_true", help="only the comparison with Linux swap")
    pager_vs_linux.add_options(parser)
    add_smoke_option(parser)
    options = parser.parse_args()
    options.blocks, options.sort_records = BLOCKS, SORT_RECORDS
    options.sort_limits, options.sort_policies = SORT_LIMITS, SORT_POLICIES
    if options.smoke:
        for name, value in SMOKE.items():
            setattr(options, name, value)
    return pager_vs_linux.smoke_options(options)


FAILED_BOOTS = []  # the commands of boots that failed: the benchmark then exits 1


def boot(commands, flags, timeout):
    """One boot running `commands`; the @json objects it printed. A failed boot is
    reported and remembered (the run goes on, and fails at the end)."""
    run = client.run(["--smp", "2", "--accel", "tcg", *flags, "--cmd", "; ".join(commands)], timeout)
    if run.rc != 0:
        print(f"pager_bench: boot failed ({run.rc}): {'; '.join(commands)}", file=sys.stderr)
        FAILED_BOOTS.append(f"{'; '.join(commands)} (status {run.rc})")
    return run.jsons


def backend_flags(backend, scratch):
    if backend == "nvm":
        return ["--nvm", f"{scratch / 'bench.nvm'}:64M"] + disk_copy(scratch)
    if backend == "node":
        return ["--memnodes", "1"] + disk_copy(scratch)
    return disk_copy(scratch)  # the disk backend's, and FS's for the others


def memseq_rows(backend, options, scratch):
    rows = []
    for block in options.blocks:
        command = f"run memseq -s {options.memseq_bytes} -l 1M -b {block} --backend {backend} --stride 256K"
        for result in boot([command], backend_flags(backend, scratch), options.timeout):
            if result.get("kind") == "memseq":
                rows.append({"figure": "memseq", **result})
    return rows


def sort_command(records, backend, limit, policy, block="16K"):
    return f"run sort -n {records} -l {limit} -b {block} -P {policy} --backend {backend}"


def sort_rows(backend, options, scratch):
    records = options.sort_records
    if backend == "none":
        commands = [sort_command(records, "none", "0", "lru")]
    else:
        commands = [sort_command(records, backend, limit, policy)
                    for limit in options.sort_limits for policy in options.sort_policies]
        if not options.smoke:  # the same sorts with 64 KiB blocks
            commands += [sort_command(records, backend, options.sort_limits[0], policy, "64K")
                         for policy in options.sort_policies]
    rows, pagers = [], []
    for command in commands:
        for result in boot([command], backend_flags(backend, scratch), options.timeout):
            if result.get("kind") == "sort":
                rows.append(result)
            elif result.get("kind") == "pager":
                pagers.append(result)
    for row, pager in zip([r for r in rows if r["backend"] != "none"], pagers):
        row["swap_bytes"] = pager["bytes_in"] + pager["bytes_out"]
    return [{"figure": "sort", **row} for row in rows]


def write_csv(rows, path):
    keys = sorted({key for row in rows for key in row})
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=keys)
        writer.writeheader()
        writer.writerows(rows)


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for backend in sorted({r["backend"] for r in rows if r["figure"] == "memseq"}):
        seq = [r for r in rows if r["figure"] == "memseq" and r["backend"] == backend
               and r["mode"] == "sequential"]
        sizes = [r["block_bytes"] // 1024 for r in seq]
        left.plot(sizes, [r["mb_per_s"] for r in seq], marker="o", label=f"{backend} MB/s")
        right.plot(sizes, [r["swap_in_us"] for r in seq], marker="o", label=f"{backend} µs")
    for axis, title in ((left, "sequential read bandwidth"), (right, "swap-in latency per block")):
        axis.set_xscale("log", base=2)
        axis.set_xlabel("block size (KiB)")
        axis.set_title(title)
        axis.legend()
    figure.tight_layout()
    figure.savefig(path)
    return True


def markdown(rows, have_png):
    lines = ["# Remote pager under TCG", "",
             "Sequential read after everything was swapped out (memseq, 1 MiB local limit):", "",
             "| backend | block | MB/s | µs per swap-in | swap-ins |", "|---|---|---|---|---|"]
    for r in rows:
        if r["figure"] == "memseq" and r["mode"] == "sequential":
            lines.append(f"| {r['backend']} | {r['block_bytes'] // 1024} KiB | {r['mb_per_s']} | "
                         f"{r['swap_in_us']} | {r['swap_in_blocks']} |")
    lines += ["", f"sort of {SORT_RECORDS} records (about 1 MiB of buffers):", "",
              "| backend | policy | block | limit | ms | swap-ins | swap-outs | clean drops | swapped MiB | ok |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["figure"] == "sort":
            lines.append(f"| {r['backend']} | {r['policy']} | {r['block_bytes'] // 1024} KiB | "
                         f"{r['local_limit_bytes'] // 1024} KiB | {r['elapsed_us'] // 1000} | "
                         f"{r['swap_in_blocks']} | {r['swap_out_blocks']} | {r['clean_drops']} | "
                         f"{r.get('swap_bytes', 0) / 2**20:.1f} | {r['verified']} |")
    lines += ["", "## Against seed 004", "",
              f"Seed 004 (Myrinet 10G, 31 memory servers, real hardware) reaches {SEED['mb_per_s']} MB/s "
              f"at 1 MiB blocks, {SEED['swap_in_ms_1m']} ms per 1 MiB swap-in, and LRU moves "
              f"{SEED['lru_fifo_volume']} of FIFO's swap volume for GNU sort.",
              "Here every figure is measured inside QEMU TCG: the CPU is emulated, so a copy of a "
              "block and every system call cost far more than on hardware, and memory nodes (when "
              "present) are reached over a loopback network between emulators. Absolute numbers "
              "are therefore not comparable; the shapes are: bandwidth rising with the block size, "
              "latency per block growing with it, and LRU's volume against FIFO's.",
              "The sort here is a small merge sort (about 1 MiB), so LRU/FIFO ratios differ from the "
              "seed's 3.3-5.6 GB runs."]
    if have_png:
        lines += ["", "![memseq](pager.png)"]
    return "\n".join(lines) + "\n"


def vs_linux(options):
    """The comparison with Linux swap (build/bench/pager_vs_linux.py), its own report."""
    subprocess.run([str(REPO / "build" / "linux" / "build.sh")], check=True)
    rows = pager_vs_linux.run(options, OUT / "logs")
    pager_vs_linux.write_report(rows, "make bench-pager  # " + " ".join(sys.argv[1:]), options)
    print(f"pager_bench: the comparison with Linux swap in {OUT}/pager_vs_linux.{{json,md,png}}")


def main():
    options = arguments()
    OUT.mkdir(parents=True, exist_ok=True)
    if options.only_vs_linux:
        vs_linux(options)
        return
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        scratch = Path(directory)
        rows += sort_rows("none", options, scratch)
        for backend in options.backends.split(","):
            rows += memseq_rows(backend, options, scratch)
            rows += sort_rows(backend, options, scratch)
    blocks = [block for block in options.node_blocks.split(",") if block]
    node_table = node_throughput.rows(blocks, options.memseq_bytes, options.node_repeats,
                                      options.baseline, OUT, options.timeout) if blocks else []
    nic_blocks = [block for block in options.nic_blocks.split(",") if block]
    nic_table = node_throughput.nic_rows(nic_blocks, options.memseq_bytes, options.node_repeats,
                                         options.timeout) if nic_blocks else []
    for row in rows + node_table + nic_table:
        print(client.JSON_MARKER + json.dumps(row))
    (OUT / "pager.json").write_text(json.dumps(rows + node_table + nic_table, indent=1) + "\n")
    write_csv(rows, OUT / "pager.csv")
    have_png = plot(rows, OUT / "pager.png")
    report = markdown(rows, have_png)
    if node_table:
        report += "\n" + node_throughput.markdown(node_table, SEED["mb_per_s"], SEED["swap_in_ms_1m"])
    if nic_table:
        report += "\n" + node_throughput.nic_markdown(nic_table)
    (OUT / "pager.md").write_text(report)
    print(f"pager_bench: {len(rows)} results in {OUT}/pager.{{json,csv,md{',png' if have_png else ''}}}")
    if not options.no_vs_linux:
        vs_linux(options)
    failed = FAILED_BOOTS + [f"this build's memseq at {row['block_bytes']} bytes failed {row['failed_runs']} time(s)"
                             for row in node_table if row["build"] == "this" and row["failed_runs"]]
    failed += [f"memseq over {row['nic']} at {row['block_bytes']} bytes failed {row['failed_runs']} time(s)"
               for row in nic_table if row["failed_runs"]]
    if failed:
        sys.exit("pager_bench: incomplete, these failed: " + "; ".join(failed))


if __name__ == "__main__":
    main()
