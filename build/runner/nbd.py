# --nbd SIZE: a network block export on the host, attached to the guest as its second
# virtio-blk disk, which the pager's block backend uses as remote memory (docs/pager.md).
# The server is nbdkit's memory plugin (Debian package nbdkit) listening on a Unix socket
# in a fresh private directory: reachable from this host only. It never outlives the run.
import os
import shutil
import subprocess
import sys
import tempfile
import time

from .launch import kill_group

NBDKIT = "nbdkit"
SOCKET_WAIT_SECONDS = 10.0


def drive_args(socket_path):
    """The guest's second virtio-blk disk, on QEMU's nbd: block driver."""
    return ["-drive", f"file=nbd:unix:{socket_path},format=raw,if=none,id=nbd0,cache=none",
            "-device", "virtio-blk-pci,drive=nbd0"]


class NbdServer:
    """Starts and stops one nbdkit memory export of `size_mib` MiB."""

    def __init__(self, size_mib, dry_run=False):
        self.size_mib = size_mib
        self.directory = tempfile.mkdtemp(prefix="formica-nbd-") if not dry_run else "/tmp/NBD"
        self.socket_path = os.path.join(self.directory, "export.sock")
        self.process = None

    def argv(self):
        return [NBDKIT, "--foreground", "--exit-with-parent", "--unix", self.socket_path,
                "memory", f"size={self.size_mib}M"]

    def main_args(self):
        return drive_args(self.socket_path)

    def start(self):
        """Start nbdkit and wait for its socket; False (with a message) when it cannot."""
        if shutil.which(NBDKIT) is None:
            _note("--nbd: nbdkit is not installed (run build/deps.sh)")
            return False
        self.process = subprocess.Popen(self.argv(), stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        start_new_session=True)
        deadline = time.monotonic() + SOCKET_WAIT_SECONDS
        while time.monotonic() < deadline:
            if os.path.exists(self.socket_path):
                _note(f"nbd: nbdkit memory export of {self.size_mib} MiB, pid "
                      f"{self.process.pid}, socket {self.socket_path}")
                return True
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        error = self.process.stderr.read().decode(errors="replace").strip() \
            if self.process.poll() is not None else "no socket after 10 s"
        _note(f"nbd: nbdkit failed to start: {error}")
        self.stop()
        return False

    def stop(self):
        if self.process is not None:
            kill_group(self.process)
            self.process = None
        shutil.rmtree(self.directory, ignore_errors=True)


def _note(message):
    print(f"build/run: {message}", file=sys.stderr, flush=True)
