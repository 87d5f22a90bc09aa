# build/bench/papers_004.py: seed 004's rows of `make bench-papers` (papers.py): memseq on a
# memory node by block size and stride (Figs 4-6), sort -S (GNU sort's external merge,
# apps/sort/external.c) by local memory against Linux swapping to disk (Fig. 7), and by block
# size under FIFO and LRU with its swap volumes (Figs 8, 9). Boots through pager_bench.py and
# pager_vs_linux.py.
import statistics
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pager_bench
import pager_vs_linux
from papers_page import progress, rounded, row

M = 1 << 20
SORT_BLOCK = "64K"  # Fig. 7's block here (the paper's 1 MiB is most of local memory at these sizes)

# Seed 004's numbers (§5.2, §5.3): figure -> what -> (number, unit).
PAPER_004 = {
    "seq_1m": 603, "disk": 58.9, "disk_ratio": 10.2, "swap_in_1m_ms": 1.2,
    "stride_4k": {"32K": 4.2, "128K": 1.8, "1M": 1.0},
    "fig7_native": 1.10, "fig7_linux": {1.65: 12.5, 3.3: 40}, "fig7_lru_fifo": {1.65: 0.967, 3.3: 0.972},
    "fig8_lru_fifo": "0.59-0.73", "fig9_volume": "0.065-0.19", "fig9_out_in": "0.65-0.81",
}



# ---- the boots -----------------------------------------------------------------------------------


def node_boot(commands, options, scratch):
    return pager_bench.boot(commands, pager_bench.backend_flags("node", scratch), options.timeout)


def memseq_results(options, scratch):
    """memseq on one memory node per block size: sequential (Figs 4, 5) and each stride (Fig. 6);
    and on the disk backend at 1 MiB (Fig. 4's local disk)."""
    results = []
    for block in sorted(set(options.blocks) | set(options.stride_blocks), key=pager_vs_linux.size_bytes):
        limit = max(M, 4 * pager_vs_linux.size_bytes(block))  # the pager's least: 4 blocks
        size = max(pager_vs_linux.size_bytes(options.memseq_bytes), 4 * limit)
        strides = options.strides if block in options.stride_blocks else [options.strides[0]]
        commands = [f"run memseq -s {size} -l {limit} -b {block} --backend node --stride {s}"
                    for s in strides]
        results += [dict(r, backend="node") for r in node_boot(commands, options, scratch)
                    if r.get("kind") == "memseq"]
    size = max(pager_vs_linux.size_bytes(options.memseq_bytes), 16 * M)
    command = f"run memseq -s {size} -l {4 * M} -b 1M --backend disk"
    results += [r for r in pager_bench.boot([command], pager_bench.backend_flags("disk", scratch),
                                            options.timeout) if r.get("kind") == "memseq"]
    return results


def external_sizes(options, ratio, block):
    """sort -S's working set for a ratio: the input and two areas (3 x the text) and a buffer of
    half the local memory; (local limit, buffer) in bytes."""
    text = pager_vs_linux.working_set_bytes(options.records, 1) - 2 * pager_vs_linux.LINE_BYTES * options.records
    working_set = 3 * text / (1 - 1 / (2 * ratio))
    local = pager_vs_linux.local_bytes(int(working_set), ratio, block)
    return int(local), int(local) // 2 // 4096 * 4096


def sorts_with_volumes(jsons):
    """A boot's sort lines, each with its pager line's bytes in and out (printed just before)."""
    rows, pager = [], None
    for result in jsons:
        if result.get("kind") == "pager":
            pager = result
        elif result.get("kind") == "sort":
            limited = result["backend"] != "none"
            rows.append(dict(result, bytes_in=pager["bytes_in"] if limited and pager else 0,
                             bytes_out=pager["bytes_out"] if limited and pager else 0,
                             fetch_wait_us=pager.get("fetch_wait_us") if limited and pager else 0))
            pager = None
    return rows


def sort_command(options, local, buffer, policy, block, backend="node"):
    return (f"run sort -n {options.records} -S {buffer} -l {local} -b {block} -P {policy} "
            f"--backend {backend}")


