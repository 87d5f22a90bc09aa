# build/bench/linux_guest.py: boots the Linux guest of build/linux/ (Debian's kernel,
# a busybox-static initramfs, the static Linux Bonnie) on the machine build/run gives
# Formica (build/runner: the same flags parsed the same way, the same QEMU machine, CPU
# model, vCPUs, sockets, memory, accelerator, -icount and virtio-blk disk) with Bonnie's
# file on ext2, runs a list of Bonnie commands and returns their @json objects (parsed
# by build/runner/client.py). Used by evaluate.py.
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "build"))
from runner import accel as runner_accel  # noqa: E402
from runner import client, options, qemu_binary, qemu_cmd  # noqa: E402

LINUX_OUT = REPO / "build" / "out" / "linux"


def build():
    """Runs build/linux/build.sh (apt-get download, dpkg -x, initramfs, static Bonnie)."""
    subprocess.run([str(REPO / "build" / "linux" / "build.sh")], check=True)


def kernel_version():
    path = LINUX_OUT / "kernel-version"
    return path.read_text().split()[0] if path.exists() else "unknown"


def encode_commands(commands):
    """Bonnie argument lists -> the init's bench= option (',' between, ':' for spaces)."""
    return ",".join(":".join(arguments) for arguments in commands)


# Every icount run, Formica's and Linux's, uses this CPU model: with ERMS/FSRM
# QEMU counts a `rep movsb` as one instruction per byte, which misstates
# Linux's copies (docs/evaluation.md).
ICOUNT_CPU = "max,-erms,-fsrm"


def guest_options(smp, sockets, memory, accel, icount, cpu=ICOUNT_CPU):
    """The build/run options of a Formica boot with these settings (`cpu`: the CPU
    model of an icount boot, plain "max" only to show what ERMS does to the count; and
    of a KVM boot, the model build/run chose there)."""
    flags = ["--smp", str(smp), "--mem", memory, "--accel", accel, "--disk", "none"]
    flags += ["--sockets", str(sockets)] if sockets else []
    flags += ["--icount", "--cpu", cpu] if icount else []
    if accel == "kvm" and not icount:
        flags += ["--cpu", cpu or runner_accel.kvm_cpu_model(qemu_binary.choose(str(REPO))[0],
                                                             str(REPO / "build" / "out"))[0] or "host"]
    return options.parse(flags, str(REPO))


def qemu_command(smp, sockets, memory, accel, icount, bench, disk, append="", cpu=ICOUNT_CPU,
                 settings=None):
    """The QEMU argv of a Linux boot running the Bonnie commands `bench` (an empty bench and an
    `append` naming another mode runs that mode instead: build/linux/init). `settings`, when
    given, are the build/run options the machine is built from (NVDIMMs, a throttled disk)."""
    qemu, _ = qemu_binary.choose(str(REPO), icount=icount)
    settings = settings or guest_options(smp, sockets, memory, accel, icount, cpu)
    if accel == "kvm":  # what Formica gets under this host's KVM, Linux gets too (noxsave)
        append = f"{append} {runner_accel.kvm_kernel_options()[0]}".strip()
    return (qemu_cmd.machine_argv(settings, accel, qemu)
            + ["-kernel", str(LINUX_OUT / "vmlinuz"), "-initrd", str(LINUX_OUT / "initramfs.cpio.gz"),
               "-append", f"console=ttyS0 quiet bench={bench} benchfs=ext2 {append}".rstrip()]
            + qemu_cmd.disk_argv(str(disk), "virtio", iops=getattr(settings, "disk_iops", 0))
            + qemu_cmd.nvdimm_argv(settings)
            + qemu_cmd.icount_argv(settings))


def boot(command, timeout=1800, log=None):
    """Runs the guest of `command` (qemu_command's argv) to its end. Returns the @json objects;
    raises RuntimeError when the guest did not finish (no linux_done) or reported an error."""
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise RuntimeError(f"Linux guest timed out after {timeout} s")
    lines = client.split_lines(output)
    if log:
        Path(log).write_text("\n".join(lines))
    results = client.parse_json_lines(lines)
    errors = [r for r in results if r.get("kind") == "linux_error"]
    done = any(r.get("kind") == "linux_done" for r in results)
    if errors or not done:
        raise RuntimeError("Linux guest failed: " + "\n".join(lines[-20:]))
    return results


def run(commands, smp, accel, icount=False, sockets=None, memory="256M", timeout=1800, log=None,
        cpu=ICOUNT_CPU):
    """Boots once and runs `commands` (lists of Bonnie arguments). Returns the @json
    objects; raises RuntimeError when the guest did not finish every command."""
    disk = LINUX_OUT / "bench-ext2.img"
    shutil.copyfile(LINUX_OUT / "ext2.img", disk)  # a fresh file system each boot
    command = qemu_command(smp, sockets, memory, accel, icount, encode_commands(commands), disk, cpu=cpu)
    return boot(command, timeout, log)


if __name__ == "__main__":
    # A smoke test: one readblock and one readbyte run on 2 vCPUs.
    start = time.monotonic()
    for result in run([["-p", "2", "-m", "readblock"], ["-p", "2", "-m", "readbyte"]], 2, "tcg"):
        print(result)
    print(f"{time.monotonic() - start:.1f} s")
