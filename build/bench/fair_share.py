#!/usr/bin/env python3
# build/bench/fair_share.py: `make bench-fair`: how much another account's attack slows a normal
# program (tests/programs/fileloop, 100 rounds of create, write, read back, stat, remove) under
# TCG: each boot times the program alone and beside the attack in turn, each attack gets
# --runs boots, and the report gives the median slowdown (beside / alone) against the 2x bound
# of docs/authority.md. Writes build/out/bench/fair_share.{json,md} and fair_share.png.
import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from runner import client  # noqa: E402
from bench_output import OUT, add_smoke_option  # noqa: E402

NORMAL_ROUNDS, WARM_UP_ROUNDS = 100, 20  # of the normal program (fileloop)
SMOKE_NORMAL_ROUNDS, SMOKE_WARM_UP_ROUNDS = 5, 2
BOUND = 2.0

# name: (what it is, vCPUs, placement, the attack's commands, rounds per boot)
ATTACKS = {
    "ring_flood_p5": ("six processes keep 48 refused FS and BLK requests each in flight "
                      "(cores 1-2; FS C1, BLK C2)", 3, "5",
                      ["start --user 2001 hostile ringflood 6 3000 both", "sleep 200"], 3),
    "busy_cores_p5": ("control for the above: six spinning processes on cores 1-2 that never "
                      "call a server (what busy vCPUs alone cost on the host)", 3, "5",
                      ["start --user 2001 hostile hog 3 3000 @1",
                       "start --user 2001 hostile hog 3 3000 @2", "sleep 200"], 3),
    "ring_flood_p4": ("the same flood on core 1 beside FS and BLK, 2 vCPUs (one per host core)",
                      2, "4", ["start --user 2001 hostile ringflood 6 3000 both", "sleep 200"], 3),
    "disk_fill": ("one program writes 64 KiB pieces until its disk quota (50 %) is full",
                  2, "1", ["start --user 2001 hostile fill /fill", "sleep 100"], 1),
    "core_hog": ("six spinning processes of one account on the normal program's core",
                 2, "1", ["start --user 2001 hostile hog 6 3000 @0", "sleep 200"], 3),
}


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=int(os.environ.get("BENCH_RUNS", 3)),
                        help="boots per attack")
    parser.add_argument("--attacks", default=",".join(ATTACKS),
                        help=f"comma-separated subset of {', '.join(ATTACKS)}")
    parser.add_argument("--timeout", type=int, default=600)
    parser.add_argument("--report-only", action="store_true",
                        help="rewrite the report and plot from build/out/bench/fair_share.json")
    add_smoke_option(parser)
    arguments = parser.parse_args()
    arguments.normal_rounds, arguments.warm_up_rounds = NORMAL_ROUNDS, WARM_UP_ROUNDS
    arguments.rounds = None  # each attack's own
    if arguments.smoke:  # every attack, one boot of one round each, a short normal program
        arguments.runs, arguments.rounds = 1, 1
        arguments.normal_rounds, arguments.warm_up_rounds = SMOKE_NORMAL_ROUNDS, SMOKE_WARM_UP_ROUNDS
    return arguments


def normal_program(rounds):
    return f"run --user 2004 fileloop {rounds} @0"


def boot_commands(attack, rounds, options):
    """Warm up, then per round: the program alone, the attack, the program beside it, wait."""
    normal = normal_program(options.normal_rounds)
    commands = [normal_program(options.warm_up_rounds)]
    for _ in range(rounds):
        commands += [normal, *attack, normal, "wait"]
    return "; ".join(commands)


def one_boot(name, scratch, options):
    """(alone, beside) times in microseconds of one boot, in order."""
    _, smp, placement, attack, rounds = ATTACKS[name]
    rounds = options.rounds or rounds
    image = Path(scratch) / "disk.img"
    shutil.copyfile(client.OUT_DIR / "disk.img", image)
    run = client.run(["--smp", smp, "--placement", placement, "--disk", image,
                      "--cmd", boot_commands(attack, rounds, options)], options.timeout)
    loops = run.kinds("fileloop")
    if run.rc != 0 or len(loops) != 1 + 2 * rounds or any(loop["failures"] for loop in loops):
        sys.stderr.write(run.describe()[-4000:])
        raise SystemExit(f"fair_share: the {name} boot failed (status {run.rc})")
    times = [loop["elapsed_us"] for loop in loops[1:]]
    return times[0::2], times[1::2]


