# build/bench/report.py: the markdown report of evaluate.py (build/out/bench/evaluate.md):
# machine and settings, then for each of seed 003's figures what the paper found, what
# this run shows (computed from the rows) and why they agree or differ, then the
# Formica/Linux ratios, Fig. 13's speed-up ratios and the per-request costs.
import plots

PAPER = {
    "fig06": "1 process, readblock: #1 fastest, then #2/#3/#4, #5 slowest: nothing runs in parallel, and "
             "each request costs 1 (#1), 2 (#2-#4) or 3 (#5) inter-core communications.",
    "fig07": "2+ processes, readblock: #2-#5 beat #1 (requests of different processes overlap); #3 (BLK alone "
             "moved) gains little; at 16 processes #4 >= #5 >= #2; best gain #5, 19.6 ms (35 %).",
    "fig08": "1 process, readbyte: same order as Fig. 6, smaller differences (few requests reach FS).",
    "fig09": "readbyte: distributing OS work helps little (best #4: 2.7 ms, 5 %), as buffered blocks need no request.",
    "fig11": "AP and OS work distributed, readblock: #7 >= #8 >= #6, all better than OS-only forms; #7 cuts "
             "46.1 ms (79 %) against #1. #6 suffers because FS and BLK share a core at equal priority.",
    "fig12": "readbyte: the same order; AP distribution helps more (AP work dominates): #7 cuts 26.1 ms (94 %).",
    "fig13": "Speed-up (1 core / 16 cores): AnT readbyte highest for 2+ processes, because buffering leaves "
             "few serialised FS/BLK requests.",
}

WHY = {
    "fig06": "Per request Formica makes 0 (#1), 2 (#2-#4) or 3 (#5) inter-core hops, each one message and one "
             "IPI to a waiting core (docs/ica.md). The icount panel is the paper's experiment: #1 does "
             "the least work and every hop adds instructions. Under plain TCG every address-space switch "
             "(CR3 write) flushes QEMU's software TLB; with everything on one vCPU (#1) each request switches "
             "AP -> FS -> BLK -> AP on that vCPU, while distributed forms keep each process's address space "
             "loaded on its own vCPU, so TCG can rank #1 last: an emulator artefact (DESIGN.md), not a "
             "property the paper's hardware would show.",
    "fig07": "Overlap needs cores that really run in parallel, and a hop that is cheap next to the work it "
             "lets overlap. Under TCG a cross-core request costs several times a same-core one (see the "
             "measured causes: QEMU delivers an IPI and wakes a halted vCPU slowly), far more than on the "
             "paper's hardware, and this host has 2 cores, so 3-vCPU forms (#5) are partly emulated "
             "parallelism. The paper's 16-process, 16-core end cannot be reproduced here; the per-request "
             "costs below carry over.",
    "fig08": "readbyte buffers each 4 KiB block per process: with a 128 KiB file every process makes only 32 "
             "fetches plus its write-through updates (10 % of references), so placement matters less.",
    "fig09": "With few requests per reference, the time is AP work plus the updates (writebyte goes to FS "
             "every time); OS placement changes little, as in the paper.",
    "fig11": "Priorities on shared cores: in #6, FS, BLK, DK and the pager share C1 at the same (server) "
             "priority, so the FS and BLK stages of different requests queue behind each other on one core, "
             "and an AP process placed on C1 runs only when every server there waits (servers outrank "
             "applications, docs/processes.md): the paper's explanation of #6. #7 gives BLK its own core, "
             "so FS and BLK stages overlap. Spreading AP processes needs more cores than the host has: #6 "
             "runs on 2 vCPUs, #7 on 3, #8 on 4 (two sockets, which QEMU does not make slower to cross, so "
             "#7 against #8 shows no socket effect).",
    "fig12": "readbyte's AP work (copies out of the per-process buffer) dominates, as the requests per "
             "reference show, so spreading AP processes is what helps; the shared-core priorities of #6 "
             "matter less because few requests reach FS. On 2 host cores at most a 2x gain is possible.",
    "fig13": "The paper's N is 16; here N is #7's vCPU count (3, above the host's cores: flagged). Formica's "
             "serialised part is FS+BLK per request, Linux's is the page-cache lookup under a lock-free RCU "
             "path, so Linux should scale with readblock too; readbyte on both scales with AP work.",
}


def fmt_ms(us):
    return f"{us / 1000:.2f}"


def fmt_int(number):
    return f"{number:,.0f}" if number is not None else ""


