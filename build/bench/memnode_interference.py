#!/usr/bin/env python3
# build/bench/memnode_interference.py: `make bench-memnode`: seed 002's experiment shape on one
# memory node: a local program (spin, started by --memnode-cmd) on the node's one core, alone
# and while two memseqs on the main machine swap to the node, with the node's store in DRAM or NVM
# (--memnode-nvm) and --memnode-remote-share 0.25, 0.5 (an equal share) and 0.75; and "role on its
# own core": a 2-core node (--memnode-smp 2) whose placement (memnode-own-core) puts the role on
# core 1 and leaves core 0 to the spin (the spin's share is of its own core). Everything is
# measured in the node's own cycle counts (ps and cores every few seconds: the spin's share of the
# core per interval, beside over alone, so a busier host in one boot than in the other does not
# move it), not host wall time: QEMU has no
# memory-bus contention, so what this shows is the node's CPU cost of serving remote traffic.
# Writes build/out/bench/memnode.{json,md} and prints one @json memnode_interference line each.
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
              "--memnode-mem", "128M", "--memnode-capacity", "64M"]
SHARES = ["0.25", "0.5", "0.75"]
LOCALS = ["dram", "nvm"]
# The role on a core of its own: a 2-core node, its placement's `memnode 1` (docs/placement.md)
OWN_CORE_FLAGS = ["--memnode-smp", "2", "--memnode-placement", "memnode-own-core"]
OWN_CORE, SHARED_CORE = (2, 1), (1, 0)  # (node_cores, role_core)
BUSIEST = 3  # the sampling intervals in which serving took the most cycles
PAPER = "seed 002: local DRAM and NVM throughput fell to 18-24 % of alone under remote writes"


def parse_arguments(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=int(os.environ.get("BENCH_RUNS", 1)),
                        help="boots per configuration (the median is reported)")
    parser.add_argument("--rounds", type=int, default=8,
                        help="rounds of the client: two memseqs at once, 24 MiB each")
    parser.add_argument("--timeout", type=int, default=900)
    add_smoke_option(parser)
    arguments = parser.parse_args(argv)
    arguments.shares, arguments.locals, arguments.own_core_locals = SHARES, LOCALS, LOCALS
    arguments.sample_ms, arguments.samples, arguments.megabytes = 3000, 20, 24
    if arguments.smoke:  # one configuration beside its alone run, a small client, short samples
        arguments.shares, arguments.locals, arguments.runs = ["0.25"], ["dram"], 1
        arguments.own_core_locals = ["dram"]
        arguments.rounds, arguments.megabytes, arguments.sample_ms, arguments.samples = 1, 4, 2000, 8
    return arguments


def local_work(options):
    return (f"start spin {options.sample_ms * (options.samples + 2)}; "
            + "; ".join([f"sleep {options.sample_ms}; ps; cores"] * options.samples))


def node_samples(log):
    """Per sample (a `ps` then a `cores`), {pid: (name, cpu_cycles, core)} and {core: its idle
    cycles}: one `core` line per core of the node."""
    text = Path(f"{log}.node-1.log").read_text(errors="replace")
    samples, processes, idle = [], {}, {}
    for result in client.parse_json_lines(text.splitlines()):
        if result["kind"] == "process":
            if idle:  # the next sample's ps
                samples.append((processes, idle))
                processes, idle = {}, {}
            processes[result["pid"]] = (result["name"], result["cpu_cycles"], result["core"])
        elif result["kind"] == "core" and processes:
            idle[result["id"]] = result["idle_cycles"]
    if idle:
        samples.append((processes, idle))
    return samples


def core_of(processes, name):
    """The core `name` runs on (the first such process; core 0 if there is none)."""
    return next((core for n, _, core in processes.values() if n == name), 0)


def steps_of(samples):
    """Per interval between samples: (spin's cycles, memnode's, the whole time of the spin's core,
    of the memnode's core), a core's whole time being every process on it alive at both ends and
    its idle cycles. On a 1-core node the two cores are one. The spin's share of its core in an
    interval does not depend on how much of the host the node's vCPU got meanwhile, as its
    cycles alone would."""
    steps = []
    for (before, idle_before), (after, idle_after) in zip(samples, samples[1:]):
        grown = {pid: (n, cycles - before[pid][1], core)
                 for pid, (n, cycles, core) in after.items() if pid in before}

        def used(name):
            return sum(cycles for n, cycles, _ in grown.values() if n == name)

        def whole(core):
            return (sum(cycles for _, cycles, on in grown.values() if on == core)
                    + idle_after.get(core, 0) - idle_before.get(core, 0))
        spin_whole, role_whole = whole(core_of(after, "spin")), whole(core_of(after, "memnode"))
        if spin_whole > 0 and role_whole > 0:
            steps.append((used("spin"), used("memnode"), spin_whole, role_whole))
    return steps


def client_commands(options):
    memseq = f"memseq -s {options.megabytes}M -l 256K -b 16K --backend node"
    rounds = [f"start {memseq} @0; start {memseq} @1; wait"] * options.rounds
    # then long enough for the node to take 3 more samples after the rounds: a short client (the
    # smoke run's) on a loaded host ended with only 2 samples taken, too few for an interval
    return "; ".join(rounds + [f"sleep {options.sample_ms * 4}"])


