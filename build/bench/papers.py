#!/usr/bin/env python3
# build/bench/papers.py: `make bench-papers`: the papers' figures on this tree, one row per
# figure and point: the paper's number (PAPER_003 here, PAPER_004 in papers_004.py: read from the seeds' text), Formica's,
# Linux's in the same QEMU where the paper compares with Linux, with the command and commit.
# Seed 003 (Bonnie, Figs 6-13): placements #1-#9, readblock and readbyte, timed and -icount, on
# the paper's path (fs_lend_on=off: every readblock FS -> BLK) and Formica's (FS lends on BLK's
# blocks); seed 004 (the pager, Figs 4-9): memseq and sort -S on a memory node, Linux disk swap;
# seed 001 (the NVM tier, Figs 4-6): fileio through the tier and dm-writecache (papers_001.py);
# seed 000 (mmap and flmalloc, Figs 2-5): flashbench (papers_000.py); seed 002 (a memory node's
# own work beside remote traffic, Figs 5, 6, 8): memnode_interference.py's boots (papers_002.py).
# Boots come from evaluate.py, pager_bench.py and pager_vs_linux.py; the page and its plots from
# papers_page.py. Prints one @json {"kind":"paper",...} line per row; writes OUT/papers.{json,md}
# and papers-*.png, and with --page the page and plots to docs/results/. docs/evaluation.md.
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import evaluate  # noqa: E402 (puts build/ on the path for runner)
import linux_guest  # noqa: E402
import pager_bench  # noqa: E402
import papers_000  # noqa: E402
import papers_001  # noqa: E402
import papers_002  # noqa: E402
import papers_004  # noqa: E402
import papers_page  # noqa: E402
from papers_page import FIGURES_003, FINDINGS_003, progress, rounded, row  # noqa: E402
from runner import client  # noqa: E402
from bench_output import OUT, add_smoke_option  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
PATHS = {"paper": "fs_lend_on=off", "formica": None}  # path -> kernel options
PATH_NAMES = {"paper": "paper's path (FS -> BLK)", "formica": "Formica's (FS lends on)"}
PLACEMENTS = [1, 2, 3, 4, 5, 6, 7, 8, 9]
CORES = {**evaluate.PLACEMENT_CORES, 9: 1}
FIG13_CORES = 16  # the paper's speed-up: 1 core against 16
# Sizes: quick (QUICK=1), full, smoke (--smoke: every kind of boot once, at the smallest size).
SIZES = {
    "full": dict(refs=4000, procs=[1, 2, 4, 8, 16], runs=5, records=100000, memseq_bytes="16M",
                 blocks=["4K", "16K", "32K", "64K", "128K", "256K", "512K", "1M"],
                 stride_blocks=["32K", "128K", "1M"], strides=["4K", "16K", "64K", "256K", "1M"],
                 ratios=[1.65, 3.3, 4, 6.6], fig8_blocks=["32K", "64K", "128K", "256K", "512K", "1M"],
                 placements=PLACEMENTS),
    "quick": dict(refs=4000, procs=[1, 2, 4, 8, 16], runs=3, records=20000, memseq_bytes="4M",
                  blocks=["4K", "32K", "64K", "128K", "1M"], stride_blocks=["32K", "128K", "1M"],
                  strides=["4K", "64K", "256K", "1M"], ratios=[1.65, 3.3, 4, 6.6],
                  fig8_blocks=["32K", "64K"], placements=PLACEMENTS),
    "smoke": dict(refs=20, procs=[1], runs=1, records=2000, memseq_bytes="1M", blocks=["64K"],
                  stride_blocks=["64K"], strides=["64K"], ratios=[4], fig8_blocks=["32K"],
                  placements=[1, 5]),
}