def observe_bar(rows, mode, series):
    found = []
    for placement in (1, 2, 3, 4, 5):
        row = plots.select(rows, system="formica", series=series, placement=placement, mode=mode, procs=1)
        if row:
            found.append((placement, plots.value(row[0], series)))
    if not found:
        return "no data"
    order = " < ".join(f"#{p} ({v:.2f})" for p, v in sorted(found, key=lambda x: x[1]))
    return f"{plots.unit(series)}, fastest first: {order}"


def observe_lines(rows, mode, placements, series):
    procs = sorted({r["procs"] for r in plots.select(rows, system="formica", series=series, mode=mode)})
    if not procs:
        return "no data"
    top = procs[-1]
    found = []
    for placement in placements:
        row = plots.select(rows, system="formica", series=series, placement=placement, mode=mode, procs=top)
        if row:
            found.append((placement, plots.value(row[0], series)))
    base = dict(found).get(1)
    order = " < ".join(f"#{p} ({v:.2f})" for p, v in sorted(found, key=lambda x: x[1]))
    text = f"{plots.unit(series)} at {top} processes, fastest first: {order}"
    if base:
        best_placement, best = min(found, key=lambda x: x[1])
        if best_placement != 1:
            text += f"; best #{best_placement} saves {base - best:.2f} ({100 * (base - best) / base:.0f} %) against #1"
    return text


def figure_values(rows, series, mode, placements, procs):
    """placement -> the figure's value (ms or M instructions) at `procs` processes."""
    found = {}
    for placement in placements:
        row = plots.select(rows, system="formica", series=series, placement=placement, mode=mode, procs=procs)
        if row:
            found[placement] = plots.value(row[0], series)
    return found


def largest_procs(rows, series, mode):
    procs = {r["procs"] for r in plots.select(rows, system="formica", series=series, mode=mode)}
    return max(procs) if procs else None


def verdict_order(values):
    """Figs. 6 and 8: does #1 come first and #5 last, as in the paper?"""
    if 1 not in values or 5 not in values:
        return "no data"
    fastest, slowest = min(values, key=values.get), max(values, key=values.get)
    if fastest == 1 and slowest == 5:
        return "**agrees**: #1 fastest, #5 slowest"
    return f"**differs**: #{fastest} fastest, #{slowest} slowest (paper: #1 and #5)"


def verdict_distribution(values, others, small_gain):
    """Figs. 7, 9, 11, 12: which distributed placements beat #1, and by how much.
    small_gain: the paper found distribution helps little (readbyte, Fig. 9)."""
    if 1 not in values or not any(p in values for p in others):
        return "no data"
    beat = [p for p in others if p in values and values[p] < values[1]]
    best = min((p for p in others if p in values), key=values.get)
    gain = 100 * (values[1] - values[best]) / values[1]
    facts = (f"{len(beat)} of {sum(p in values for p in others)} distributed placements beat #1 "
             f"(best #{best}, {gain:+.0f} %)")
    if small_gain:
        agrees = gain < 15
        return f"**{'agrees' if agrees else 'differs'}**: {facts}; the paper saw at most 5 %"
    agrees = len(beat) * 2 >= sum(p in values for p in others) and gain > 0
    return f"**{'agrees' if agrees else 'differs'}**: {facts}"


def verdict(name, rows, series):
    """One line: whether this series reproduces the paper's finding for figure `name`."""
    _, mode, placements, kind = plots.FIGURES[name]
    procs = 1 if kind == "bar" else largest_procs(rows, series, mode)
    if procs is None:
        return "no data"
    values = figure_values(rows, series, mode, placements, procs)
    if kind == "bar":
        return verdict_order(values)
    others = [p for p in placements if p != 1]
    if series == "icount":
        return f"at {procs} processes, " + extra_work(values, others)
    return f"at {procs} processes, " + verdict_distribution(values, others, small_gain=name == "fig09")


def extra_work(values, others):
    """icount adds up every vCPU's instructions, so it shows no overlap, only the work the
    hops add: the distributed placements' instructions against #1's."""
    if 1 not in values or not any(p in values for p in others):
        return "no data"
    extra = [100 * (values[p] - values[1]) / values[1] for p in others if p in values]
    return (f"not a speed-up measure (icount counts the work of all vCPUs): the distributed placements "
            f"execute {min(extra):+.0f} to {max(extra):+.0f} % instructions against #1")


