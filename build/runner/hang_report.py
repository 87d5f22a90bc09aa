# At a timeout, asks the still-running QEMU (through its human monitor on a unix socket) where
# every vCPU is, and names the kernel functions: a hung run then says which code each core was
# in, e.g. "cpu 1: rip ffffffffc0003a10 intercore_wait (p-kernel, cpl 0)".
import bisect
import os
import re
import subprocess
import tempfile

from . import monitor

RIP = re.compile(rb"RIP=([0-9a-f]{16})")
CPL = re.compile(rb"CPL=(\d)")


def monitor_path():
    """A fresh socket path for this run's QEMU monitor."""
    directory = tempfile.mkdtemp(prefix="formica-monitor-")
    return os.path.join(directory, "monitor.sock")


def with_monitor(argv, path):
    """argv with `-monitor none` replaced by a unix-socket monitor at `path`."""
    patched = list(argv)
    for index in range(len(patched) - 1):
        if patched[index] == "-monitor" and patched[index + 1] == "none":
            patched[index + 1] = f"unix:{path},server=on,wait=off"
    return patched


def _symbols(elf_paths):
    """Sorted (address, name, image) of the text symbols of the kernel images."""
    table = []
    for image, path in elf_paths.items():
        try:
            listing = subprocess.run(["nm", "-n", path], capture_output=True, text=True).stdout
        except OSError:
            continue
        for line in listing.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "tT":
                table.append((int(parts[0], 16), parts[2], image))
    table.sort()
    return table


def _name(table, address):
    index = bisect.bisect_right([entry[0] for entry in table], address) - 1
    if index < 0 or address < 0xffff800000000000:
        return "user code"
    return f"{table[index][1]} ({table[index][2]})"


def report(path, elf_paths):
    """Lines describing each vCPU; empty when the monitor does not answer."""
    try:
        output = monitor.command(path, "info registers -a")
    except OSError:
        return []
    table = _symbols(elf_paths)
    lines = []
    for cpu, (rip, cpl) in enumerate(zip(RIP.findall(output), CPL.findall(output))):
        address = int(rip, 16)
        lines.append(f"cpu {cpu}: rip {address:016x} {_name(table, address)}, cpl {int(cpl)}")
    return lines
