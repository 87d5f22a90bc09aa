# ext3 crash consistency (issue 13, docs/journal.md): tests/programs/churn makes metadata-heavy
# changes and fsyncs some files; QEMU is killed (SIGTERM to build/run, which kills QEMU's
# process group: a power cut for the guest) a chosen time after churn started. The next
# boot replays the journal; then `e2fsck -fn` must be clean and every file churn reported
# fsynced must read back exactly. FORMICA_CRASH_SWEEP=1 (make crash-sweep) tries many more
# kill points. Also: a journal with a feature FS does not support is refused, not mounted.
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

from formica import OUT_DIR, RUNNER, parse_json_lines, run
import disk_image  # noqa: E402 (build/, on the path through formica)

QUICK_POINTS = [0.3, 1.0, 2.5]
SWEEP_POINTS = [0.1 + 0.35 * i for i in range(24)]
BOOT_TIMEOUT = 120


def churn_byte(seed, offset):
    return (seed * 31 + offset * 7 + offset // 251) & 0xFF


def churn_bytes(seed, length):
    return bytes(churn_byte(seed, i) for i in range(length))


def assert_clean(image):
    completed = subprocess.run(["e2fsck", "-fn", str(image)], capture_output=True, text=True)
    assert completed.returncode == 0, completed.stdout + completed.stderr


def debugfs_cat(image, path):
    return subprocess.run(["debugfs", "-R", f"cat {path}", str(image)],
                          capture_output=True, check=True).stdout


def make_ext3(tmp_path, block_size):
    if block_size == 4096:
        image = tmp_path / "disk.img"
        shutil.copyfile(OUT_DIR / "disk.img", image)
        return image
    # the owners and modes of the build's images (build/disk_image.py): the shell's user may write
    return disk_image.make(tmp_path / "disk-1k-ext3.img", "ext3", 1024, "32M")


def churn_and_kill(image, seconds, *flags, commands="run churn", marker="churn_started"):
    """Boots, runs `commands`, kills QEMU `seconds` after `marker` appeared; the lines."""
    argv = [sys.executable, str(RUNNER), "--smp", "3", "--disk", str(image), *flags,
            "--cmd", commands, "--timeout", str(BOOT_TIMEOUT)]
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, errors="replace")
    lines, started = [], threading.Event()

    def pump():
        for line in process.stdout:
            lines.append(line.rstrip("\r\n"))
            if marker in line:
                started.set()

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        assert started.wait(BOOT_TIMEOUT), "churn never started:\n" + "\n".join(lines)
        time.sleep(seconds)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
        reader.join(timeout=10)
    return lines[:-1]  # the last line may have been cut by the kill


def check_after_crash(image, lines, *flags):
    fsynced = [entry for entry in parse_json_lines(lines) if entry["kind"] == "churn_fsynced"]
    assert not [entry for entry in parse_json_lines(lines) if entry["kind"] == "churn_error"]
    boot = run("--smp", "3", "--disk", str(image), *flags, "--cmd", "sync", timeout=BOOT_TIMEOUT)
    assert boot.rc == 0, boot.describe()
    assert "fs: mounted ext3 (ordered journal)" in boot.text, boot.describe()
    assert_clean(image)
    for entry in fsynced:
        assert debugfs_cat(image, entry["path"]) == churn_bytes(entry["seed"], entry["bytes"]), \
            entry
    return boot, len(fsynced)


def kill_points():
    return SWEEP_POINTS if os.environ.get("FORMICA_CRASH_SWEEP") else QUICK_POINTS


@pytest.mark.parametrize("seconds", kill_points())
def test_crash_during_churn(built, tmp_path, seconds):
    image = make_ext3(tmp_path, 4096)
    lines = churn_and_kill(image, seconds)
    boot, fsynced = check_after_crash(image, lines)
    print(f"killed {seconds} s into churn: {fsynced} fsynced files intact")


def test_crash_during_churn_1k_blocks(built, tmp_path):
    image = make_ext3(tmp_path, 1024)
    lines = churn_and_kill(image, 1.5)
    check_after_crash(image, lines)


