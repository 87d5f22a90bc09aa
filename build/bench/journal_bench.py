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
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "build"))
from runner import client  # noqa: E402

OUT = REPO / "build" / "out" / "bench"
BONNIE = [("readblock", "run bonnie -p 2 -m readblock -u 50 -n 2000"),
          ("readbyte", "run bonnie -p 2 -m readbyte -u 50 -n 2000")]
CHURN_STEPS = 600


def arguments():
    parser = argparse.ArgumentParser(description="ext2 vs ext3 cost")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout", type=int, default=900)
    return parser.parse_args()


def make_image(kind, directory):
    image = directory / f"{kind}.img"
    journal = ["-J", "size=4"] if kind == "ext3" else []
    subprocess.run(["mke2fs", "-q", "-F", "-t", kind, "-r", "1", "-b", "4096", *journal, "-d",
                    str(REPO / "build" / "disk"), str(image), "64M"], check=True,
                   capture_output=True)
    return image


def boot(image, timeout):
    commands = [command for _, command in BONNIE] + [f"run churn {CHURN_STEPS}", "sync"]
    done = client.run(["--smp", "3", "--accel", "tcg", "--disk", str(image), "--cmd", "; ".join(commands)],
                      timeout)
    if done.rc != 0:
        raise RuntimeError(f"journal_bench: boot failed:\n{done.describe()[-3000:]}")
    return done.jsons


def measure(kind, image, timeout):
    """One boot: elapsed microseconds per workload."""
    results = boot(image, timeout)
    bonnie = [r for r in results if r.get("kind") == "bonnie"]
    churn = [r for r in results if r.get("kind") == "churn_done"]
    if len(bonnie) != len(BONNIE) or len(churn) != 1:
        raise RuntimeError(f"journal_bench: missing results on {kind}: {results}")
    times = {name: line["elapsed_us"] for (name, _), line in zip(BONNIE, bonnie)}
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
                times, churn_info[kind] = measure(kind, image, options.timeout)
                if not fsck_clean(image):
                    raise RuntimeError(f"journal_bench: e2fsck -fn failed on {kind} after run {run}")
                for workload, elapsed in times.items():
                    samples.setdefault((workload, kind), []).append(elapsed)
    lines = []
    for workload in [name for name, _ in BONNIE] + ["churn"]:
        ext2 = statistics.median(samples[(workload, "ext2")])
        ext3 = statistics.median(samples[(workload, "ext3")])
        line = {"kind": "journal_bench", "workload": workload,
                "ext2_us": int(ext2), "ext3_us": int(ext3),
                "ext3_over_ext2": round(ext3 / ext2, 3) if ext2 else None,
                "runs": options.runs, "accel": "tcg", "smp": 3}
        if workload == "churn":
            line.update(steps=CHURN_STEPS, fsyncs=churn_info["ext3"]["fsyncs"])
        else:
            line.update(procs=2, refs=2000, update_pct=50)
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
