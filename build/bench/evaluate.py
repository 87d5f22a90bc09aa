#!/usr/bin/env python3
# build/bench/evaluate.py: the evaluation of issue 7 (seed 003 §3): Bonnie over the
# placements #1-#8, 1..N processes, readblock and readbyte, on Formica and on Debian's
# Linux in the same QEMU configuration. Three series:
#   timed   - wall-clock (guest TSC) under --accel auto (KVM if it proves faster, else
#             TCG); per-configuration medians of --runs boots; plus a 1-vCPU boot for
#             Fig. 13's "time on 1 core / time on N cores";
#   icount  - one boot per configuration with QEMU -icount shift=0: guest nanoseconds
#             are executed instructions, repeatable to the instruction;
#   linux   - the static Linux Bonnie (build/linux/) at the same vCPU counts, timed
#             and icount;
#   kvm     - when the timed series ran under TCG but QEMU can start KVM here: Formica at
#             #1 and on 1 vCPU and Linux, one boot each, under KVM with the CPU model and
#             kernel options build/run chooses (docs/boot.md), so a host whose KVM is slow
#             or emulated still shows that both systems run on it and how fast. A system
#             whose kernel does not start under KVM within seconds (kvm_start.py) is left
#             out, and the report says so.
# Every icount boot uses -cpu max,-erms,-fsrm (linux_guest.ICOUNT_CPU); two more boots,
# Formica at #1 and Linux, 1 process, run with plain -cpu max (series PLAIN_CPU) so the
# report can show what ERMS does to the count. They stay out of the figures.
# Writes build/out/bench/evaluate.{json,csv,md} and fig*.png (plots.py, report.py).
# Usage and the meaning of every output: docs/evaluation.md.
import argparse
import csv
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import kvm_start  # noqa: E402
import linux_guest  # noqa: E402
import plots  # noqa: E402
import report  # noqa: E402
from runner import accel as runner_accel  # noqa: E402
from runner import client  # noqa: E402
from runner import qemu_binary  # noqa: E402
from bench_output import OUT, add_smoke_option  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
BOOT_ATTEMPTS = 2   # a failed or hung Formica boot is tried once more
FAILED_BOOTS = []   # boots that failed every attempt, listed in the report
LEFT_OUT = []       # series (or a system's part of one) that cannot run here, and why
SMOKE_REFS = 20


def progress(text):
    print(f"evaluate: {text}", flush=True)
MODES = ["readblock", "readbyte"]
# The icount series again with plain -cpu max (ERMS and FSRM on): Formica at #1 and
# Linux, 1 process, for the report's "why -erms,-fsrm" table; not in the figures.
PLAIN_CPU = "icount-plain-cpu"
# Cores each preset needs (docs/placement.md); #8 also needs two sockets.
PLACEMENT_CORES = {1: 1, 2: 2, 3: 2, 4: 2, 5: 3, 6: 2, 7: 3, 8: 4}
FIELDS = ["system", "series", "config", "placement", "smp", "mode", "procs", "refs", "runs",
          "elapsed_us_median", "elapsed_us_min", "elapsed_us_max", "instructions",
          "requests", "per_request_us", "instructions_per_request", "oversubscribed"]


