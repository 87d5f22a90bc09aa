#!/usr/bin/env python3
# build/bench/flash_bench.py: `make bench-flash`: seed 000's workloads (apps/flashbench: FIO-like
# random I/O, STREAM-like copy/scale/add/triad, a Himeno-like stencil) with data a few times the
# local memory, four ways: malloc with swapping to the disk, mmap of a file on the disk, flmalloc,
# all in DRAM; on Formica and on Linux in the same QEMU machine (--smp 2, TCG, the same memory).
# One local bound for every method and both systems: Formica's pager limit (malloc-swap), BLK's
# cache (kernel option blk_cache_kib: what mapped files and flmalloc's far files are cached in),
# flmalloc's local limit; Linux's cgroup memory.max (flashbench sets it, over what the process
# uses at start), which bounds its page cache too; dram has none. Formica: one boot per workload,
# each method in turn; Linux: one boot (build/linux/init's run= and swap=file modes) with every
# workload and method, each in a fresh cgroup. Prints @json {"kind":"flash","system":S,
# "workload":W,"method":M,"seconds":T,...} (the median of --runs) and writes
# build/out/bench/flash.json and flash.md with the ratios, computed.
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "build"))
sys.path.insert(0, str(REPO / "build" / "bench"))
import disk_image  # noqa: E402
import linux_guest  # noqa: E402
from runner import client  # noqa: E402
from bench_output import OUT, add_smoke_option  # noqa: E402

SYSTEMS = ("formica", "linux")
WORKLOADS = ("fio", "stream", "himeno")
METHODS = ("malloc-swap", "mmap", "flmalloc", "dram")
ROUNDS = {"fio": 20000, "stream": 4, "himeno": 3}
SMOKE_ROUNDS = {"fio": 200, "stream": 1, "himeno": 1}
MIB = 1 << 20
# BLK's smallest cache here: a process keeps up to 512 mapping lends (2 MiB) pinned, which BLK's
# CLOCK passes over (docs/mmap.md, "Not built yet"): in a cache not much larger, FS's own blocks
# find no slot and a fault is refused (-E_BUSY, the process killed). A --local-mib below it (the
# smoke run's) gets this cache, and the report says so.
BLK_CACHE_MIN_MIB = 4


def arguments(argv=None):
    parser = argparse.ArgumentParser(description="seed 000's workloads over four kinds of memory")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--data-mib", type=int, default=27,
                        help="each workload's data (malloc-swap's region must fit an account's "
                             "three quarters of the pager's 40 MiB /swap)")
    parser.add_argument("--local-mib", type=int, default=9,
                        help="the local memory bound: the pager's limit, BLK's cache, flmalloc's "
                             "limit, Linux's memory.max")
    parser.add_argument("--systems", default=",".join(SYSTEMS), help="formica,linux or one")
    parser.add_argument("--timeout", type=int, default=1800)
    add_smoke_option(parser)
    options = parser.parse_args(argv)
    options.rounds = ROUNDS
    if options.smoke:
        options.runs, options.data_mib, options.local_mib = 1, 2, 1
        options.rounds = SMOKE_ROUNDS
    options.systems = [system for system in options.systems.split(",") if system]
    unknown = set(options.systems) - set(SYSTEMS)
    if unknown:
        parser.error(f"--systems: unknown {sorted(unknown)}")
    return options


def blk_cache_mib(options):
    return max(options.local_mib, BLK_CACHE_MIN_MIB)


def guest_mib(options):
    """Both systems' guest memory: room for dram's data with the bound far below it."""
    return max(256, 2 * options.data_mib + 128)


def flashbench_words(workload, method, options):
    return ["flashbench", workload, method, "-s", str(options.data_mib * MIB),
            "-l", str(options.local_mib * MIB), "-n", str(options.rounds[workload])]


def checked(lines, expected, what, log):
    """{(workload, method): flash line} of `lines`; raises unless every expected one is there,
    verified."""
    found = {(line["workload"], line["method"]): line for line in lines if line.get("kind") == "flash"}
    if set(found) != set(expected) or not all(line["verified"] for line in found.values()):
        raise RuntimeError(f"flash_bench: {what}: {sorted(found)} of {sorted(expected)}:\n{log[-3000:]}")
    return found


