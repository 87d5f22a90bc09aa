# build/bench/node_throughput.py: memory-node throughput for make bench-pager: memseq's sequential
# read (every block swapped in from one memory node) for 4 KiB-1 MiB blocks, this build against a
# baseline build of an older revision (by default the pager before issue 15: synchronous
# transfers of 1 KiB fragments), interleaved run by run so both see the same host load; medians.
# nic_rows: this build over each network card (virtio-net, e1000e), interleaved the same way.
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "build"))
from runner import client  # noqa: E402
BASELINE_REVISION = "ecb816a"  # main before the asynchronous memory-node transfers
NODE_BOOT_MS = 15000


def baseline_tree(revision, out):
    """A build of `revision` in /tmp/formica-baseline-REV (made once, reused). A short path:
    the multiboot module names the kernel gets are truncated, and the boot image with them."""
    del out
    tree = Path(tempfile.gettempdir()) / f"formica-baseline-{revision}"
    if not (tree / "build" / "out" / "mkernel.elf").is_file():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(REPO), "archive", revision],
                                 capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
        subprocess.run(["make", "-C", str(tree), "-j2", "all"], check=True,
                       stdout=subprocess.DEVNULL)
    return tree


def memseq(tree, block, size, timeout, nic=None, boot_wait_ms=NODE_BOOT_MS):
    """One boot of `tree` with one memory node (on card `nic`, both machines; None: the
    runner's default): memseq's sequential-read line, or None."""
    # The sleep lets the node boot first: the baseline gives up on nodes after 2 s.
    sleep = f"sleep {boot_wait_ms}; " if boot_wait_ms else ""
    command = f"{sleep}run memseq -s {size} -l 1M -b {block} --backend node"
    flags = ["--smp", "2", "--accel", "tcg", "--memnodes", "1", "--disk", "none",
             *(["--nic", nic] if nic else []), "--cmd", command]
    try:
        done = client.run(flags, timeout, runner=tree / "build" / "run")
    except client.MalformedResult as error:
        print(f"node_throughput: {tree.name} {block}: {error}", file=sys.stderr)
        return None
    for result in done.kinds("memseq"):
        if result.get("mode") == "sequential":
            return result
    print(f"node_throughput: {tree.name} {block}: no result ({done.rc})", file=sys.stderr)
    return None


def block_bytes(block):
    """"64K" -> 65536, "1M" -> 1048576."""
    return int(block[:-1]) * {"K": 1 << 10, "M": 1 << 20}[block[-1]]


def rows(blocks, size, repeats, revision, out, timeout):
    """pager_bench_node rows: one per build and block size, medians of `repeats` runs, with
    the number of runs that failed (`failed_runs`; a row whose every run failed has `runs` 0)."""
    trees = {"this": REPO}
    if revision:
        trees["baseline"] = baseline_tree(revision, out)
    samples = {(build, block): [] for build in trees for block in blocks}
    failures = {(build, block): 0 for build in trees for block in blocks}
    for _ in range(repeats):
        for block in blocks:
            for build, tree in trees.items():
                result = memseq(tree, block, size, timeout)
                if result is not None and result["verified"]:
                    samples[(build, block)].append(result)
                else:
                    failures[(build, block)] += 1
    table = []
    for (build, block), results in samples.items():
        if not results:
            print(f"node_throughput: {build} {block}: every run failed", file=sys.stderr)
            table.append({"kind": "pager_bench_node", "build": build, "block_bytes": block_bytes(block),
                          "runs": 0, "failed_runs": failures[(build, block)]})
            continue
        table.append({
            "kind": "pager_bench_node", "build": build,
            "revision": revision if build == "baseline" else "this",
            "block_bytes": results[0]["block_bytes"], "runs": len(results),
            "failed_runs": failures[(build, block)],
            "mb_per_s": statistics.median(r["bytes"] / r["elapsed_us"] for r in results),
            "swap_in_us": statistics.median(r["swap_in_us"] for r in results)})
    return table


NICS = ("virtio", "e1000e")


