#!/usr/bin/env python3
# build/bench/pager_vs_linux.py: Formica's pager against Linux swap (docs/pager.md, "Against
# Linux swap"): the same sort (apps/sort, same records and seed) with a working set 2x, 4x and
# 8x its local memory, on Formica with each backend and on Linux (build/linux/, memory.max of a
# cgroup) swapping to a file on the virtio disk, to zram and to an nbdkit export; timed under
# TCG, counted under -icount, tried under KVM. Part of `make bench-pager`; also standalone.
import argparse
import json
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from runner import accel as runner_accel  # noqa: E402
from runner import client, qemu_binary  # noqa: E402
from runner.nbd import NbdServer  # noqa: E402
import kvm_start  # noqa: E402
import linux_guest  # noqa: E402
from bench_output import OUT, add_smoke_option, disk_copy  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
ICOUNT_CPU = linux_guest.ICOUNT_CPU
LINE_BYTES = 16  # struct line: a text pointer and a length
KEY_CHARS = 16
PAGE = 4096
# Formica's backends: the build/run flags and sort's teramem options of each.
FORMICA_BACKENDS = {
    "node": (["--memnodes", "1"], "--backend node"),
    "node-2-replicas": (["--memnodes", "2"], "--backend node --replicas 2"),
    "nvm": (None, "--backend nvm"),  # the NVDIMM file is made per boot
    "disk": (None, "--backend disk"),  # a copy of build/out/disk.img per boot
    "nbd": (["--nbd", "64M"], "--backend block"),
}
# Linux's swap devices: the init's swap= option; "nbd" also attaches an nbdkit export.
LINUX_SWAPS = {"disk": "file:32", "zram": "zram:32", "nbd": "vdb"}
NBD_MIB = 64


def arguments(argv=None):
    parser = argparse.ArgumentParser(description="Formica's pager against Linux swap")
    add_options(parser)
    add_smoke_option(parser)
    return smoke_options(parser.parse_args(argv))


# --smoke: one ratio, the NVM backend and zram (Formica's no-limit boot too), no icount series;
# the KVM series' start probes at their smoke bound, no KVM boot.
SMOKE = {"records": 2000, "ratios": "2", "vs_linux_backends": "nvm", "swaps": "zram",
         "icount_ratios": "", "vs_linux_timeout": 600}


def smoke_options(options):
    if options.smoke:
        for name, value in SMOKE.items():
            setattr(options, name, value)
    return options


def add_options(parser):
    parser.add_argument("--records", type=int, default=20000, help="sort's records (20000: ~1.9 MiB)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--block", default="4K",
                        help="Formica's block size (4K: sort's merge reads records at random; "
                             "docs/pager.md, 'Block size for sort')")
    parser.add_argument("--ratios", default="2,4,8", help="working set / local memory")
    parser.add_argument("--vs-linux-backends", default=",".join(FORMICA_BACKENDS), help="Formica backends")
    parser.add_argument("--swaps", default=",".join(LINUX_SWAPS), help="Linux swap devices")
    parser.add_argument("--icount-ratios", default="4", help="ratios of the icount series ('' for none)")
    parser.add_argument("--no-kvm", action="store_true", help="do not try the KVM series")
    parser.add_argument("--kvm-timeout", type=int, default=240)
    parser.add_argument("--vs-linux-timeout", type=int, default=3600, help="per boot")
    parser.add_argument("--disk-iops", type=int, default=0,
                        help="throttle the virtio disk (Linux's swap file, Formica's disk backend) to N "
                             "requests/s, as a hard disk would (QEMU throttling.iops-total); 0: none")
    parser.add_argument("--tag", default="", help="a name for this run's report and logs "
                                                  "(pager_vs_linux-TAG.*, vs-linux-TAG-*.log)")
    parser.add_argument("--report-only", action="store_true",
                        help="no boots: the rows and the report again from build/out/bench/logs/vs-linux-*.log")


def named(options, stem):
    """`stem` with the run's --tag: pager_vs_linux -> pager_vs_linux-TAG."""
    tag = getattr(options, "tag", "")
    return f"{stem}-{tag}" if tag else stem


