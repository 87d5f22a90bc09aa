# build/bench/papers_page.py: the rows (`@json {"kind":"paper",...}`) and the page of `make
# bench-papers` (papers.py): per paper, per figure, a table of the paper's number beside
# Formica's and Linux's, and a plot with the paper's axes (seed 003's through plots.py).
# Writes OUT/papers.md and OUT/papers-*.png, and with --page copies them beside the page.
import os
import shutil
from pathlib import Path

import plots

SEED_TITLES = {
    "000": "Seed 000: a flash-aware swap system (mmap, libflmalloc)",
    "001": "Seed 001: VEMS, NVM in front of block storage (fileio through the NVM tier)",
    "002": "Seed 002: a hybrid DRAM/DCPM memory system reached remotely (a memory node's own work)",
    "003": "Seed 003: the distribution effect of file operations in AnT (Bonnie)",
    "004": "Seed 004: Teramem, remote swapping (memseq, sort)",
}
FINDINGS_003 = {
    "Fig. 6": "1 process: #1 fastest, then #2, #3, #4; #5 slowest",
    "Fig. 7": "2+ processes: #2-#5 faster than #1; #3 about #1; 16+: #4 >= #5 >= #2",
    "Fig. 8": "1 process: #1 fastest, #5 slowest",
    "Fig. 9": "as Fig. 7, smaller gains (readbyte asks the servers less)",
    "Fig. 11": "2+ processes: #7 >= #8 >= #6, all faster than OS-only distribution",
    "Fig. 12": "as Fig. 11, larger gains",
    "Fig. 13": "speed-up 1 -> 16 cores: AnT readbyte highest for 2+ processes, above Linux 3.16",
}
FIGURES_003 = {  # figure: (mode, placements, processes: "one" or "all")
    "Fig. 6": ("readblock", [1, 2, 3, 4, 5], "one"), "Fig. 7": ("readblock", [1, 2, 3, 4, 5], "all"),
    "Fig. 8": ("readbyte", [1, 2, 3, 4, 5], "one"), "Fig. 9": ("readbyte", [1, 2, 3, 4, 5], "all"),
    "Fig. 11": ("readblock", [1, 6, 7, 8, 9], "all"), "Fig. 12": ("readbyte", [1, 6, 7, 8, 9], "all"),
}
PLACEMENT_FIGURES = {"Fig. 6": ("fig06", "bar"), "Fig. 7": ("fig07", "lines"), "Fig. 8": ("fig08", "bar"),
                     "Fig. 9": ("fig09", "lines"), "Fig. 11": ("fig11", "lines"), "Fig. 12": ("fig12", "lines")}


def progress(text):
    print(f"papers: {text}", flush=True)


def row(seed, figure, what, paper, formica, linux, unit, **extra):
    """One row of the page: the contract's fields (docs/evaluation.md), then what else it has."""
    return {"kind": "paper", "seed": seed, "figure": figure, "what": what, "paper": paper,
            "formica": formica, "linux": linux, "unit": unit, **extra}


def rounded(value, digits=2):
    return None if value is None else round(value, digits)


def cell(value):
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:,.3f}".rstrip("0").rstrip(".") if abs(value) < 100 else f"{value:,.0f}"
    return str(value)


def table(rows):
    lines = ["| figure | what | paper | Formica | Linux | unit |", "|---|---|---|---|---|---|"]
    for r in rows:
        formica = cell(r["formica"]) if not r.get("flag") or r["formica"] is not None else f"*{r['flag']}*"
        lines.append(f"| {r['figure']} | {r['what']} | {cell(r['paper'])} | {formica} | {cell(r['linux'])} "
                     f"| {r['unit']} |")
    return lines


def placement_table(rows, series, path):
    """A placement figure as the paper draws it: placements down, processes across."""
    mine = [r for r in rows if r.get("series") == series and r.get("path") == path and "placement" in r
            and "procs" in r]
    procs = sorted({r["procs"] for r in mine})
    lines = ["| placement | " + " | ".join(f"{p} proc." for p in procs) + " |",
             "|---|" + "---|" * len(procs)]
    for placement in sorted({r["placement"] for r in mine}):
        cells = []
        for p in procs:
            found = [r for r in mine if r["placement"] == placement and r["procs"] == p]
            if found and found[0]["formica"] is None and found[0].get("flag"):
                cells.append("n/m")
            else:
                cells.append(cell(found[0]["formica"]) if found else "–")
        lines.append(f"| #{placement} | " + " | ".join(cells) + " |")
    return lines


