#!/usr/bin/env python3
# build/bench/clock.py: `make bench-clock`: Bonnie's readblock and readbyte by the clock, 1 and 2
# processes, on Bonnie's 128 KiB file and on a 4 MiB one, 2 vCPUs, at every placement that fits 2
# vCPUs (#1-#4, #6) and the multi-instance one (#9), beside Linux in the same QEMU; boots
# alternate between the systems and placements run after run, medians of --runs. Formica runs
# with its default adaptive poll and with the poll's bound fixed at its least (ica_poll_max_us=5,
# docs/profiling.md "Across cores") so one run says what the adaptation does to one process and
# to two. Prints @json {"kind":"clock",...} lines (DESIGN.md's
# contract) and writes build/out/bench/clock.{json,md}. docs/profiling.md, "By the clock".
import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import evaluate  # noqa: E402 (puts build/ on the path for runner)
from runner import client  # noqa: E402
from bench_output import OUT, add_smoke_option  # noqa: E402

SMP = 2
PLACEMENTS = [1, 2, 3, 4, 6, 9]  # every placement that fits 2 vCPUs; 9: FS and BLK per core
FILES = {"128K": 128 * 1024, "4M": 4 * 1024 * 1024}
MODES = ("readblock", "readbyte")
PROCS = (1, 2)
FIXED_POLL_OPTION = "ica_poll_max_us=5"  # the poll's bound kept at its least (the default adapts)


def arguments():
    parser = argparse.ArgumentParser(description="Bonnie by the clock beside Linux")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="3 runs")
    parser.add_argument("--refs", type=int, default=4000)
    parser.add_argument("--timeout", type=int, default=900)
    parser.add_argument("--no-poll", action="store_true", help="only the default (adaptive) poll: leave out the series with the bound fixed")
    add_smoke_option(parser)
    options = parser.parse_args()
    options.placements, options.files = PLACEMENTS, list(FILES)
    if options.quick:
        options.runs = 3
    if options.smoke:
        options.runs, options.refs, options.placements, options.files = 1, 20, [1], ["128K"]
    options.out = OUT
    (OUT / "logs").mkdir(parents=True, exist_ok=True)
    return options


def commands(file_name, refs):
    return [evaluate.bonnie_arguments(procs, mode, refs) + ["-s", file_name]
            for mode in MODES for procs in PROCS]


def formica_records(options, placement, file_name, poll, run):
    tag = f"{placement}{'-poll' if poll else ''}-{file_name}-run{run}"
    log = OUT / "logs" / f"clock-formica-{tag}.log"
    results = evaluate.formica_boot(options, placement, str(SMP), commands(file_name, options.refs), False,
                                    "tcg", log, None, append=None if poll else FIXED_POLL_OPTION)
    return evaluate.collect(results, {"system": "formica", "placement": f"#{placement}", "poll": poll,
                                      "file_bytes": FILES[file_name]})


def linux_records(options, file_name, run):
    log = OUT / "logs" / f"clock-linux-{file_name}-run{run}.log"
    results = evaluate.linux_boot(options, commands(file_name, options.refs), SMP, "tcg", False, log, None)
    return evaluate.collect(results, {"system": "linux", "placement": "linux", "poll": False,
                                      "file_bytes": FILES[file_name]})


def measure(options):
    """Every boot, run after run: per file, Linux first, then each placement with the poll's bound
    fixed and adapting (the default), so a slow stretch of the host falls on every system alike."""
    records, total = [], options.runs * len(options.files) * (1 + len(options.placements) * (1 if options.no_poll else 2))
    done = 0
    for run in range(options.runs):
        for file_name in options.files:
            done += 1
            evaluate.progress(f"clock: [{done}/{total}] linux, {file_name}, run {run + 1}")
            records += linux_records(options, file_name, run)
            for placement in options.placements:
                for poll in (True,) if options.no_poll else (False, True):
                    done += 1
                    evaluate.progress(f"clock: [{done}/{total}] formica #{placement}{' poll' if poll else ''}, "
                                      f"{file_name}, run {run + 1}")
                    records += formica_records(options, placement, file_name, poll, run)
    return records


