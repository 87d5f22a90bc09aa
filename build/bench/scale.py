#!/usr/bin/env python3
# build/bench/scale.py: `make bench-scale`: how Bonnie's throughput grows with processes
# and cores, Formica beside Linux in the same QEMU (docs/evaluation.md, "Scaling").
# Every boot has as many vCPUs as the host has cores; N processes run with N = 1, 2,
# 4, ... up to max(16, host cores) (--procs to choose). For each system and placement:
#   throughput      references per second of all processes together (median of --runs);
#   scaling         throughput with N processes / with 1 process (same boot kind);
#   speed-up        N processes on 1 vCPU / N processes on all vCPUs (seed 003's Fig. 13);
# and, for Formica, the cycles each server process spent (Bonnie's server_cycles).
# Formica runs the static placements that fit the host (#6, #7, and "servers on core 0,
# applications spread") and the multi-instance placement build/placements/multi.conf
# when the build has one. Prints one @json {"kind":"bench_scale",...} line per result and
# writes build/out/bench/scale.{json,md} and scale.png.
import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import evaluate  # noqa: E402
import linux_guest  # noqa: E402
import plots  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "build" / "out" / "bench"
MULTI_PLACEMENT = REPO / "build" / "placements" / "multi.conf"
# Servers on the boot core, applications over every core: the static placement that
# needs no core of its own for the servers.
SERVERS_ON_CORE0 = "fs 0\nblk 0\ndk 0\npager 0\napp spread\n"
STATIC_PRESETS = (6, 7)


def parse_arguments():
    host_cores = os.cpu_count() or 1
    parser = argparse.ArgumentParser(description="Bonnie scaling with processes and cores, Formica and Linux")
    parser.add_argument("--procs", help="comma-separated process counts (default 1,2,4,... up to "
                        "max(16, host cores))")
    parser.add_argument("--refs", type=int, default=4000, help="references per process (default 4000)")
    parser.add_argument("--runs", type=int, default=3, help="boots per configuration (median; default 3)")
    parser.add_argument("--modes", default="readblock,readbyte")
    parser.add_argument("--smp", type=int, default=max(host_cores, 2),
                        help="vCPUs of every boot but the 1-vCPU ones (default: the host's cores, at least 2)")
    parser.add_argument("--accel", default="tcg", choices=["tcg", "kvm"],
                        help="the accelerator of every boot (default tcg, the timing engine)")
    parser.add_argument("--no-linux", action="store_true")
    parser.add_argument("--quick", action="store_true", help="1 run, 500 references, processes 1,2")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds per boot")
    parser.add_argument("--out", default=str(OUT))
    arguments = parser.parse_args()
    if arguments.quick:
        arguments.runs, arguments.refs = 1, 500
        arguments.procs = arguments.procs or "1,2"
    if arguments.procs:
        arguments.procs = [int(p) for p in arguments.procs.split(",")]
    else:
        top, count, arguments.procs = max(16, host_cores), 1, []
        while count <= top:
            arguments.procs.append(count)
            count *= 2
    arguments.modes = arguments.modes.split(",")
    arguments.out = Path(arguments.out)
    arguments.host_cores = host_cores
    return arguments


def configurations(arguments):
    """(name, placement for build/run) of every Formica configuration that fits the vCPUs."""
    configs = [(f"#{p}", p) for p in STATIC_PRESETS if evaluate.PLACEMENT_CORES[p] <= arguments.smp]
    core0 = arguments.out / "servers-on-core0.conf"
    core0.write_text(SERVERS_ON_CORE0)
    configs.append(("servers-on-core0", str(core0)))
    if MULTI_PLACEMENT.exists():
        configs.append(("multi-instance", str(MULTI_PLACEMENT)))
    return configs


def formica_records(arguments, config, placement, smp, run):
    commands = [evaluate.bonnie_arguments(p, m, arguments.refs) for m in arguments.modes for p in arguments.procs]
    log = arguments.out / "logs" / f"scale-formica-{config.strip('#')}-smp{smp}-run{run}.log"
    results = evaluate.formica_boot(arguments, placement, str(smp), commands, False, arguments.accel, log, None)
    return evaluate.collect(results, {"system": "formica", "config": config, "smp": smp})


