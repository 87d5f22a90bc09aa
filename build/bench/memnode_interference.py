#!/usr/bin/env python3
# build/bench/memnode_interference.py: `make bench-memnode`: seed 002's experiment shape on one
# memory node whose store is in NVM (--memnode-nvm): a local STREAM program (memstream, started by
# --memnode-cmd) on the node's DRAM or on its local NVDIMM (--memnode-local-nvm, apart from the
# store's), alone and while 1-4 client machines (--memnode-clients) each run two swapping memseqs
# against the node, with the scheduler off for serving (--memnode-remote-share off), at the default
# remote_share (0.1) and at 0.25, 0.5 (an equal share) and 0.75; and "role on its own core": a
# 2-core node (--memnode-smp 2, placement memnode-own-core) with the role on core 1.
# Everything comes from the node's own counts: memstream's per-interval lines give its bytes over
# the TSC cycles of the interval and the cycles it and the role ran (the fair scheduler's), not
# host wall time: QEMU has no memory-bus contention, so what this shows is the node's CPU cost of
# serving remote traffic. Writes build/out/bench/memnode.{json,md} and prints one @json
# memnode_interference line each.
import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from runner import client  # noqa: E402
from bench_output import OUT, add_smoke_option  # noqa: E402

NODE_FLAGS = ["--smp", "2", "--accel", "tcg", "--disk", "none", "--memnodes", "1",
              "--memnode-mem", "160M", "--memnode-capacity", "96M",
              # the store, in NVM: room for the 96M it offers and its tags, a power of two as the
              # one-sided rows' ivshmem BAR must be
              "--memnode-nvm", "128M",
              "--memnode-local-nvm", "32M"]  # memstream's NVM, a device of its own
# "off": serving not held back (weighs SHARE_WEIGHT_MAX); "default": no option, remote_share 0.1
SHARES = ["off", "default", "0.25", "0.5", "0.75"]
REMOTE_SHARE_DEFAULT = 0.1  # apps/memnode/main.c
LOCALS = ["dram", "nvm"]
CLIENTS = [1, 2]  # what boots in reasonable time on a 2-core host; --clients 1,2,3,4 for all
# The role on a core of its own: a 2-core node, its placement's `memnode 1` (docs/placement.md)
OWN_CORE_FLAGS = ["--memnode-smp", "2", "--memnode-placement", "memnode-own-core"]
OWN_CORE, SHARED_CORE = (2, 1), (1, 0)  # (node_cores, role_core)
BUSIEST = 3  # the intervals in which serving took the largest share of the interval
WARM_UP = 1  # memstream's first intervals left out: the first touch of its memory
PAPER = "seed 002: local DRAM and NVM throughput fell to 18-24 % of alone under remote writes"


def parse_arguments(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=int(os.environ.get("BENCH_RUNS", 1)),
                        help="boots per configuration (the median is reported)")
    parser.add_argument("--rounds", type=int, default=8,
                        help="rounds of each client: two memseqs at once, 8 MiB each")
    parser.add_argument("--clients", default=",".join(map(str, CLIENTS)),
                        help="client machine counts, e.g. 1,2,3,4 (default 1,2)")
    parser.add_argument("--shares", default=",".join(SHARES),
                        help="remote_shares to measure, e.g. off,default,0.25 (default "
                             f"{','.join(SHARES)})")
    parser.add_argument("--one-sided", action="store_true",
                        help="also the one-sided path (--memnode-ivshmem) at the default share "
                             "beside each client count")
    parser.add_argument("--locals", default=",".join(LOCALS),
                        help="where memstream's arrays are: dram, nvm or both (default dram,nvm)")
    parser.add_argument("--timeout", type=int, default=900)
    add_smoke_option(parser)
    arguments = parser.parse_args(argv)
    arguments.client_counts = [int(word) for word in arguments.clients.split(",") if word]
    arguments.shares = [word for word in arguments.shares.split(",") if word]
    arguments.locals = [word for word in arguments.locals.split(",") if word]
    unknown = set(arguments.locals) - set(LOCALS)
    if unknown:
        parser.error(f"--locals: unknown {sorted(unknown)}")
    arguments.own_core_locals = list(arguments.locals)
    arguments.interval_ms, arguments.intervals, arguments.megabytes = 3000, 60, 8
    arguments.stream_bytes = "24M"
    if arguments.smoke:  # DRAM, serving not held back, beside 1 and 2 clients and alone
        arguments.shares, arguments.locals, arguments.runs = ["off"], ["dram"], 1
        arguments.own_core_locals, arguments.client_counts = [], [1, 2]
        arguments.rounds, arguments.megabytes, arguments.interval_ms = 1, 4, 2000
        arguments.intervals, arguments.stream_bytes = 30, "6M"
    return arguments


