# Chooses the QEMU accelerator for --accel auto: TCG unless KVM proves faster on a probe.
# The probe boots a tiny hand-assembled multiboot guest (a compute loop plus port I/O)
# under TCG and under KVM; the verdict is cached in build/out/accel-probe per host boot.
import fcntl
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

PROBE_LOOPS = 100_000_000  # TCG runs this in about 0.2 s; nested KVM here takes 30+ s
PROBE_PORT_WRITES = 2_000  # each one a VM exit under KVM
TCG_PROBE_TIMEOUT = 20.0
MIN_KVM_PROBE_TIMEOUT = 1.0


def kvm_usable():
    return os.access("/dev/kvm", os.R_OK | os.W_OK)


def resolve(requested, icount, qemu, out_dir):
    """Return 'kvm' or 'tcg' for the requested --accel value."""
    if requested != "auto":
        return requested
    if icount or not kvm_usable():
        return "tcg"
    return _cached_probe(qemu, out_dir)["accel"]


def _boot_id():
    try:
        with open("/proc/sys/kernel/random/boot_id") as boot_id_file:
            return boot_id_file.read().strip()
    except OSError:
        return "unknown"


def _cached_probe(qemu, out_dir):
    """Probe once per host boot and QEMU binary; a lock keeps parallel runs from probing twice."""
    os.makedirs(out_dir, exist_ok=True)
    cache_path = os.path.join(out_dir, "accel-probe")
    key = {"boot_id": _boot_id(), "qemu": qemu}
    with open(cache_path + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(cache_path) as cache_file:
                cached = json.load(cache_file)
            if all(cached.get(name) == value for name, value in key.items()):
                return cached
        except (OSError, ValueError):
            pass
        print("build/run: probing KVM speed (cached in build/out/accel-probe) ...",
              file=sys.stderr, flush=True)
        result = dict(key, **probe(qemu))
        with open(cache_path, "w") as cache_file:
            json.dump(result, cache_file, indent=1)
            cache_file.write("\n")
        print(f"build/run: accel probe chose {result['accel']} ({result['reason']})",
              file=sys.stderr, flush=True)
        return result


def probe(qemu):
    """Time the probe guest under TCG, then under KVM with a bound derived from TCG's time."""
    with tempfile.TemporaryDirectory(prefix="formica-probe-") as tmp:
        guest = os.path.join(tmp, "probe.bin")
        with open(guest, "wb") as guest_file:
            guest_file.write(probe_guest())
        tcg_seconds = _time_guest(qemu, guest, "tcg", "qemu64", TCG_PROBE_TIMEOUT)
        if tcg_seconds is None:
            return {"accel": "tcg", "tcg_seconds": None, "kvm_seconds": None,
                    "reason": "the probe guest failed under TCG"}
        kvm_bound = max(2 * tcg_seconds, MIN_KVM_PROBE_TIMEOUT)
        kvm_seconds = _time_guest(qemu, guest, "kvm", "host", kvm_bound)
    result = {"tcg_seconds": round(tcg_seconds, 3),
              "kvm_seconds": None if kvm_seconds is None else round(kvm_seconds, 3)}
    if kvm_seconds is None:
        result.update(accel="tcg", reason=f"KVM failed or took over {kvm_bound:.1f} s")
    elif kvm_seconds < tcg_seconds:
        result.update(accel="kvm", reason=f"KVM {kvm_seconds:.2f} s < TCG {tcg_seconds:.2f} s")
    else:
        result.update(accel="tcg", reason=f"KVM {kvm_seconds:.2f} s >= TCG {tcg_seconds:.2f} s")
    return result


def _time_guest(qemu, guest, accel, cpu, timeout):
    """Seconds until the probe guest reported success, or None on failure or timeout."""
    argv = [qemu, "-accel", accel, "-cpu", cpu, "-m", "32M", "-kernel", guest,
            "-device", "isa-debug-exit,iobase=0xf4,iosize=4", "-no-reboot",
            "-display", "none", "-serial", "none", "-monitor", "none"]
    start = time.monotonic()
    try:
        completed = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, timeout=timeout)
    except (subprocess.TimeoutExpired, OSError):
        return None
    elapsed = time.monotonic() - start
    return elapsed if completed.returncode == 1 else None


def probe_guest():
    """A flat multiboot1 image (a.out kludge) that QEMU -kernel loads at 1 MiB.

    32-bit code: a dec/jnz loop of PROBE_LOOPS, PROBE_PORT_WRITES writes to port 0x80,
    then 'out 0xf4, 0' so isa-debug-exit ends QEMU with status 1.
    """
    magic, flags, load_address = 0x1BADB002, 0x00010000, 0x100000
    checksum = -(magic + flags) & 0xFFFFFFFF
    header = struct.pack("<8I", magic, flags, checksum,
                         load_address,       # header_addr: the header is the first byte
                         load_address,       # load_addr
                         0, 0,               # load_end_addr, bss_end_addr: the whole file, no bss
                         load_address + 32)  # entry_addr: right after this 32-byte header
    code = (b"\xB9" + struct.pack("<I", PROBE_LOOPS)          # mov ecx, PROBE_LOOPS
            + b"\x49\x75\xFD"                                 # 1: dec ecx; jnz 1b
            + b"\xBB" + struct.pack("<I", PROBE_PORT_WRITES)  # mov ebx, PROBE_PORT_WRITES
            + b"\xE6\x80\x4B\x75\xFB"                         # 2: out 0x80, al; dec ebx; jnz 2b
            + b"\x31\xC0\xE6\xF4"                             # xor eax, eax; out 0xf4, al
            + b"\xF4\xEB\xFD")                                # 3: hlt; jmp 3b
    return header + code