def pyplot():
    return plots._pyplot()


def draw_003(plt, options, summaries):
    """Figs 6-9, 11, 12 per path through plots.placement_figure; Fig. 13 here."""
    drawn = {}
    for figure, (name, kind) in PLACEMENT_FIGURES.items():
        mode, placements, _ = FIGURES_003[figure]
        for path in ("paper", "formica"):
            mine = [s for s in summaries if s.get("path") == path]
            if not mine:
                continue
            title = f"Seed 003 {figure}: {mode}, {'the paper' if path == 'paper' else 'Formica'}'s path"
            drawn[(figure, path)] = plots.placement_figure(plt, mine, f"papers-003-{name}-{path}", title, mode,
                                                           placements, kind, options.out)
    return drawn


def finished_figure(plt, figure, axis, options, name, title, ylabel, grid):
    """The page's figures' common end: labels, grid, legend, written to OUT/NAME.png; its name."""
    axis.set_ylabel(ylabel)
    axis.set_title(title, fontsize=10)
    axis.grid(alpha=0.3, axis=grid)
    axis.legend(fontsize=8)
    figure.tight_layout()
    path = options.out / f"{name}.png"
    figure.savefig(path, dpi=90)
    plt.close(figure)
    return path.name


def line_figure(plt, options, name, title, xlabel, ylabel, lines, logx=True, logy=False):
    """lines: {label: [(x, y)]}; points whose y is None are left out."""
    figure, axis = plt.subplots(figsize=(6.5, 4.5))
    for label, points in lines.items():
        points = [(x, y) for x, y in points if y is not None]
        if points:
            axis.plot([x for x, _ in points], [y for _, y in points], marker="o", label=label)
    if logx:
        axis.set_xscale("log", base=2)
    if logy:
        axis.set_yscale("log")
    axis.set_xlabel(xlabel)
    return finished_figure(plt, figure, axis, options, name, title, ylabel, "both")


def bar_figure(plt, options, name, title, ylabel, groups, series, logy=False):
    """groups: the x labels; series: {label: [y per group]}, None left out (a gap)."""
    figure, axis = plt.subplots(figsize=(6.5, 4.5))
    width = 0.8 / max(1, len(series))
    for index, (label, values) in enumerate(series.items()):
        xs = [g + index * width for g, v in enumerate(values) if v is not None]
        axis.bar(xs, [v for v in values if v is not None], width, label=label)
    axis.set_xticks([g + width * (len(series) - 1) / 2 for g in range(len(groups))])
    axis.set_xticklabels(groups, fontsize=8)
    if logy:
        axis.set_yscale("log")
        axis.axhline(1, color="black", linewidth=0.8)
    return finished_figure(plt, figure, axis, options, name, title, ylabel, "y")


def draw_000(plt, options, rows):
    """Figs 2-5 as the paper compares them: each method's speed over malloc with swap (its
    bandwidth and FLOPS bars), per workload, Formica beside Linux."""
    mine = [r for r in rows if r["seed"] == "000" and r["unit"] == "s"]
    workloads = [w for w in ("stream", "himeno", "fio") if any(r["workload"] == w for r in mine)]
    series = {}
    for system in ("formica", "linux"):
        for method in ("mmap", "flmalloc", "dram"):
            values = []
            for workload in workloads:
                time = {r["method"]: r[system] for r in mine if r["workload"] == workload}
                swap, this = time.get("malloc-swap"), time.get(method)
                values.append(swap / this if swap and this else None)
            if any(v is not None for v in values):
                series[f"{'Formica' if system == 'formica' else 'Linux'} {method}"] = values
    return {"seed 000": bar_figure(plt, options, "papers-000-speed", "Seed 000 Figs 2-5: speed over malloc "
                                   "with swap", "times faster than malloc-swap (log)", workloads, series, logy=True)}


