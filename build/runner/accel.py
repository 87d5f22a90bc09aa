# Chooses the QEMU accelerator for --accel auto (TCG unless KVM proves faster on a probe),
# the CPU model KVM runs with here (the first of KVM_CPU_MODELS that QEMU can start), and
# the kernel options this host's KVM needs. The probes boot a tiny hand-assembled
# multiboot guest; their verdicts are cached in build/out/accel-probe per host boot.
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
CPU_MODEL_PROBE_TIMEOUT = 30.0
# Tried in order under KVM: the host's own CPU, then without IA32_ARCH_CAPABILITIES
# (QEMU aborts with "failed to set MSR 0x10a" where the host KVM refuses it), then QEMU's.
KVM_CPU_MODELS = ("host", "host,-arch-capabilities", "max", "qemu64")
# Linux's kvm_pvm module (KVM without VMX/SVM: user mode runs natively, kernel code in
# KVM's instruction emulator, which has no XSAVE/XRSTOR): the kernel must use fxsave.
PVM_MODULE = "/sys/module/kvm_pvm"
PVM_KERNEL_OPTIONS = "noxsave"


def kvm_usable():
    return os.access("/dev/kvm", os.R_OK | os.W_OK)


def resolve(requested, icount, qemu, out_dir):
    """Return 'kvm' or 'tcg' for the requested --accel value; auto says why it chose."""
    if requested != "auto":
        return requested
    if icount:
        return "tcg"
    if not kvm_usable():
        print("build/run: --accel auto: tcg (/dev/kvm is missing or not accessible)",
              file=sys.stderr, flush=True)
        return "tcg"
    model = kvm_cpu_model(qemu, out_dir)[0]  # its own probe: _cached does not nest
    verdict = _cached(qemu, out_dir, "speed", lambda: probe(qemu, model))
    print(f"build/run: --accel auto: {verdict['accel']} ({verdict['reason']}; "
          "cached in build/out/accel-probe)", file=sys.stderr, flush=True)
    return verdict["accel"]


def kvm_cpu_model(qemu, out_dir):
    """(model, reason): the first KVM_CPU_MODELS entry QEMU starts a guest with under KVM
    here, or (None, QEMU's message for 'host') when none does."""
    verdict = _cached(qemu, out_dir, "cpu_model", lambda: _probe_cpu_models(qemu))
    return verdict["model"], verdict["reason"]


def kvm_kernel_options():
    """(options, reason): what Formica's kernels need under this host's KVM."""
    if os.path.isdir(PVM_MODULE):
        return PVM_KERNEL_OPTIONS, ("/dev/kvm is kvm_pvm, which runs kernel code in KVM's "
                                    "instruction emulator (no XSAVE there)")
    return "", ""


def _probe_cpu_models(qemu):
    failures = []
    with tempfile.TemporaryDirectory(prefix="formica-probe-") as tmp:
        guest = os.path.join(tmp, "exit.bin")
        with open(guest, "wb") as guest_file:
            guest_file.write(probe_guest(loops=1, port_writes=1))
        for model in KVM_CPU_MODELS:
            seconds, message = _run_guest(qemu, guest, "kvm", model, CPU_MODEL_PROBE_TIMEOUT)
            if seconds is not None:
                reason = "the first that starts" if not failures else \
                    "; ".join(f"{failed}: {why}" for failed, why in failures)
                return {"model": model, "reason": reason}
            failures.append((model, message))
    return {"model": None, "reason": failures[0][1] if failures else "no model tried"}


def _boot_id():
    try:
        with open("/proc/sys/kernel/random/boot_id") as boot_id_file:
            return boot_id_file.read().strip()
    except OSError:
        return "unknown"


