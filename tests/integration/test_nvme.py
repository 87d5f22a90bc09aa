# DK's NVMe driver (servers/disk/nvme*.c, docs/drivers.md) on QEMU's nvme device:
# one I/O queue pair per requesting core (and sharing past nvme_queues), MSI-X and
# INTx, the file tests and fstest on NVMe with e2fsck after, a namespace of 4 KiB
# blocks, a media error injected with blkdebug, commands that time out, and a
# controller without a namespace.
import random
import re
import shutil
import subprocess

import pytest

import formica

pytestmark = pytest.mark.usefixtures("built")

TIMEOUT = 240
SECTOR = 512
E_IO = -20
DISK_SOURCE = formica.REPO_ROOT / "build" / "disk"
DISK_IMAGE = formica.OUT_DIR / "disk.img"
NVME = ["--disk-bus", "nvme"]


def random_image(path, mib=8, seed=11):
    data = random.Random(seed).randbytes(mib << 20)
    path.write_bytes(data)
    return data


def disk_copy(tmp_path):
    copy = tmp_path / "disk.img"
    shutil.copyfile(DISK_IMAGE, copy)
    return copy


def host_cksum(data, tmp_path):
    path = tmp_path / "cksum-input"
    path.write_bytes(data)
    crc, size, _ = subprocess.run(["cksum", str(path)], capture_output=True, check=True,
                                  text=True).stdout.split(maxsplit=2)
    return int(crc), int(size)