def formica_boot(workload, options, scratch):
    """One boot: every method of `workload` in turn, on a fresh disk big enough for the mapped
    files and the pager's swap with the shell user's quota (half the disk)."""
    commands = ["run " + " ".join(flashbench_words(workload, method, options))
                for method in METHODS]
    disk = disk_image.make(Path(scratch) / f"flash-{workload}.img", "ext3", 4096,
                           f"{max(256, 4 * options.data_mib + 128)}M")
    done = client.run(["--smp", "2", "--accel", "tcg", "--mem", f"{guest_mib(options)}M",
                       "--disk", str(disk), "--append", f"blk_cache_kib={blk_cache_mib(options) * 1024}",
                       "--cmd", "; ".join(commands)], options.timeout)
    if done.rc != 0:
        raise RuntimeError(f"flash_bench: formica {workload}: exit {done.rc}\n{done.describe()[-3000:]}")
    return checked(done.jsons, [(workload, method) for method in METHODS], f"formica {workload}",
                   done.describe())


def linux_boot(options, scratch):
    """One boot of the Linux guest: swap on a file of the ext2 disk, every workload and method in
    a fresh cgroup of its own (flashbench sets memory.max from -l)."""
    runs = [f"max/{':'.join(flashbench_words(workload, method, options))}"
            for workload in WORKLOADS for method in METHODS]
    swap_mib = options.data_mib + 16
    disk = Path(scratch) / "flash-linux.img"
    disk.unlink(missing_ok=True)
    subprocess.run(["mke2fs", "-q", "-F", "-t", "ext2", "-b", "4096", str(disk),
                    f"{2 * options.data_mib + swap_mib + 64}M"], check=True)
    command = linux_guest.qemu_command(2, None, f"{guest_mib(options)}M", "tcg", False, "", disk,
                                       append=f"swap=file:{swap_mib} run={','.join(runs)}", cpu=None)
    log = Path(scratch) / "flash-linux.log"
    results = linux_guest.boot(command, options.timeout, log=log)
    failed = [run for run in results if run.get("kind") == "linux_run" and run["rc"] != 0]
    if failed:
        raise RuntimeError(f"flash_bench: linux: {failed}\n{log.read_text()[-3000:]}")
    return checked(results, [(w, m) for w in WORKLOADS for m in METHODS], "linux", log.read_text())


def measure(options, scratch):
    """{(system, workload, method): [flash lines of each run]}."""
    samples = {}
    for _ in range(options.runs):
        if "formica" in options.systems:
            for workload in WORKLOADS:
                for key, line in formica_boot(workload, options, scratch).items():
                    samples.setdefault(("formica", *key), []).append(line)
        if "linux" in options.systems:
            for key, line in linux_boot(options, scratch).items():
                samples.setdefault(("linux", *key), []).append(line)
    return samples


def ratio(numerator, denominator):
    return round(numerator / denominator, 2) if numerator and denominator else None


def goals(seconds, options):
    """The issue's goals per workload, computed from the medians: Formica's mapped file against
    its malloc-swap (>= 2) and against Linux's mmap (>= 1), flmalloc against its best tier, the
    faster of mmap and malloc-swap, the bounded methods it is made of (<= 1.10)."""
    rows = []
    for workload in WORKLOADS:
        f = {m: seconds.get(("formica", workload, m)) for m in METHODS}
        linux_mmap = seconds.get(("linux", workload, "mmap"))
        tiers = [s for s in (f["mmap"], f["malloc-swap"]) if s]
        rows.append({"workload": workload,
                     "swap_over_mmap": ratio(f["malloc-swap"], f["mmap"]),
                     "linux_mmap_over_formica_mmap": ratio(linux_mmap, f["mmap"]),
                     "flmalloc_over_best_tier": ratio(f["flmalloc"], min(tiers) if tiers else None)})
    return rows


