#!/usr/bin/env python3
# build/bench/scale.py: `make bench-scale`: how Bonnie's throughput grows with processes
# and cores, Formica beside Linux in the same QEMU (docs/evaluation.md, "Scaling").
# Every boot has as many vCPUs as the host has cores; N processes run with N = 1, 2,
# 4, ... up to max(16, host cores) (--procs to choose). For each system and placement:
#   throughput      references per second of all processes together (median of --runs);
#   scaling         throughput with N processes / with 1 process (same boot kind);
#   speed-up        N processes on 1 vCPU / N processes on all vCPUs (seed 003's Fig. 13);
# and, for Formica, the cycles each server process spent (Bonnie's server_cycles) and the
# requests each FS and BLK instance took (the shell's `servers` before and after each run).
# Formica runs the static placements that fit the host (#6, #7, and "servers on core 0,
# applications spread") and the multi-instance preset #9 (fs and blk per-core) when this
# build's kernel accepts it (one short boot asks; the report says why when it does not).
# Prints one @json {"kind":"bench_scale",...} line per result and writes
# build/out/bench/scale.{json,md} and scale.png.
import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import evaluate  # noqa: E402
import linux_guest  # noqa: E402
import plots  # noqa: E402
from runner import client  # noqa: E402 (evaluate put build/ on the path)
from bench_output import OUT, add_smoke_option  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
MULTI_PRESET = 9  # build/placements/9.conf: fs per-core, blk per-core (docs/placement.md)
INSTANCE_SERVERS = ("fs", "blk")  # whose instances' requests are counted
COUNT_INSTANCES = "servers " + " ".join(INSTANCE_SERVERS)
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
    parser.add_argument("--size", help="Bonnie's file size (-s; default: 256 KiB per vCPU, at least 4M, "
                        "so the file spans a 64-block stripe of every BLK shard)")
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
    add_smoke_option(parser)
    arguments = parser.parse_args()
    if arguments.smoke:  # every Formica configuration once, 1 process, a few references; Linux's
        # boots are evaluate.py's (its smoke run has them)
        arguments.runs, arguments.refs, arguments.procs = 1, evaluate.SMOKE_REFS, "1"
        arguments.no_linux = True
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
    arguments.size = arguments.size or f"{max(4096, 256 * arguments.smp)}K"
    arguments.out = Path(arguments.out)
    arguments.host_cores = host_cores
    return arguments


def multi_instance_check(arguments):
    """Whether this build's kernel runs preset #9 on the vCPUs: (True, placement line) or
    (False, the kernel's reasons). One short boot, no disk."""
    boot = client.run(["--smp", str(arguments.smp), "--accel", arguments.accel, "--disk", "none",
                       "--placement", str(MULTI_PRESET), "--cmd", "placement"], 300)
    placements = [j for j in boot.jsons if j.get("kind") == "placement"]
    if boot.rc == 0 and placements and placements[0].get("warnings") == 0:
        return True, json.dumps(placements[0].get("instances"))
    reasons = [line.strip() for line in boot.lines
               if re.match(r"placement: (\S+: line \d+: |WARNING)", line.strip())]
    return False, "; ".join(reasons) or f"the boot ended with status {boot.rc}"


def configurations(arguments):
    """(name, placement for build/run) of every Formica configuration that fits the vCPUs."""
    configs = [(f"#{p}", p) for p in STATIC_PRESETS if evaluate.PLACEMENT_CORES[p] <= arguments.smp]
    core0 = arguments.out / "servers-on-core0.conf"
    core0.write_text(SERVERS_ON_CORE0)
    configs.append(("servers-on-core0", str(core0)))
    if arguments.multi_instance[0]:
        configs.append(("multi-instance", MULTI_PRESET))
    return configs


def instance_counts(results):
    """The @json results of one boot, with each bonnie result given "instance_requests":
    per server, the requests each instance took during that run (the `servers` lines
    before and after it; an instance restarted meanwhile counts from its restart)."""
    before, seen, pending = {}, {}, []
    for result in results:
        kind = result.get("kind")
        if kind == "server_instance":
            seen[(result["server"], result["index"])] = (result["pid"], result["taken"])
        elif kind == "bonnie":
            before, seen = dict(seen), {}
            pending.append(result)
            continue
        else:
            continue
        if pending and all((server, index) in seen for server, index in before):
            run = pending.pop()
            counts = {}
            for (server, index), (pid, taken) in sorted(seen.items()):
                old_pid, old_taken = before.get((server, index), (None, 0))
                counts.setdefault(server, []).append(taken - old_taken if pid == old_pid else taken)
            run["instance_requests"] = counts
    return results