def requests_per_reference(rows, mode):
    """Server requests per Bonnie reference (icount series, else any): readbyte's buffering."""
    found = [r for r in plots.select(rows, system="formica", mode=mode) if r["requests"]]
    if not found:
        return None
    row = max(found, key=lambda r: (r["series"] == "icount", r["procs"]))
    return row["requests"] / (row["procs"] * row["refs"])


def hops_and_ipis(ipcbench):
    """From ipcbench: placement -> IPIs per readblock-shaped request (fs_blk_direct)."""
    if not ipcbench:
        return {}
    return {r["placement"]: r["ipis_per_request"] for r in ipcbench["results"]
            if r["case"] == "fs_blk_direct" and r["mode"] != "icount"}


def hop_cycles(ipcbench):
    """From ipcbench (timed): cycles of a null request on one core and across cores."""
    if not ipcbench:
        return None
    found = {r["placement"]: r["cycles_median"] for r in ipcbench["results"]
             if r["case"] == "null_sync" and r["mode"] != "icount"}
    if "same-core" in found and "cross-core" in found:
        return found["same-core"], found["cross-core"]
    return None


def instructions_per_request(rows, mode, placements):
    found = {}
    for placement in placements:
        row = plots.select(rows, system="formica", series="icount", placement=placement, mode=mode, procs=1)
        if row and row[0]["instructions_per_request"]:
            found[placement] = row[0]["instructions_per_request"]
    return found


def measured_why(name, rows, ipcbench):
    """The measured facts behind the figure: IPIs, instructions and requests per reference."""
    _, mode, placements, _ = plots.FIGURES[name]
    facts = []
    ipis = hops_and_ipis(ipcbench)
    shown = [f"#{p} {ipis[f'#{p}']:.1f}" for p in placements if f"#{p}" in ipis]
    if shown:
        facts.append("IPIs per readblock-shaped request (ipcbench): " + ", ".join(shown))
    cycles = hop_cycles(ipcbench)
    if cycles:
        facts.append(f"a null request costs {fmt_int(cycles[0])} cycles on one core and {fmt_int(cycles[1])} "
                     f"across cores ({cycles[1] / cycles[0]:.1f}x; TCG's IPI and wake-up latency)")
    per_request = instructions_per_request(rows, mode, placements)
    if per_request:
        facts.append(f"instructions per {mode} request, 1 process (icount): " +
                     ", ".join(f"#{p} {fmt_int(v)}" for p, v in per_request.items()))
    ratio = requests_per_reference(rows, mode)
    if ratio is not None:
        facts.append(f"server requests per reference ({mode}): {ratio:.2f}")
    return "; ".join(facts) if facts else "no measurements"


def request_breakdown(icount_rows):
    """Where one request's instructions go, from Bonnie's server_cycles in each icount run:
    FS, BLK, DK and the rest (the AP's own work, its library and the kernel in its name)."""
    found = [r for r in icount_rows if r["system"] == "formica" and r.get("server_instructions_per_request")
             and r["procs"] == 1]
    if not found:
        return []
    lines = ["Where a Formica request's instructions go (icount, 1 process; Bonnie reads FS, BLK and DK's "
             "cycles from the process list just before and after its timed part (`server_cycles`), and "
             "under `-icount` a cycle is an instruction; \"rest\" is the application, its library and "
             "the kernel work done in its name):", ""]
    body = []
    for r in sorted(found, key=lambda r: (r["mode"], str(r["config"]))):
        share = r["server_instructions_per_request"]
        servers = sum(share.values())
        body.append([r["config"], r["mode"], fmt_int(r["instructions_per_request"]), fmt_int(share.get("fs")),
                     fmt_int(share.get("blk")), fmt_int(share.get("dk")),
                     fmt_int(r["instructions_per_request"] - servers)])
    return lines + table(["config", "mode", "total", "FS", "BLK", "DK", "rest"], body) + [""]


def table(header, lines):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in line) + " |" for line in lines]
    return out