def parse_arguments():
    parser = argparse.ArgumentParser(description="Bonnie evaluation: Formica placements #1-#8 and Linux")
    parser.add_argument("--quick", action="store_true", help="a small matrix that runs in a few minutes")
    parser.add_argument("--runs", type=int, help="boots per timed configuration (median); default 3, quick 2")
    parser.add_argument("--procs", help="comma-separated process counts; default 1,2,4,8,16, quick 1,2,4")
    parser.add_argument("--refs", type=int, help="references per process; default 4000 (paper), quick 500")
    parser.add_argument("--placements", help="comma-separated presets; default 1-8")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--accel", default="auto", choices=["auto", "kvm", "tcg"])
    parser.add_argument("--smp", type=int, help="vCPUs of every timed boot (default: the host's cores, "
                        "or more when a placement needs more, flagged)")
    parser.add_argument("--icount-procs", help="process counts of the icount series; default = --procs")
    parser.add_argument("--no-icount", action="store_true")
    parser.add_argument("--no-linux", action="store_true")
    parser.add_argument("--no-kvm", action="store_true", help="leave out the kvm series")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per boot")
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--report-only", action="store_true",
                        help="redraw the plots and the report from OUT/evaluate.json, run nothing")
    parser.add_argument("--resume", action="store_true",
                        help="keep the boots OUT/evaluate-boots.jsonl already holds (same settings), run the rest")
    add_smoke_option(parser)
    arguments = parser.parse_args()
    if arguments.smoke:  # each series once at #1 with 1 process (no plain -cpu max boots); of
        # the kvm series only its start probes
        arguments.runs, arguments.procs, arguments.refs = 1, "1", SMOKE_REFS
        arguments.placements, arguments.smp = "1", 1
    quick = arguments.quick
    arguments.runs = arguments.runs or (2 if quick else 3)
    arguments.procs = [int(p) for p in (arguments.procs or ("1,2,4" if quick else "1,2,4,8,16")).split(",")]
    arguments.refs = arguments.refs or (500 if quick else 4000)
    arguments.placements = [int(p) for p in (arguments.placements or "1,2,3,4,5,6,7,8").split(",")]
    arguments.modes = arguments.modes.split(",")
    arguments.icount_procs = ([int(p) for p in arguments.icount_procs.split(",")] if arguments.icount_procs
                              else arguments.procs)
    arguments.out = Path(arguments.out)
    return arguments


class Progress:
    """One line per boot: where we are, how long it took, an estimate of what is left."""

    def __init__(self, total_units):
        self.total = total_units
        self.done = 0
        self.start = time.monotonic()

    def step(self, units, text):
        self.done += units
        elapsed = time.monotonic() - self.start
        left = elapsed / self.done * (self.total - self.done) if self.done else 0
        print(f"evaluate: [{self.done:.0f}/{self.total:.0f} {100 * self.done / self.total:3.0f}%] {text} "
              f"(elapsed {elapsed / 60:.1f} min, ~{left / 60:.1f} min left)", flush=True)


def bonnie_arguments(procs, mode, refs):
    return ["-p", str(procs), "-m", mode, "-n", str(refs)]


SERVERS = ("fs", "blk", "dk")


def collect(results, extra):
    """@json objects of one boot -> one record per Bonnie run, with the server requests
    (readblock: references + updates; readbyte: block fetches + updates) its children made,
    and the cycles FS, BLK and DK spent in its timed part (Bonnie reads them from the
    process list just before and after it: "server_cycles")."""
    records, children = [], []
    for result in results:
        if result.get("kind") == "bonnie_child":
            children.append(result)
        elif result.get("kind") == "bonnie":
            fetches = sum(c["readbyte_fetches"] for c in children)
            updates = sum(c["updates"] for c in children)
            requests = (fetches if result["mode"] == "readbyte" else result["refs"] * result["procs"]) + updates
            records.append(dict(extra, mode=result["mode"], procs=result["procs"], refs=result["refs"],
                                elapsed_us=result["elapsed_us"], requests=requests,
                                cores=sorted({c["core"] for c in children})))
            if result.get("server_cycles"):
                records[-1]["server_cycles"] = result["server_cycles"]
            children = []
    return records


def bonnie_command_line(commands, between=None):
    """The shell commands of one boot; `between` (a shell command) runs before the first
    Bonnie run and after each."""
    runs = ["run bonnie " + " ".join(c) for c in commands]
    if between is None:
        return "; ".join(runs)
    return "; ".join([between] + [f"{run}; {between}" for run in runs])