def bonnie_commands(arguments, repeats=1):
    """Bonnie's command lines of one boot: every mode and process count, the same file size."""
    return [evaluate.bonnie_arguments(p, m, arguments.refs) + ["-s", arguments.size]
            for _ in range(repeats) for m in arguments.modes for p in arguments.procs]


def formica_records(arguments, config, placement, smp, run):
    commands = bonnie_commands(arguments)
    log = arguments.out / "logs" / f"scale-formica-{config.strip('#')}-smp{smp}-run{run}.log"
    results = evaluate.formica_boot(arguments, placement, str(smp), commands, False, arguments.accel, log, None,
                                    between=COUNT_INSTANCES)
    records = evaluate.collect(results, {"system": "formica", "config": config, "smp": smp})
    runs = [r for r in instance_counts(results) if r.get("kind") == "bonnie"]
    for record, result in zip(records, runs):
        if result.get("instance_requests"):
            record["instance_requests"] = result["instance_requests"]
    return records


def linux_records(arguments, smp):
    commands = bonnie_commands(arguments, arguments.runs)
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
                       "server_cycles": cycles, "instance_requests": median_instance_requests(group)}
    return result


def median_instance_requests(group):
    """Per server, the median over runs of each instance's requests (runs that saw the
    same number of instances)."""
    medians_by_server = {}
    for server in INSTANCE_SERVERS:
        lists = [r["instance_requests"][server] for r in group if server in r.get("instance_requests", {})]
        if not lists or any(len(counts) != len(lists[0]) for counts in lists):
            continue
        medians_by_server[server] = [round(statistics.median(column)) for column in zip(*lists)]
    return medians_by_server


def busiest_share(counts):
    """The largest share of the requests one instance took (1.0 for a lone instance)."""
    total = sum(counts)
    return round(max(counts) / total, 3) if total else None


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
        if cell.get("instance_requests"):
            row["instance_requests"] = cell["instance_requests"]
            row["busiest_instance_share"] = {server: busiest_share(counts)
                                             for server, counts in cell["instance_requests"].items()}
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
             f"process on a {arguments.size} file (it spans a stripe of every BLK shard), medians of "
             f"{arguments.runs} boots.", "",
             "Throughput is references per second of all processes; scaling is throughput with N "
             "processes over throughput with 1; speed-up is the time of N processes on 1 vCPU over "
             "their time on all vCPUs (Linux's beside Formica's).", ""]
    accepted, detail = arguments.multi_instance
    if accepted:
        lines += [f"The multi-instance placement is preset #{MULTI_PRESET} (fs and blk per-core); its "
                  f"instances' cores: {detail}.", ""]
    else:
        lines += [f"The multi-instance placement, preset #{MULTI_PRESET} (fs and blk per-core), is refused "
                  f"by this build's kernel, so only the static placements are measured. The kernel "
                  f"said: {detail}", ""]
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
    counted = [r for r in rows if r.get("instance_requests")]
    if counted:
        lines += ["## Requests per server instance", "", "Requests each FS and BLK instance took during "
                  "the run (median; `servers` before and after it), and the busiest instance's share "
                  "(with N instances an even split is 1/N).", "",
                  "| config | mode | procs | FS instances | FS busiest | BLK instances | BLK busiest |",
                  "|---|---|---|---|---|---|---|"]
        for row in counted:
            requests, share = row["instance_requests"], row["busiest_instance_share"]
            lines.append(f"| {row['config']} | {row['mode']} | {row['procs']} | {requests.get('fs', '')} | "
                         f"{share.get('fs', '')} | {requests.get('blk', '')} | {share.get('blk', '')} |")
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
    arguments.multi_instance = multi_instance_check(arguments)
    print(f"scale: multi-instance preset #{MULTI_PRESET}: "
          f"{'runs' if arguments.multi_instance[0] else 'refused'}: {arguments.multi_instance[1]}", flush=True)
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
    multi = {"preset": MULTI_PRESET, "accepted": arguments.multi_instance[0],
             "detail": arguments.multi_instance[1]}
    (arguments.out / "scale.json").write_text(json.dumps({"machine": machine, "multi_instance": multi,
                                                          "rows": rows, "runs": records}, indent=1))
    draw(rows, arguments)
    (arguments.out / "scale.md").write_text(render(rows, arguments, machine, seconds))
    print(f"scale: done in {seconds / 60:.1f} min; report {arguments.out / 'scale.md'}")


if __name__ == "__main__":
    main()
