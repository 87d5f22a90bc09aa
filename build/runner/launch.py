# Runs QEMU in its own process group, streams the serial output live, and enforces the timeout.
# Maps QEMU's exit status (isa-debug-exit: 1 = guest success, 3 = guest failure) and any
# "PANIC" serial line onto the runner's exit status.
import os
import selectors
import signal
import subprocess
import sys
import time

from . import hang_report

EXIT_SUCCESS = 0
EXIT_FAILURE = 1
EXIT_TIMEOUT = 124
# The kernel writes 0x10 (success) or 0x11 (failure) to isa-debug-exit; QEMU exits with
# (value << 1) | 1. Both differ from 1, which QEMU itself returns when it cannot start.
GUEST_SUCCESS_STATUS = 33
GUEST_FAILURE_STATUS = 35
PANIC_MARKER = b"PANIC"
# The kernel prints this just before a successful power-off. QEMU also exits 0 when a guest
# triple-faults under -no-reboot, so exit status 0 counts as success only after this line.
POWER_OFF_MARKER = b"powering off (status 0)"
PANIC_GRACE_SECONDS = 5.0  # after a PANIC line the guest gets this long to exit by itself
KILL_GRACE_SECONDS = 2.0


class _Terminated(Exception):
    """The runner itself got SIGTERM or SIGHUP."""


def _raise_terminated(signum, _frame):
    raise _Terminated(signum)


def run(argv, timeout, log_path=None, interactive=False, kernels=None, session=None):
    """Run QEMU; return the runner exit status. QEMU never outlives this call.
    Interactive runs hand our terminal to QEMU's serial port (the guest shell reads it).
    At a timeout the report names where each vCPU was (`kernels`: image name -> ELF path).
    `session` (console.Session) types keys and saves the screen through QEMU's QMP."""
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _raise_terminated)
    monitor = hang_report.monitor_path()
    argv = hang_report.with_monitor(argv, monitor)
    log_file = open(log_path, "wb") if log_path else None
    process = subprocess.Popen(argv, stdin=None if interactive else subprocess.DEVNULL,
                               stdout=subprocess.PIPE,
                               start_new_session=True)
    watcher = _SerialWatcher(log_file)
    if session is not None:
        session.start()
    try:
        outcome = _watch(process, watcher, timeout)
        if outcome == "timeout" and process.poll() is None:
            for line in hang_report.report(monitor, kernels or {}):
                _note(f"at the timeout, {line}")
        if outcome != "exited" and session is not None and process.poll() is None:
            session.at_timeout()
    except KeyboardInterrupt:
        _note("interrupted; killed QEMU")
        return 130
    except _Terminated as terminated:
        _note("terminated; killed QEMU")
        return 128 + terminated.args[0]
    finally:
        kill_group(process)
        watcher.finish()
        for line in session.finish() if session is not None else []:
            _note(line)
        _remove_socket(monitor)
        if log_file:
            log_file.close()
    return _status(outcome, process.returncode, watcher, timeout)


def _watch(process, watcher, timeout):
    """Pump output until QEMU exits; return 'exited', 'timeout' or 'panic-hang'."""
    deadline = time.monotonic() + timeout
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    stdout_fd = process.stdout.fileno()
    while True:
        limit = deadline
        if watcher.panic_time is not None:
            limit = min(limit, watcher.panic_time + PANIC_GRACE_SECONDS)
        remaining = limit - time.monotonic()
        if remaining <= 0:
            return "timeout" if limit == deadline else "panic-hang"
        if not selector.select(remaining):
            continue
        chunk = os.read(stdout_fd, 65536)
        if not chunk:
            break
        watcher.feed(chunk)
    selector.close()
    try:
        process.wait(max(deadline - time.monotonic(), 0.1))
    except subprocess.TimeoutExpired:
        return "timeout"
    return "exited"


def _remove_socket(path):
    for remove, target in ((os.remove, path), (os.rmdir, os.path.dirname(path))):
        try:
            remove(target)
        except OSError:
            pass


def _status(outcome, qemu_status, watcher, timeout):
    panic_seen = watcher.panic_seen
    if outcome == "timeout" and not panic_seen:
        _note(f"TIMEOUT: no result after {timeout:g} s; killed QEMU")
        return EXIT_TIMEOUT
    if outcome in ("panic-hang", "timeout"):
        _note("guest panicked and did not exit by itself; killed QEMU")
        return EXIT_FAILURE
    if panic_seen:
        _note(f"guest panicked (QEMU exit status {qemu_status})")
        return EXIT_FAILURE
    if qemu_status == GUEST_SUCCESS_STATUS:
        _note("guest reported success")
        return EXIT_SUCCESS
    if qemu_status == 0 and watcher.power_off_seen:
        _note("guest powered off")
        return EXIT_SUCCESS
    if qemu_status == 0:
        _note("guest stopped without reporting success (a reset or triple fault under -no-reboot)")
        return EXIT_FAILURE
    if qemu_status == GUEST_FAILURE_STATUS:
        _note("guest reported failure")
        return EXIT_FAILURE
    _note(f"QEMU failed (exit status {qemu_status})")
    return EXIT_FAILURE


def kill_group(process):
    """SIGTERM, then SIGKILL, QEMU's whole process group if QEMU is still running.
    `process` must lead its own group (Popen with start_new_session=True); the memory
    nodes (memnodes.py) are stopped the same way."""
    if process.poll() is not None:
        return
    for signum in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, signum)
        except ProcessLookupError:
            return
        try:
            process.wait(KILL_GRACE_SECONDS)
            return
        except subprocess.TimeoutExpired:
            continue


def _note(message):
    print(f"build/run: {message}", file=sys.stderr, flush=True)


class _SerialWatcher:
    """Echoes serial output to our stdout and the log, and spots PANIC lines."""

    def __init__(self, log_file):
        self.log_file = log_file
        self.partial_line = b""
        self.panic_seen = False
        self.panic_time = None
        self.power_off_seen = False
        self.echo = True

    def feed(self, chunk):
        self._echo(chunk)
        if self.log_file:
            self.log_file.write(chunk)
            self.log_file.flush()
        lines = (self.partial_line + chunk).split(b"\n")
        self.partial_line = lines.pop()
        for line in lines + [self.partial_line]:
            self._check(line)

    def finish(self):
        if self.partial_line:
            self._echo(b"\n")
            self.partial_line = b""

    def _check(self, line):
        if POWER_OFF_MARKER in line:
            self.power_off_seen = True
        if PANIC_MARKER in line and not self.panic_seen:
            self.panic_seen = True
            self.panic_time = time.monotonic()

    def _echo(self, data):
        if not self.echo:
            return
        try:
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        except BrokenPipeError:
            self.echo = False  # reader went away (e.g. `| head`); keep running QEMU to the end