def plain_cpu_section(rows, plain_cpu):
    """Why the icount series runs -cpu max,-erms,-fsrm, with the plain -cpu max figures beside."""
    lines = ["## Why every icount run uses `-cpu max,-erms,-fsrm`", "",
             "With ERMS and FSRM (plain `-cpu max`) QEMU counts a `rep movsb` as one instruction per "
             "byte: Linux copies with `rep movsb`, so one 4 KiB `pread` would count some 4,096 "
             "instructions where hardware spends about a hundred cycles. Formica copies with `rep movsq` "
             "and AVX registers and counts about the same under both models. The icount series and every "
             "ratio in this report use `-cpu max,-erms,-fsrm`; the plain `-cpu max` figure, 1 process "
             "(Formica at #1), is kept beside it:", ""]
    if not plain_cpu:
        return lines + ["(no plain `-cpu max` boots in this run)", ""]
    found = []
    for plain in sorted(plain_cpu, key=lambda r: (r["system"], r["mode"])):
        config = {"system": plain["system"], "series": "icount", "mode": plain["mode"], "procs": plain["procs"]}
        if plain["system"] == "formica":
            config["config"] = plain["config"]
        fair = plots.select(rows, **config)
        fair_value = fair[0]["instructions"] if fair else None
        found.append([plain["system"], plain["mode"], plain["procs"],
                      f"{fair_value / 1e6:.2f} M" if fair_value else "–", f"{plain['instructions'] / 1e6:.2f} M",
                      f"{plain['instructions'] / fair_value:.2f}" if fair_value else "–"])
    return lines + table(["system", "mode", "processes", "`-cpu max,-erms,-fsrm`", "plain `-cpu max`",
                          "plain / fair"], found) + [""]


