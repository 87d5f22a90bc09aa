#!/usr/bin/env python3
# build/bench/journal_bench.py: `make bench-journal` (part of `make bench`): what ext3's
# ordered journal costs against ext2 (docs/journal.md). On the same 64 MiB, 4 KiB-block
# image made as ext2 and as ext3, one boot per file system and run: Bonnie with 50 %
# updates (readblock and readbyte, 2 processes) and tests/programs/churn's metadata-heavy run
# (creates, appends, truncates, renames, mkdir/rmdir, an fsync every 12 steps), then a
# sync. Prints and writes @json {"kind":"journal_bench",...} lines to
# build/out/bench/journal.json and a table to build/out/bench/journal.md (medians of --runs).
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "build"))
sys.path.insert(0, str(REPO / "build" / "bench"))
from runner import client  # noqa: E402
import disk_image  # noqa: E402
from bench_output import OUT, add_smoke_option  # noqa: E402

MODES = ("readblock", "readbyte")
BONNIE_REFS, SMOKE_REFS = 2000, 20
CHURN_STEPS, SMOKE_CHURN_STEPS = 600, 24


def arguments():
    parser = argparse.ArgumentParser(description="ext2 vs ext3 cost")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout", type=int, default=900)
    add_smoke_option(parser)
    options = parser.parse_args()
    options.refs, options.churn_steps = BONNIE_REFS, CHURN_STEPS
    if options.smoke:
        options.runs, options.refs, options.churn_steps = 1, SMOKE_REFS, SMOKE_CHURN_STEPS
    return options


def bonnie_command(mode, refs):
    return f"run bonnie -p 2 -m {mode} -u 50 -n {refs}"


def make_image(kind, directory):
    """The 64 MiB, 4 KiB-block image as `kind` (ext2 or ext3 with a 4 MiB journal), with the
    built disk's owners: Bonnie and churn run as the shell's user and create files in `/`."""
    return disk_image.make(directory / f"{kind}.img", kind, 4096, "64M",
                           journal_mib=4 if kind == "ext3" else None)


def boot(image, options):
    commands = [bonnie_command(mode, options.refs) for mode in MODES]
    commands += [f"run churn {options.churn_steps}", "sync"]
    done = client.run(["--smp", "3", "--accel", "tcg", "--disk", str(image), "--cmd", "; ".join(commands)],
                      options.timeout)
    if done.rc != 0:
        raise RuntimeError(f"journal_bench: boot failed:\n{done.describe()[-3000:]}")
    return done.jsons


def measure(kind, image, options):
    """One boot: elapsed microseconds per workload."""
    results = boot(image, options)
    bonnie = [r for r in results if r.get("kind") == "bonnie"]
    churn = [r for r in results if r.get("kind") == "churn_done"]
    if len(bonnie) != len(MODES) or len(churn) != 1:
        raise RuntimeError(f"journal_bench: missing results on {kind}: {results}")
    times = {mode: line["elapsed_us"] for mode, line in zip(MODES, bonnie)}
    times["churn"] = churn[0]["elapsed_us"]
    return times, churn[0]


def fsck_clean(image):
    return subprocess.run(["e2fsck", "-fn", str(image)], capture_output=True).returncode == 0


def main():
    options = arguments()
    OUT.mkdir(parents=True, exist_ok=True)
    samples = {}
    churn_info = {}
    with tempfile.TemporaryDirectory() as scratch:
        for run in range(options.runs):
            for kind in ("ext2", "ext3"):
                image = make_image(kind, Path(scratch))
                times, churn_info[kind] = measure(kind, image, options)
                if not fsck_clean(image):
                    raise RuntimeError(f"journal_bench: e2fsck -fn failed on {kind} after run {run}")
                for workload, elapsed in times.items():
                    samples.setdefault((workload, kind), []).append(elapsed)
    lines = []
    for workload in [*MODES, "churn"]:
        ext2 = statistics.median(samples[(workload, "ext2")])
        ext3 = statistics.median(samples[(workload, "ext3")])
        line = {"kind": "journal_bench", "workload": workload,
                "ext2_us": int(ext2), "ext3_us": int(ext3),
                "ext3_over_ext2": round(ext3 / ext2, 3) if ext2 else None,
                "runs": options.runs, "accel": "tcg", "smp": 3}
        if workload == "churn":
            line.update(steps=options.churn_steps, fsyncs=churn_info["ext3"]["fsyncs"])
        else:
            line.update(procs=2, refs=options.refs, update_pct=50)
        lines.append(line)
        print(client.JSON_MARKER + json.dumps(line, separators=(",", ":")))
    (OUT / "journal.json").write_text("".join(json.dumps(line) + "\n" for line in lines))
    table = ["| workload | ext2 (ms) | ext3 (ms) | ext3 / ext2 |", "|---|---|---|---|"]
    for line in lines:
        table.append(f"| {line['workload']} | {line['ext2_us'] / 1000:.1f} | "
                     f"{line['ext3_us'] / 1000:.1f} | {line['ext3_over_ext2']} |")
    (OUT / "journal.md").write_text(
        f"# ext2 vs ext3 (ordered journal), TCG, --smp 3, median of {options.runs} runs\n\n"
        + "\n".join(table) + "\n")
    print("\n".join(table))


if __name__ == "__main__":
    main()
