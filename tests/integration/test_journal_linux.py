# Linux and Formica read each other's ext3 (issue 13, docs/journal.md). Formica runs
# tests/programs/churn on the default ext3 image and syncs; the Linux guest of the evaluation
# (build/linux/, booted as build/bench/linux_guest.py does, kernel option exchange=1)
# mounts it as ext3 and prints the md5 of every fsynced file, which must be the bytes
# churn wrote; then Linux writes files, removes some, syncs and powers off without
# unmounting, so its journal needs recovery. Formica boots the image, replays Linux's
# journal, and reads Linux's files byte for byte (cksum against the host's); e2fsck -fn
# is clean afterwards. Needs the Linux guest, which `make test` builds (`make linux-guest`);
# run alone without it the test is skipped, and .ci/run fails on that skip.
import hashlib
import subprocess
import sys

import pytest

import formica
from formica import OUT_DIR, run
from test_journal import assert_clean, churn_bytes

sys.path.insert(0, str(formica.REPO_ROOT / "build" / "bench"))
import linux_guest  # noqa: E402

LINUX_OUT = formica.REPO_ROOT / "build" / "out" / "linux"
TIMEOUT = 600

pytestmark = pytest.mark.skipif(not (LINUX_OUT / "vmlinuz").is_file(),
                                reason="no Linux guest: run make linux-guest")


def linux_exchange(image):
    command = linux_guest.qemu_command(1, None, "256M", "tcg", False, "", image,
                                       append="exchange=1")
    completed = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True,
                               timeout=TIMEOUT)
    text = completed.stdout.decode(errors="replace")
    results = formica.parse_json_lines(text.splitlines())
    assert any(r["kind"] == "linux_done" for r in results), text[-3000:]
    assert not [r for r in results if r["kind"] == "linux_error"], text[-3000:]
    return results


def host_cksum(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    words = subprocess.run(["cksum", str(path)], capture_output=True, text=True,
                           check=True).stdout.split()
    return words[0], words[1]


def test_linux_and_formica_exchange_ext3(built, tmp_path):
    image = tmp_path / "disk.img"
    image.write_bytes((OUT_DIR / "disk.img").read_bytes())
    formica_run = run("--smp", "3", "--disk", str(image), "--cmd", "run churn 240; sync",
                      timeout=TIMEOUT)
    assert formica_run.rc == 0, formica_run.describe()
    fsynced = formica_run.kinds("churn_fsynced")
    assert fsynced, formica_run.describe()
    assert_clean(image)

    results = linux_exchange(image)
    seen = {r["path"]: r["md5"] for r in results if r["kind"] == "linux_file"}
    expected = {e["path"]: hashlib.md5(churn_bytes(e["seed"], e["bytes"])).hexdigest()
                for e in fsynced}
    assert seen == expected

    sequence = "".join(f"{i}\n" for i in range(1, 30001)).encode()
    busybox = (LINUX_OUT / "busybox" / "bin" / "busybox").read_bytes()
    files = {"/linux/seq.txt": sequence, "/linux/deep/er/busybox": busybox,
             "/linux/hello.txt": b"written by Linux\n"}
    back = run("--smp", "3", "--disk", str(image), "--cmd",
               "cksum " + " ".join(files) + "; ls /linux; stat /churn/keep/k5", timeout=TIMEOUT)
    assert "fs: journal replayed:" in back.text, back.describe()
    for path, data in files.items():
        crc, size = host_cksum(tmp_path, path.rsplit("/", 1)[1], data)
        assert f"{crc} {size} {path}" in back.text, back.describe()
    assert "gone.txt" not in back.text
    assert "stat: /churn/keep/k5" in back.text, back.describe()  # removed by Linux
    assert_clean(image)
