#!/usr/bin/env python3
# build/profile/profile.py: runs shell commands in Formica under QEMU with the
# insn_profile plugin (--icount, -cpu max,-erms,-fsrm) and prints where the
# instructions went: per stage (each program's user code, the kernel working
# for it, the kernels' own scheduler) and per function, optionally per request.
# With --baseline CMD2 it runs CMD2 too and subtracts, function by function,
# so set-up work common to both cancels out (e.g. Bonnie with -n 4000 minus
# -n 2000, --per 2000: one reference). The plugin is built on first use
# against the qemu-plugin.h of the QEMU that runs it (FORMICA_QEMU). It boots through
# build/runner (client.run), as every benchmark does.
# Usage: build/profile/profile.py --cmd "run bonnie -n 4000" [--baseline "..."] [--per N]
import argparse
import bisect
import collections
import json
import os
import pathlib
import shutil
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "build"))
from runner import client  # noqa: E402

OUT = REPO / "build" / "out"
KERNEL_SPACE = 0xFFFF800000000000


class Symbols:
    """Function symbols of one ELF file, for address -> name."""

    def __init__(self, path):
        self.path = path
        self.starts, self.names, self.sizes = [], [], {}
        listing = subprocess.run(["nm", "-n", "-S", "--defined-only", str(path)], capture_output=True,
                                 text=True, check=True).stdout
        for line in listing.splitlines():
            parts = line.split()
            if len(parts) == 3:  # no size (assembly): "address type name"
                parts = [parts[0], "0", parts[1], parts[2]]
            if len(parts) != 4:
                continue
            address, size, kind, symbol = int(parts[0], 16), int(parts[1], 16), parts[2], parts[3]
            self.sizes[symbol] = (address, size)
            if kind in "tTwW":
                self.starts.append(address)
                self.names.append(symbol)

    def name(self, address):
        index = bisect.bisect_right(self.starts, address) - 1
        return self.names[index] if index >= 0 else f"?{address:x}"

    def address_and_size(self, symbol):
        if symbol not in self.sizes:
            raise SystemExit(f"profile: {self.path} has no symbol {symbol}: rebuild with `make`")
        return self.sizes[symbol]


PROFILE_MARK_SLOTS = 4096  # kernel/profile_mark.h


def mark_argument(kernel):
    pads, _ = kernel.address_and_size("profile_pads")
    return f"marks={pads:x}:{PROFILE_MARK_SLOTS:x}"


def build_plugin(qemu):
    """The insn_profile plugin built against `qemu`'s own plugin header."""
    header = subprocess.run([str(REPO / "build" / "profile" / "plugin_header.sh"), qemu],
                            capture_output=True, text=True)
    if header.returncode != 0:
        raise SystemExit(header.stderr.strip() or "profile: no qemu-plugin.h for " + qemu)
    include = header.stdout.strip().splitlines()[-1]
    source = REPO / "build" / "profile" / "insn_profile.c"
    plugin = OUT / "profile" / f"insn_profile-{pathlib.Path(include).name}.so"
    if not plugin.exists() or plugin.stat().st_mtime < source.stat().st_mtime:
        subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", f"-I{include}",
                        str(source), "-o", str(plugin)], check=True)
    return str(plugin)


def run_guest(arguments, command_line, kernels, counts_path):
    """Boots through build/runner with the plugin; (pid -> program, the other @json results)."""
    if counts_path.exists():
        counts_path.unlink()
    plugin = f"{arguments.plugin},out={counts_path}," + ",".join(mark_argument(k) for k in kernels)
    flags = ["--icount", "--accel", "tcg", "--cpu", arguments.cpu, "--smp", str(arguments.smp),
             "--append", " ".join(["profile"] + ([arguments.append] if arguments.append else [])), "--qemu", f"-plugin {plugin}", "--cmd", command_line]
    if arguments.placement:
        flags += ["--placement", arguments.placement]
    if arguments.disk:
        flags += ["--disk", arguments.disk]
        shutil.copyfile(OUT / "disk.img", arguments.disk)  # fresh for each run
    if arguments.nvm_tier:
        pathlib.Path(arguments.nvm_tier.split(":")[0]).unlink(missing_ok=True)  # a blank tier each run
        flags += ["--nvm-tier", arguments.nvm_tier]
    if arguments.memnodes:
        flags += ["--memnodes", str(arguments.memnodes)]  # the nodes run without the plugin
    completed = client.run(flags, arguments.timeout)
    if completed.rc != 0:
        sys.stderr.write(completed.describe()[-4000:] + "\n")
        raise SystemExit(f"profile: the guest run failed (status {completed.rc})")
    if not counts_path.exists():
        raise SystemExit("profile: the plugin wrote no counts (did QEMU load it?)")
    programs, results = {0: "(scheduler)"}, []
    for record in completed.jsons:
        if record["kind"] == "profile_process":
            programs[record["pid"]] = record["program"]
        else:
            results.append(record)
    return programs, results


