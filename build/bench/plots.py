# build/bench/plots.py: the PNG counterparts of seed 003's Figs. 6-9 and 11-13 from
# evaluate.py's summary rows, plus the Formica/Linux ratio and the instructions per
# request. Each figure has two panels: the timed series (wall-clock on the guest TSC,
# TCG or KVM) on the left, the -icount series (instructions) on the right.
# Needs matplotlib (build/deps.sh installs it); without it no PNG is written.

FIGURES = {
    "fig06": ("Fig. 6: OS work distributed, readblock, 1 process", "readblock", [1, 2, 3, 4, 5], "bar"),
    "fig07": ("Fig. 7: OS work distributed, readblock", "readblock", [1, 2, 3, 4, 5], "lines"),
    "fig08": ("Fig. 8: OS work distributed, readbyte, 1 process", "readbyte", [1, 2, 3, 4, 5], "bar"),
    "fig09": ("Fig. 9: OS work distributed, readbyte", "readbyte", [1, 2, 3, 4, 5], "lines"),
    "fig11": ("Fig. 11: AP and OS work distributed, readblock", "readblock", [1, 6, 7, 8], "lines"),
    "fig12": ("Fig. 12: AP and OS work distributed, readbyte", "readbyte", [1, 6, 7, 8], "lines"),
}
FIG13_PLACEMENT = 7


def _pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        print("evaluate: matplotlib not installed; no plots (build/deps.sh installs it)")
        return None


def select(rows, **match):
    return [r for r in rows if all(r.get(k) == v for k, v in match.items())]


def value(row, series):
    """ms for the timed series, millions of instructions for icount."""
    return row["elapsed_us_median"] / 1000 if series != "icount" else row["instructions"] / 1e6


def unit(series):
    return "M instructions (icount)" if series == "icount" else f"ms ({series}, median)"


def series_names(rows):
    timed = sorted({r["series"] for r in rows if r["series"] != "icount"})
    return timed + (["icount"] if any(r["series"] == "icount" for r in rows) else [])


def placement_figure(plt, rows, name, title, mode, placements, kind, out):
    names = series_names(rows)
    figure, axes = plt.subplots(1, len(names), figsize=(6.5 * len(names), 4.5), squeeze=False)
    for axis, series in zip(axes[0], names):
        mine = select(rows, system="formica", series=series, mode=mode)
        if kind == "bar":
            found = [(p, select(mine, placement=p, procs=1)) for p in placements]
            found = [(p, r[0]) for p, r in found if r]
            axis.bar([f"#{p}\n{r['smp']} vCPUs" for p, r in found], [value(r, series) for _, r in found],
                     color=["tab:red" if r["oversubscribed"] else "tab:blue" for _, r in found])
        else:
            for p in placements:
                line = sorted(select(mine, placement=p), key=lambda r: r["procs"])
                if line:
                    over = " *" if any(r["oversubscribed"] for r in line) else ""
                    axis.plot([r["procs"] for r in line], [value(r, series) for r in line], marker="o",
                              linestyle="--" if p == 1 and placements[1] >= 6 else "-",
                              label=f"#{p} ({line[0]['smp']} vCPUs){over}")
            axis.set_xscale("log", base=2)
            axis.set_xlabel("benchmark processes")
            axis.legend(fontsize=8)
        axis.set_ylabel(unit(series))
        axis.set_title(f"{series}")
        axis.grid(alpha=0.3)
    figure.suptitle(title + ("   (* / red: more vCPUs than host cores)" if names[0] != "icount" else ""))
    figure.tight_layout()
    path = out / f"{name}.png"
    figure.savefig(path, dpi=90)
    plt.close(figure)
    return path.name


def speedup_rows(rows, series):
    """Fig. 13: time on 1 core / time on N cores, per system and mode and process count.
    Formica: 1core boot vs #7; Linux: 1 vCPU vs the vCPUs #7 had."""
    result = []
    for mode in ("readblock", "readbyte"):
        many = select(rows, system="formica", series=series, placement=FIG13_PLACEMENT, mode=mode)
        for row in many:
            one = select(rows, system="formica", series=series, config="1core", mode=mode, procs=row["procs"])
            if one:
                result.append({"system": "formica", "mode": mode, "procs": row["procs"], "smp": row["smp"],
                               "ratio": one[0]["elapsed_us_median"] / row["elapsed_us_median"]})
            linux_many = select(rows, system="linux", series=series, smp=row["smp"], mode=mode,
                                procs=row["procs"])
            linux_one = select(rows, system="linux", series=series, smp=1, mode=mode, procs=row["procs"])
            if linux_many and linux_one:
                result.append({"system": "linux", "mode": mode, "procs": row["procs"], "smp": row["smp"],
                               "ratio": linux_one[0]["elapsed_us_median"] / linux_many[0]["elapsed_us_median"]})
    return result