def render(rows, machine, settings, ipcbench, figures, plain_cpu=()):
    timed = sorted({r["series"] for r in rows if r["series"] != "icount"})
    series_list = timed + (["icount"] if any(r["series"] == "icount" for r in rows) else [])
    over = sorted({r["smp"] for r in rows if r["oversubscribed"]})
    lines = ["# Bonnie evaluation: Formica placements #1-#8 and Linux (seed 003 §3)", "",
             f"Command: `{settings['command']}` ({'quick' if settings['quick'] else 'full'} matrix, "
             f"{settings['seconds'] / 60:.1f} min).", "",
             "## Machine and settings", ""]
    lines += table(["item", "value"], [[k, v] for k, v in machine.items()])
    lines += ["", f"Bonnie: {settings['file_bytes'] // 1024} KiB file, {settings['refs']} references per process, "
              f"{settings['update_pct']} % updates, 4 KiB chunks; processes {settings['procs']} (icount "
              f"{settings['icount_procs']}); placements {settings['placements']}; timed series: median of "
              f"{settings['runs']} boots (Formica) or of {settings['runs']} runs in one boot (Linux); icount: one run.",
              "",
              "**Cores.** Timed runs use the host's "
              f"{machine['host_cores']} cores as vCPUs, or more when a placement needs more cores "
              f"(#5/#7: 3, #8: 4 with two sockets); those runs ({', '.join(str(s) for s in over) or 'none'} "
              "vCPUs) have more vCPUs than host cores, so QEMU's vCPU threads are descheduled at random "
              "and their times scatter: they are flagged (*, red) in the plots and the tables. A 2-core "
              "machine cannot show the paper's 16-core scaling; the per-request costs (instructions under "
              "`-icount`, inter-core hops and IPIs) are what carries over. Under `-icount shift=0` guest time "
              "counts the instructions of all vCPUs together (one host thread runs them in turn), so icount "
              "numbers measure work, not parallel speed-up.", ""]
    sections = [("fig06", "bar", "readblock", None), ("fig07", "lines", "readblock", [1, 2, 3, 4, 5]),
                ("fig08", "bar", "readbyte", None), ("fig09", "lines", "readbyte", [1, 2, 3, 4, 5]),
                ("fig11", "lines", "readblock", [1, 6, 7, 8]), ("fig12", "lines", "readbyte", [1, 6, 7, 8])]
    lines += ["## Figures", ""]
    for name, kind, mode, placements in sections:
        lines += [f"### {plots.FIGURES[name][0]}", ""]
        if name in figures:
            lines += [f"![{name}]({figures[name]})", ""]
        lines += [f"- **Paper:** {PAPER[name]}"]
        for series in series_list:
            observed = (observe_bar(rows, mode, series) if kind == "bar"
                        else observe_lines(rows, mode, placements, series))
            lines += [f"- **Formica, {series}:** {observed}", f"  - against the paper: {verdict(name, rows, series)}"]
        lines += [f"- **Measured causes:** {measured_why(name, rows, ipcbench)}", f"- **Why:** {WHY[name]}", ""]
    lines += ["### Fig. 13: speed-up ratio (time on 1 core / time on N cores)", ""]
    if "fig13" in figures:
        lines += [f"![fig13]({figures['fig13']})", ""]
    lines += [f"- **Paper:** {PAPER['fig13']}", f"- **Why:** {WHY['fig13']}", ""]
    for series in timed:
        ratios = plots.speedup_rows(rows, series)
        if ratios:
            lines += [f"{series}:", ""]
            lines += table(["system", "mode", "processes", "N (vCPUs)", "1 core / N cores"],
                           [[r["system"], r["mode"], r["procs"], r["smp"], f"{r['ratio']:.2f}"]
                            for r in sorted(ratios, key=lambda r: (r["system"], r["mode"], r["procs"]))])
            lines += [""]
    lines += ["## Formica / Linux", "",
              "Same QEMU machine, vCPUs, memory and accelerator (icount: Linux on 1 vCPU, as icount counts work, "
              "not parallel time); Linux 6.1 (Debian) with Bonnie's file on ext2 "
              "on virtio-blk, in the page cache (Bonnie reads it once before timing). Ratio > 1: Formica slower.",
              ""]
    if any(r["system"] == "linux" for r in rows):
        if "formica_vs_linux" in figures:
            lines += [f"![formica_vs_linux]({figures['formica_vs_linux']})", ""]
        for series in series_list:
            ratios = plots.ratio_rows(rows, series)
            lines += [f"{series}:", ""]
            lines += table(["placement", "vCPUs", "mode", "processes", "Formica ms", "Linux ms", "Formica/Linux"],
                           [[f"#{r['placement']}", f"{r['smp']}{' *' if r['oversubscribed'] else ''}", r["mode"],
                             r["procs"], fmt_ms(r["elapsed_us_median"]), fmt_ms(r["linux_us"]), f"{r['ratio']:.1f}"]
                            for r in sorted(ratios, key=lambda r: (r["mode"], r["placement"], r["procs"]))])
            lines += [""]
    else:
        lines += ["(no Linux runs: --no-linux)", ""]
    lines += plain_cpu_section(rows, plain_cpu)
    lines += ["## Per-request costs (what carries over to real hardware)", "",
              "From the icount series: instructions of one Bonnie run (all vCPUs) divided by its requests "
              "(Formica: FS requests = readblocks or readbyte fetches, plus updates; Linux: the same count "
              "of pread/pwrite system calls).", ""]
    icount_rows = [r for r in rows if r["series"] == "icount"]
    if "per_request" in figures:
        lines += [f"![per_request]({figures['per_request']})", ""]
    lines += table(["system", "config", "vCPUs", "mode", "processes", "instructions", "requests",
                    "instructions/request"],
                   [[r["system"], r["config"], r["smp"], r["mode"], r["procs"], fmt_int(r["instructions"]),
                     fmt_int(r["requests"]), fmt_int(r["instructions_per_request"])]
                    for r in sorted(icount_rows, key=lambda r: (r["mode"], r["system"], str(r["config"]),
                                                                r["procs"]))])
    lines += [""]
    lines += request_breakdown(icount_rows)
    if ipcbench:
        lines += ["From ipcbench (`make bench`, build/out/bench/ipcbench.json): one readblock-shaped request "
                  "(AP -> FS sync, FS -> BLK forward, direct return) per placement, and other ICA cases.", ""]
        lines += table(["mode", "case", "placement", "bytes", "cycles (median)", "IPIs/request", "instructions"],
                       [[r["mode"], r["case"], r["placement"], r["bytes"], fmt_int(r["cycles_median"]),
                         f"{r['ipis_per_request']:.3f}", fmt_int(r.get("instructions_median"))]
                        for r in ipcbench["results"]])
        lines += [""]
    else:
        lines += ["(ipcbench.json not found: run `make bench` for the per-placement cycles and IPIs per request.)",
                  ""]
    lines += ["## All configurations (medians)", ""]
    lines += table(["system", "series", "config", "vCPUs", "mode", "processes", "runs", "median ms", "min ms",
                    "max ms", "requests", "µs/request"],
                   [[r["system"], r["series"], r["config"], f"{r['smp']}{' *' if r['oversubscribed'] else ''}",
                     r["mode"], r["procs"], r["runs"], fmt_ms(r["elapsed_us_median"]), fmt_ms(r["elapsed_us_min"]),
                     fmt_ms(r["elapsed_us_max"]), fmt_int(r["requests"]), r["per_request_us"]]
                    for r in rows])
    return "\n".join(lines) + "\n"