def attribute(counts_path, programs, kernels, user_symbols):
    """(stage, function) -> instructions."""
    by_function = collections.Counter()
    with open(counts_path) as counts:
        for line in counts:
            vcpu, pid, address, instructions, _ = line.split()
            pid, address, instructions = int(pid), int(address, 16), int(instructions)
            program = programs.get(pid, f"pid {pid}")
            if address >= KERNEL_SPACE:
                kernel = kernels[0] if vcpu == "0" else kernels[1]
                side = "m-kernel" if vcpu == "0" else "p-kernel"
                stage = f"{program} / {side}" if pid else f"(scheduler) / {side}"
                function = kernel.name(address)
            else:
                stage = f"{program} / user"
                symbols = user_symbols.get(program)
                function = symbols.name(address) if symbols else f"?{address:x}"
            by_function[(stage, function)] += instructions
    return by_function


def report(by_function, per, top):
    total = sum(by_function.values())
    stages = collections.Counter()
    for (stage, _), count in by_function.items():
        stages[stage] += count
    unit = f"per {per:,}" if per > 1 else "total"
    print(f"profile: {total:,} instructions executed ({total / per:,.0f} {unit.replace('total', 'in all')})")
    print(f"\n{'stage':<34} {'instructions':>14} {'/ request' if per > 1 else '':>11} {'share':>6}")
    for stage, count in stages.most_common():
        print(f"{stage:<34} {count:>14,} {count / per:>11,.0f} {100 * count / total:>5.1f}%")
    print(f"\ntop {top} functions")
    print(f"{'stage':<34} {'function':<34} {'instructions':>14} {'/ request' if per > 1 else '':>11}")
    for (stage, function), count in by_function.most_common(top):
        print(f"{stage:<34} {function:<34} {count:>14,} {count / per:>11,.0f}")
    return total, stages


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--plugin", help="a built insn_profile .so (default: build it for FORMICA_QEMU)")
    parser.add_argument("--cmd", required=True, help="shell commands, as build/run --cmd")
    parser.add_argument("--baseline", help="commands whose counts are subtracted")
    parser.add_argument("--per", type=int, default=1, help="divide by this many requests")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--placement", default="1")
    parser.add_argument("--smp", type=int, default=2)
    parser.add_argument("--cpu", default="max,-erms,-fsrm")
    parser.add_argument("--disk", help="where the fresh copy of build/out/disk.img each run gets goes")
    parser.add_argument("--nvm-tier", metavar="FILE[:SIZE]", help="BLK's NVM tier (made blank for each run)")
    parser.add_argument("--append", help="more kernel options (as build/run --append), e.g. blk_cache_kib=2048")
    parser.add_argument("--memnodes", type=int, default=0,
                        help="memory nodes beside the profiled machine (build/run --memnodes)")
    parser.add_argument("--timeout", type=int, default=900)
    parser.add_argument("--json", default=str(OUT / "profile" / "profile.json"))
    arguments = parser.parse_args()
    out_dir = OUT / "profile"
    out_dir.mkdir(parents=True, exist_ok=True)
    arguments.disk = arguments.disk or str(out_dir / "disk.img")
    arguments.plugin = arguments.plugin or build_plugin(os.environ.get("FORMICA_QEMU", "qemu-system-x86_64"))
    kernels = [Symbols(OUT / "mkernel.elf"), Symbols(OUT / "pkernel.elf")]
    user_symbols = {path.name: Symbols(path) for path in sorted((OUT / "initrd" / "bin").iterdir())}
    counts_path = out_dir / "counts.txt"
    programs, results = run_guest(arguments, arguments.cmd, kernels, counts_path)
    by_function = attribute(counts_path, programs, kernels, user_symbols)
    if arguments.baseline:
        base_path = out_dir / "counts-baseline.txt"
        base_programs, _ = run_guest(arguments, arguments.baseline, kernels, base_path)
        by_function.subtract(attribute(base_path, base_programs, kernels, user_symbols))
        by_function = collections.Counter({k: v for k, v in by_function.items() if v != 0})
    for record in results:
        if record.get("kind") in ("bonnie", "ipcbench"):
            print(f"guest: {json.dumps(record)}")
    total, stages = report(by_function, arguments.per, arguments.top)
    with open(arguments.json, "w") as out:
        json.dump({"kind": "profile", "cmd": arguments.cmd, "baseline": arguments.baseline, "per": arguments.per, "total": total,
                   "stages": dict(stages),
                   "functions": [{"stage": s, "function": f, "instructions": c}
                                 for (s, f), c in by_function.most_common()]}, out, indent=1)
    print(f"\nprofile: {arguments.json}, raw counts {counts_path}")


if __name__ == "__main__":
    main()
