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
# "workload":W,"method":M,"seconds":T,...} (the median of --runs; flmalloc's lines also carry
# far_bytes and far_files, what it placed in far files) and writes build/out/bench/flash.json,
# flash.md with the ratios, computed, and the plot flash.png; --results DIR (make
# bench-flash: docs/results) copies the three there. The pager's /swap is sized for malloc-swap's
# region (the kernel option pager_swap_mib), the disk for it and the mapped and far files.
import argparse
import datetime
import json
import shutil
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
FLMALLOC_ALWAYS_LOCAL_MIB = 10  # lib/flmalloc_policy.h: requests under it stay local
SWAP_DEFAULT_MIB = 40  # servers/pager/swap_size.h
HIMENO_PLANES = {"p": 1, "a": 4, "b": 3, "c": 3, "bnd": 1, "wrk1": 1, "wrk2": 1}  # in taking order
# BLK's smallest cache here: a process keeps up to 512 mapping lends (2 MiB) pinned, which BLK's
# CLOCK passes over (docs/mmap.md, "Not built yet"): in a cache not much larger, FS's own blocks
# find no slot and a fault is refused (-E_BUSY, the process killed). A --local-mib below it (the
# smoke run's) gets this cache, and the report says so.
BLK_CACHE_MIN_MIB = 4


def arguments(argv=None):
    parser = argparse.ArgumentParser(description="seed 000's workloads over four kinds of memory")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--data-mib", type=int, default=50,
                        help="each workload's data: at 50 MiB stream's arrays (16.7 MiB) and "
                             "himeno's a, b and c (14.3, 10.7 MiB) pass flmalloc's 10 MiB; not a "
                             "multiple of 48 MiB, which sets stream's arrays 16 MiB apart (docs/files.md)")
    parser.add_argument("--local-mib", type=int, default=16,
                        help="the local memory bound: the pager's limit, BLK's cache, flmalloc's "
                             "limit, Linux's memory.max")
    parser.add_argument("--systems", default=",".join(SYSTEMS), help="formica,linux or one")
    parser.add_argument("--timeout", type=int, default=1800)
    parser.add_argument("--results", type=Path,
                        help="also copy flash.md, flash.json and flash.png here (docs/results)")
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


def swap_mib(options):
    """The pager's /swap (pager_swap_mib): an account's regions may claim three quarters of it,
    and malloc-swap's region is the data and 64 KiB per array; at least the default."""
    return max(SWAP_DEFAULT_MIB, 2 * options.data_mib)


def formica_disk_mib(options):
    """The mapped files and flmalloc's far files within the shell user's quota (half the disk),
    and the pager's swap file beside them (the pager's uid is exempt from quotas)."""
    return max(256, 4 * options.data_mib + 128) + swap_mib(options)


def guest_mib(options):
    """Both systems' guest memory: room for dram's data with the bound far below it."""
    return max(256, 2 * options.data_mib + 128)


def flashbench_words(workload, method, options):
    return ["flashbench", workload, method, "-s", str(options.data_mib * MIB),
            "-l", str(options.local_mib * MIB), "-n", str(options.rounds[workload])]


def checked(lines, expected, what, log):
    """{(workload, method): flash line} of `lines`; raises unless every expected one is there,
    verified. A flmalloc line gets far_bytes and far_files from the flmalloc statistics printed
    before it (what was far while the arrays were held)."""
    found, stats = {}, None
    for line in lines:
        if line.get("kind") == "flmalloc":
            stats = line
        elif line.get("kind") == "flash":
            if line["method"] == "flmalloc" and stats is not None:
                line = dict(line, far_bytes=stats["far_bytes"], far_files=stats["far_files"])
            found[(line["workload"], line["method"])] = line
            stats = None
    if set(found) != set(expected) or not all(line["verified"] for line in found.values()):
        raise RuntimeError(f"flash_bench: {what}: {sorted(found)} of {sorted(expected)}:\n{log[-3000:]}")
    return found


def formica_boot(workload, options, scratch):
    """One boot: every method of `workload` in turn, on a fresh disk big enough for the mapped
    files and the pager's swap with the shell user's quota (half the disk)."""
    commands = ["run " + " ".join(flashbench_words(workload, method, options))
                for method in METHODS]
    disk = disk_image.make(Path(scratch) / f"flash-{workload}.img", "ext3", 4096,
                           f"{formica_disk_mib(options)}M")
    append = f"blk_cache_kib={blk_cache_mib(options) * 1024} pager_swap_mib={swap_mib(options)}"
    done = client.run(["--smp", "2", "--accel", "tcg", "--mem", f"{guest_mib(options)}M",
                       "--disk", str(disk), "--append", append, "--cmd", "; ".join(commands)],
                      options.timeout)
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