# Seed 003's numbers, as its text gives them (§3.6, §3.7, §4); the figures' other points are
# plots without numbers: the rows name the paper's finding instead.
PAPER_003 = {
    "gain_5_readblock": (35, "%", "Fig. 7", "readblock: #5's largest gain over #1 (19.6 ms)"),
    "gain_4_readbyte": (5, "%", "Fig. 9", "readbyte: #4's largest gain over #1 (2.7 ms)"),
    "gain_7_readblock": (79, "%", "Fig. 11", "readblock: #7's largest gain over #1 (46.1 ms)"),
    "gain_7_readbyte": (94, "%", "Fig. 12", "readbyte: #7's largest gain over #1 (26.1 ms)"),
}
# Under -icount QEMU runs the vCPUs one after another and guest time counts every core's
# instructions: work done in parallel adds up instead of overlapping, so no distribution gain
# can show. The rows keep the instructions a placement adds (`saved`, negative) and no gain.
ICOUNT_NO_GAIN = "not a gain: -icount adds up the vCPUs' instructions (added instructions: `saved`)"
GAINS_003 = [("Fig. 7", "readblock", 5, "gain_5_readblock"), ("Fig. 9", "readbyte", 4, "gain_4_readbyte"),
             ("Fig. 11", "readblock", 7, "gain_7_readblock"), ("Fig. 12", "readbyte", 7, "gain_7_readbyte")]


def arguments(argv=None):
    parser = argparse.ArgumentParser(description="the papers' figures on this tree")
    parser.add_argument("--quick", action="store_true", help="seed 004 at smaller sizes, 3 timed runs (make bench-papers QUICK=1)")
    parser.add_argument("--runs", type=int, help="timed boots per configuration (median)")
    parser.add_argument("--seeds", default="000,001,002,003,004", help="which papers' rows to measure")
    parser.add_argument("--no-linux", action="store_true", help="leave out Linux's rows")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds per boot")
    parser.add_argument("--page", help="also write the page and its plots here (docs/results/papers.md)")
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--keep", action="store_true",
                        help="measure only --seeds; the other seeds' measurements from OUT/papers.json")
    parser.add_argument("--report-only", action="store_true",
                        help="redraw the page and plots from OUT/papers.json, run nothing")
    add_smoke_option(parser)
    options = parser.parse_args(argv)
    options.size = "smoke" if options.smoke else "quick" if options.quick else "full"
    for name, value in SIZES[options.size].items():
        setattr(options, name, value)
    options.runs = options.runs or SIZES[options.size]["runs"]
    options.out = Path(options.out)
    options.host_cores = os.cpu_count() or 1
    options.seeds = options.seeds.split(",")
    return options


# ---- seed 003: the boots ----------------------------------------------------------------------


def bonnie_commands(options):
    return [evaluate.bonnie_arguments(p, m, options.refs) for m in evaluate.MODES for p in options.procs]


def timed_measurable(options, placement):
    """None when a timed boot of `placement` fits the host, else why not."""
    needed = CORES[placement]
    if needed > options.host_cores:
        return f"not measurable here: #{placement} needs {needed} vCPUs, the host has {options.host_cores} cores"
    return None


def formica_bonnie(options, path, placement, smp, icount, run):
    series = "icount" if icount else "timed"
    log = options.out / "logs" / f"papers-{path}-{series}-{placement or '1core'}-smp{smp}-run{run}.log"
    results = evaluate.formica_boot(options, placement, smp, bonnie_commands(options), icount, "tcg", log,
                                    linux_guest.ICOUNT_CPU if icount else None, append=PATHS[path])
    extra = {"system": "formica", "series": "icount" if icount else "tcg", "path": path,
             "config": f"#{placement}" if placement else "1core", "placement": placement, "smp": smp}
    return [dict(record, path=path) for record in evaluate.collect(results, extra)]


def bonnie_boots(options):
    """(path, placement or None for 1 vCPU, smp, icount, run) of every Formica boot."""
    boots = []
    for path in PATHS:
        for placement in options.placements:
            boots.append((path, placement, max(CORES[placement], 2), True, 0))
            if timed_measurable(options, placement) is None:
                smp = options.host_cores if placement != 8 else 4
                boots += [(path, placement, smp, False, run) for run in range(options.runs)]
        boots += [(path, None, 1, False, run) for run in range(options.runs)]
    return boots


def linux_bonnie(options):
    """Linux's Bonnie timed on 1 vCPU and on the host's cores (Fig. 13's speed-up)."""
    records = []
    for smp in sorted({1, min(options.host_cores, FIG13_CORES)}):
        log = options.out / "logs" / f"papers-linux-smp{smp}.log"
        commands = [c for _ in range(options.runs) for c in bonnie_commands(options)]
        results = evaluate.linux_boot(options, commands, smp, "tcg", False, log, None)
        records += [dict(r, path="linux") for r in evaluate.collect(
            results, {"system": "linux", "series": "tcg", "config": "linux", "placement": None, "smp": smp})]
    return records