def medians(records, runs):
    groups = {}
    for r in records:
        key = (r["system"], r["placement"], r["poll"], r["procs"], r["mode"], r["file_bytes"])
        groups.setdefault(key, []).append(r["elapsed_us"] / 1000)
    lines = []
    for (system, placement, poll, procs, mode, file_bytes), times in sorted(groups.items(), key=str):
        lines.append({"kind": "clock", "system": system, "placement": placement, "procs": procs, "mode": mode,
                      "file_bytes": file_bytes, "median_ms": round(statistics.median(times), 2),
                      "min_ms": round(min(times), 2), "max_ms": round(max(times), 2), "runs": len(times),
                      "poll": "adaptive" if poll else "fixed", "smp": SMP, "accel": "tcg"})
    return lines


def best(lines, procs, mode, file_bytes, poll=None):
    mine = [line for line in lines if line["system"] == "formica" and line["procs"] == procs
            and line["mode"] == mode and line["file_bytes"] == file_bytes
            and (poll is None or line["poll"] == poll)]
    return min(mine, key=lambda line: line["median_ms"]) if mine else None


def report(lines, options, seconds):
    table = ["| file | mode | procs | Linux ms | Formica best ms (placement, poll) | Formica / Linux | "
             "best with the fixed poll | best with the adaptive poll |", "|---|---|---|---|---|---|---|---|"]
    for file_name in options.files:
        for mode in MODES:
            for procs in PROCS:
                linux = next((line for line in lines if line["system"] == "linux" and line["procs"] == procs
                              and line["mode"] == mode and line["file_bytes"] == FILES[file_name]), None)
                top = best(lines, procs, mode, FILES[file_name])
                fixed = best(lines, procs, mode, FILES[file_name], "fixed")
                adaptive = best(lines, procs, mode, FILES[file_name], "adaptive")
                ratio = round(top["median_ms"] / linux["median_ms"], 2) if top and linux else None
                table.append(
                    f"| {file_name} | {mode} | {procs} | {linux['median_ms'] if linux else '–'} | "
                    f"{top['median_ms'] if top else '–'} ({top['placement'] if top else '–'}, "
                    f"{top['poll'] if top else '–'}) | {ratio if ratio is not None else '–'} | "
                    f"{fixed['median_ms'] if fixed else '–'} {fixed['placement'] if fixed else ''} | "
                    f"{adaptive['median_ms'] if adaptive else '–'} {adaptive['placement'] if adaptive else ''} |")
    every = ["", "| system | placement | poll | file | mode | procs | median ms | min-max ms |",
             "|---|---|---|---|---|---|---|---|"]
    for line in lines:
        every.append(f"| {line['system']} | {line['placement']} | {line['poll']} | {line['file_bytes'] // 1024} KiB | "
                     f"{line['mode']} | {line['procs']} | {line['median_ms']} | {line['min_ms']}-{line['max_ms']} |")
    failed = ["", "Boots that failed: " + "; ".join(evaluate.FAILED_BOOTS)] if evaluate.FAILED_BOOTS else []
    text = (f"# Bonnie by the clock: TCG, {SMP} vCPUs, {options.refs} references a process, medians of "
            f"{options.runs} alternating boots ({seconds} s)\n\nCommand: `make bench-clock`. Formica's best is "
            "its fastest placement and poll; the ratio is Formica's best median over Linux's.\n\n"
            + "\n".join(table + every + failed) + "\n")
    (OUT / "clock.md").write_text(text)
    print(text)


def main():
    options = arguments()
    start = time.monotonic()
    records = measure(options)
    lines = medians(records, options.runs)
    for line in lines:
        print(client.JSON_MARKER + json.dumps(line, separators=(",", ":")), flush=True)
    (OUT / "clock.json").write_text("".join(json.dumps(line) + "\n" for line in lines))
    report(lines, options, round(time.monotonic() - start))


if __name__ == "__main__":
    main()