def local_work(local, options):
    return (f"run --driver memstream {local} -s {options.stream_bytes} -i {options.interval_ms} "
            f"-n {options.intervals}")


def intervals_of(text):
    """memstream's interval lines after the warm-up: (bytes, cycles, own cycles, serving
    cycles) each."""
    lines = [line for line in client.parse_json_lines(text.splitlines())
             if line["kind"] == "memstream"]
    return [(line["bytes"], line["cycles"], line["own_cycles"], line["serving_cycles"])
            for line in lines if line["interval"] > WARM_UP and line["cycles"] > 0]


def alone_rates(intervals):
    """(bytes per TSC cycle, share of its core) of the local program alone: the medians."""
    return (statistics.median(b / c for b, c, _, _ in intervals),
            statistics.median(own / c for _, c, own, _ in intervals))


def busiest(intervals, count=BUSIEST):
    """The `count` intervals in which serving took the largest share of the interval."""
    return sorted(intervals, key=lambda step: step[3] / step[1], reverse=True)[:count]


QUIET = 0.001  # an interval in which serving took less of the core than this served nothing
QUIET_NEEDED = 2


def reference(intervals, alone):
    """What "alone" is for one boot beside clients: its own quiet intervals after the clients'
    work (nothing served, the same QEMUs on the host, idle: the intervals before it are the
    clients' boots, which take the host's cores) when it has QUIET_NEEDED of them, else the
    alone boot's rates. Under TCG the TSC follows host time, so a reference taken while the
    same machines sit on the host is the fairer one."""
    busy = [index for index, step in enumerate(intervals) if step[3] / step[1] >= QUIET]
    after = intervals[busy[-1] + 1:] if busy else []
    quiet = [step for step in after if step[3] / step[1] < QUIET]
    return (alone_rates(quiet), "quiet intervals") if len(quiet) >= QUIET_NEEDED else (alone, "alone boot")


def fractions(intervals, alone):
    """Beside over alone in the busiest intervals: (throughput, core share, serving's share,
    bytes per cycle there)."""
    busy = busiest(intervals)
    rate = sum(b / c for b, c, _, _ in busy) / len(busy)
    share = sum(own / c for _, c, own, _ in busy) / len(busy)
    serving = sum(s / c for _, c, _, s in busy) / len(busy)
    return rate / alone[0], share / alone[1], serving, rate


def client_commands(options):
    memseq = f"memseq -s {options.megabytes}M -l 256K -b 16K --backend node"
    rounds = [f"start {memseq} @0; start {memseq} @1; wait"] * options.rounds
    # then long enough for memstream to finish 3 quiet intervals after the rounds
    return "; ".join(rounds + [f"sleep {options.interval_ms * 5}"])


def client_memseqs(run, log, clients):
    """Each client machine's memseq lines: the main machine's, then clients 2..N's logs."""
    found = [run.kinds("memseq")]
    for index in range(2, clients + 1):
        path = Path(f"{log}.client-{index}.log")
        text = path.read_text(errors="replace") if path.exists() else ""
        found.append([line for line in client.parse_json_lines(text.splitlines())
                      if line["kind"] == "memseq"])
    return found