def himeno_plane_mib(options):
    """One of himeno's planes: 2 j^3 floats, j the largest with 14 planes within the data
    (apps/flashbench/himeno.c, side_for)."""
    cells = options.data_mib * MIB // (sum(HIMENO_PLANES.values()) * 4)
    side = 1
    while 2 * (side + 1) ** 3 <= cells:
        side += 1
    return 2 * side ** 3 * 4 / MIB


def array_mib(options):
    """{workload: [(array, MiB)]} as flashbench takes them."""
    plane = himeno_plane_mib(options)
    return {"fio": [("region", options.data_mib)],
            "stream": [(name, options.data_mib / 3) for name in "abc"],
            "himeno": [(name, planes * plane) for name, planes in HIMENO_PLANES.items()]}


def far_cell(line):
    if line is None or "far_bytes" not in line:
        return "-"
    return f"{line['far_bytes'] / MIB:.1f} MiB in {line['far_files']}"


def results_table(seconds, options):
    rows = ["| system | workload | " + " | ".join(f"{m} (s)" for m in METHODS)
            + " | flmalloc's far part |", "|---|---|" + "---|" * (len(METHODS) + 1)]
    for system in options.systems:
        for workload in WORKLOADS:
            cells = [seconds.get((system, workload, m)) for m in METHODS]
            far = far_cell(options.lines.get((system, workload, "flmalloc")))
            rows.append(f"| {system} | {workload} | "
                        + " | ".join("-" if s is None else f"{s:.3f}" for s in cells)
                        + f" | {far} |")
    return rows


def goals_table(goal_rows):
    rows = ["| workload | Formica malloc-swap / mmap (goal >= 2) | Linux mmap / Formica mmap "
            "(goal >= 1) | Formica flmalloc / best of mmap, malloc-swap (goal <= 1.10) |",
            "|---|---|---|---|"]
    for row in goal_rows:
        rows.append(f"| {row['workload']} | {verdict(row['swap_over_mmap'], 2, True)} | "
                    f"{verdict(row['linux_mmap_over_formica_mmap'], 1, True)} | "
                    f"{verdict(row['flmalloc_over_best_tier'], 1.10, False)} |")
    return rows


def arrays_note(options):
    parts = []
    for workload, arrays in array_mib(options).items():
        large = [f"{name} {mib:.1f}" for name, mib in arrays if mib >= FLMALLOC_ALWAYS_LOCAL_MIB]
        small = [name for name, mib in arrays if mib < FLMALLOC_ALWAYS_LOCAL_MIB]
        parts.append(f"{workload}: " + (", ".join(large) if large else "none")
                     + (f" (under it: {', '.join(small)})" if small else ""))
    return ("- arrays of 10 MiB or more, which flmalloc places far once its local limit is "
            "reached (seed 000's policy; smaller ones are always local), in MiB: "
            + "; ".join(parts) + ". The table's last column is what flmalloc held in far "
            "files, from its statistics")


def report(seconds, goal_rows, options):
    rows = results_table(seconds, options) + [""] + goals_table(goal_rows)
    notes = [f"- the local bound, {options.local_mib} MiB: Formica's pager limit (malloc-swap), "
             "BLK's cache (blk_cache_kib: mmap, and flmalloc's far files), flmalloc's local limit "
             "(so flmalloc may hold the bound locally and the cache besides); Linux's cgroup "
             "memory.max over what flashbench uses at start (malloc-swap, mmap, flmalloc: its "
             "heap and its files' page cache together); dram: none",
             arrays_note(options),
             f"- Formica's pager swaps to /swap, {swap_mib(options)} MiB (pager_swap_mib), on a "
             f"{formica_disk_mib(options)} MiB ext3 disk; Linux swaps to a "
             f"{options.data_mib + 16} MiB file on its ext2 disk"]
    if blk_cache_mib(options) != options.local_mib:
        notes.append(f"- BLK's cache is {blk_cache_mib(options)} MiB, not the bound: its smallest "
                     "with 512 mapping lends pinned (docs/mmap.md)")
    if options.smoke:
        notes.append("- a --smoke run: its numbers mean nothing")
    return rows, notes