def formica_boot(arguments, placement, smp, commands, icount, accel, log, cpu=linux_guest.ICOUNT_CPU,
                 between=None, append=None):
    """One build/run boot running `commands` (and the shell command `between` before the
    first and after each), with the kernel options `append` (e.g. fs_lend_on=off); the @json
    objects."""
    disk = arguments.out / "bonnie-disk.img"  # Bonnie writes: a fresh copy for every boot
    flags = ["--smp", smp, "--accel", accel, "--disk", disk, "--cmd", bonnie_command_line(commands, between)]
    if append:
        flags += ["--append", append]
    if placement:
        flags += ["--placement", placement]
    if placement == 8:
        flags += ["--sockets", "2"]
    if icount:
        flags += ["--icount", "--cpu", cpu]
    elif cpu:
        flags += ["--cpu", cpu]
    for attempt in range(1, BOOT_ATTEMPTS + 1):
        shutil.copyfile(REPO / "build" / "out" / "disk.img", disk)
        boot = client.run(flags, arguments.timeout, log=log)
        results = boot.jsons
        if boot.rc == 0:
            return results
        # A failed or hung boot is reported and retried; after the last attempt its
        # finished configurations are kept and the evaluation goes on.
        sys.stderr.write("\n".join(boot.lines[-15:]) + boot.stderr)
        progress(f"WARNING: boot (placement {placement}, {smp} vCPUs) failed with status "
                 f"{boot.rc}, attempt {attempt} of {BOOT_ATTEMPTS}; log {log}")
    FAILED_BOOTS.append(f"placement {placement}, {smp} vCPUs, log {log.name}")
    return results


def timed_smp(arguments, placement, host_cores):
    needed = PLACEMENT_CORES[placement]
    return max(arguments.smp or host_cores, needed)


KVM_SERIES = "kvm"


def kvm_series_systems(arguments):
    """The systems whose kernels start under KVM here (kvm_start.py); the others go to
    LEFT_OUT with the reason, found in seconds instead of a boot timeout."""
    probes = [("formica", kvm_start.formica_starts)]
    if not arguments.no_linux:
        probes.append(("linux", kvm_start.linux_starts))
    systems = []
    for system, starts in probes:
        ok, why = starts(arguments.kvm_model, kvm_start.SMOKE_START_SECONDS if arguments.smoke
                         else kvm_start.START_SECONDS)
        progress(f"kvm series: {why}" + ("" if ok else f"; the series goes on without {system}"))
        if ok:
            systems.append(system)
        else:
            LEFT_OUT.append(f"kvm series, {system}: {why}")
    return systems


def kvm_series_boots(arguments, host_cores):
    """The kvm series: Formica #1 at the timed series' vCPUs and on 1 vCPU, and Linux, of the
    systems that start under KVM; a smoke run only probes."""
    if arguments.smoke:
        return []
    smp = timed_smp(arguments, 1, host_cores)
    boots = []
    if "formica" in arguments.kvm_systems:
        boots += [("formica", KVM_SERIES, "#1", 1, smp, arguments.procs, 0),
                  ("formica", KVM_SERIES, "1core", None, 1, arguments.procs, 0)]
    if "linux" in arguments.kvm_systems:
        boots.append(("linux", KVM_SERIES, "linux", None, smp, arguments.procs, 0))
    return boots


def plan(arguments, host_cores):
    """The boots to make: (system, series, config, placement, smp, procs list, runs)."""
    boots = []
    for placement in arguments.placements:
        smp = timed_smp(arguments, placement, host_cores)
        boots += [("formica", "timed", f"#{placement}", placement, smp, arguments.procs, run)
                  for run in range(arguments.runs)]
    boots += [("formica", "timed", "1core", None, 1, arguments.procs, run) for run in range(arguments.runs)]
    if not arguments.no_icount:
        for placement in arguments.placements:
            boots.append(("formica", "icount", f"#{placement}", placement,
                          max(PLACEMENT_CORES[placement], 2), arguments.icount_procs, 0))
        boots.append(("formica", "icount", "1core", None, 1, arguments.icount_procs, 0))
    if not arguments.no_linux:
        linux_smps = sorted({1} | {timed_smp(arguments, p, host_cores) for p in arguments.placements})
        boots += [("linux", "timed", "linux", None, smp, arguments.procs, 0) for smp in linux_smps]
        if not arguments.no_icount:
            # 1 vCPU only: Linux SMP under -icount's round-robin vCPUs stalls for minutes
            # (observed with 2 vCPUs), and icount measures work, not parallelism, anyway.
            boots.append(("linux", "icount", "linux", None, 1, arguments.icount_procs, 0))
    if not arguments.no_icount and 1 in arguments.placements and not arguments.smoke:
        # (a smoke run leaves these out: they are the icount boots under another CPU model)
        boots.append(("formica", PLAIN_CPU, "#1", 1, 2, [1], 0))
        if not arguments.no_linux:
            boots.append(("linux", PLAIN_CPU, "linux", None, 1, [1], 0))
    if arguments.kvm_model:
        boots += kvm_series_boots(arguments, host_cores)
    return boots