def draw_002(plt, options, rows):
    """Fig. 5 as the paper draws it: the local program's throughput beside remote traffic, as a
    fraction of alone, per store, by remote_share."""
    mine = [r for r in rows if r["seed"] == "002" and r["figure"] == "Fig. 5"]
    shares = sorted({r["remote_share"] for r in mine})
    series = {f"store in {local.upper()}": [next((r["formica"] for r in mine if r["local"] == local
                                                   and r["remote_share"] == share), None) for share in shares]
              for local in ("dram", "nvm") if any(r["local"] == local for r in mine)}
    return {"seed 002": bar_figure(plt, options, "papers-002-fig5", "Seed 002 Fig. 5: the node's local work "
                                   "beside remote traffic", "fraction of alone",
                                   [f"remote_share {share}" for share in shares], series)}


def points(rows, x, **match):
    return [(r[x], r["formica"]) for r in rows if all(r.get(k) == v for k, v in match.items()) and x in r]


def draw_fig13(plt, options, rows):
    mine = [r for r in rows if r["figure"] == "Fig. 13" and r.get("path")]
    lines = {}
    for mode in ("readblock", "readbyte"):
        for path in ("paper", "formica"):
            lines[f"Formica {mode}, {path}'s path"] = points(mine, "procs", mode=mode, path=path)
        lines[f"Linux {mode}"] = [(r["procs"], r["linux"]) for r in mine if r["mode"] == mode
                                  and r["path"] == "paper"]
    cores = mine[0]["cores"] if mine else "N"
    return line_figure(plt, options, "papers-003-fig13", f"Seed 003 Fig. 13: speed-up 1 -> {cores} vCPUs",
                       "benchmark processes", f"time on 1 core / time on {cores}", lines)


def draw_004(plt, options, rows):
    drawn = {}
    of = {f: [r for r in rows if r["figure"] == f and r["seed"] == "004"] for f in
          ("Fig. 4", "Fig. 5", "Fig. 6", "Fig. 7", "Fig. 8", "Fig. 9")}
    kib = [(b >> 10, y) for b, y in points(of["Fig. 4"], "block_bytes")]
    drawn["Fig. 4"] = line_figure(plt, options, "papers-004-fig4", "Seed 004 Fig. 4: sequential read bandwidth",
                                  "block size (KiB)", "MB/s", {"one memory node": kib})
    drawn["Fig. 5"] = line_figure(plt, options, "papers-004-fig5", "Seed 004 Fig. 5: swap-in time",
                                  "block size (KiB)", "ms",
                                  {"one memory node": [(b >> 10, y) for b, y in points(of["Fig. 5"], "block_bytes")]})
    stride = {}
    for r in of["Fig. 6"]:
        kind = "measured" if r["what"].endswith("measured") else "computed"
        stride.setdefault(f"{r['block_bytes'] >> 10} KiB blocks, {kind}", []).append(
            (r["stride_bytes"] >> 10, r["formica"]))
    drawn["Fig. 6"] = line_figure(plt, options, "papers-004-fig6", "Seed 004 Fig. 6: stride access (normalized)",
                                  "stride (KiB)", "time / (1 MiB blocks, smallest stride)", stride, logy=True)
    seven = {}
    for r in of["Fig. 7"]:
        for label, key in ((": native", "native"), ("FIFO", "fifo"), ("LRU on", "lru")):
            if r["unit"] == "s" and label in r["what"]:
                seven.setdefault(f"Formica {key}", []).append((r["ratio"], r["formica"]))
        if r["unit"] == "s" and r["linux"] is not None:
            name = "Linux native" if ": native" in r["what"] else "Linux disk swap"
            seven.setdefault(name, []).append((r["ratio"], r["linux"]))
    drawn["Fig. 7"] = line_figure(plt, options, "papers-004-fig7", "Seed 004 Fig. 7: sort -S by local memory",
                                  "working set / local memory", "s", seven, logx=False, logy=True)
    eight = {p: [(r["block_bytes"] >> 10, r["formica"]) for r in of["Fig. 8"] if r.get("policy") == p]
             for p in ("fifo", "lru")}
    drawn["Fig. 8"] = line_figure(plt, options, "papers-004-fig8", "Seed 004 Fig. 8: sort -S at 5.6x by block",
                                  "block size (KiB)", "s", eight)
    nine = {f"{p} {way}": [(r["block_bytes"] >> 10, r["formica"]) for r in of["Fig. 9"]
                           if r.get("policy") == p and r["what"].endswith(f"swapped {way}")]
            for p in ("fifo", "lru") for way in ("in", "out")}
    drawn["Fig. 9"] = line_figure(plt, options, "papers-004-fig9", "Seed 004 Fig. 9: swap volume by block",
                                  "block size (KiB)", "MiB", nine)
    return drawn