def assert_clean(image):
    check = subprocess.run(["e2fsck", "-fn", str(image)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def queue_pairs(run):
    """{core: queue pair id} from DK's log."""
    pairs = {}
    for line in run.lines:
        match = re.match(r"dk: NVMe I/O queue pair (\d+) for core (\d+)$", line)
        if match:
            pairs[int(match.group(2))] = int(match.group(1))
    return pairs


def boot(*flags, smp=2):
    return formica.run("--smp", str(smp), "--accel", "tcg", *flags, timeout=TIMEOUT)


def test_each_requesting_core_gets_its_own_queue_pair(tmp_path):
    image = tmp_path / "disk.img"
    data = random_image(image)
    run = boot("--disk", str(image), *NVME, "--cmd",
               "run --driver dkread @1; run --driver dkread 2048 64 @2; run --driver dkread 2048 2048 @3; run --driver dkread",
               smp=4)
    assert run.rc == 0, run.describe()
    assert queue_pairs(run) == {0: 1, 1: 2, 2: 3, 3: 4}, run.describe()
    reads = run.kinds("dkread")
    assert [read["core"] for read in reads] == [1, 2, 3, 0]
    expected_sum, _ = host_cksum(data[:2048 * SECTOR], tmp_path)
    assert all(read["result"] == 0 and read["cksum"] == expected_sum for read in reads), reads
    assert "dk: NVMe controller 00:04.0: msi-x interrupts" in run.text, run.describe()


def test_cores_share_queue_pairs_past_nvme_queues(tmp_path):
    image = tmp_path / "disk.img"
    data = random_image(image, seed=12)
    run = boot("--disk", str(image), *NVME, "--append", "nvme_queues=2", "--cmd",
               "run --driver dkread @1; run --driver dkread @2; run --driver dkread @3", smp=4)
    assert run.rc == 0, run.describe()
    assert queue_pairs(run) == {0: 1, 1: 2}, run.describe()
    assert "dk: NVMe core 2 shares I/O queue pair 1 (core 0's)" in run.lines, run.describe()
    assert "dk: NVMe core 3 shares I/O queue pair 2 (core 1's)" in run.lines, run.describe()
    expected_sum, _ = host_cksum(data[:2048 * SECTOR], tmp_path)
    assert [read["cksum"] for read in run.kinds("dkread")] == [expected_sum] * 3


def test_selftest_with_intx_interrupts(tmp_path):
    image = tmp_path / "disk.img"
    random_image(image, seed=13)
    run = boot("--disk", str(image), *NVME, "--append", "dk=idle nvme_irq=intx",
               "--cmd", "run --driver dk --selftest")
    assert run.rc == 0, run.describe()
    assert "dk: NVMe controller 00:04.0: intx interrupts" in run.text, run.describe()
    [check] = run.kinds("dkcheck")
    assert check["ok"] and check["interrupts"] >= 1, run.describe()


def test_file_commands_on_nvme(tmp_path):
    disk = disk_copy(tmp_path)
    files = sorted(path for path in DISK_SOURCE.rglob("*") if path.is_file())
    guest_paths = ["/" + str(path.relative_to(DISK_SOURCE)) for path in files]
    run = boot("--disk", str(disk), *NVME, "--cmd",
               "cksum " + " ".join(guest_paths) + "; cp /hello.txt /copy.txt; mkdir /d; "
               "cp /hello.txt /d/f; rm /d/f; rmdir /d; cksum /copy.txt; sync")
    assert run.rc == 0, run.describe()
    found = {}
    for line in run.lines:
        match = re.match(r"^(\d+) (\d+) (/\S*)$", line)
        if match:
            found[match.group(3)] = (int(match.group(1)), int(match.group(2)))
    for path, guest_path in zip(files, guest_paths):
        assert found.get(guest_path) == host_cksum(path.read_bytes(), tmp_path), guest_path
    assert found["/copy.txt"] == found["/hello.txt"]
    assert_clean(disk)


@pytest.mark.parametrize("block_bytes", [512, 4096])
def test_fstest_on_nvme(tmp_path, block_bytes):
    disk = disk_copy(tmp_path)
    blocks = f"-global nvme.logical_block_size={block_bytes} " \
             f"-global nvme.physical_block_size={block_bytes}"
    run = boot("--disk", str(disk), *NVME, "--placement", "5", "--qemu", blocks,
               "--cmd", "run fstest", smp=3)
    assert run.rc == 0, run.describe()
    assert f"blocks of {block_bytes} bytes" in run.text, run.describe()
    cases = run.kinds("fstest")
    assert cases and all(case["ok"] for case in cases), run.describe()
    assert queue_pairs(run) == {0: 1, 2: 2}, run.describe()  # DK's C0 and BLK's C2
    assert_clean(disk)


def test_media_error_becomes_eio(tmp_path):
    image = tmp_path / "disk.img"
    random_image(image, seed=14)
    rules = tmp_path / "blkdebug.conf"
    rules.write_text('[inject-error]\nevent = "read_aio"\nerrno = "5"\nsector = "300"\n')
    drive = f"-drive if=none,id=nvm,format=raw,file=blkdebug:{rules}:{image} " \
            "-device nvme,serial=formica,drive=nvm"
    run = formica.run("--smp", "2", "--accel", "tcg", "--disk", "none", "--qemu", drive,
                      "--append", "dk=idle", "--cmd", "run --driver dk --selftest",
                      timeout=TIMEOUT)
    assert run.rc != 0, run.describe()  # the self-test fails, nothing hangs
    [check] = run.kinds("dkcheck")
    assert check["read_result"] == E_IO, run.describe()
    # an unrecovered read error (status code type 2, code 0x81) from the device
    assert "dk: NVMe read of 128 sectors at 256 failed (status type 2 code 0x81)" in run.lines
    assert check["pattern_ok"] and check["flush"] == 0, run.describe()  # the rest still works


def test_timeouts_reset_the_controller(tmp_path):
    # null-co answers every command after 3 s; DK gives up after 500 ms.
    drive = "-drive if=none,id=nvm,driver=null-co,size=8M,latency-ns=3000000000,read-zeroes=on " \
            "-device nvme,serial=formica,drive=nvm"
    run = formica.run("--smp", "2", "--accel", "tcg", "--disk", "none", "--qemu", drive,
                      "--append", "dk=idle nvme_timeout_ms=500",
                      "--cmd", "run --driver dk --selftest 128", timeout=TIMEOUT)
    assert run.rc != 0, run.describe()
    [check] = run.kinds("dkcheck")
    assert check["read_result"] == E_IO and check["flush"] == E_IO, run.describe()
    resets = [line for line in run.lines if "no completion in time" in line]
    assert resets and all("resetting the controller" in line for line in resets), run.describe()
    assert "did not come back" not in run.text, run.describe()
    assert "dk exited with code 1" in run.lines, run.describe()


def test_controller_without_a_namespace_is_no_disk():
    run = formica.run("--smp", "2", "--accel", "tcg", "--disk", "none", "--qemu",
                      "-device nvme,serial=empty", "--append", "dk=idle",
                      "--cmd", "run --driver dk --selftest", timeout=TIMEOUT)
    assert run.rc != 0, run.describe()
    assert "dk: NVMe controller has no usable namespace" in run.lines, run.describe()
    assert "dk: no disk" in run.lines and "dk exited with code 1" in run.lines, run.describe()