def boot_weight(boot, arguments):
    """A rough cost of a boot, for the progress estimate (icount and Linux cost more)."""
    system, series, _, _, _, procs, _ = boot
    work = sum(procs) * len(arguments.modes) * arguments.refs / 4000
    runs = arguments.runs if system == "linux" else 1
    return (8 if system == "linux" else 1) + work * runs * (2 if series != "timed" else 1)


def run_boot(arguments, boot, accel, index):
    system, series, config, placement, smp, procs, run = boot
    icount = series not in ("timed", KVM_SERIES)
    cpu = "max" if series == PLAIN_CPU else linux_guest.ICOUNT_CPU
    if not icount:  # timed: the CPU model build/run picks for the accelerator
        cpu = None
    if series == KVM_SERIES:
        accel, cpu = "kvm", arguments.kvm_model
    extra = {"system": system, "series": series if icount else accel, "config": config,
             "placement": placement, "smp": smp}
    log = arguments.out / "logs" / f"{system}-{series}-{config.strip('#')}-smp{smp}-run{run}.log"
    if system == "formica":
        commands = [bonnie_arguments(p, m, arguments.refs) for m in arguments.modes for p in procs]
        results = formica_boot(arguments, placement, smp, commands, icount,
                               "tcg" if icount else accel, log, cpu)
    else:
        repeats = 1 if icount else arguments.runs  # Linux boots are slow: repeat inside one boot
        commands = [bonnie_arguments(p, m, arguments.refs)
                    for _ in range(repeats) for m in arguments.modes for p in procs]
        results = linux_boot(arguments, commands, smp, "tcg" if icount else accel, icount, log, cpu)
    records = collect(results, extra)
    expected = len(arguments.modes) * len(procs) * (arguments.runs if system == "linux" and not icount else 1)
    if len(records) != expected:
        progress(f"WARNING: {system} {config} smp {smp}: {len(records)} Bonnie results, expected {expected}")
    return records


def linux_boot(arguments, commands, smp, accel, icount, log, cpu):
    """One Linux boot, tried once more if it fails; after that its results are missing."""
    for attempt in range(1, BOOT_ATTEMPTS + 1):
        try:
            return linux_guest.run(commands, smp, accel, icount=icount, sockets=None,
                                   timeout=arguments.timeout, log=log, cpu=cpu)
        except RuntimeError as error:
            progress(f"WARNING: Linux boot ({smp} vCPUs) failed, attempt {attempt} of {BOOT_ATTEMPTS}: "
                     f"{str(error)[-300:]}")
    FAILED_BOOTS.append(f"Linux, {smp} vCPUs, log {log.name}")
    return []


def boot_key(boot):
    system, series, config, _, smp, procs, run = boot
    return f"{system}/{series}/{config}/smp{smp}/procs{','.join(map(str, procs))}/run{run}"


def load_finished_boots(path, settings):
    """The boots a previous run of the same settings finished: key -> records."""
    finished = {}
    if not path.exists():
        return finished
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        if entry.get("settings") == settings:
            finished[entry["boot"]] = entry["records"]
            FAILED_BOOTS.extend(entry.get("failed", []))
    return finished