def header(settings):
    quick = {"quick": "a QUICK run (`make bench-papers QUICK=1`: seed 004 at smaller sizes, the median of 3 "
                      "boots per timed point)",
             "smoke": "a smoke run (`--smoke`): its numbers mean nothing",
             "full": "a full run (`make bench-papers`)"}[settings["size"]]
    return [
        "# The papers against Formica", "",
        f"Regenerated by `{settings['command']}` at commit {settings['commit']} ({settings['date']}, "
        f"{settings['seconds']} s): {quick}, on a host with {settings['host_cores']} cores shared with other "
        "work. Timed numbers from such a loaded host are smoke numbers only; `-icount` numbers (guest time "
        "counted in executed instructions) are repeatable. Each row is also printed as "
        "`@json {\"kind\":\"paper\",...}` (docs/evaluation.md).", "",
        "The paper's column holds the numbers its text gives (the figures' other points are plots "
        "without numbers: the row then names the paper's finding). \"n/m\": not measurable here, "
        "with why in the row (the same command measures it on a host with enough cores).", "",
        *([f"Measured at: " + ", ".join(f"seed {seed} at {commit}" for seed, commit in
                                         sorted(settings["measured_at"].items())) + " (`--keep`).", ""]
          if len(set(settings.get("measured_at", {}).values())) > 1 else []),
        "Sizes: " + ", ".join(f"{k} {settings[k]}" for k in ("refs", "procs", "records", "memseq_bytes")) + ".",
        ""]


def section_003(rows, drawn):
    lines = [f"## {SEED_TITLES['003']}", "",
             "Two paths: the paper's (`fs_lend_on=off`, docs/boot.md: every readblock goes FS -> BLK, "
             "so BLK's placement matters as in the paper) and Formica's (FS answers a cached readblock "
             "from BLK's block it borrows). Bonnie on a 128 KiB file, 10 % updates. Times: M instructions "
             "under `-icount`, ms under TCG.", ""]
    for figure in PLACEMENT_FIGURES:
        lines += [f"### {figure}", "", f"The paper: {FINDINGS_003[figure]}.", ""]
        for series in ("icount", "tcg"):
            for path in ("paper", "formica"):
                mine = [r for r in rows if r["figure"] == figure and "procs" in r and "placement" in r]
                if not [r for r in mine if r.get("series") == series and r.get("path") == path]:
                    continue
                unit = "M instructions, -icount" if series == "icount" else "ms, TCG"
                lines += [f"{'The paper' if path == 'paper' else 'Formica'}'s path ({unit}):", ""]
                lines += placement_table(mine, series, path) + [""]
        for path in ("paper", "formica"):
            if (figure, path) in drawn:
                lines += [f"![{figure}, {path}'s path]({drawn[(figure, path)]})", ""]
    gains = [r for r in rows if r["seed"] == "003" and r["unit"] == "%"]
    lines += ["### The distribution gains", "",
              "As the paper computes them: (T#1 − T#k) / T#1, the largest over the process counts "
              "(`saved` at `at_procs` in the rows). Under `-icount` QEMU runs the vCPUs in turn and "
              "guest time counts every core's instructions, so work done in parallel adds up instead "
              "of overlapping: those rows give no gain, only the instructions the placement adds "
              "(negative `saved`).", ""]
    lines += ["| figure | what | paper | Formica | series | saved at | ", "|---|---|---|---|---|---|"]
    for r in gains:
        formica = f"*{r['flag']}*" if r.get("flag") and r["formica"] is None else cell(r["formica"])
        saved = f"{cell(r['saved'])} {r['saved_unit']} at {r['at_procs']} proc." if r.get("saved") is not None else "–"
        lines.append(f"| {r['figure']} | {r['what']} | {r['paper']} % | {formica} | {r['series']} | {saved} |")
    lines += ["", "### Fig. 13", "", f"The paper: {FINDINGS_003['Fig. 13']}.", ""]
    lines += table([r for r in rows if r["figure"] == "Fig. 13"]) + [""]
    if "fig13" in drawn:
        lines += [f"![Fig. 13]({drawn['fig13']})", ""]
    return lines