def test_crash_during_churn_ahci(built, tmp_path):
    """The same on AHCI, whose barrier is FLUSH CACHE EXT."""
    image = make_ext3(tmp_path, 4096)
    lines = churn_and_kill(image, 1.2, "--disk-bus", "ahci")
    check_after_crash(image, lines, "--disk-bus", "ahci")


def test_replay_is_reported(built, tmp_path):
    """Killed mid-churn, the journal holds committed transactions the next boot replays.
    Whether a kill finds committed but unwritten transactions depends on where churn is
    (a checkpoint may just have written them home), so up to three kill points are
    tried; every boot must be clean, and one of them must report its replay."""
    boots = []
    for seconds in (2.0, 1.3, 2.7):
        image = make_ext3(tmp_path, 4096)
        lines = churn_and_kill(image, seconds)
        boot, _ = check_after_crash(image, lines)
        if "fs: journal replayed:" in boot.text:
            return
        boots.append(boot)
    assert False, "no kill point left a journal to replay:\n" + boots[-1].describe()


def churn_listing(result):
    """The `ls /churn` lines of a boot that ran churn 28: type, size, name."""
    names = {f"f{i}" for i in range(24)} | {f"d{i}" for i in range(8)}
    return sorted(line for line in result.lines
                  if len(line.split()) == 3 and line.split()[2] in names)


def assert_churn_committed(tmp_path, image, after_churn):
    """churn 28: its last fsync is at step 17, so steps 18-27 reach the disk only through
    the 5 s commit. `after_churn` runs on; QEMU is killed 12 s after churn ended. The
    image must list /churn as a clean run does."""
    churn_and_kill(image, 12, commands=f"run churn 28; {after_churn}", marker="churn_done")
    crashed = run("--smp", "3", "--disk", str(image), "--cmd", "ls /churn", timeout=BOOT_TIMEOUT)
    assert "fs: journal replayed:" in crashed.text, crashed.describe()
    assert_clean(image)
    clean_image = tmp_path / "clean.img"
    shutil.copyfile(OUT_DIR / "disk.img", clean_image)
    clean = run("--smp", "3", "--disk", str(clean_image), "--cmd", "run churn 28; ls /churn",
                timeout=BOOT_TIMEOUT)
    assert churn_listing(crashed) and churn_listing(crashed) == churn_listing(clean), \
        (crashed.text, clean.text)


def test_idle_transaction_commits_within_seconds(built, tmp_path):
    """The commit of an idle FS (the guest sleeping after churn)."""
    assert_churn_committed(tmp_path, make_ext3(tmp_path, 4096), "sleep 60000")


def test_busy_transaction_commits_within_seconds(built, tmp_path):
    """The commit of an FS kept busy: after churn, Bonnie reads without a pause until the
    kill, so FS never idles and the due commit must come from the request loop (whose
    settle remembers its last outcome only while the clock and the journal stay)."""
    assert_churn_committed(tmp_path, make_ext3(tmp_path, 4096),
                           "run bonnie -p 1 -m readblock -u 0 -n 3000000; sleep 60000")


def test_unsupported_journal_refused(built, tmp_path):
    image = make_ext3(tmp_path, 4096)
    bmap = subprocess.run(["debugfs", "-R", "bmap <8> 0", str(image)], capture_output=True,
                          text=True, check=True)
    journal_superblock = int(bmap.stdout.split()[0]) * 4096
    with open(image, "r+b") as disk:  # s_feature_incompat: csum v3
        disk.seek(journal_superblock + 0x28)
        disk.write((0x10).to_bytes(4, "big"))
    before = image.read_bytes()
    result = run("--smp", "3", "--disk", str(image), "--cmd", "sync", timeout=BOOT_TIMEOUT)
    assert "sync before power-off failed" in result.text, result.describe()  # FS answers errors
    assert "fs: refusing the ext3 journal: journal checksums (csum v2/v3)" in result.text, \
        result.describe()
    assert "fs: cannot mount the disk: unsupported" in result.text, result.describe()
    assert image.read_bytes() == before  # nothing was written