def disk_throttle(options):
    """QEMU arguments that hold the virtio disk (id disk0) to --disk-iops requests per second."""
    iops = getattr(options, "disk_iops", 0)
    return ["-set", f"drive.disk0.throttling.iops-total={iops}"] if iops else []


# ---- the workload ------------------------------------------------------------------------


def splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & (2**64 - 1)
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & (2**64 - 1)
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & (2**64 - 1)
    return state, z ^ (z >> 31)


def working_set_bytes(records, seed):
    """What sort touches (apps/sort/main.c): two line arrays and the records' text."""
    state, text = seed, 0
    for _ in range(records):
        state, _key = splitmix64(state)
        state, filler = splitmix64(state)
        text += KEY_CHARS + 2 + 16 + filler % 64
    return 2 * LINE_BYTES * records + text


def local_bytes(working_set, ratio, block):
    """Local memory for a ratio: whole blocks (the pager rounds so), at least 4."""
    return max(4 * block, working_set // ratio // block * block)


def size_bytes(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


# ---- Formica ------------------------------------------------------------------------------


def formica_flags(backend, scratch):
    """build/run's flags for `backend` ("none": no pager backend), each boot on a fresh copy
    of the build's disk (the disk backend's, and FS's for the others)."""
    disk = disk_copy(scratch, "vs-linux-disk.img")
    if backend == "none":
        return disk
    if backend == "nvm":
        return ["--nvm", f"{scratch / 'vs-linux.nvm'}:64M"] + disk
    flags, _ = FORMICA_BACKENDS[backend]
    return (flags or []) + disk


def formica_boot(backend, limits, options, accel, icount, scratch, log):
    """One boot running sort at each limit; {limit: sort row with the pager's volumes}."""
    teramem = FORMICA_BACKENDS[backend][1] if backend != "none" else "--backend none"
    commands = [f"run sort -n {options.records} --seed {options.seed} -l {limit} -b {options.block} "
                f"-P lru {teramem}" for limit in limits]
    flags = ["--smp", "2", "--accel", accel, *formica_flags(backend, scratch)]
    flags += ["--icount", "--cpu", ICOUNT_CPU] if icount else []
    if backend == "disk" and disk_throttle(options):
        flags += ["--qemu", " ".join(disk_throttle(options))]
    run = client.run([*flags, "--cmd", "; ".join(commands)], options.vs_linux_timeout, log=log)
    results = formica_rows(run.jsons, backend)
    if len(results) < len(limits) or run.rc != 0:
        print(f"pager_vs_linux: formica {backend} ({accel}{', icount' if icount else ''}): "
              f"{len(results)} of {len(limits)} sorts, exit {run.rc}; log {log}", file=sys.stderr)
    return results, run.seconds


def formica_rows(jsons, backend):
    """A Formica boot's @json objects -> {limit (0: no limit): sort row with the pager's
    bytes in and out (its line at cleanup comes before sort's own)}."""
    sorts = [r for r in jsons if r["kind"] == "sort"]
    pagers = [r for r in jsons if r["kind"] == "pager"]
    if backend != "none":
        for sort, pager in zip(sorts, pagers):
            sort["bytes_in"], sort["bytes_out"] = pager["bytes_in"], pager["bytes_out"]
            for field in ("fetch_wait_us", "readahead_fetches", "readahead_unused"):
                sort[field] = pager.get(field)  # absent in logs of builds before these counters
    return {sort["local_limit_bytes"] if backend != "none" else 0: sort for sort in sorts}


# ---- Linux --------------------------------------------------------------------------------


def linux_boot(swap, limits, options, accel, icount, log, timeout):
    """One Linux boot: sort at each limit in a fresh cgroup, swap on `swap`;
    ({limit or 0 for none: sort row with linux_run's counts}, error text or None)."""
    sort_args = f"sort:-n:{options.records}:--seed:{options.seed}:-b:4K"
    sort_args += "".join(f":{word}" for word in getattr(options, "sort_extra", "").split())
    runs = [f"max/{sort_args}:-l:{limit}" for limit in limits]  # -l sets memory.max
    if swap == "disk" and not icount:
        runs.insert(0, f"max/{sort_args}:-l:0")  # the time with no limit, once
    append = f"swap={LINUX_SWAPS[swap]} run={','.join(runs)}"
    scratch = Path(tempfile.mkdtemp(prefix="formica-vs-linux-"))
    disk = scratch / "ext2.img"  # a fresh file system each boot, the swap file on it
    shutil.copyfile(linux_guest.LINUX_OUT / "ext2.img", disk)
    smp = 1 if icount else 2  # Linux SMP under icount's round-robin stalls (evaluation.md)
    cpu = ICOUNT_CPU if icount else None
    command = linux_guest.qemu_command(smp, None, "256M", accel, icount, "", disk, append=append, cpu=cpu)
    command += disk_throttle(options)
    server = None
    if swap == "nbd":
        server = NbdServer(NBD_MIB)
        if not server.start():
            return {}, "nbdkit did not start"
        command += server.main_args()
    start = time.monotonic()
    try:
        completed = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True,
                                   timeout=timeout, start_new_session=True)
        output, error = completed.stdout, None
    except subprocess.TimeoutExpired as expired:
        output, error = expired.stdout or b"", f"did not finish in {timeout} s"
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    lines = client.split_lines(output)
    Path(log).write_text("\n".join(lines))
    rows, failure = linux_rows(client.parse_json_lines(lines))
    error = error or failure
    if error:
        print(f"pager_vs_linux: linux {swap} ({accel}{', icount' if icount else ''}): {error}; "
              f"log {log} ({time.monotonic() - start:.0f} s)", file=sys.stderr)
    return rows, error


def linux_rows(results):
    """A Linux boot's @json objects -> ({limit (0: none): sort row with linux_run's swap
    counts and the cgroup's figures}, what failed or None)."""
    sorts, linux_runs = [r for r in results if r["kind"] == "sort"], [r for r in results if r["kind"] == "linux_run"]
    rows = {}
    swaps = [r for r in results if r["kind"] == "linux_swap"]
    for sort, linux_run, linux_swap in zip(sorts, [r for r in linux_runs if r.get("rc") == 0], swaps):
        limited = linux_run["memory_max"] != "max"
        sort.update(pswpin=linux_run["pswpin"], pswpout=linux_run["pswpout"],
                    memory_max=linux_run["memory_max"], memory_peak=linux_run["memory_peak"],
                    base_bytes=linux_swap["base_bytes"], bytes_in=linux_run["pswpin"] * PAGE,
                    bytes_out=linux_run["pswpout"] * PAGE)
        rows[sort["local_limit_bytes"] if limited else 0] = sort
    failed = [r for r in linux_runs if r.get("rc") != 0] + [r for r in results if r["kind"] == "linux_error"]
    if failed:
        return rows, f"failed: {json.dumps(failed)}"
    if not any(r["kind"] == "linux_done" for r in results):
        return rows, "the guest did not reach its end"
    return rows, None


# ---- the comparison -----------------------------------------------------------------------


def series_rows(series, accel, icount, ratios, options, scratch, logs):
    """Every Formica backend and Linux swap at these ratios; the pager_vs_linux rows."""
    block = size_bytes(options.block)
    working_set = working_set_bytes(options.records, options.seed)
    limits = {ratio: local_bytes(working_set, ratio, block) for ratio in ratios}
    linux, linux_errors = {}, {}
    for swap in [s for s in options.swaps.split(",") if s]:
        log = logs / f"{named(options, 'vs-linux')}-{series}-linux-{swap}.log"
        linux[swap], linux_errors[swap] = linux_boot(swap, list(limits.values()), options, accel, icount,
                                                     log, options.vs_linux_timeout)
    formica = {}
    for backend in ["none"] + [b for b in options.vs_linux_backends.split(",") if b]:
        if backend == "none" and icount:
            continue
        log = logs / f"{named(options, 'vs-linux')}-{series}-formica-{backend}.log"
        formica[backend], _ = formica_boot(backend, [0] if backend == "none" else list(limits.values()),
                                           options, accel, icount, scratch, log)
    return comparison(series, ratios, limits, working_set, formica, linux, linux_errors, options)


def microseconds(rows, limit, field="elapsed_us"):
    row = rows.get(limit)
    return row[field] if row and row.get("verified") else None


def comparison(series, ratios, limits, working_set, formica, linux, linux_errors, options):
    rows = []
    for backend in [b for b in options.vs_linux_backends.split(",") if b]:
        for ratio in ratios:
            limit = limits[ratio]
            sort = formica.get(backend, {}).get(limit, {})
            row = {"kind": "pager_vs_linux", "series": series, "backend": backend,
                   "working_set_ratio": ratio, "records": options.records, "seed": options.seed,
                   "working_set_bytes": working_set, "local_bytes": limit,
                   "block_bytes": size_bytes(options.block), "disk_iops": getattr(options, "disk_iops", 0),
                   "formica_us": microseconds(formica.get(backend, {}), limit),
                   "formica_swap_in_bytes": sort.get("bytes_in"),
                   "formica_swap_out_bytes": sort.get("bytes_out"),
                   "formica_swap_ins": sort.get("swap_in_blocks"),
                   "formica_swap_outs": sort.get("swap_out_blocks"),
                   "formica_fetch_wait_us": sort.get("fetch_wait_us"),
                   "formica_readahead_fetches": sort.get("readahead_fetches"),
                   "formica_readahead_unused": sort.get("readahead_unused"),
                   "formica_no_limit_us": microseconds(formica.get("none", {}), 0)}
            for swap in [s for s in options.swaps.split(",") if s]:
                name = {"disk": "linux_disk_swap", "zram": "linux_zram", "nbd": "linux_nbd_swap"}[swap]
                linux_sort = linux.get(swap, {}).get(limit, {})
                row[f"{name}_us"] = microseconds(linux.get(swap, {}), limit)
                row[f"{name}_pswpin"] = linux_sort.get("pswpin")
                row[f"{name}_pswpout"] = linux_sort.get("pswpout")
                row[f"{name}_memory_max"] = linux_sort.get("memory_max")
                if linux_errors.get(swap):
                    row[f"{name}_error"] = linux_errors[swap]
            row["linux_base_bytes"] = linux.get("disk", {}).get(limit, {}).get("base_bytes")
            row["linux_no_limit_us"] = microseconds(linux.get("disk", {}), 0)
            for name in ("linux_disk_swap", "linux_zram", "linux_nbd_swap"):
                other = row.get(f"{name}_us")  # speedup_vs_X: Linux's time over Formica's
                row[f"speedup_vs_{name}"] = round(other / row["formica_us"], 2) \
                    if other and row["formica_us"] and not waits_uncounted(series, name) else None
            rows.append(row)
    return rows


def waits_uncounted(series, linux_swap):
    """Under icount a guest that waits for a device is idle, and QEMU's idle time jumps to the
    next timer: Linux swapping to its virtio disk or to NBD counts seconds of "time" that are no
    instructions and no real wait. Those counts are no measurement of a swap, so they give no
    speed-up (zram never waits for a device: its counts are instructions)."""
    return series == "icount" and linux_swap in ("linux_disk_swap", "linux_nbd_swap")


def kvm_rows(options, scratch, logs):
    """Under KVM: Linux (disk swap) and Formica (nvm) at ratio 4, each with a timeout, each only
    when its kernel starts under KVM here (kvm_start.py, found in seconds): the kvm_pvm of this
    project's machines runs kernel code in an emulator and the Linux guest does not boot
    there, which this reports instead of waiting out its timeout."""
    import os
    if not runner_accel.kvm_usable():
        return [{"kind": "pager_vs_linux_kvm", "result": "no /dev/kvm"}]
    model, why = runner_accel.kvm_cpu_model(qemu_binary.choose(str(REPO))[0], str(REPO / "build" / "out"))
    if model is None:
        return [{"kind": "pager_vs_linux_kvm", "result": f"QEMU starts no CPU model under KVM: {why}"}]
    block = size_bytes(options.block)
    limit = local_bytes(working_set_bytes(options.records, options.seed), 4, block)
    pvm = os.path.isdir("/sys/module/kvm_pvm")
    bound = kvm_start.SMOKE_START_SECONDS if getattr(options, "smoke", False) else kvm_start.START_SECONDS
    linux, error = {}, None
    starts, why = kvm_start.linux_starts(model, bound)
    if starts and getattr(options, "smoke", False):
        starts, why = False, "a smoke run boots nothing under KVM"
    if starts:
        linux, error = linux_boot("disk", [limit], options, "kvm", False,
                                  logs / f"{named(options, 'vs-linux')}-kvm-linux-disk.log", options.kvm_timeout)
    else:
        error = why
    formica, formica_error = {}, None
    starts, why = kvm_start.formica_starts(model, bound)
    if starts and getattr(options, "smoke", False):
        starts, why = False, "a smoke run boots nothing under KVM"
    if starts:
        formica, seconds = formica_boot("nvm", [limit], argparse.Namespace(**{**vars(options),
                                        "vs_linux_timeout": options.kvm_timeout}), "kvm", False, scratch,
                                        logs / f"{named(options, 'vs-linux')}-kvm-formica-nvm.log")
        formica_error = None if microseconds(formica, limit) else f"no verified sort in {seconds:.0f} s"
    else:
        formica_error = why
    return [{"kind": "pager_vs_linux_kvm", "kvm_pvm": pvm, "working_set_ratio": 4,
             "linux_disk_swap_us": microseconds(linux, limit), "linux_error": error,
             "formica_nvm_us": microseconds(formica, limit), "formica_error": formica_error}]


def rows_from_logs(options, logs):
    """--report-only: the rows again from the boot logs a run left in `logs`."""
    ratios = [int(r) for r in options.ratios.split(",") if r]
    icount_ratios = [int(r) for r in options.icount_ratios.split(",") if r]
    block = size_bytes(options.block)
    working_set = working_set_bytes(options.records, options.seed)
    rows = []
    for series, series_ratios in (("tcg", ratios), ("icount", icount_ratios)):
        limits = {ratio: local_bytes(working_set, ratio, block) for ratio in series_ratios}
        linux, linux_errors, formica = {}, {}, {}
        for swap in [s for s in options.swaps.split(",") if s]:
            log = logs / f"{named(options, 'vs-linux')}-{series}-linux-{swap}.log"
            if log.exists():
                linux[swap], linux_errors[swap] = linux_rows(client.parse_json_lines(log.read_text().split("\n")))
        for backend in ["none"] + [b for b in options.vs_linux_backends.split(",") if b]:
            log = logs / f"{named(options, 'vs-linux')}-{series}-formica-{backend}.log"
            if log.exists():
                formica[backend] = formica_rows(client.parse_json_lines(log.read_text().split("\n")), backend)
        if linux or formica:
            rows += comparison(series, series_ratios, limits, working_set, formica, linux, linux_errors, options)
    linux_log, formica_log = (logs / f"{named(options, 'vs-linux')}-kvm-{system}.log"
                              for system in ("linux-disk", "formica-nvm"))
    if linux_log.exists() or formica_log.exists():
        limit = local_bytes(working_set, 4, block)
        linux, error = linux_rows(client.parse_json_lines(linux_log.read_text().split("\n"))) \
            if linux_log.exists() else ({}, "not run")
        formica = formica_rows(client.parse_json_lines(formica_log.read_text().split("\n")), "nvm") \
            if formica_log.exists() else {}
        rows.append({"kind": "pager_vs_linux_kvm", "working_set_ratio": 4,
                     "linux_disk_swap_us": microseconds(linux, limit), "linux_error": error,
                     "formica_nvm_us": microseconds(formica, limit),
                     "formica_error": None if microseconds(formica, limit) else "no verified sort"})
    return rows


def run(options, logs):
    """All series; the pager_vs_linux rows (also printed as @json lines)."""
    logs.mkdir(parents=True, exist_ok=True)
    ratios = [int(r) for r in options.ratios.split(",") if r]
    icount_ratios = [int(r) for r in options.icount_ratios.split(",") if r]
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        scratch = Path(directory)
        rows += series_rows("tcg", "tcg", False, ratios, options, scratch, logs)
        if icount_ratios:
            rows += series_rows("icount", "tcg", True, icount_ratios, options, scratch, logs)
        if not options.no_kvm:
            rows += kvm_rows(options, scratch, logs)
    for row in rows:
        print(client.JSON_MARKER + json.dumps(row), flush=True)
    return rows


# ---- the report ---------------------------------------------------------------------------


def cell(value, scale=1, digits=0):
    if value is None:
        return "—"
    return f"{value / scale:,.{digits}f}"


def mib(value):
    return cell(value, 2**20, 1)


def markdown(rows, have_png, command, png_name="pager_vs_linux.png"):
    table = [r for r in rows if r["kind"] == "pager_vs_linux"]
    lines = ["# Formica's pager against Linux swap", "",
             f"Command: `{command}`. sort of {table[0]['records'] if table else '?'} records "
             f"(seed {table[0]['seed'] if table else '?'}), working set "
             f"{mib(table[0]['working_set_bytes']) if table else '?'} MiB; local memory = working set / ratio "
             "(Formica: the pager's local limit; Linux: a cgroup's memory.max, plus what sort needs "
             "with no data). Times are sort's own (ms); under icount a ms is a million guest instructions."
             + (f" The virtio disk (Linux's swap file, Formica's disk backend) is held to "
                f"{table[0]['disk_iops']} requests/s, as a hard disk would be." if table and table[0].get("disk_iops") else ""),
             ""]
    for series in sorted({r["series"] for r in table}, key=lambda s: s != "tcg"):
        lines += [f"## {series}", "",
                  "| backend | ratio | local KiB | Formica ms | Linux disk ms | Linux zram ms | Linux NBD ms | "
                  "× vs disk | × vs zram | × vs NBD | Formica in/out MiB | Linux disk in/out MiB | "
                  "Linux zram in/out MiB | Linux NBD in/out MiB |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in [r for r in table if r["series"] == series]:
            def volume(prefix):
                pages_in, pages_out = r.get(f"{prefix}_pswpin"), r.get(f"{prefix}_pswpout")
                return f"{mib(pages_in * PAGE if pages_in is not None else None)} / " \
                       f"{mib(pages_out * PAGE if pages_out is not None else None)}"
            lines.append(
                f"| {r['backend']} | {r['working_set_ratio']} | {r['local_bytes'] // 1024} | "
                f"{cell(r['formica_us'], 1000)} | {cell(r.get('linux_disk_swap_us'), 1000)} | "
                f"{cell(r.get('linux_zram_us'), 1000)} | {cell(r.get('linux_nbd_swap_us'), 1000)} | "
                f"{cell(r.get('speedup_vs_linux_disk_swap'), 1, 2)} | {cell(r.get('speedup_vs_linux_zram'), 1, 2)} | "
                f"{cell(r.get('speedup_vs_linux_nbd_swap'), 1, 2)} | "
                f"{mib(r['formica_swap_in_bytes'])} / {mib(r['formica_swap_out_bytes'])} | "
                f"{volume('linux_disk_swap')} | {volume('linux_zram')} | {volume('linux_nbd_swap')} |")
        some = next((r for r in table if r["series"] == series), None)
        if some:
            lines += ["", f"With no limit: Formica {cell(some.get('formica_no_limit_us'), 1000)} ms, "
                      f"Linux {cell(some.get('linux_no_limit_us'), 1000)} ms. Linux's base (what sort's "
                      f"cgroup held at teramem_init, added to each memory.max): "
                      f"{cell(some.get('linux_base_bytes'), 1024)} KiB.", ""]
        errors = sorted({f"{k}: {v}" for r in table if r["series"] == series for k, v in r.items()
                         if k.endswith("_error") and v})
        lines += [f"- {e}" for e in errors] + ([""] if errors else [])
        lines += obstacles(table, series)
    for r in [r for r in rows if r["kind"] == "pager_vs_linux_kvm"]:
        lines += ["## kvm", "", f"`{json.dumps(r)}`", ""]
    if have_png:
        lines += [f"![pager against Linux swap]({png_name})"]
    return "\n".join(lines) + "\n"


def paging_us(total_us, base_us, count):
    """Microseconds per swap-in above the unlimited run's time (None when unknown)."""
    if not total_us or not count:
        return None
    return (total_us - (base_us or 0)) / count


def ratio_of(numerator, denominator):
    return numerator / denominator if numerator is not None and denominator else None


def obstacle_row(r):
    """One backend and ratio's per-swap-in figures: Formica's paging time, its wait for the
    backend, Linux's per page-in, and what the 10x goal leaves per swap-in."""
    swap_ins, wait = r.get("formica_swap_ins"), r.get("formica_fetch_wait_us")
    linux_disk, pswpin = r.get("linux_disk_swap_us"), r.get("linux_disk_swap_pswpin")
    goal_us = linux_disk / 10 if linux_disk else None
    return {
        "swap_ins": swap_ins,
        "per_swap_in": paging_us(r.get("formica_us"), r.get("formica_no_limit_us"), swap_ins),
        "wait": ratio_of(wait, swap_ins),
        "linux_disk": paging_us(linux_disk, r.get("linux_no_limit_us"), pswpin),
        "linux_zram": paging_us(r.get("linux_zram_us"), r.get("linux_no_limit_us"),
                                r.get("linux_zram_pswpin")),
        "count_ratio": ratio_of(swap_ins, pswpin),
        "bytes_ratio": ratio_of(r.get("formica_swap_in_bytes"), pswpin * PAGE if pswpin else None),
        "goal_us": goal_us,
        "budget": paging_us(goal_us, r.get("formica_no_limit_us"), swap_ins),
        "free_backend_us": r["formica_us"] - wait if r.get("formica_us") and wait is not None else None,
    }


def obstacles(table, series):
    """The report's "What stands in the way" for one series: the per-swap-in table and, for
    memory nodes at ratio 4 (seed 004's goal), what the goal leaves and where the time goes."""
    rows = [r for r in table if r["series"] == series]
    if not any(r.get("formica_swap_ins") for r in rows):
        return []
    unit = "µs" if series != "icount" else "k instr."
    lines = [f"### What stands in the way ({series})", "",
             "Per swap-in, time above the unlimited run's (sort's own work), in " + unit + "; "
             "*wait* is the faults' wait for the backend's block (the pager's fetch_wait_us), "
             "*rest* the fault's path through the kernel and the pager; the 10× budget is "
             "(Linux disk / 10 − Formica unlimited) / Formica's swap-ins.", "",
             f"| backend | ratio | swap-ins | per swap-in | wait | rest | Linux disk per page-in | "
             f"Linux zram per page-in | swap-ins / Linux's | bytes in / Linux's | 10× budget |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        o = obstacle_row(r)
        rest = o["per_swap_in"] - o["wait"] if o["per_swap_in"] is not None and o["wait"] is not None else None
        budget = o["budget"] if o["budget"] is None or o["budget"] > 0 else 0
        lines.append(f"| {r['backend']} | {r['working_set_ratio']} | {cell(o['swap_ins'])} | "
                     f"{cell(o['per_swap_in'])} | {cell(o['wait'])} | {cell(rest)} | "
                     f"{cell(o['linux_disk'])} | {cell(o['linux_zram'])} | {cell(o['count_ratio'], 1, 2)} | "
                     f"{cell(o['bytes_ratio'], 1, 2)} | {cell(budget)} |")
    lines.append("")
    goal = next((r for r in rows if r["working_set_ratio"] == 4 and r["backend"] == "node"), None) \
        or next((r for r in rows if r["working_set_ratio"] == 4), None)
    if goal is not None:
        lines += goal_text(goal, unit) + [""]
    return lines


def goal_text(r, unit):
    """Seed 004's goal for one row, in words computed from it."""
    o = obstacle_row(r)
    if waits_uncounted(r.get("series"), "linux_disk_swap"):
        return [f"Seed 004's goal (≥ 10× Linux's disk swap) is not judged from this series: under "
                f"icount Linux waits for its disk idle, and the idle time jumps to the next timer, so "
                f"its {cell(r.get('linux_disk_swap_us'), 1000)} \"ms\" are no instructions of a swap. "
                f"Formica's {cell(r.get('formica_us'), 1000)} ms are the instructions of a run that "
                f"never waits; the timed series above judges the goal."]
    if None in (o["per_swap_in"], o["goal_us"], o["budget"], r.get("formica_us")):
        return [f"The goal ({r['backend']} at 4×) cannot be judged: a time or a count is missing."]
    speedup = r["linux_disk_swap_us"] / r["formica_us"]
    words = [f"Seed 004's goal, {r['backend']} at 4×: ≥ 10× Linux's disk swap, i.e. "
             f"{cell(o['goal_us'], 1000)} ms; measured {cell(r['formica_us'], 1000)} ms "
             f"({speedup:.2f}×)."]
    if o["budget"] <= 0:
        words.append("Formica's unlimited run alone takes longer than that.")
    else:
        words.append(f"At Formica's {cell(o['swap_ins'])} swap-ins the goal leaves "
                     f"{cell(o['budget'])} {unit} per swap-in; Formica spends "
                     f"{cell(o['per_swap_in'])}.")
    if o["wait"] is not None:
        rest = o["per_swap_in"] - o["wait"]
        free = r["linux_disk_swap_us"] / o["free_backend_us"] if o["free_backend_us"] else None
        words.append(f"Of that, {cell(o['wait'])} is the wait for the backend and {cell(rest)} the "
                     f"fault's path: with a backend that answered at once sort would take "
                     f"{cell(o['free_backend_us'], 1000)} ms ({cell(free, 1, 2)}× Linux's disk swap)"
                     + (", so the fault path alone is over the budget." if rest > o["budget"] else "."))
    if o["linux_disk"] is not None:
        words.append(f"Linux pays {cell(o['linux_disk'])} {unit} per page-in from its virtio disk"
                     + (" (the host's page cache: no seek)" if unit == "µs" else "")
                     + f" and {cell(o['linux_zram'])} from zram.")
    zram_budget = paging_us(r.get("linux_zram_us"), r.get("formica_no_limit_us"), o["swap_ins"])
    if zram_budget is not None:
        words.append(f"Beating zram leaves {cell(max(zram_budget, 0))} {unit} per swap-in"
                     + (" (met)." if o["per_swap_in"] < zram_budget else " (not met)."))
    if o["count_ratio"] is not None:
        words.append(f"Formica swaps in {o['count_ratio']:.2f}× as many blocks as Linux pages and "
                     f"{o['bytes_ratio']:.2f}× the bytes ({r['block_bytes'] // 1024} KiB blocks).")
    if r.get("formica_readahead_fetches"):
        words.append(f"Read-ahead fetched {cell(r['formica_readahead_fetches'])} blocks, "
                     f"{cell(r.get('formica_readahead_unused'))} of them unused.")
    return [" ".join(words)]


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    table = [r for r in rows if r["kind"] == "pager_vs_linux" and r["series"] == "tcg"]
    if not table:
        return False
    figure, axis = plt.subplots(figsize=(8, 5))
    for backend in sorted({r["backend"] for r in table}):
        points = [(r["working_set_ratio"], r["formica_us"] / 1e6) for r in table
                  if r["backend"] == backend and r["formica_us"]]
        if points:
            axis.plot(*zip(*points), marker="o", label=f"Formica {backend}")
    first = [r for r in table if r["backend"] == table[0]["backend"]]
    for name, label in (("linux_disk_swap_us", "Linux swap file (virtio disk)"),
                        ("linux_zram_us", "Linux zram"), ("linux_nbd_swap_us", "Linux swap on NBD")):
        points = [(r["working_set_ratio"], r[name] / 1e6) for r in first if r.get(name)]
        if points:
            axis.plot(*zip(*points), marker="s", linestyle="--", label=label)
    axis.set_xscale("log", base=2)
    axis.set_yscale("log")
    axis.set_xlabel("working set / local memory")
    axis.set_ylabel("sort time (s, TCG)")
    axis.set_title("sort: Formica's pager against Linux swap")
    axis.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(path)
    return True


def write_report(rows, command, options=None):
    OUT.mkdir(parents=True, exist_ok=True)
    stem = named(options, "pager_vs_linux")
    (OUT / f"{stem}.json").write_text(json.dumps(rows, indent=1) + "\n")
    have_png = plot(rows, OUT / f"{stem}.png")
    (OUT / f"{stem}.md").write_text(markdown(rows, have_png, command, f"{stem}.png"))


def main():
    options = arguments()
    if options.report_only:
        rows = rows_from_logs(options, OUT / "logs")
        for row in rows:
            print(client.JSON_MARKER + json.dumps(row), flush=True)
    else:
        subprocess.run([str(REPO / "build" / "linux" / "build.sh")], check=True)
        rows = run(options, OUT / "logs")
    write_report(rows, "python3 build/bench/pager_vs_linux.py " + shlex.join(sys.argv[1:]), options)
    print(f"pager_vs_linux: {len(rows)} rows in {OUT}/{named(options, 'pager_vs_linux')}.{{json,md,png}}")


if __name__ == "__main__":
    main()
