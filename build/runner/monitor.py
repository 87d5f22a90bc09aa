# QEMU's human monitor over a unix socket: one command, its answer. The runner asks it where
# each vCPU is at a timeout (hang_report.py); tests use it to act on a running machine (e.g.
# `set_link memnet off` takes the memory-node network's link down, docs/memnode.md).
import socket
import time

PROMPT = b"(qemu) "


def command(path, text, seconds=3.0):
    """Send `text` to the monitor at `path`; what it printed up to its next prompt (bytes).
    OSError when nothing listens there."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(seconds)
        connection.connect(path)
        connection.sendall(text.encode() + b"\n")
        data, deadline = b"", time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                chunk = connection.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            data += chunk
            if data.count(PROMPT) >= 2:  # the banner's prompt, then the one after the answer
                break
        return data