def fig7_results(options, scratch):
    """Fig. 7: sort -S at each ratio, native (no pager), FIFO and LRU on a memory node, each
    --runs times in one boot (the rows take medians); the in-memory shape at 4x for contrast."""
    block = pager_vs_linux.size_bytes(SORT_BLOCK)
    commands = []
    for ratio in options.ratios:
        local, buffer = external_sizes(options, ratio, block)
        commands.append(sort_command(options, 0, buffer, "lru", SORT_BLOCK, "none"))
        commands += [sort_command(options, local, buffer, policy, SORT_BLOCK) for policy in ("fifo", "lru")]
    commands = commands * options.runs
    results = [dict(r, ratio=ratio_of(r, options)) for r in sorts_with_volumes(node_boot(commands, options, scratch))]
    shape = pager_vs_linux.local_bytes(pager_vs_linux.working_set_bytes(options.records, 1), 4, 4096)
    contrast = [f"run sort -n {options.records} -l 0 --backend none",
                f"run sort -n {options.records} -l {shape} -b 4K -P lru --backend node"]
    results += [dict(r, ratio=4, shape="in-memory") for r in sorts_with_volumes(node_boot(contrast, options, scratch))]
    return results


def ratio_of(result, options):
    """The ratio a sort line ran at, from its buffer (each ratio has its own)."""
    block = pager_vs_linux.size_bytes(SORT_BLOCK)
    for ratio in options.ratios:
        if external_sizes(options, ratio, block)[1] == result["buffer_bytes"]:
            return ratio
    return None


def linux_sorts(options):
    """Fig. 7's Linux: the same sort -S in a cgroup at each ratio's limit, swapping to a file on
    the virtio disk (pager_vs_linux.linux_boot); {ratio: row}, with the unlimited time under 0."""
    found = {}
    block = pager_vs_linux.size_bytes(SORT_BLOCK)
    for ratio in options.ratios:
        local, buffer = external_sizes(options, ratio, block)
        linux_options = SimpleNamespace(records=options.records, seed=1, sort_extra=f"-S {buffer}", disk_iops=0)
        log = options.out / "logs" / f"papers-linux-sort-{ratio}.log"
        rows, error = pager_vs_linux.linux_boot("disk", [local], linux_options, "tcg", False, log,
                                                options.timeout)
        found[ratio] = {"limited": rows.get(local), "native": rows.get(0), "error": error}
    return found


def fig8_results(options, scratch):
    """Figs 8 and 9: sort -S at the paper's 5.6x (5.6 GB on 1 GB) per block size, FIFO and LRU."""
    results = []
    for block in options.fig8_blocks:
        local, buffer = external_sizes(options, 5.6, pager_vs_linux.size_bytes(block))
        commands = [sort_command(options, local, buffer, policy, block) for policy in ("fifo", "lru")]
        results += sorts_with_volumes(node_boot(commands, options, scratch))
    return results


def measure(options):
    with tempfile.TemporaryDirectory() as directory:
        scratch = Path(directory)
        progress("seed 004: memseq (Figs 4-6)")
        memseq = memseq_results(options, scratch)
        progress("seed 004: sort by local memory (Fig. 7)")
        fig7 = fig7_results(options, scratch)
        progress("seed 004: sort by block size (Figs 8, 9)")
        fig8 = fig8_results(options, scratch)
    linux = {}
    if not options.no_linux:
        progress("seed 004: Linux's sort with disk swap (Fig. 7)")
        linux = linux_sorts(options)
    return {"memseq": memseq, "fig7": fig7, "fig8": fig8, "linux": linux}




# ---- the rows -------------------------------------------------------------------------------


def block_name(size):
    return f"{size >> 20}M" if size >= M and size % M == 0 else f"{size >> 10}K"


def sequential(memseq, block):
    """The median bandwidth and swap-in time of memseq's sequential reads at `block` on the node."""
    found = [r for r in memseq if r.get("mode") == "sequential" and r["backend"] == "node"
             and r["block_bytes"] == block]
    if not found:
        return None, None
    return (statistics.median(r["mb_per_s"] for r in found),
            statistics.median(r["swap_in_us"] for r in found) / 1000)


def stride_time(memseq, block, stride):
    """µs per MiB of buffer read at this stride (each block size reads its own buffer size)."""
    found = [r for r in memseq if r.get("mode") == "stride" and r["block_bytes"] == block
             and r["stride_bytes"] == stride]
    return found[0]["elapsed_us"] / (found[0]["bytes"] / M) if found else None


