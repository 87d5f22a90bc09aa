#!/usr/bin/env python3
# build/bench/cores_scaling.py: `make bench-cores`: the inter-core area's size and the boot
# time at 16, 64, 128 and 256 cores (docs/intercore.md). Each core count boots twice under
# TCG: a plain boot (wall-clock seconds from starting QEMU to its exit, the "intercore" line
# of the area at boot) and a boot with the all-pairs self-test (the area with every pair
# connected, the test's time). Boots through build/runner/client.py. Prints one
# @json {"kind":"cores_scaling",...} per core count and writes
# build/out/bench/cores_scaling.{json,md}.
import argparse
import json
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "build"))
sys.path.insert(0, str(REPO / "build" / "bench"))
from runner import client, qemu_binary  # noqa: E402
from bench_output import OUT, add_smoke_option  # noqa: E402

SMOKE_CORES = 16  # the smallest count the benchmark measures
MARKER = "@json "
OLD_ENTRY_BYTES = 1152  # before on-demand entries: every pair had a 16-slot ring at boot


def parse_arguments():
    parser = argparse.ArgumentParser(description="inter-core area size and boot time per core count")
    parser.add_argument("--cores", type=int, nargs="+", default=[16, 64, 128, 256])
    parser.add_argument("--runs", type=int, default=3, help="plain boots per core count (median)")
    parser.add_argument("--timeout", type=int, default=600)
    add_smoke_option(parser)
    arguments = parser.parse_args()
    if arguments.smoke:  # one plain boot and one self-test boot at 16 cores
        arguments.cores, arguments.runs = [SMOKE_CORES], 1
    return arguments


def machine_flags(cores):
    memory = "256M" if cores <= 64 else "512M" if cores <= 128 else "1G"
    flags = ["--smp", str(cores), "--mem", memory, "--accel", "tcg", "--disk", "none",
             "--append", "ap_timeout_ms=120000"]
    if cores > 255:
        flags += ["--machine", "q35", "--x2apic"]
    return flags


def boot(cores, timeout, *extra):
    """(seconds, @json objects) of one boot; raises if it failed."""
    run = client.run([*machine_flags(cores), *extra], timeout)
    if run.rc != 0:
        raise RuntimeError(f"{cores} cores: {run.describe()[-5000:]}")
    return run.seconds, run.jsons


def the(results, kind):
    found = [item for item in results if item.get("kind") == kind]
    if len(found) != 1:
        raise RuntimeError(f"expected one '{kind}' result, got {len(found)}")
    return found[0]


def measure(cores, runs, timeout):
    plain = [boot(cores, timeout) for _ in range(runs)]
    at_boot = the(plain[0][1], "intercore")
    tested_seconds, tested = boot(cores, timeout, "--append", "selftest=intercore")
    selftest = the(tested, "selftest")
    if not selftest.get("ok"):
        raise RuntimeError(f"{cores} cores: the self-test failed: {selftest}")
    return {"kind": "cores_scaling", "cores": cores, "slots": at_boot["slots"],
            "entry_bytes": at_boot["entry_bytes"], "table_bytes": at_boot["table_bytes"],
            "boot_entries": at_boot["entries"], "boot_area_bytes": at_boot["bytes"],
            "all_pairs_entries": selftest["area_entries"], "all_pairs_area_bytes": selftest["area_bytes"],
            "old_area_bytes": 64 + cores * cores * OLD_ENTRY_BYTES,
            "boot_seconds": round(statistics.median(seconds for seconds, _ in plain), 2),
            "boot_runs": runs, "selftest_boot_seconds": round(tested_seconds, 2),
            "selftest_messages": selftest["messages"], "selftest_us": selftest["elapsed_us"]}


def kib(value):
    return f"{value / 1024:,.0f} KiB" if value < 1 << 20 else f"{value / (1 << 20):,.1f} MiB"


def markdown(rows):
    lines = ["| cores | slots | area at boot | area, all pairs connected | before (all pairs, 16 slots) "
             "| boot (s) | boot + self-test (s) |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    for row in rows:
        lines.append(f"| {row['cores']} | {row['slots']} | {kib(row['boot_area_bytes'])} "
                     f"| {kib(row['all_pairs_area_bytes'])} | {kib(row['old_area_bytes'])} "
                     f"| {row['boot_seconds']} | {row['selftest_boot_seconds']} |")
    return "\n".join(lines) + "\n"


def qemu_said():
    """Which QEMU build/run runs, as it says it."""
    binary, source = qemu_binary.choose(str(REPO))
    return f"QEMU {qemu_binary.version(binary)} ({source})"


def main():
    arguments = parse_arguments()
    print(f"cores_scaling: {qemu_said()}", flush=True)
    rows = []
    for cores in arguments.cores:
        row = measure(cores, arguments.runs, arguments.timeout)
        print(MARKER + json.dumps(row), flush=True)
        rows.append(row)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "cores_scaling.json").write_text(json.dumps(rows, indent=1) + "\n")
    (OUT / "cores_scaling.md").write_text(f"{qemu_said()}\n\n" + markdown(rows))
    print(markdown(rows))


if __name__ == "__main__":
    main()