def measure_003(options):
    boots = bonnie_boots(options)
    records = []
    for index, boot in enumerate(boots):
        start = time.monotonic()
        records += formica_bonnie(options, *boot)
        progress(f"seed 003 boot {index + 1}/{len(boots)} {boot}: {time.monotonic() - start:.0f} s")
    if not options.no_linux:
        records += linux_bonnie(options)
    rows = []
    for path in list(PATHS) + ["linux"]:
        rows += [dict(r, path=path) for r in evaluate.summarise([r for r in records if r["path"] == path],
                                                               options.host_cores)]
    return rows


# ---- seed 003: the rows -----------------------------------------------------------------------


def bonnie_value(summary):
    """ms (timed) or M instructions (icount) of one summary row."""
    if summary["series"] == "icount":
        return summary["elapsed_us_median"] / 1000, "M instructions (icount)"
    return summary["elapsed_us_median"] / 1000, "ms (TCG, median)"


def find(summaries, **match):
    found = [s for s in summaries if all(s.get(k) == v for k, v in match.items())]
    return found[0] if found else None


def placement_rows(options, summaries, figure, series):
    mode, placements, which = FIGURES_003[figure]
    procs = [1] if which == "one" else options.procs
    rows = []
    for path in PATHS:
        for placement in placements:
            flag = timed_measurable(options, placement) if series == "tcg" else None
            for p in procs:
                found = find(summaries, path=path, series=series, placement=placement, mode=mode, procs=p)
                value, unit = bonnie_value(found) if found else (None, "ms (TCG, median)"
                                                                 if series == "tcg" else "M instructions (icount)")
                rows.append(row("003", figure, f"{mode} #{placement}, {p} processes, {PATH_NAMES[path]}",
                                None, rounded(value, 3), None, unit, series=series, path=path,
                                placement=placement, procs=p, mode=mode, flag=flag,
                                paper_finding=FINDINGS_003[figure]))
    return rows


def gain_rows(options, summaries, series):
    """The paper's distribution gain: (T#1 - T#k) / T#1, its largest over the process counts."""
    rows = []
    for figure, mode, placement, key in GAINS_003:
        paper, unit, _, what = PAPER_003[key]
        for path in PATHS:
            best = None
            for p in options.procs:
                one = find(summaries, path=path, series=series, placement=1, mode=mode, procs=p)
                other = find(summaries, path=path, series=series, placement=placement, mode=mode, procs=p)
                if one and other:
                    gain = (one["elapsed_us_median"] - other["elapsed_us_median"]) / one["elapsed_us_median"]
                    saved = (one["elapsed_us_median"] - other["elapsed_us_median"]) / 1000
                    if best is None or gain > best[0]:
                        best = (gain, saved, p)
            flag = timed_measurable(options, placement) if series == "tcg" else ICOUNT_NO_GAIN
            gain = rounded(100 * best[0], 1) if best and not flag else None
            rows.append(row("003", figure, f"{what}, {PATH_NAMES[path]}", paper, gain, None, unit, series=series,
                            path=path, mode=mode, placement=placement, flag=flag,
                            saved=rounded(best[1], 3) if best else None, at_procs=best[2] if best else None,
                            saved_unit="ms" if series == "tcg" else "M instructions"))
    return rows


def speedup_rows(options, summaries):
    """Fig. 13: time on 1 core / time on N cores; N = 16 as the paper, else what the host has."""
    cores = min(options.host_cores, FIG13_CORES)
    placement = 7 if cores >= 3 else 6
    rows = []
    for mode in evaluate.MODES:
        for p in options.procs:
            for path in PATHS:
                one = find(summaries, path=path, series="tcg", config="1core", mode=mode, procs=p)
                many = find(summaries, path=path, series="tcg", placement=placement, mode=mode, procs=p)
                linux_one = find(summaries, path="linux", smp=1, mode=mode, procs=p)
                linux_many = find(summaries, path="linux", smp=cores, mode=mode, procs=p)
                ratio = one["elapsed_us_median"] / many["elapsed_us_median"] if one and many else None
                linux = (linux_one["elapsed_us_median"] / linux_many["elapsed_us_median"]
                         if linux_one and linux_many and cores > 1 else None)
                rows.append(row("003", "Fig. 13", f"{mode}, {p} processes, speed-up 1 -> {cores} vCPUs "
                                f"(#{placement}), {PATH_NAMES[path]}", None, rounded(ratio),
                                rounded(linux) if path == "paper" else None, "x", series="tcg", path=path,
                                mode=mode, procs=p, cores=cores, paper_finding=FINDINGS_003["Fig. 13"]))
            if cores < FIG13_CORES:
                rows.append(row("003", "Fig. 13", f"{mode}, {p} processes, speed-up 1 -> 16 cores (#7)", None,
                                None, None, "x", series="tcg", mode=mode, procs=p, cores=FIG13_CORES,
                                flag=f"not measurable here: the host has {options.host_cores} cores "
                                     "(the same command measures it on 16)"))
    return rows