def summarise(records, host_cores):
    """Per configuration: the median (and range) over the repeated runs."""
    grouped = {}
    for record in records:
        key = (record["system"], record["series"], record["config"], record["smp"], record["mode"],
               record["procs"])
        grouped.setdefault(key, []).append(record)
    rows = []
    for (system, series, config, smp, mode, procs), group in sorted(grouped.items(), key=str):
        samples = [r["elapsed_us"] for r in group]
        median = statistics.median(samples)
        requests = statistics.median(r["requests"] for r in group)
        icount = series.startswith("icount")
        rows.append({"system": system, "series": series, "config": config, "placement": group[0]["placement"],
                     "smp": smp, "mode": mode, "procs": procs, "refs": group[0]["refs"], "runs": len(group),
                     "elapsed_us_median": median, "elapsed_us_min": min(samples),
                     "elapsed_us_max": max(samples),
                     "instructions": round(median * 1000) if icount else None,
                     "requests": requests,
                     "per_request_us": round(median / requests, 3) if requests else None,
                     "instructions_per_request": round(median * 1000 / requests) if icount and requests else None,
                     "server_instructions_per_request": server_share(group, requests) if icount else None,
                     "oversubscribed": (not icount) and smp > host_cores,
                     "cores_used": sorted({c for r in group for c in r["cores"]})})
    return rows


def server_share(group, requests):
    """icount: instructions per request each server (FS, BLK, DK) executed, from Bonnie's
    server_cycles (one TSC cycle is one instruction under -icount shift=0)."""
    measured = [r["server_cycles"] for r in group if r.get("server_cycles")]
    if not measured or not requests:
        return None
    return {name: round(statistics.median(m.get(name, 0) for m in measured) / requests)
            for name in SERVERS if any(name in m for m in measured)}


def machine_description(accel, host_cores):
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    qemu, _ = qemu_binary.choose(str(REPO))
    version = subprocess.run([qemu, "--version"], capture_output=True, text=True).stdout.splitlines()
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    memory = "unknown"
    try:
        memory = Path("/proc/meminfo").read_text().splitlines()[0].split(":")[1].strip()
    except OSError:
        pass
    return {"cpu": cpu, "host_cores": host_cores, "host_memory": memory, "host_kernel": platform.release(),
            "accelerator": accel, "qemu": version[0] if version else "unknown", "commit": commit,
            "linux_guest": linux_guest.kernel_version(), "guest_memory": "256M",
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}