def boot(local, share, clients, scratch, options, layout=SHARED_CORE, one_sided=False):
    """One boot (clients 0: alone): memstream's intervals and each client's memseq lines; with
    `one_sided` the clients store and retrieve through the node's NVM file (ivshmem)."""
    log = Path(tempfile.mkdtemp(dir=scratch)) / "run.log"
    flags = list(NODE_FLAGS) + ["--memnode-cmd", local_work(local, options), "--log", str(log)]
    if one_sided:
        flags += ["--memnode-ivshmem"]
    if layout == OWN_CORE:
        flags += OWN_CORE_FLAGS
    if share and share != "default":
        flags += ["--memnode-remote-share", share]
    if clients > 1:
        flags += ["--memnode-clients", str(clients)]
    wait_ms = options.interval_ms * (options.intervals + 2)
    command = client_commands(options) if clients else f"sleep {wait_ms}"
    run = client.run(flags + ["--cmd", command], options.timeout)
    memseqs = client_memseqs(run, log, clients) if clients else []
    intervals = intervals_of(Path(f"{log}.node-1.log").read_text(errors="replace"))
    verified = all(len(found) == 2 * options.rounds and all(m["verified"] for m in found)
                   for found in memseqs)
    if run.rc != 0 or len(intervals) < 2 or not verified:
        sys.stderr.write(run.describe()[-4000:])
        raise SystemExit(f"memnode_interference: the {local} {share or 'alone'} boot with "
                         f"{clients} clients ({layout[0]} node cores) failed: exit {run.rc}, "
                         f"{len(intervals)} memstream intervals (2 needed), memseqs verified: "
                         f"{verified}")
    return intervals, memseqs


def remote_rate(memseqs):
    """The clients' MB/s added: per machine the median round (its two memseqs at once)."""
    return sum(statistics.median(found[i]["mb_per_s"] + found[i + 1]["mb_per_s"]
                                 for i in range(0, len(found), 2)) for found in memseqs)


def share_value(share):
    """The row's remote_share: null with the scheduler off or nothing weighed (own core)."""
    if share in (None, "off"):
        return None
    return REMOTE_SHARE_DEFAULT if share == "default" else float(share)


def beside(local, share, clients, alone, scratch, options, layout=SHARED_CORE, one_sided=False):
    """One row: memstream beside `clients` client machines over alone."""
    measured, sources = [], []
    for _ in range(options.runs):
        intervals, memseqs = boot(local, share, clients, scratch, options, layout, one_sided)
        quiet, source = reference(intervals, alone)
        sources.append(source)
        measured.append(fractions(intervals, quiet) + (remote_rate(memseqs),))
    middle = {name: statistics.median(m[i] for m in measured)
              for i, name in enumerate(["local", "core", "serving", "rate", "remote"])}
    return {"kind": "memnode_interference", "local": local, "clients": clients,
            "remote_share": share_value(share), "scheduler": "off" if share == "off" else "on",
            "local_fraction": round(middle["local"], 3),
            "remote_mb_per_s": round(middle["remote"], 2),
            "local_core_fraction": round(middle["core"], 3),
            "serving_core_fraction": round(middle["serving"], 3),
            "local_bytes_per_cycle": round(middle["rate"], 4),
            "alone_bytes_per_cycle": round(alone[0], 4), "alone_from": sorted(set(sources)),
            "store": "nvm",
            "runs": options.runs, "node_cores": layout[0], "role_core": layout[1],
            "path": "one-sided" if one_sided else "two-sided"}


NOT_MEASURED = ("Client counts not in this report were not measured on this host (2 cores shared "
                "with other runs: every client is one more QEMU); `--clients 1,2,3,4` measures "
                "them.")