def boot(local, share, beside, scratch, options, layout=SHARED_CORE):
    """One boot: the node's samples and, beside a client, its memseq lines."""
    log = Path(tempfile.mkdtemp(dir=scratch)) / "run.log"
    flags = list(NODE_FLAGS) + ["--memnode-cmd", local_work(options), "--log", str(log)]
    if layout == OWN_CORE:
        flags += OWN_CORE_FLAGS
    if share:
        flags += ["--memnode-remote-share", share]
    if local == "nvm":
        flags += ["--memnode-nvm", "80M"]  # room for the 64M it offers
    wait_ms = options.sample_ms * (options.samples + 3)
    command = client_commands(options) if beside else f"sleep {wait_ms}"
    run = client.run(flags + ["--cmd", command], options.timeout)
    memseqs = run.kinds("memseq")
    samples = node_samples(log)
    verified = len(memseqs) == 2 * options.rounds and all(m["verified"] for m in memseqs)
    if run.rc != 0 or len(samples) < 3 or (beside and not verified):
        sys.stderr.write(run.describe()[-4000:])
        raise SystemExit(f"memnode_interference: the {local} {share or 'alone'} boot "
                         f"({layout[0]} node cores) failed: exit {run.rc}, {len(samples)} samples "
                         f"of the node (3 needed), memseqs verified: {verified}")
    return samples, memseqs


def alone_spin(local, scratch, options, layout=SHARED_CORE):
    """The local program's share of its core with no client (the median interval)."""
    samples, _ = boot(local, None, False, scratch, options, layout)
    return statistics.median(spin / whole for spin, _, whole, _ in steps_of(samples))


def beside(local, share, alone, scratch, options, layout=SHARED_CORE):
    """One row: the spin's share of its core beside the client over alone, in the BUSIEST
    intervals (serving's largest shares of its core); serving's share of its core there."""
    fractions, rates, remote_fractions = [], [], []
    for _ in range(options.runs):
        samples, memseqs = boot(local, share, True, scratch, options, layout)
        busy = sorted(steps_of(samples), key=lambda step: step[1] / step[3], reverse=True)[:BUSIEST]
        fractions.append(sum(step[0] / step[2] for step in busy) / len(busy) / alone)
        remote_fractions.append(sum(step[1] / step[3] for step in busy) / len(busy))
        # both memseqs of a round at once: their rates add up (each its own clock)
        rates.append(statistics.median(memseqs[i]["mb_per_s"] + memseqs[i + 1]["mb_per_s"]
                                       for i in range(0, len(memseqs), 2)))
    return {"kind": "memnode_interference", "local": local, "clients": 1,
            "remote_share": float(share) if share else None,
            "local_fraction": round(statistics.median(fractions), 3),
            "remote_mb_per_s": round(statistics.median(rates), 2),
            "serving_core_fraction": round(statistics.median(remote_fractions), 3),
            "runs": options.runs, "node_cores": layout[0], "role_core": layout[1]}


def write_report(rows, options):
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "memnode.json").write_text(json.dumps(rows, indent=1) + "\n")
    lines = ["# A memory node's local work beside remote traffic (seed 002's shape)", "",
             f"`{' '.join(sys.argv)}`: one node (1 core, 64M), a `spin` on it started by "
             "`--memnode-cmd`, one client machine (the main machine) running two memseqs at "
             f"once ({options.megabytes} MiB each through 256 KiB, 16 KiB blocks, "
             f"{options.rounds} rounds) on the node. `local_fraction`: the spin's share of the node's core per sampling interval beside the client "
             f"(the {BUSIEST} intervals in which serving took the largest share) over its share "
             "alone, from the node's own `ps` and `cores` counts (every process's cycles and the idle ones). `remote_mb_per_s`: the two "
             "memseqs' MB/s added (the median round, their own clocks). What QEMU cannot show: the "
             "memory-bus contention that is the paper's cause; what is modelled is the node's "
             f"CPU cost of serving. {PAPER}; remote_share 0.5 is the fair scheduler's "
             "equal share (no weight).", "",
             "Role on its own core: a 2-core node (`--memnode-smp 2 --memnode-placement "
             "memnode-own-core`), the role on core 1, the spin on core 0; its shares are of its "
             "own core, serving's of core 1 (remote_share: none given, nothing to weigh).", "",
             "| local | where the role runs | remote_share | local fraction | serving's share of "
             "its core | remote MB/s |", "|---|---|---|---|---|---|"]
    for row in rows:
        where = (f"its own core (C{row['role_core']} of {row['node_cores']})"
                 if row["node_cores"] > 1 else "the spin's core (1 core)")
        share = "–" if row["remote_share"] is None else row["remote_share"]
        lines.append(f"| {row['local']} | {where} | {share} | {row['local_fraction']:.2f} | "
                     f"{row['serving_core_fraction']:.2f} | {row['remote_mb_per_s']:.2f} |")
    (OUT / "memnode.md").write_text("\n".join(lines) + "\n")


def measure(options):
    """One memnode_interference row per store (DRAM, NVM) and remote_share on a shared core,
    and one per store of options.own_core_locals with the role on its own core, each printed."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="formica-memnode-") as scratch:
        for local in options.locals:
            alone = alone_spin(local, scratch, options)
            for share in options.shares:
                rows.append(printed(beside(local, share, alone, scratch, options)))
        for local in options.own_core_locals:
            alone = alone_spin(local, scratch, options, OWN_CORE)
            rows.append(printed(beside(local, None, alone, scratch, options, OWN_CORE)))
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