def measure(name, options):
    alone, beside, ratios = [], [], []
    runs = options.runs
    with tempfile.TemporaryDirectory(prefix="formica-fair-") as scratch:
        for run_index in range(runs):
            boot_alone, boot_beside = one_boot(name, scratch, options)
            alone += boot_alone
            beside += boot_beside
            ratios.append(statistics.median(boot_beside) / statistics.median(boot_alone))
            print(f"fair_share: {name} boot {run_index + 1}/{runs}: alone {boot_alone} us, "
                  f"beside {boot_beside} us", flush=True)
    what, smp, placement, _, _ = ATTACKS[name]
    return {"kind": "bench_fair", "attack": name, "what": what, "smp": smp,
            "placement": placement, "runs": runs, "alone_us_median": statistics.median(alone),
            "beside_us_median": statistics.median(beside),
            "slowdown_median": round(statistics.median(ratios), 2),
            "slowdowns": [round(ratio, 2) for ratio in ratios], "bound": BOUND}


def write_report(rows):
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "fair_share.json").write_text(json.dumps(rows, indent=1) + "\n")
    lines = ["# A normal program beside another account's attack", "",
             f"`{' '.join(sys.argv)}` ({os.cpu_count()} host cores). The normal program is "
             f"`{normal_program(NORMAL_ROUNDS)}`; each boot times it alone and beside the attack in turn; the slowdown "
             "is the median beside / the median alone of a boot, and the table gives the median "
             "over boots (each boot's in brackets).", "",
             "| attack | vCPUs | placement | alone (µs) | beside (µs) | slowdown | within 2x |",
             "|---|---|---|---|---|---|---|"]
    for row in rows:
        each = ", ".join(f"{ratio:.2f}" for ratio in row["slowdowns"])
        lines.append(f"| {row['attack']}: {row['what']} | {row['smp']} | #{row['placement']} | "
                     f"{row['alone_us_median']:.0f} | {row['beside_us_median']:.0f} | "
                     f"{row['slowdown_median']:.2f}x ({each}) | "
                     f"{'yes' if row['slowdown_median'] <= BOUND else 'no'} |")
    (OUT / "fair_share.md").write_text("\n".join(lines) + "\n")
    plot(rows)


def plot(rows):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("fair_share: matplotlib not installed; no plot (build/deps.sh installs it)")
        return
    figure, axis = plt.subplots(figsize=(7, 4))
    names = [row["attack"] for row in rows]
    colors = ["tab:gray" if row["attack"].startswith("busy_cores") else "tab:blue" for row in rows]
    axis.bar(names, [row["slowdown_median"] for row in rows], color=colors)
    axis.set_yscale("log")
    for index, row in enumerate(rows):
        axis.scatter([index] * len(row["slowdowns"]), row["slowdowns"], color="black", s=12)
    axis.axhline(BOUND, color="tab:red", linestyle="--", label="2x bound")
    axis.set_ylabel("time beside / alone (log; gray: control)")
    axis.tick_params(axis="x", labelsize=8)
    axis.set_title("A normal program beside another account's attack (TCG)")
    axis.legend()
    figure.tight_layout()
    figure.savefig(OUT / "fair_share.png")
    plt.close(figure)


def main():
    arguments = parse_arguments()
    if arguments.report_only:
        write_report(json.loads((OUT / "fair_share.json").read_text()))
        return
    names = [name for name in arguments.attacks.split(",") if name]
    unknown = [name for name in names if name not in ATTACKS]
    if unknown:
        raise SystemExit(f"fair_share: unknown attack(s) {', '.join(unknown)}")
    rows = []
    for name in names:
        row = measure(name, arguments)
        print("@json " + json.dumps(row), flush=True)
        rows.append(row)
    write_report(rows)
    print(f"fair_share: report in {OUT / 'fair_share.md'}")


if __name__ == "__main__":
    main()