def rows_003(options, summaries):
    rows = []
    for series in ("icount", "tcg"):
        for figure in FIGURES_003:
            rows += placement_rows(options, summaries, figure, series)
        rows += gain_rows(options, summaries, series)
    return rows + speedup_rows(options, summaries)


def all_rows(options, measured, command, commit):
    rows = papers_000.rows(options, measured["000"]) if "000" in measured else []
    rows += papers_001.rows(options, measured["001"]) if "001" in measured else []
    rows += papers_002.rows(options, measured["002"]) if "002" in measured else []
    rows += rows_003(options, measured["003"]) if "003" in measured else []
    rows += papers_004.rows(options, measured["004"]) if "004" in measured else []
    for r in rows:
        r.update(command=command, commit=commit)
    return rows


def kept_measurements(options):
    """With --keep: the other seeds' measurements and commits from OUT/papers.json."""
    path = options.out / "papers.json"
    if not options.keep or not path.exists():
        return {}, {}
    data = json.loads(path.read_text())
    at = data["settings"].get("measured_at") or {s: data["settings"]["commit"] for s in data["measured"]}
    kept = {seed: value for seed, value in data["measured"].items() if seed not in options.seeds}
    return kept, {seed: at[seed] for seed in kept}


def report_only(options):
    """The rows again from the measurements papers.json keeps (run with the run's --quick)."""
    data = json.loads((options.out / "papers.json").read_text())
    settings = data["settings"]
    rows = all_rows(options, data["measured"], settings["command"], settings["commit"])
    (options.out / "papers.json").write_text(json.dumps(dict(data, rows=rows), indent=1) + "\n")
    papers_page.write(options, rows, data["measured"], settings)
    progress(f"page redrawn from {options.out}/papers.json")


def main():
    options = arguments()
    if options.report_only:
        return report_only(options)
    options.out.mkdir(parents=True, exist_ok=True)
    (options.out / "logs").mkdir(exist_ok=True)
    if not options.no_linux:
        linux_guest.build()  # what changed only (the static sort with -S among it)
    start = time.monotonic()
    measured, measured_at = kept_measurements(options)
    if "000" in options.seeds:
        measured["000"] = papers_000.measure(options)
    if "001" in options.seeds:
        measured["001"] = papers_001.measure(options)
    if "002" in options.seeds:
        measured["002"] = papers_002.measure(options)
    if "003" in options.seeds:
        measured["003"] = measure_003(options)
    if "004" in options.seeds:
        measured["004"] = papers_004.measure(options)
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    command = "make bench-papers" + (" QUICK=1" if options.quick else "") if not options.smoke \
        else "python3 build/bench/papers.py --smoke"
    measured_at.update({seed: commit for seed in options.seeds})
    rows = all_rows(options, measured, command, commit)
    for r in rows:
        print(client.JSON_MARKER + json.dumps(r), flush=True)
    settings = {name: getattr(options, name) for name in SIZES["full"]}
    settings.update(size=options.size, host_cores=options.host_cores, seconds=round(time.monotonic() - start),
                    command=command, commit=commit, failed_boots=evaluate.FAILED_BOOTS + pager_bench.FAILED_BOOTS,
                    date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), measured_at=measured_at)
    (options.out / "papers.json").write_text(json.dumps({"settings": settings, "rows": rows,
                                                         "measured": measured}, indent=1) + "\n")
    papers_page.write(options, rows, measured, settings)
    progress(f"{len(rows)} rows in {options.out}/papers.md ({settings['seconds']} s)")


if __name__ == "__main__":
    main()
