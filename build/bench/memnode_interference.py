#!/usr/bin/env python3
# build/bench/memnode_interference.py: `make bench-memnode`: seed 002's experiment shape on one
# memory node: a local program (spin, started by --memnode-cmd) on the node's one core, alone
# and while two memseqs on the main machine swap to the node, with the node's store in DRAM or NVM
# (--memnode-nvm) and --memnode-remote-share 0.25, 0.5 (an equal share) and 0.75. Everything is
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
    arguments.shares, arguments.locals = SHARES, LOCALS
    arguments.sample_ms, arguments.samples, arguments.megabytes = 3000, 20, 24
    if arguments.smoke:  # one configuration beside its alone run, a small client, short samples
        arguments.shares, arguments.locals, arguments.runs = ["0.25"], ["dram"], 1
        arguments.rounds, arguments.megabytes, arguments.sample_ms, arguments.samples = 1, 4, 2000, 8
    return arguments


def local_work(options):
    return (f"start spin {options.sample_ms * (options.samples + 2)}; "
            + "; ".join([f"sleep {options.sample_ms}; ps; cores"] * options.samples))


def node_samples(log):
    """Per sample (a `ps` then a `cores`), {pid: (name, cpu_cycles)} and the node's idle cycles."""
    text = Path(f"{log}.node-1.log").read_text(errors="replace")
    samples, processes = [], {}
    for result in client.parse_json_lines(text.splitlines()):
        if result["kind"] == "process":
            processes[result["pid"]] = (result["name"], result["cpu_cycles"])
        elif result["kind"] == "core" and processes:
            samples.append((processes, result["idle_cycles"]))
            processes = {}
    return samples


def steps_of(samples):
    """Per interval between samples: (spin's cycles, memnode's, the core's whole time: every process
    alive at both ends and the idle cycles). The spin's share of the core in an interval does not
    depend on how much of the host the node's vCPU got meanwhile, as its cycles alone would."""
    steps = []
    for (before, idle_before), (after, idle_after) in zip(samples, samples[1:]):
        def used(name):
            return sum(cycles - before[pid][1] for pid, (n, cycles) in after.items() if n == name and pid in before)
        whole = sum(cycles - before[pid][1] for pid, (_, cycles) in after.items() if pid in before)
        whole += idle_after - idle_before
        if whole > 0:
            steps.append((used("spin"), used("memnode"), whole))
    return steps


def client_commands(options):
    memseq = f"memseq -s {options.megabytes}M -l 256K -b 16K --backend node"
    rounds = [f"start {memseq} @0; start {memseq} @1; wait"] * options.rounds
    return "; ".join(rounds + [f"sleep {options.sample_ms * 2}"])


def boot(local, share, beside, scratch, options):
    """One boot: the node's samples and, beside a client, its memseq lines."""
    log = Path(tempfile.mkdtemp(dir=scratch)) / "run.log"
    flags = list(NODE_FLAGS) + ["--memnode-cmd", local_work(options), "--log", str(log)]
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
        raise SystemExit(f"memnode_interference: the {local} {share or 'alone'} boot failed")
    return samples, memseqs


def alone_spin(local, scratch, options):
    """The local program's share of the node's core with no client (the median interval)."""
    samples, _ = boot(local, None, False, scratch, options)
    return statistics.median(spin / whole for spin, _, whole in steps_of(samples))


def beside(local, share, alone, scratch, options):
    fractions, rates, remote_fractions = [], [], []
    for _ in range(options.runs):
        samples, memseqs = boot(local, share, True, scratch, options)
        busy = sorted(steps_of(samples), key=lambda step: step[1] / step[2], reverse=True)[:BUSIEST]
        spin = sum(step[0] for step in busy) / len(busy)
        remote = sum(step[1] for step in busy) / len(busy)
        whole = sum(step[2] for step in busy) / len(busy)
        fractions.append(spin / whole / alone)
        remote_fractions.append(remote / (spin + remote))
        # both memseqs of a round at once: their rates add up (each its own clock)
        rates.append(statistics.median(memseqs[i]["mb_per_s"] + memseqs[i + 1]["mb_per_s"]
                                       for i in range(0, len(memseqs), 2)))
    return {"kind": "memnode_interference", "local": local, "clients": 1,
            "remote_share": float(share), "local_fraction": round(statistics.median(fractions), 3),
            "remote_mb_per_s": round(statistics.median(rates), 2),
            "serving_core_fraction": round(statistics.median(remote_fractions), 3),
            "runs": options.runs}


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
             "| local | remote_share | local fraction | serving's share of the core | "
             "remote MB/s |", "|---|---|---|---|---|"]
    for row in rows:
        lines.append(f"| {row['local']} | {row['remote_share']} | {row['local_fraction']:.2f} | "
                     f"{row['serving_core_fraction']:.2f} | {row['remote_mb_per_s']:.2f} |")
    (OUT / "memnode.md").write_text("\n".join(lines) + "\n")


def measure(options):
    """One memnode_interference row per store (DRAM, NVM) and remote_share, each printed."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="formica-memnode-") as scratch:
        for local in options.locals:
            alone = alone_spin(local, scratch, options)
            for share in options.shares:
                row = beside(local, share, alone, scratch, options)
                print("@json " + json.dumps(row, separators=(",", ":")), flush=True)
                rows.append(row)
    return rows


def main():
    options = parse_arguments()
    write_report(measure(options), options)
    print(f"memnode_interference: report in {OUT / 'memnode.md'}")


if __name__ == "__main__":
    main()