def section_004(rows, drawn):
    lines = [f"## {SEED_TITLES['004']}", "",
             "memseq and sort on one memory node over virtio-net (the paper: 31 servers over Myrinet 10G); "
             "sort is `sort -S` (apps/sort/external.c: GNU sort's external merge, docs/pager.md), its buffer "
             "half the local memory; Linux swaps to a file on the same QEMU's virtio disk (memory.max of a "
             "cgroup). Times under TCG.", ""]
    for figure in ("Fig. 4", "Fig. 5", "Fig. 6", "Fig. 7", "Fig. 8", "Fig. 9"):
        mine = [r for r in rows if r["seed"] == "004" and r["figure"] == figure]
        lines += [f"### {figure}", ""] + table(mine) + [""]
        if figure in drawn:
            lines += [f"![{figure}]({drawn[figure]})", ""]
    return lines


def pick(rows, figure, contains, **match):
    """The first row of `figure` whose `what` contains `contains` and whose fields match."""
    for r in rows:
        if r["figure"] == figure and contains in r["what"] and all(r.get(k) == v for k, v in match.items()):
            return r
    return None


def summary(summaries, **match):
    found = [s for s in summaries if all(s.get(k) == v for k, v in match.items())]
    return found[0] if found else None


def why_003(settings, summaries):
    """Why seed 003's numbers here are not the paper's, with this run's numbers."""
    lines = ["### Why seed 003's numbers differ here", ""]
    cores = settings["host_cores"]
    lines.append(f"- **Host size.** The host has {cores} cores; timed boots use no more vCPUs than that "
                 "(DESIGN.md: oversubscribed vCPUs scatter times), so #5, #7 and #8 (3-4 vCPUs) are not "
                 "measured timed here, and Fig. 13's speed-up is 1 -> "
                 f"{min(cores, 16)} vCPUs, not 1 -> 16 cores. The paper's headline gains (#5, #7) are "
                 "those placements: on this host only their `-icount` rows exist.")
    one = summary(summaries, path="paper", series="icount", placement=1, mode="readblock", procs=1)
    five = summary(summaries, path="paper", series="icount", placement=5, mode="readblock", procs=1)
    if one and five and one.get("instructions_per_request") and five.get("instructions_per_request"):
        lines.append(f"- **-icount adds up the cores.** Under `-icount` the vCPUs run in turn, so "
                     "distribution can only add instructions: on the paper's path Bonnie's run costs "
                     f"{one['instructions_per_request']:,} instructions at #1 and "
                     f"{five['instructions_per_request']:,} at #5 per request (AP, FS and BLK on three cores: the "
                     "cross-core handovers and the waits' polls), 1 process. The paper's gains are time "
                     "saved by overlap, which only a timed run on enough cores shows.")
    formica = summary(summaries, path="formica", series="icount", placement=1, mode="readblock", procs=1)
    if one and formica and formica.get("instructions_per_request") and one.get("instructions_per_request"):
        lines.append(f"- **Formica's path.** With FS lending on BLK's blocks, Bonnie's readblock run costs "
                     f"{formica['instructions_per_request']:,} instructions at #1 against "
                     f"{one['instructions_per_request']:,} on the paper's path per request (1 process): BLK "
                     "leaves a cached readblock's path, and "
                     "with it what BLK's placement could gain or lose (Figs 6-9's #3 against #1).")
    timed = summary(summaries, path="paper", series="tcg", placement=1, mode="readblock", procs=1)
    if timed:
        lines.append(f"- **TCG on a loaded host.** #1, 1 process, readblock took "
                     f"{timed['elapsed_us_min'] / 1000:.1f}-{timed['elapsed_us_max'] / 1000:.1f} ms over "
                     f"{timed['runs']} boots (median {timed['elapsed_us_median'] / 1000:.1f} ms): the spread is "
                     f"the host's load (other QEMUs on its {os.cpu_count()} cores), and TCG charges "
                     "address-space switches and "
                     "cross-vCPU wake-ups far more than hardware (DESIGN.md). Timed rows here are smoke "
                     "numbers; the shapes, not the values, are what compare.")
    return lines + [""]