def verdict(value, goal, at_least):
    if value is None:
        return "not measured"
    return f"{value} ({'met' if (value >= goal if at_least else value <= goal) else 'not met'})"


def report(seconds, goal_rows, options):
    rows = ["| system | workload | " + " | ".join(f"{m} (s)" for m in METHODS) + " |",
            "|---|---|" + "---|" * len(METHODS)]
    for system in options.systems:
        for workload in WORKLOADS:
            cells = [seconds.get((system, workload, m)) for m in METHODS]
            rows.append(f"| {system} | {workload} | "
                        + " | ".join("-" if s is None else f"{s:.3f}" for s in cells) + " |")
    rows += ["", "| workload | Formica malloc-swap / mmap (goal >= 2) | Linux mmap / Formica mmap "
             "(goal >= 1) | Formica flmalloc / best of mmap, malloc-swap (goal <= 1.10) |",
             "|---|---|---|---|"]
    for row in goal_rows:
        rows.append(f"| {row['workload']} | {verdict(row['swap_over_mmap'], 2, True)} | "
                    f"{verdict(row['linux_mmap_over_formica_mmap'], 1, True)} | "
                    f"{verdict(row['flmalloc_over_best_tier'], 1.10, False)} |")
    notes = [f"- the local bound, {options.local_mib} MiB: Formica's pager limit (malloc-swap), "
             "BLK's cache (blk_cache_kib: mmap, and flmalloc's far files), flmalloc's local limit "
             "(so flmalloc may hold the bound locally and the cache besides); Linux's cgroup "
             "memory.max over what flashbench uses at start (malloc-swap, mmap, flmalloc: its "
             "heap and its files' page cache together); dram: none",
             "- flmalloc keeps requests under 10 MiB local whatever the limit (seed 000's policy): "
             f"at {options.data_mib} MiB, stream's arrays ({options.data_mib / 3:.1f} MiB) and "
             f"himeno's ({options.data_mib / 14:.1f} to {4 * options.data_mib / 14:.1f} MiB) "
             + ("are" if options.data_mib < 30 else "may be") + " local, beyond the bound",
             "- Linux swaps to a file on its ext2 disk; Formica's pager to its disk"]
    if blk_cache_mib(options) != options.local_mib:
        notes.append(f"- BLK's cache is {blk_cache_mib(options)} MiB, not the bound: its smallest "
                     "with 512 mapping lends pinned (docs/mmap.md)")
    if options.smoke:
        notes.append("- a --smoke run: its numbers mean nothing")
    return rows, notes


def main():
    options = arguments()
    OUT.mkdir(parents=True, exist_ok=True)
    if "linux" in options.systems:
        linux_guest.build()  # what changed only: the static flashbench among it
    with tempfile.TemporaryDirectory() as scratch:
        samples = measure(options, scratch)
    results = []
    for (system, workload, method), lines in sorted(samples.items()):
        line = dict(lines[0], seconds=statistics.median(line["seconds"] for line in lines),
                    runs=options.runs)
        results.append(line)
        print(client.JSON_MARKER + json.dumps(line, separators=(",", ":")))
    seconds = {(r["system"], r["workload"], r["method"]): r["seconds"] for r in results}
    goal_rows = goals(seconds, options)
    (OUT / "flash.json").write_text(json.dumps({"results": results, "goals": goal_rows, "settings": {
        "data_mib": options.data_mib, "local_mib": options.local_mib, "runs": options.runs,
        "rounds": options.rounds, "systems": options.systems, "blk_cache_mib": blk_cache_mib(options), "guest_mib": guest_mib(options),
        "linux_kernel": linux_guest.kernel_version()}}, indent=1) + "\n")
    rows, notes = report(seconds, goal_rows, options)
    (OUT / "flash.md").write_text(
        f"# Seed 000's workloads, {options.data_mib} MiB of data, {options.local_mib} MiB local, "
        f"TCG, --smp 2, {guest_mib(options)} MiB guests, median of {options.runs} runs\n\n"
        + "\n".join(rows) + "\n\n" + "\n".join(notes) + "\n")
    print("\n".join(rows + notes))


if __name__ == "__main__":
    main()