def nic_rows(blocks, size, repeats, timeout, nics=NICS):
    """pager_bench_nic rows: this build's memseq over each card, one per card and block size,
    the cards run alternately so both see the same host load; medians of `repeats` runs."""
    samples = {(nic, block): [] for nic in nics for block in blocks}
    for _ in range(repeats):
        for block in blocks:
            for nic in nics:
                result = memseq(REPO, block, size, timeout, nic, boot_wait_ms=0)
                if result is not None and result["verified"]:
                    samples[(nic, block)].append(result)
    table = []
    for (nic, block), results in samples.items():
        row = {"kind": "pager_bench_nic", "nic": nic, "block_bytes": block_bytes(block),
               "runs": len(results), "failed_runs": repeats - len(results)}
        if results:
            row["mb_per_s"] = statistics.median(r["bytes"] / r["elapsed_us"] for r in results)
            row["swap_in_us"] = statistics.median(r["swap_in_us"] for r in results)
        table.append(row)
    return table


def nic_markdown(table):
    by = {(row["nic"], row["block_bytes"]): row for row in table if row["runs"]}
    nics = list(dict.fromkeys(row["nic"] for row in table))
    first = nics[0]
    lines = ["## Memory-node throughput by network card (memseq sequential read, one node)", "",
             "Medians; the cards were run alternately in the same session.", "",
             "| block | " + " | ".join(f"{nic} MB/s | {nic} µs/swap-in" for nic in nics) +
             f" | {' | '.join(f'{nic} / {first}' for nic in nics[1:])} |",
             "|---|" + "---|---|" * len(nics) + "---|" * (len(nics) - 1)]
    for size in sorted({row["block_bytes"] for row in table}):
        cells = []
        for nic in nics:
            row = by.get((nic, size))
            cells += [f"{row['mb_per_s']:.1f}", str(row["swap_in_us"])] if row else ["–", "–"]
        base = by.get((first, size))
        ratios = [f"{by[(nic, size)]['mb_per_s'] / base['mb_per_s']:.2f}x"
                  if base and (nic, size) in by else "–" for nic in nics[1:]]
        lines.append(f"| {size // 1024} KiB | " + " | ".join(cells + ratios) + " |")
    lines += ["", "virtio-net carries 32 KiB fragments (MTU 32800), the e1000e 8 KiB ones (its "
              "9014-byte jumbo frames): emulators on a shared host, compare the ratio only."]
    return "\n".join(lines) + "\n"


def markdown(table, seed_mb_per_s, seed_ms_1m):
    by = {(row["build"], row["block_bytes"]): row for row in table if row["runs"]}
    sizes = sorted({row["block_bytes"] for row in table})
    lines = ["## Memory-node throughput (memseq sequential read, one node, 1 MiB limit)", "",
             "Medians; this build and the baseline were run alternately in the same session.", "",
             "| block | baseline MB/s | this MB/s | ratio | baseline µs/swap-in | this µs/swap-in | seed 004 |",
             "|---|---|---|---|---|---|---|"]
    for size in sizes:
        this, base = by.get(("this", size)), by.get(("baseline", size))
        ratio = f"{this['mb_per_s'] / base['mb_per_s']:.1f}x" if this and base else "–"
        seed = f"{seed_mb_per_s} MB/s, {seed_ms_1m} ms" if size == 1 << 20 else ""
        lines.append(f"| {size // 1024} KiB | {base['mb_per_s']:.1f} | " if base else
                     f"| {size // 1024} KiB | – | ")
        lines[-1] += (f"{this['mb_per_s']:.1f} | {ratio} | {base['swap_in_us'] if base else '–'} | "
                      f"{this['swap_in_us']} | {seed} |" if this else "– | – | – | – | |")
    lines += ["", "MB = 10^6 bytes. Seed 004 measured Myrinet 10G hardware; these are emulators "
              "on a shared 2-core host talking over loopback UDP multicast: compare the ratio, "
              "not the absolute numbers."]
    return "\n".join(lines) + "\n"