def _cached(qemu, out_dir, what, run_probe):
    """The verdict of probe `what`, made once per host boot and QEMU binary (a lock keeps
    parallel runs from probing twice) and kept in build/out/accel-probe."""
    os.makedirs(out_dir, exist_ok=True)
    cache_path = os.path.join(out_dir, "accel-probe")
    key = {"boot_id": _boot_id(), "qemu": qemu}
    with open(cache_path + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        cached = {}
        try:
            with open(cache_path) as cache_file:
                cached = json.load(cache_file)
        except (OSError, ValueError):
            pass
        if not all(cached.get(name) == value for name, value in key.items()):
            cached = dict(key)
        if what not in cached:
            print(f"build/run: probing KVM ({what}; cached in build/out/accel-probe) ...",
                  file=sys.stderr, flush=True)
            cached[what] = run_probe()
            with open(cache_path, "w") as cache_file:
                json.dump(cached, cache_file, indent=1)
                cache_file.write("\n")
        return cached[what]


def probe(qemu, kvm_model):
    """Time the probe guest under TCG, then under KVM with a bound derived from TCG's time."""
    if kvm_model is None:
        return {"accel": "tcg", "tcg_seconds": None, "kvm_seconds": None,
                "reason": "QEMU starts no CPU model under KVM here"}
    with tempfile.TemporaryDirectory(prefix="formica-probe-") as tmp:
        guest = os.path.join(tmp, "probe.bin")
        with open(guest, "wb") as guest_file:
            guest_file.write(probe_guest())
        tcg_seconds = _time_guest(qemu, guest, "tcg", "qemu64", TCG_PROBE_TIMEOUT)
        if tcg_seconds is None:
            return {"accel": "tcg", "tcg_seconds": None, "kvm_seconds": None,
                    "reason": "the probe guest failed under TCG"}
        kvm_bound = max(2 * tcg_seconds, MIN_KVM_PROBE_TIMEOUT)
        kvm_seconds = _time_guest(qemu, guest, "kvm", kvm_model, kvm_bound)
    result = {"tcg_seconds": round(tcg_seconds, 3),
              "kvm_seconds": None if kvm_seconds is None else round(kvm_seconds, 3)}
    if kvm_seconds is None:
        result.update(accel="tcg", reason=f"KVM (-cpu {kvm_model}) failed or took over "
                      f"{kvm_bound:.1f} s on a compute loop TCG ran in {tcg_seconds:.2f} s")
    elif kvm_seconds < tcg_seconds:
        result.update(accel="kvm", reason=f"KVM {kvm_seconds:.2f} s < TCG {tcg_seconds:.2f} s")
    else:
        result.update(accel="tcg", reason=f"KVM {kvm_seconds:.2f} s >= TCG {tcg_seconds:.2f} s")
    return result


def _time_guest(qemu, guest, accel, cpu, timeout):
    """Seconds until the probe guest reported success, or None on failure or timeout."""
    return _run_guest(qemu, guest, accel, cpu, timeout)[0]


def _run_guest(qemu, guest, accel, cpu, timeout):
    """(seconds, None) when the probe guest reported success, else (None, why): QEMU's
    last error line, or the timeout."""
    argv = [qemu, "-accel", accel, "-cpu", cpu, "-m", "32M", "-kernel", guest,
            "-device", "isa-debug-exit,iobase=0xf4,iosize=4", "-no-reboot",
            "-display", "none", "-serial", "none", "-monitor", "none"]
    start = time.monotonic()
    try:
        completed = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"no answer within {timeout:.0f} s"
    except OSError as error:
        return None, str(error)
    elapsed = time.monotonic() - start
    if completed.returncode == 1:
        return elapsed, None
    errors = [line for line in completed.stderr.splitlines() if "error" in line.lower()]
    lines = errors or completed.stderr.splitlines() or [f"exit status {completed.returncode}"]
    return None, lines[0].strip()


def probe_guest(loops=PROBE_LOOPS, port_writes=PROBE_PORT_WRITES):
    """A flat multiboot1 image (a.out kludge) that QEMU -kernel loads at 1 MiB.

    32-bit code: a dec/jnz loop of `loops`, `port_writes` writes to port 0x80,
    then 'out 0xf4, 0' so isa-debug-exit ends QEMU with status 1.
    """
    magic, flags, load_address = 0x1BADB002, 0x00010000, 0x100000
    checksum = -(magic + flags) & 0xFFFFFFFF
    header = struct.pack("<8I", magic, flags, checksum,
                         load_address,       # header_addr: the header is the first byte
                         load_address,       # load_addr
                         0, 0,               # load_end_addr, bss_end_addr: the whole file, no bss
                         load_address + 32)  # entry_addr: right after this 32-byte header
    code = (b"\xB9" + struct.pack("<I", loops)                # mov ecx, loops
            + b"\x49\x75\xFD"                                 # 1: dec ecx; jnz 1b
            + b"\xBB" + struct.pack("<I", port_writes)        # mov ebx, port_writes
            + b"\xE6\x80\x4B\x75\xFB"                         # 2: out 0x80, al; dec ebx; jnz 2b
            + b"\x31\xC0\xE6\xF4"                             # xor eax, eax; out 0xf4, al
            + b"\xF4\xEB\xFD")                                # 3: hlt; jmp 3b
    return header + code