def why_fig13(rows, settings):
    """A speed-up above the vCPU count: said once, with its largest value."""
    cores = min(settings["host_cores"], 16)
    above = [r for r in rows if r["figure"] == "Fig. 13" and isinstance(r["formica"], float)
             and r["formica"] > cores]
    if not above:
        return []
    top = max(above, key=lambda r: r["formica"])
    return [f"- **Speed-ups above {cores} on {cores} vCPUs** ({top['formica']}x: {top['what']}): on one "
            "vCPU Bonnie's processes and the servers take turns, and under TCG each switch between "
            "address spaces flushes QEMU's software TLB (DESIGN.md); on #6 the servers keep a vCPU of "
            "their own. "
            "Not measured apart here: a reading of the numbers, not a finding.", ""]


def why_004(rows):
    lines = ["### Why seed 004's numbers differ here", ""]
    swap_1m = pick(rows, "Fig. 5", "1M blocks")
    bandwidth_1m = pick(rows, "Fig. 4", "1M blocks, one memory node")
    if swap_1m and swap_1m["formica"] is not None:
        lines.append(f"- **The network.** One memory node over virtio-net in a second TCG QEMU, 32 KiB "
                     f"fragments: a 1 MiB swap-in takes {swap_1m['formica']} ms (the paper: 1.2 ms over "
                     f"Myrinet 10G to 31 servers) and sequential reads reach "
                     f"{cell(bandwidth_1m['formica']) if bandwidth_1m else '–'} MB/s (the paper: 603).")
    lines.append("- **Problem size.** The sorts here have working sets of a few MiB (the paper: 3.3 and "
                 "5.6 GB), so Fig. 7 runs at 64 KiB blocks, not the paper's 1 MiB, which would be most of "
                 "the local memory at these sizes.")
    native = pick(rows, "Fig. 7", ": native", ratio=4)
    lru = pick(rows, "Fig. 7", "LRU on a memory node", ratio=4)
    swap_at = pick(rows, "Fig. 5", f"{(lru or {}).get('block_bytes', 0) >> 10}K blocks")
    if native and lru and native["formica"] and lru["formica"]:
        ratio = lru["formica"] / native["formica"]
        paging = lru["formica"] - native["formica"]
        text = (f"- **sort -S at 4x.** LRU on a memory node took {lru['formica']} s against "
                f"{native['formica']} s native ({ratio:.2f}x; the goal: 1.1x). ")
        if ratio > 1.1:
            text += (f"It pays for paging: {paging:.3f} s more, with {lru.get('swap_in_blocks')} "
                     f"swap-ins and {lru.get('swap_out_blocks')} swap-outs of "
                     f"{lru.get('block_bytes', 0) >> 10} KiB (the input, the runs and the merge's streams "
                     "each go out and come back once), ")
            if lru.get("fetch_wait_us"):
                text += (f"of which the sort waited {lru['fetch_wait_us'] / 1e6:.3f} s for the node's "
                         "answers (the pager's `fetch_wait_us`); the rest is the faults' and evictions' "
                         "handling and the host's load. ")
            if swap_at and swap_at["formica"] and lru.get("swap_in_blocks"):
                estimate = lru["swap_in_blocks"] * swap_at["formica"] / 1000
                text += (f"{lru['swap_in_blocks']} swap-ins at Fig. 5's {swap_at['formica']} ms would be "
                         f"{estimate:.3f} s. Per block swapped in, ")
            per_block = native["formica"] / max(1, lru.get("swap_in_blocks") or 1) * 1000
            text += (f"the native sort does {per_block:.2f} ms of its own work: here paging a block "
                     "costs as much as or more than the work it feeds, where on the paper's hardware a 1 "
                     "MiB swap-in took 1.2 ms against a 600 MB sort of minutes. Medians of "
                     f"{lru.get('runs') or 1} sorts in one boot.")
        contrast = pick(rows, "Fig. 7", "in-memory shape")
        if contrast and contrast["formica"]:
            text += (f" The in-memory shape (sort without -S, its merge passes reading the text at "
                     f"random) runs {contrast['formica']}x its native time at the same ratio.")
        lines.append(text)
    linux = pick(rows, "Fig. 7", "Linux disk swap / LRU", ratio=1.65)
    if linux and linux["linux"] is not None:
        lines.append(f"- **Linux's disk.** The paper's local disk was a SATA disk; Linux's swap file here "
                     f"is on QEMU's virtio disk, a file in the host's page cache, so swapping to it costs "
                     f"about what memory copies cost: Linux disk swap / Formica LRU is {linux['linux']}x at "
                     "1.65x (the paper: 12.5x at 2 GB, over 40x at 1 GB). docs/pager.md's throttled runs "
                     "(`--disk-iops`) show what a disk's seeks do.")
    eights = [r for r in rows if r["figure"] == "Fig. 8" and r.get("policy") and r.get("block_bytes")]
    if eights:
        local = {r["block_bytes"]: r.get("local_limit_bytes") for r in eights if r.get("local_limit_bytes")}
        blocks = ", ".join(f"{b >> 10} KiB: {local[b] // b}" for b in sorted(local))
        lines.append("- **Fig. 8's blocks.** `sort -S` merges 16 runs at once (GNU sort's NMERGE), one "
                     "block of each run's stream resident at a time, so it needs about 18 blocks of local "
                     "memory (the runs, the output, the buffer's pages aside) before the merge stops "
                     f"refetching; local memory holds, in blocks, {blocks}.")
        times = sorted((r["block_bytes"], r["formica"]) for r in eights
                       if r["policy"] == "lru" and r["formica"] is not None)
        if len(times) > 1:
            lines[-1] += (f" LRU took {times[0][1]} s at {times[0][0] >> 10} KiB and {times[-1][1]} s at "
                          f"{times[-1][0] >> 10} KiB; the paper's in-memory sort, with no streams to keep, "
                          "was fastest at 512 KiB.")
    lines.append("- **LRU against FIFO.** `sort -S` reads its input and runs as streams and keeps one "
                 "buffer: FIFO evicts what LRU would, so their volumes are close (Fig. 9's rows), where "
                 "the paper's sort was GNU sort's in-memory merge (-S 64G, no temporary files), whose "
                 "random reads of the text are where LRU's 6.5-19 % of FIFO's volume came from.")
    return lines + [""]