def rows_4_5(options, memseq):
    rows = []
    for name in options.blocks:
        block = pager_vs_linux.size_bytes(name)
        bandwidth, swap_in = sequential(memseq, block)
        rows.append(row("004", "Fig. 4", f"sequential read bandwidth, {name} blocks, one memory node",
                        PAPER_004["seq_1m"] if block == M else None, bandwidth, None, "MB/s",
                        block_bytes=block))
        rows.append(row("004", "Fig. 5", f"swap-in time as the program sees it, {name} blocks",
                        PAPER_004["swap_in_1m_ms"] if block == M else None, rounded(swap_in, 3), None, "ms",
                        block_bytes=block))
    disk = [r for r in memseq if r["backend"] == "disk" and r.get("mode") == "sequential"]
    disk_bandwidth = disk[0]["mb_per_s"] if disk else None
    rows.append(row("004", "Fig. 4", "local disk, sequential read (Formica: the pager's disk backend, 1M)",
                    PAPER_004["disk"], disk_bandwidth, None, "MB/s"))
    node = sequential(memseq, M)[0]
    rows.append(row("004", "Fig. 4", "1M blocks on a memory node / the local disk", PAPER_004["disk_ratio"],
                    rounded(node / disk_bandwidth) if node and disk_bandwidth else None, None, "x"))
    return rows


