#!/usr/bin/env python3
# build/bench/ipcbench.py: `make bench` for ICA communication: boots `run --server ipcbench` R times
# under plain TCG and once with --icount, takes per-case medians, and writes
# build/out/bench/ipcbench.{json,csv,md} and ipcbench.png (when matplotlib is installed).
import argparse
import csv
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from runner import client  # noqa: E402
from bench_output import OUT, add_smoke_option, disk_copy  # noqa: E402

SMOKE_REQUESTS = 100  # the least ipcbench takes
FIELDS = ["mode", "case", "placement", "bytes", "cycles_median", "cycles_p99", "ipis_per_request",
          "instructions_median", "runs"]


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=int(os.environ.get("BENCH_RUNS", 3)))
    parser.add_argument("--requests", type=int, default=int(os.environ.get("BENCH_REQUESTS", 2000)))
    parser.add_argument("--smp", type=int, default=min(3, os.cpu_count() or 1))
    parser.add_argument("--icount-smp", type=int, default=3,
                        help="cores of the --icount run (single-threaded, so not host-bound)")
    parser.add_argument("--timeout", type=int, default=900)
    add_smoke_option(parser)
    arguments = parser.parse_args()
    if arguments.smoke:  # one plain boot and the icount boot, a few requests per case
        arguments.runs, arguments.requests = 1, SMOKE_REQUESTS
    return arguments


def boot(arguments, icount):
    """One boot of `run ipcbench`; its @json objects (raises when the run failed)."""
    smp = arguments.icount_smp if icount else arguments.smp
    flags = ["--smp", smp, "--accel", "tcg", "--cmd", f"run --server ipcbench --requests {arguments.requests}"]
    # icount runs use the fair CPU model (linux_guest.ICOUNT_CPU, docs/evaluation.md)
    flags += ["--icount", "--cpu", "max,-erms,-fsrm"] if icount else []
    with tempfile.TemporaryDirectory(prefix="formica-ipcbench-") as scratch:
        run = client.run(flags + disk_copy(scratch), arguments.timeout)
    if run.rc != 0:
        sys.stderr.write("\n".join(run.lines[-30:]) + run.stderr)
        raise SystemExit(f"ipcbench run failed with status {run.rc}")
    return run.jsons


def instructions(cycles, setup):
    """Under --icount a guest nanosecond is one instruction: cycles / TSC GHz."""
    hertz = setup.get("tsc_hz", 0)
    return round(cycles / (hertz / 1e9)) if hertz else None


def medians(mode, runs):
    """Per (case, placement, bytes): the median of each run's numbers."""
    grouped = {}
    for results in runs:
        for result in results:
            if result.get("kind") == "ipcbench":
                key = (result["case"], result["placement"], result["bytes"])
                grouped.setdefault(key, []).append(result)
    rows = []
    for (case, placement, size), results in grouped.items():
        rows.append({"mode": mode, "case": case, "placement": placement, "bytes": size,
                     "cycles_median": statistics.median(r["cycles_median"] for r in results),
                     "cycles_p99": statistics.median(r["cycles_p99"] for r in results),
                     "ipis_per_request": statistics.median(r["ipis_per_request"] for r in results),
                     "runs": len(results)})
    return rows


def run_mode(arguments, mode, count):
    runs = []
    for index in range(count):
        start = time.monotonic()
        results = boot(arguments, mode == "icount")
        runs.append(results)
        cases = sum(1 for result in results if result.get("kind") == "ipcbench")
        print(f"ipcbench: {mode} run {index + 1}/{count}: {cases} cases in "
              f"{time.monotonic() - start:.1f} s", flush=True)
    setup = next((r for r in runs[0] if r.get("kind") == "ipcbench_setup"), {})
    rows = medians(mode, runs)
    for row in rows:
        row["instructions_median"] = instructions(row["cycles_median"], setup) if mode == "icount" else None
    return rows, setup


def write_csv(rows):
    with open(OUT / "ipcbench.csv", "w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)


def label(row):
    size = f" {row['bytes'] // 1024}K" if row["bytes"] else ""
    return f"{row['case']}{size} {row['placement']}"


def write_plot(rows):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("ipcbench: matplotlib not installed; no plot (build/deps.sh installs it)")
        return
    modes = sorted({row["mode"] for row in rows})
    figure, axes = plt.subplots(1, len(modes), figsize=(7 * len(modes), 8), squeeze=False)
    for axis, mode in zip(axes[0], modes):
        mine = [row for row in rows if row["mode"] == mode]
        axis.barh([label(row) for row in mine], [row["cycles_median"] for row in mine])
        axis.set_xscale("log")
        axis.set_xlabel("TSC cycles per request (median, log scale)")
        axis.set_title(f"ipcbench ({mode})")
        axis.invert_yaxis()
    figure.tight_layout()
    figure.savefig(OUT / "ipcbench.png", dpi=100)


def write_summary(rows, setups, arguments):
    lines = ["# ipcbench", "",
             f"tcg: {arguments.smp} vCPUs, icount: {arguments.icount_smp}; {arguments.requests} requests per case; tcg: median of "
             f"{arguments.runs} runs; icount: one run (`-icount shift=0`: guest time counts "
             "instructions, so cycles = instructions x TSC GHz). Setups: "
             + json.dumps(setups), "",
             "| mode | case | placement | bytes | cycles median | cycles p99 | IPIs/request | instructions |",
             "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        lines.append(f"| {row['mode']} | {row['case']} | {row['placement']} | {row['bytes']} | "
                     f"{row['cycles_median']:.0f} | {row['cycles_p99']:.0f} | "
                     f"{row['ipis_per_request']:.3f} | {row['instructions_median'] or ''} |")
    (OUT / "ipcbench.md").write_text("\n".join(lines) + "\n")


def main():
    arguments = parse_arguments()
    OUT.mkdir(parents=True, exist_ok=True)
    tcg_rows, tcg_setup = run_mode(arguments, "tcg", arguments.runs)
    icount_rows, icount_setup = run_mode(arguments, "icount", 1)
    rows = tcg_rows + icount_rows
    setups = {"tcg": tcg_setup, "icount": icount_setup}
    (OUT / "ipcbench.json").write_text(json.dumps({"setup": setups, "results": rows}, indent=1))
    write_csv(rows)
    write_plot(rows)
    write_summary(rows, setups, arguments)
    print((OUT / "ipcbench.md").read_text())
    print(f"ipcbench: results in {OUT}")


if __name__ == "__main__":
    main()
