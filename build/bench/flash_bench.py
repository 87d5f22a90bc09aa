#!/usr/bin/env python3
# build/bench/flash_bench.py: `make bench-flash`: seed 000's workloads (apps/flashbench: FIO-like
# random I/O, STREAM-like copy/scale/add/triad, a Himeno-like stencil) with data a few times the
# local memory, four ways: malloc with the pager swapping to the disk, mmap of a file on the
# disk, flmalloc, all in DRAM. One boot per workload and run, each method in turn on a fresh disk
# copy; prints @json {"kind":"flash","system":"formica","workload":W,"method":M,"seconds":T,...}
# (the median of --runs) and writes build/out/bench/flash.json and flash.md. mmap and flmalloc's
# far memory need lib/mmap.c: without it those methods are left out and the report says so.
# Linux's side (the same workloads in the Linux guest) is not built yet.
import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "build"))
sys.path.insert(0, str(REPO / "build" / "bench"))
from runner import client  # noqa: E402
from bench_output import OUT, add_smoke_option, disk_copy  # noqa: E402

WORKLOADS = ("fio", "stream", "himeno")
METHODS = ("malloc-swap", "mmap", "flmalloc", "dram")
NEEDS_MMAP = ("mmap", "flmalloc")
ROUNDS = {"fio": 20000, "stream": 4, "himeno": 3}
SMOKE_ROUNDS = {"fio": 200, "stream": 1, "himeno": 1}
MIB = 1 << 20


def arguments():
    parser = argparse.ArgumentParser(description="seed 000's workloads over four kinds of memory")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--data-mib", type=int, default=96, help="each workload's data")
    parser.add_argument("--local-mib", type=int, default=32,
                        help="the local memory bound: the pager's limit and flmalloc's")
    parser.add_argument("--timeout", type=int, default=1800)
    add_smoke_option(parser)
    options = parser.parse_args()
    options.rounds = ROUNDS
    if options.smoke:
        options.runs, options.data_mib, options.local_mib = 1, 2, 1
        options.rounds = SMOKE_ROUNDS
    has_mmap = (REPO / "lib" / "mmap.c").is_file()
    options.methods = [method for method in METHODS if has_mmap or method not in NEEDS_MMAP]
    options.left_out = [] if has_mmap else [
        f"{method}: needs lib/mmap.c, not in this tree" for method in NEEDS_MMAP]
    return options


def command(workload, method, options):
    return (f"run flashbench {workload} {method} -s {options.data_mib * MIB} "
            f"-l {options.local_mib * MIB} -n {options.rounds[workload]}")


def boot(workload, options, scratch):
    """One boot: every method of `workload` in turn; its flash lines by method."""
    commands = [command(workload, method, options) for method in options.methods]
    memory = max(256, 2 * options.data_mib + 128)
    done = client.run(["--smp", "2", "--accel", "tcg", "--mem", f"{memory}M",
                       *disk_copy(scratch, f"flash-{workload}.img"), "--cmd", "; ".join(commands)],
                      options.timeout)
    lines = {line["method"]: line for line in done.jsons if line.get("kind") == "flash"}
    if done.rc != 0 or set(lines) != set(options.methods) or \
            not all(line["verified"] for line in lines.values()):
        raise RuntimeError(f"flash_bench: {workload} failed:\n{done.describe()[-3000:]}")
    return lines


def table(results, options):
    rows = ["| workload | " + " | ".join(f"{method} (s)" for method in options.methods)
            + " | malloc-swap / best of mmap and flmalloc (dram when they are left out) |", "|---|" + "---|" * (len(options.methods) + 1)]
    for workload in WORKLOADS:
        seconds = {line["method"]: line["seconds"] for line in results
                   if line["workload"] == workload}
        others = [seconds[method] for method in options.methods if method not in
                  ("malloc-swap", "dram")] or [seconds["dram"]]
        ratio = round(seconds["malloc-swap"] / min(others), 2) if min(others) else None
        rows.append(f"| {workload} | " + " | ".join(f"{seconds[method]:.3f}" for method in
                                                    options.methods) + f" | {ratio} |")
    return rows


def main():
    options = arguments()
    OUT.mkdir(parents=True, exist_ok=True)
    samples = {}
    with tempfile.TemporaryDirectory() as scratch:
        for _ in range(options.runs):
            for workload in WORKLOADS:
                for method, line in boot(workload, options, scratch).items():
                    samples.setdefault((workload, method), []).append(line)
    results = []
    for (workload, method), lines in samples.items():
        line = dict(lines[0], seconds=statistics.median(line["seconds"] for line in lines),
                    runs=options.runs)
        results.append(line)
        print(client.JSON_MARKER + json.dumps(line, separators=(",", ":")))
    (OUT / "flash.json").write_text(json.dumps({"results": results, "settings": {
        "data_mib": options.data_mib, "local_mib": options.local_mib, "runs": options.runs,
        "rounds": options.rounds, "left_out": options.left_out,
        "linux": "not built yet"}}, indent=1) + "\n")
    rows = table(results, options)
    notes = [f"- left out: {reason}" for reason in options.left_out]
    notes.append("- Linux's side (the same workloads in the Linux guest) is not built yet.")
    (OUT / "flash.md").write_text(
        f"# Seed 000's workloads, {options.data_mib} MiB of data, {options.local_mib} MiB local, "
        f"TCG, --smp 2, median of {options.runs} runs\n\n" + "\n".join(rows) + "\n\n"
        + "\n".join(notes) + "\n")
    print("\n".join(rows + notes))


if __name__ == "__main__":
    main()