def write_outputs(arguments, rows, plain_cpu, records, machine, ipcbench, seconds):
    arguments.out.mkdir(parents=True, exist_ok=True)
    settings = {"quick": arguments.quick, "runs": arguments.runs, "procs": arguments.procs,
                "icount_procs": arguments.icount_procs, "refs": arguments.refs,
                "placements": arguments.placements, "modes": arguments.modes, "file_bytes": 131072,
                "update_pct": 10, "chunk": 4096, "command": " ".join(sys.argv), "seconds": round(seconds),
                "failed_boots": FAILED_BOOTS, "left_out": LEFT_OUT}
    (arguments.out / "evaluate.json").write_text(json.dumps(
        {"machine": machine, "settings": settings, "results": rows, "plain_cpu": plain_cpu, "runs": records},
        indent=1))
    with open(arguments.out / "evaluate.csv", "w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=FIELDS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    figures = plots.draw_all(rows, arguments.out)
    text = report.render(rows, machine, settings, ipcbench, figures, plain_cpu)
    if FAILED_BOOTS:
        text += ("\n## Boots that failed\n\nThese boots failed on every attempt; the configurations "
                 "they finished are included, the rest are missing:\n\n" +
                 "".join(f"- {boot}\n" for boot in FAILED_BOOTS))
    if LEFT_OUT:
        text += ("\n## Series that cannot run here\n\nFound before their boots and left out:\n\n" +
                 "".join(f"- {series}\n" for series in LEFT_OUT))
    (arguments.out / "evaluate.md").write_text(text)


def report_only(out):
    data = json.loads((out / "evaluate.json").read_text())
    ipcbench_path = out / "ipcbench.json"
    ipcbench = json.loads(ipcbench_path.read_text()) if ipcbench_path.exists() else None
    figures = plots.draw_all(data["results"], out)
    (out / "evaluate.md").write_text(report.render(data["results"], data["machine"], data["settings"],
                                                   ipcbench, figures, data.get("plain_cpu", [])))
    print(f"evaluate: report {out / 'evaluate.md'}")


def main():
    arguments = parse_arguments()
    if arguments.report_only:
        return report_only(arguments.out)
    arguments.out.mkdir(parents=True, exist_ok=True)
    (arguments.out / "logs").mkdir(exist_ok=True)
    host_cores = os.cpu_count() or 1
    qemu, _ = qemu_binary.choose(str(REPO))
    accel = runner_accel.resolve(arguments.accel, False, qemu, REPO / "build" / "out")
    arguments.kvm_model, arguments.kvm_systems = None, []
    if not arguments.no_linux:
        linux_guest.build()
    if accel != "kvm" and not arguments.no_kvm and runner_accel.kvm_usable():
        arguments.kvm_model, why = runner_accel.kvm_cpu_model(qemu, REPO / "build" / "out")
        print(f"evaluate: kvm series: {f'-cpu {arguments.kvm_model}' if arguments.kvm_model else 'none'}"
              f" ({why})", flush=True)
        if arguments.kvm_model:
            arguments.kvm_systems = kvm_series_systems(arguments)
    machine = machine_description(accel, host_cores)
    print(f"evaluate: {machine['cpu']}, {host_cores} host cores, accelerator {accel}, {machine['qemu']}",
          flush=True)
    boots = plan(arguments, host_cores)
    start = time.monotonic()
    records = []
    # Every finished boot is appended to a journal at once, so a long run that is
    # interrupted loses at most one boot: --resume picks up from there.
    journal = arguments.out / "evaluate-boots.jsonl"
    key_settings = {"accel": accel, "runs": arguments.runs, "procs": arguments.procs, "refs": arguments.refs,
                    "icount_procs": arguments.icount_procs, "modes": arguments.modes}
    finished = load_finished_boots(journal, key_settings) if arguments.resume else {}
    if not arguments.resume:
        journal.unlink(missing_ok=True)
    meter = Progress(sum(boot_weight(b, arguments) for b in boots if boot_key(b) not in finished))
    for index, boot in enumerate(boots):
        boot_start = time.monotonic()
        if boot_key(boot) in finished:
            records += finished[boot_key(boot)]
            continue
        failed_before = len(FAILED_BOOTS)
        got = run_boot(arguments, boot, accel, index)
        with open(journal, "a") as file:
            file.write(json.dumps({"settings": key_settings, "boot": boot_key(boot), "records": got,
                                   "failed": FAILED_BOOTS[failed_before:]}) + "\n")
        records += got
        system, series, config, _, smp, _, run = boot
        flag = " (vCPUs > host cores)" if series != "icount" and smp > host_cores else ""
        meter.step(boot_weight(boot, arguments),
                      f"{system} {config} {series} {smp} vCPUs{flag} run {run + 1}: {len(got)} results "
                      f"in {time.monotonic() - boot_start:.1f} s")
    rows = summarise([r for r in records if r["series"] != PLAIN_CPU], host_cores)
    plain_cpu = summarise([r for r in records if r["series"] == PLAIN_CPU], host_cores)
    ipcbench_path = arguments.out / "ipcbench.json"
    ipcbench = json.loads(ipcbench_path.read_text()) if ipcbench_path.exists() else None
    write_outputs(arguments, rows, plain_cpu, records, machine, ipcbench, time.monotonic() - start)
    print(f"evaluate: done in {(time.monotonic() - start) / 60:.1f} min; report {arguments.out / 'evaluate.md'}")


if __name__ == "__main__":
    main()