def section_001(rows):
    lines = [f"## {SEED_TITLES['001']}", "",
             "apps/fileio writes a file in one boot and reads it in the next (BLK's DRAM cache cold, the "
             "tier keeping its lines); Linux drops its page cache before each pattern. The paper compared "
             "VEMS with VEMS-block, its own block-interface variant, a RAM disk, dm-cache and the SSD; here "
             "the NVM tier (its hits still lend a DRAM copy of the line: the direct access of VEMS is not "
             "built) against Formica's plain disk path, and Linux's dm-writecache in pmem mode against ext4 "
             "alone, on the same NVDIMM and disk (`make bench-vems`, docs/storage.md). Times under TCG.", ""]
    for figure, title in (("Fig. 4", "reads by file size"), ("Fig. 5", "writes by file size"),
                          ("Fig. 6", "read-ahead and the user buffer"),
                          ("fsync", "random fsynced 4 KiB writes (the issue's goal: >= 5x the plain path "
                                    "on a hard disk, >= 1.5x dm-writecache)")):
        mine = [r for r in rows if r["seed"] == "001" and r["figure"] == figure]
        lines += [f"### {figure}: {title}", ""] + table(mine) + [""]
    return lines


def section_000(rows, drawn):
    mine = [r for r in rows if r["seed"] == "000"]
    if not mine:
        return []
    data, local = mine[0]["data_mib"], mine[0]["local_mib"]
    lines = [f"## {SEED_TITLES['000']}", "",
             f"apps/flashbench's STREAM-, Himeno- and FIO-like workloads over {data} MiB of data with "
             f"{local} MiB local (`make bench-flash`, docs/files.md): malloc with the pager swapping to "
             "the disk, a mapped file on the disk, flmalloc, and all in DRAM, on Formica and on Linux in the "
             "same QEMU (Linux: swap to a file, a cgroup's memory.max as the one local bound). The paper's "
             "ratios are bandwidth and FLOPS; here they are time over time, which is the same ratio for a "
             "fixed amount of work. The paper's machine swapped to PCIe flash; both systems here swap to a "
             "virtio disk under TCG.", ""]
    ratios = [r for r in mine if r["unit"] == "x"]
    times = [r for r in mine if r["unit"] == "s"]
    plot = [f"![seed 000]({drawn['seed 000']})", ""] if "seed 000" in drawn else []
    return lines + table(ratios) + [""] + plot + ["Times:", ""] + table(times) + [""]