def rows_6(options, memseq):
    """Fig. 6: stride access, normalized to 1 MiB blocks at a 4 KiB stride; measured (memseq
    --stride) and computed from Fig. 5 as the paper does (blocks touched x swap-in time)."""
    rows = []
    size = 64 * M  # the buffer the paper's computation assumes (any size: it cancels out)
    first = pager_vs_linux.size_bytes(options.strides[0])
    base_measured = stride_time(memseq, M, first)
    base_swap_in = sequential(memseq, M)[1]
    for name in options.stride_blocks:
        block = pager_vs_linux.size_bytes(name)
        swap_in = sequential(memseq, block)[1]
        for stride_name in options.strides:
            stride = pager_vs_linux.size_bytes(stride_name)
            measured = stride_time(memseq, block, stride)
            computed = (size // max(stride, block)) * swap_in if swap_in else None
            base = (size // max(first, M)) * base_swap_in if base_swap_in else None
            paper = PAPER_004["stride_4k"].get(name) if stride == first == 4096 else None
            rows.append(row("004", "Fig. 6", f"{name} blocks, {stride_name} stride: time / (1M blocks, "
                            f"{options.strides[0]} stride), measured", paper,
                            rounded(measured / base_measured) if measured and base_measured else None,
                            None, "x", block_bytes=block, stride_bytes=stride))
            rows.append(row("004", "Fig. 6", f"{name} blocks, {stride_name} stride: the same computed from "
                            "Fig. 5 as the paper does", paper,
                            rounded(computed / base) if computed and base else None, None, "x",
                            block_bytes=block, stride_bytes=stride))
    return rows


def sort_seconds(result):
    return result["elapsed_us"] / 1e6 if result and result.get("verified") else None


def median_line(lines):
    """The verified sort line of median time among repeats (None when none verified)."""
    verified = sorted((x for x in lines if x.get("verified")), key=lambda x: x["elapsed_us"])
    return verified[len(verified) // 2] if verified else None


def ratio(numerator, denominator):
    return rounded(numerator / denominator) if numerator and denominator else None


def rows_7(options, fig7, linux):
    rows = []
    for r in options.ratios:
        mine = [x for x in fig7 if x.get("ratio") == r and x.get("shape") != "in-memory"]
        native = sort_seconds(median_line([x for x in mine if x["backend"] == "none"]))
        fifo = sort_seconds(median_line([x for x in mine if x["backend"] == "node" and x["policy"] == "fifo"]))
        lru_line = median_line([x for x in mine if x["backend"] == "node" and x["policy"] == "lru"])
        lru = sort_seconds(lru_line)
        theirs = linux.get(r) or linux.get(str(r)) or {}  # str: the keys papers.json gives back
        linux_native, linux_swap = sort_seconds(theirs.get("native")), sort_seconds(theirs.get("limited"))
        at = f"working set {r}x local memory"
        rows += [row("004", "Fig. 7", f"sort -S, {at}: native (no pager)", None, rounded(native, 3),
                     rounded(linux_native, 3), "s", ratio=r),
                 row("004", "Fig. 7", f"sort -S, {at}: FIFO on a memory node / Linux disk swap", None,
                     rounded(fifo, 3), rounded(linux_swap, 3), "s", ratio=r),
                 row("004", "Fig. 7", f"sort -S, {at}: LRU on a memory node", None, rounded(lru, 3), None, "s",
                     ratio=r, swap_in_blocks=lru_line["swap_in_blocks"] if lru_line else None,
                     swap_out_blocks=lru_line["swap_out_blocks"] if lru_line else None,
                     fetch_wait_us=lru_line.get("fetch_wait_us") if lru_line else None,
                     runs=len([x for x in mine if x["backend"] == "node" and x["policy"] == "lru"]),
                     block_bytes=lru_line["block_bytes"] if lru_line else None),
                 row("004", "Fig. 7", f"sort -S, {at}: LRU / native (paper: at most, at 2 GB and 1 GB)",
                     PAPER_004["fig7_native"] if r in (1.65, 3.3) else None, ratio(lru, native),
                     ratio(linux_swap, linux_native), "x", ratio=r),
                 row("004", "Fig. 7", f"sort -S, {at}: Linux disk swap / LRU (paper: Linux / Teramem LRU)",
                     PAPER_004["fig7_linux"].get(r), None, ratio(linux_swap, lru), "x", ratio=r,
                     flag=theirs.get("error")),
                 row("004", "Fig. 7", f"sort -S, {at}: LRU / FIFO", PAPER_004["fig7_lru_fifo"].get(r),
                     ratio(lru, fifo), None, "x", ratio=r)]
    contrast = [x for x in fig7 if x.get("shape") == "in-memory"]
    native = sort_seconds(next((x for x in contrast if x["backend"] == "none"), None))
    lru = sort_seconds(next((x for x in contrast if x["backend"] == "node"), None))
    rows.append(row("004", "Fig. 7", "the in-memory shape (sort without -S, 4K blocks) at 4x: LRU / native",
                    None, ratio(lru, native), None, "x", ratio=4, shape="in-memory"))
    return rows


def rows_8_9(options, fig8):
    rows = []
    for name in options.fig8_blocks:
        block = pager_vs_linux.size_bytes(name)
        mine = {x["policy"]: x for x in fig8 if x["block_bytes"] == block}
        if not mine:
            rows.append(row("004", "Fig. 8", f"sort -S at 5.6x, {name} blocks", None, None, None, "s",
                            block_bytes=block, flag="no result: its boot failed or was stopped "
                                                    "(\"Boots that failed\")"))
            continue
        fifo, lru = sort_seconds(mine.get("fifo")), sort_seconds(mine.get("lru"))
        local = next(iter(mine.values()))["local_limit_bytes"]
        rows += [row("004", "Fig. 8", f"sort -S at 5.6x, {name} blocks, {policy}", None, rounded(value, 3),
                     None, "s", block_bytes=block, policy=policy, local_limit_bytes=local)
                 for policy, value in (("fifo", fifo), ("lru", lru))]
        rows.append(row("004", "Fig. 8", f"sort -S at 5.6x, {name} blocks: LRU / FIFO time",
                        PAPER_004["fig8_lru_fifo"], ratio(lru, fifo), None, "x", block_bytes=block))
        for policy, x in sorted(mine.items()):
            rows += [row("004", "Fig. 9", f"{name} blocks, {policy}: swapped {way}", None,
                         rounded(x[f"bytes_{way}"] / M, 2), None, "MiB", block_bytes=block, policy=policy)
                     for way in ("in", "out")]
        volume = {p: x["bytes_in"] + x["bytes_out"] for p, x in mine.items()}
        rows.append(row("004", "Fig. 9", f"{name} blocks: LRU's swap volume / FIFO's", PAPER_004["fig9_volume"],
                        ratio(volume.get("lru"), volume.get("fifo")), None, "x", block_bytes=block))
        for policy, x in sorted(mine.items()):
            rows.append(row("004", "Fig. 9", f"{name} blocks, {policy}: swapped out / swapped in",
                            PAPER_004["fig9_out_in"], ratio(x["bytes_out"], x["bytes_in"]), None, "x",
                            block_bytes=block, policy=policy))
    return rows


def rows(options, measured):
    return (rows_4_5(options, measured["memseq"]) + rows_6(options, measured["memseq"])
            + rows_7(options, measured["fig7"], measured["linux"]) + rows_8_9(options, measured["fig8"]))