def linux_records(arguments, smp):
    commands = [evaluate.bonnie_arguments(p, m, arguments.refs)
                for _ in range(arguments.runs) for m in arguments.modes for p in arguments.procs]
    log = arguments.out / "logs" / f"scale-linux-smp{smp}.log"
    results = evaluate.linux_boot(arguments, commands, smp, arguments.accel, False, log, None)
    return evaluate.collect(results, {"system": "linux", "config": "linux", "smp": smp})


def plan(arguments):
    """The boots: (system, config, placement, smp, run)."""
    boots = [("formica", config, placement, arguments.smp, run)
             for config, placement in configurations(arguments) for run in range(arguments.runs)]
    boots += [("formica", "1vcpu", None, 1, run) for run in range(arguments.runs)]
    if not arguments.no_linux:
        boots += [("linux", "linux", None, arguments.smp, 0), ("linux", "linux", None, 1, 0)]
    return boots


def medians(records):
    """(system, config, smp, mode, procs) -> median elapsed µs and server cycles."""
    grouped = {}
    for record in records:
        key = (record["system"], record["config"], record["smp"], record["mode"], record["procs"])
        grouped.setdefault(key, []).append(record)
    result = {}
    for key, group in grouped.items():
        cycles = {}
        for name in evaluate.SERVERS:
            samples = [r["server_cycles"][name] for r in group if name in r.get("server_cycles", {})]
            if samples:
                cycles[name] = statistics.median(samples)
        result[key] = {"elapsed_us": statistics.median(r["elapsed_us"] for r in group), "runs": len(group),
                       "server_cycles": cycles}
    return result


def one_vcpu_config(system):
    return "1vcpu" if system == "formica" else "linux"


def rows_of(arguments, table):
    """One row per system, configuration on all vCPUs, mode and process count."""
    rows = []
    for (system, config, smp, mode, procs), cell in sorted(table.items(), key=str):
        if smp == 1:
            continue
        single = table.get((system, config, smp, mode, 1))
        one_vcpu = table.get((system, one_vcpu_config(system), 1, mode, procs))
        throughput = procs * arguments.refs / (cell["elapsed_us"] / 1e6)
        row = {"kind": "bench_scale", "system": system, "config": config, "vcpus": smp, "mode": mode,
               "procs": procs, "refs": arguments.refs, "runs": cell["runs"],
               "elapsed_us": round(cell["elapsed_us"]), "throughput_refs_per_s": round(throughput),
               "scaling_vs_1proc": round(single["elapsed_us"] * procs / cell["elapsed_us"], 3) if single else None,
               "speedup_vs_1vcpu": round(one_vcpu["elapsed_us"] / cell["elapsed_us"], 3) if one_vcpu else None}
        if cell["server_cycles"]:
            row["server_cycles"] = cell["server_cycles"]
        rows.append(row)
    for row in rows:
        linux = next((r for r in rows if r["system"] == "linux" and r["mode"] == row["mode"]
                      and r["procs"] == row["procs"]), None)
        row["linux_speedup_vs_1vcpu"] = linux["speedup_vs_1vcpu"] if linux else None
        row["linux_scaling_vs_1proc"] = linux["scaling_vs_1proc"] if linux else None
    return rows


def best_static(rows, mode):
    """The static Formica configuration with the highest throughput at the most processes."""
    static = [r for r in rows if r["system"] == "formica" and r["mode"] == mode and r["config"] != "multi-instance"]
    if not static:
        return None
    top = max(r["procs"] for r in static)
    return max((r for r in static if r["procs"] == top), key=lambda r: r["throughput_refs_per_s"])["config"]