def speedup_figure(plt, rows, out):
    names = [name for name in series_names(rows) if name != "icount"]  # icount has no parallel speed-up
    figure, axes = plt.subplots(1, len(names), figsize=(6.5 * len(names), 4.5), squeeze=False)
    for axis, series in zip(axes[0], names):
        ratios = speedup_rows(rows, series)
        for system in ("formica", "linux"):
            for mode in ("readblock", "readbyte"):
                line = sorted(select(ratios, system=system, mode=mode), key=lambda r: r["procs"])
                if line:
                    label = f"{'Formica #7' if system == 'formica' else 'Linux'} ({mode}), {line[0]['smp']} vCPUs"
                    axis.plot([r["procs"] for r in line], [r["ratio"] for r in line], marker="o", label=label,
                              linestyle="-" if system == "formica" else "--")
        axis.axhline(1, color="grey", linewidth=0.8)
        axis.set_xscale("log", base=2)
        axis.set_xlabel("benchmark processes")
        axis.set_ylabel("time on 1 core / time on N cores")
        axis.set_title(series)
        axis.legend(fontsize=8)
        axis.grid(alpha=0.3)
    figure.suptitle("Fig. 13: speed-up ratio, Formica (#7) vs Linux")
    figure.tight_layout()
    path = out / "fig13.png"
    figure.savefig(path, dpi=90)
    plt.close(figure)
    return path.name


def ratio_rows(rows, series):
    """Formica / Linux time per (placement, mode, procs), Linux at the same vCPU count."""
    result = []
    for row in select(rows, system="formica", series=series):
        if row["placement"] is None:
            continue
        # icount counts work, not parallel time: compare with Linux's 1-vCPU icount run.
        linux_smp = 1 if series == "icount" else row["smp"]
        linux = select(rows, system="linux", series=series, smp=linux_smp, mode=row["mode"], procs=row["procs"])
        if linux:
            result.append(dict(row, linux_us=linux[0]["elapsed_us_median"],
                               ratio=row["elapsed_us_median"] / linux[0]["elapsed_us_median"]))
    return result


def ratio_figure(plt, rows, out):
    names = series_names(rows)
    figure, axes = plt.subplots(2, len(names), figsize=(6.5 * len(names), 8), squeeze=False)
    for column, series in enumerate(names):
        ratios = ratio_rows(rows, series)
        for line_index, mode in enumerate(("readblock", "readbyte")):
            axis = axes[line_index][column]
            for placement in range(1, 9):
                line = sorted(select(ratios, placement=placement, mode=mode), key=lambda r: r["procs"])
                if line:
                    axis.plot([r["procs"] for r in line], [r["ratio"] for r in line], marker="o",
                              label=f"#{placement}")
            axis.set_xscale("log", base=2)
            axis.set_yscale("log")
            axis.set_xlabel("benchmark processes")
            axis.set_ylabel("Formica time / Linux time")
            axis.set_title(f"{series}, {mode}")
            axis.legend(fontsize=7, ncol=4)
            axis.grid(alpha=0.3)
    figure.suptitle("Formica / Linux, same QEMU configuration (vCPUs, memory, accelerator)")
    figure.tight_layout()
    path = out / "formica_vs_linux.png"
    figure.savefig(path, dpi=90)
    plt.close(figure)
    return path.name


def per_request_figure(plt, rows, out):
    """icount: instructions per server request (Formica) / system call (Linux), 1 process."""
    mine = [r for r in select(rows, series="icount", procs=1) if r["instructions_per_request"]]
    if not mine:
        return None
    figure, axis = plt.subplots(figsize=(9, 4.5))
    labels, values, colours = [], [], []
    for mode, colour in (("readblock", "tab:blue"), ("readbyte", "tab:orange")):
        for row in sorted(select(mine, mode=mode), key=lambda r: (r["system"], str(r["config"]), r["smp"])):
            labels.append(f"{row['config']} {row['smp']}c\n{mode[4:]}")
            values.append(row["instructions_per_request"])
            colours.append(colour)
    axis.bar(labels, values, color=colours)
    axis.set_ylabel("instructions per request (all vCPUs)")
    axis.set_title("icount, 1 process: instructions per FS request (Formica) or system call (Linux)")
    axis.tick_params(axis="x", labelsize=7)
    figure.tight_layout()
    path = out / "per_request_icount.png"
    figure.savefig(path, dpi=90)
    plt.close(figure)
    return path.name


def draw_all(rows, out):
    """Writes every figure; returns {figure name: PNG file name}."""
    plt = _pyplot()
    if plt is None:
        return {}
    written = {}
    for name, (title, mode, placements, kind) in FIGURES.items():
        written[name] = placement_figure(plt, rows, name, title, mode, placements, kind, out)
    written["fig13"] = speedup_figure(plt, rows, out)
    if any(r["system"] == "linux" for r in rows):
        written["formica_vs_linux"] = ratio_figure(plt, rows, out)
    per_request = per_request_figure(plt, rows, out)
    if per_request:
        written["per_request"] = per_request
    return written