def section_002(rows, drawn):
    mine = [r for r in rows if r["seed"] == "002"]
    if not mine:
        return []
    return [f"## {SEED_TITLES['002']}", "",
            "One memory node (one core) runs a CPU-bound local program (`spin`, by `--memnode-cmd`) while "
            "a client machine swaps to it, the node's store in DRAM or in its NVDIMM, and the node's "
            "fair scheduler giving remote service `remote_share` of its core (`make bench-memnode`, "
            "docs/memnode.md). The paper measured memory-bus contention (RDMA needs no CPU on the node); "
            "QEMU models no memory bus, so what shows here is the node's CPU cost of serving, which the "
            "scheduler bounds. Linux has no memory-node counterpart: its column is empty.", ""] \
        + table(mine) + [""] + ([f"![seed 002]({drawn['seed 002']})", ""] if "seed 002" in drawn else [])


def section_unmeasured(measured):
    """A seed this run measured nothing of (papers.py --seeds without --keep): its heading, saying so."""
    lines = []
    for seed, title in SEED_TITLES.items():
        if seed not in measured:
            lines += [f"## {title}", "", f"Not measured in this run: `papers.py --seeds {seed} --keep` adds it.", ""]
    return lines


def write(options, rows, measured, settings):
    """OUT/papers.md and its plots; with options.page, copied there."""
    plt = pyplot()
    drawn_003, drawn_004 = {}, {}
    if plt is not None and "003" in measured:
        drawn_003 = draw_003(plt, options, measured["003"])
        drawn_003["fig13"] = draw_fig13(plt, options, rows)
    if plt is not None and "004" in measured:
        drawn_004 = draw_004(plt, options, rows)
    drawn_other = {}
    if plt is not None and "000" in measured:
        drawn_other.update(draw_000(plt, options, rows))
    if plt is not None and "002" in measured:
        drawn_other.update(draw_002(plt, options, rows))
    text = header(settings)
    if "000" in measured:
        text += section_000(rows, drawn_other)
    if "001" in measured:
        text += section_001(rows)
    if "002" in measured:
        text += section_002(rows, drawn_other)
    if "003" in measured:
        text += section_003(rows, drawn_003) + why_003(settings, measured["003"])[:-1] + why_fig13(rows, settings)
    if "004" in measured:
        text += section_004(rows, drawn_004) + why_004(rows)
    text += section_unmeasured(measured)
    if settings["failed_boots"]:
        text += ["## Boots that failed", ""] + [f"- {b}" for b in settings["failed_boots"]] + [""]
    (options.out / "papers.md").write_text("\n".join(text))
    if options.page:
        page = Path(options.page)
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text("\n".join(text))
        for name in list(drawn_003.values()) + list(drawn_004.values()) + list(drawn_other.values()):
            shutil.copyfile(options.out / name, page.parent / name)