def plot(results, goal_rows, options, path):
    """Seconds per workload and method, Formica's and Linux's bars side by side (log scale), and
    the goal ratios with their goals."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as pyplot
    except ImportError:
        print("flash_bench: no matplotlib; no plot")
        return False
    seconds = {(r["system"], r["workload"], r["method"]): r["seconds"] for r in results}
    figure, axes = pyplot.subplots(1, len(WORKLOADS) + 1, figsize=(4.2 * (len(WORKLOADS) + 1), 4))
    width = 0.8 / len(options.systems)
    for axis, workload in zip(axes, WORKLOADS):
        for n, system in enumerate(options.systems):
            values = [seconds.get((system, workload, m), 0) for m in METHODS]
            axis.bar([i + n * width for i in range(len(METHODS))], values, width, label=system)
        axis.set_xticks([i + width * (len(options.systems) - 1) / 2 for i in range(len(METHODS))])
        axis.set_xticklabels(METHODS, fontsize=8)
        axis.set_yscale("log")
        axis.set_ylabel("seconds")
        axis.set_title(workload)
        axis.grid(alpha=0.3, axis="y")
    axes[0].legend(fontsize=8)
    ratios = [("swap_over_mmap", "malloc-swap / mmap", 2),
              ("linux_mmap_over_formica_mmap", "Linux mmap / mmap", 1),
              ("flmalloc_over_best_tier", "flmalloc / best tier", 1.10)]
    axis = axes[-1]
    width = 0.8 / len(ratios)
    for n, (key, label, goal) in enumerate(ratios):
        xs = [i + n * width for i in range(len(goal_rows))]
        bars = axis.bar(xs, [row[key] or 0 for row in goal_rows], width, label=f"{label} (goal {goal})")
        axis.hlines([goal] * len(xs), [x - width / 2 for x in xs], [x + width / 2 for x in xs],
                    colors="black", linestyles="dashed", linewidth=1)
        for bar in bars:
            bar.set_alpha(0.85)
    axis.set_xticks([i + width for i in range(len(goal_rows))])
    axis.set_xticklabels([row["workload"] for row in goal_rows])
    axis.set_yscale("log")
    axis.set_title("Formica's goal ratios (dashed: goal)")
    axis.legend(fontsize=7)
    axis.grid(alpha=0.3, axis="y")
    figure.suptitle(f"Seed 000's workloads: {options.data_mib} MiB of data, {options.local_mib} MiB "
                    f"local, TCG, median of {options.runs} run(s)", fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    pyplot.close(figure)
    return True


def commit_of():
    done = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def write_outputs(results, goal_rows, options):
    """flash.json, flash.md and flash.png in OUT, copied to --results when it is given."""
    command = "python3 build/bench/flash_bench.py " + " ".join(sys.argv[1:])
    made = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "commit": commit_of(), "command": command.strip()}
    (OUT / "flash.json").write_text(json.dumps({"results": results, "goals": goal_rows, "settings": {
        "data_mib": options.data_mib, "local_mib": options.local_mib, "runs": options.runs,
        "rounds": options.rounds, "systems": options.systems,
        "blk_cache_mib": blk_cache_mib(options), "guest_mib": guest_mib(options),
        "pager_swap_mib": swap_mib(options), "formica_disk_mib": formica_disk_mib(options),
        "linux_kernel": linux_guest.kernel_version(), **made}}, indent=1) + "\n")
    seconds = {(r["system"], r["workload"], r["method"]): r["seconds"] for r in results}
    rows, notes = report(seconds, goal_rows, options)
    plotted = plot(results, goal_rows, options, OUT / "flash.png")
    (OUT / "flash.md").write_text(
        f"# Seed 000's workloads, {options.data_mib} MiB of data, {options.local_mib} MiB local, "
        f"TCG, --smp 2, {guest_mib(options)} MiB guests, median of {options.runs} run(s)\n\n"
        f"Made with `{made['command']}` at commit {made['commit']} on {made['date']}.\n\n"
        + ("![seconds per workload and method, and the goal ratios](flash.png)\n\n" if plotted else "")
        + "\n".join(rows) + "\n\n" + "\n".join(notes) + "\n")
    print("\n".join(rows + notes))
    if options.results:
        options.results.mkdir(parents=True, exist_ok=True)
        for name in ("flash.md", "flash.json") + (("flash.png",) if plotted else ()):
            shutil.copyfile(OUT / name, options.results / name)


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
    options.lines = {(r["system"], r["workload"], r["method"]): r for r in results}
    seconds = {key: line["seconds"] for key, line in options.lines.items()}
    write_outputs(results, goals(seconds, options), options)


if __name__ == "__main__":
    main()