def draw(rows, arguments):
    plt = plots._pyplot()
    if plt is None:
        return None
    modes = arguments.modes
    figure, axes = plt.subplots(1, len(modes), figsize=(6 * len(modes), 4.5), squeeze=False)
    for axis, mode in zip(axes[0], modes):
        for (system, config) in sorted({(r["system"], r["config"]) for r in rows if r["mode"] == mode}):
            series = sorted((r for r in rows if r["mode"] == mode and r["config"] == config
                             and r["system"] == system), key=lambda r: r["procs"])
            axis.plot([r["procs"] for r in series], [r["throughput_refs_per_s"] / 1000 for r in series],
                      marker="o", label=f"{system} {config}" if system == "formica" else "Linux")
        axis.set_xscale("log", base=2)
        axis.set_xlabel("processes")
        axis.set_ylabel("thousand references / s (median)")
        axis.set_title(f"Bonnie {mode}, {arguments.smp} vCPUs")
        axis.grid(True, alpha=0.3)
        axis.legend(fontsize=8)
    figure.tight_layout()
    path = arguments.out / "scale.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def render(rows, arguments, machine, seconds):
    lines = [f"# Bonnie scaling: Formica and Linux, {arguments.smp} vCPUs", "",
             f"Command: `{' '.join(sys.argv)}` ({seconds / 60:.1f} min). Machine: {machine['cpu']}, "
             f"{machine['host_cores']} host cores, {machine['qemu']}, {arguments.accel}, guest 256 MiB; Linux "
             f"{machine['linux_guest']}; commit {machine['commit']}. {arguments.refs} references per "
             f"process, medians of {arguments.runs} boots.", "",
             "Throughput is references per second of all processes; scaling is throughput with N "
             "processes over throughput with 1; speed-up is the time of N processes on 1 vCPU over "
             "their time on all vCPUs (Linux's beside Formica's).", ""]
    if not MULTI_PLACEMENT.exists():
        lines += ["The multi-instance placement (several FS and BLK instances, docs/design.md) is not in "
                  "this build: only the static placements are measured.", ""]
    for mode in arguments.modes:
        best = best_static(rows, mode)
        lines += [f"## {mode}", "", f"Best static placement at the most processes: {best}.", "",
                  "| system | config | procs | ms | refs/s | scaling | speed-up | Linux scaling | Linux speed-up |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for row in (r for r in rows if r["mode"] == mode):
            lines.append(f"| {row['system']} | {row['config']} | {row['procs']} | {row['elapsed_us'] / 1000:.0f} | "
                         f"{row['throughput_refs_per_s']} | {row['scaling_vs_1proc']} | {row['speedup_vs_1vcpu']} | "
                         f"{row['linux_scaling_vs_1proc']} | {row['linux_speedup_vs_1vcpu']} |")
        lines.append("")
    servers = [r for r in rows if r.get("server_cycles")]
    if servers:
        lines += ["## Server work", "", "Cycles each server process spent in the timed part (median), per "
                  "reference: how the OS work is shared.", "", "| config | mode | procs | FS | BLK | DK |",
                  "|---|---|---|---|---|---|"]
        for row in servers:
            per = {k: round(v / (row["procs"] * arguments.refs)) for k, v in row["server_cycles"].items()}
            lines.append(f"| {row['config']} | {row['mode']} | {row['procs']} | {per.get('fs', '')} | "
                         f"{per.get('blk', '')} | {per.get('dk', '')} |")
        lines.append("")
    if evaluate.FAILED_BOOTS:
        lines += ["## Boots that failed", ""] + [f"- {boot}" for boot in evaluate.FAILED_BOOTS] + [""]
    lines += ["![throughput](scale.png)", ""]
    return "\n".join(lines)


def main():
    arguments = parse_arguments()
    arguments.out.mkdir(parents=True, exist_ok=True)
    (arguments.out / "logs").mkdir(exist_ok=True)
    if not arguments.no_linux:
        linux_guest.build()
    machine = evaluate.machine_description(arguments.accel, arguments.host_cores)
    boots = plan(arguments)
    meter = evaluate.Progress(len(boots))
    start = time.monotonic()
    records = []
    for system, config, placement, smp, run in boots:
        boot_start = time.monotonic()
        got = (formica_records(arguments, config, placement, smp, run) if system == "formica"
               else linux_records(arguments, smp))
        records += got
        meter.step(1, f"{system} {config} {smp} vCPUs run {run + 1}: {len(got)} results in "
                      f"{time.monotonic() - boot_start:.0f} s")
    rows = rows_of(arguments, medians(records))
    for row in rows:
        print("@json " + json.dumps(row), flush=True)
    seconds = time.monotonic() - start
    (arguments.out / "scale.json").write_text(json.dumps({"machine": machine, "rows": rows, "runs": records},
                                                         indent=1))
    draw(rows, arguments)
    (arguments.out / "scale.md").write_text(render(rows, arguments, machine, seconds))
    print(f"scale: done in {seconds / 60:.1f} min; report {arguments.out / 'scale.md'}")


if __name__ == "__main__":
    main()