def write_report(rows, options):
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "memnode.json").write_text(json.dumps(rows, indent=1) + "\n")
    counts = sorted({row["clients"] for row in rows})
    lines = ["# A memory node's local STREAM beside remote traffic (seed 002's shape)", "",
             f"`{' '.join(sys.argv)}`: one node (1 core, 160M, its store of 96M in NVM), "
             f"`memstream` on it ({options.stream_bytes} of arrays in its DRAM or on its local "
             "NVDIMM) started by `--memnode-cmd`; client machines (`--memnode-clients`) each "
             f"running two memseqs at once ({options.megabytes} MiB each through 256 KiB, 16 KiB "
             f"blocks, {options.rounds} rounds) on the node. `local_fraction`: memstream's bytes "
             "per TSC cycle of the node in the "
             f"{BUSIEST} intervals in which serving took the largest share, over alone: the "
             "median of the same boot's quiet intervals after the clients' work (nothing served, "
             "the clients idle), or "
             "the alone boot's when it had fewer than 2 (`alone_from`); `local_core_fraction`: its share of the node's core (its cycles "
             "as the fair scheduler counts them, over the interval's) beside over alone. "
             "`remote_mb_per_s`: the memseqs' MB/s added (per machine the median round). What "
             "QEMU cannot show: the memory-bus contention that is the paper's cause; what is "
             "modelled is the node's CPU cost of serving. Under TCG the TSC follows host time, so "
             "`local_fraction` also falls when the host runs more QEMUs (each client is one); "
             f"`local_core_fraction` does not. {PAPER}; remote_share 0.5 is the fair "
             "scheduler's equal share (no weight), 0.1 the node's default, and `off` serving "
             "that no scheduler holds back (it weighs 64 against local work's 1).", "",
             f"Client machines measured: {', '.join(map(str, counts))}. {NOT_MEASURED}", "",
             "| local | clients | where the role runs | remote_share | local fraction | core "
             "share fraction | serving's share of its core | remote MB/s |",
             "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        where = (f"its own core (C{row['role_core']} of {row['node_cores']})"
                 if row["node_cores"] > 1 else "memstream's core (1 core)")
        if row.get("path") == "one-sided":
            where += ", one-sided (ivshmem)"
        share = ("off" if row.get("scheduler") == "off" else
                 "–" if row["remote_share"] is None else row["remote_share"])
        lines.append(f"| {row['local']} | {row['clients']} | {where} | {share} | "
                     f"{row['local_fraction']:.2f} | {row['local_core_fraction']:.2f} | "
                     f"{row['serving_core_fraction']:.2f} | {row['remote_mb_per_s']:.2f} |")
    (OUT / "memnode.md").write_text("\n".join(lines) + "\n")


def measure(options):
    """Per local memory (DRAM, NVM): one alone boot, then one row per client count and
    remote_share on a shared core; one row per store of options.own_core_locals with the role
    on its own core (one client machine), each printed."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="formica-memnode-") as scratch:
        for local in options.locals:
            alone = alone_rates(boot(local, None, 0, scratch, options)[0])
            for clients in options.client_counts:
                for share in options.shares:
                    rows.append(printed(beside(local, share, clients, alone, scratch, options)))
                if options.one_sided:
                    rows.append(printed(beside(local, "default", clients, alone, scratch, options,
                                               one_sided=True)))
        for local in options.own_core_locals:
            alone = alone_rates(boot(local, None, 0, scratch, options, OWN_CORE)[0])
            rows.append(printed(beside(local, None, 1, alone, scratch, options, OWN_CORE)))
    return rows


def printed(row):
    print("@json " + json.dumps(row, separators=(",", ":")), flush=True)
    return row


def main():
    options = parse_arguments()
    write_report(measure(options), options)
    print(f"memnode_interference: report in {OUT / 'memnode.md'}")


if __name__ == "__main__":
    main()
