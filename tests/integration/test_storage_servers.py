# The storage servers (FS, BLK, DK) as processes talking through ICAs: tests/programs/fstest's raw
# requests on placements #1 and #5 (with FS's handle checks and the hostile cases between
# processes: unlink while open, another process's handle) and the file library's readbyte
# buffer against the process's own writes, then e2fsck -fn and debugfs on
# the image copy (host); a 1 KiB-block image; and a corrupt superblock that FS reports and
# answers with errors.
import shutil
import subprocess

import pytest

from formica import OUT_DIR, run

FSTEST_TIMEOUT = 150


def pattern(seed, offset, length):
    return bytes(((i * 131 + i // 4096 + seed) % 251) for i in range(offset, offset + length))


def image_copy(tmp_path, name="disk.img"):
    source = OUT_DIR / name
    if not source.is_file():
        pytest.fail(f"{source} missing; run `make disk`", pytrace=False)
    copy = tmp_path / name
    shutil.copyfile(source, copy)
    return copy


def debugfs_cat(image, path):
    completed = subprocess.run(["debugfs", "-R", f"cat {path}", str(image)],
                               capture_output=True, check=True)
    return completed.stdout


def assert_clean(image):
    completed = subprocess.run(["e2fsck", "-fn", str(image)], capture_output=True, text=True)
    assert completed.returncode == 0, completed.stdout + completed.stderr


def assert_all_cases_passed(result, expected=()):
    """Every fstest case passed, and each of `expected` ran."""
    cases = result.kinds("fstest")
    assert cases, result.describe()
    failed = [case["case"] for case in cases if not case["ok"]]
    assert not failed, f"failed cases {failed}\n{result.describe()}"
    missing = [name for name in expected if name not in {case["case"] for case in cases}]
    assert not missing, f"cases not run {missing}\n{result.describe()}"


def debugfs_missing(image, path):
    completed = subprocess.run(["debugfs", "-R", f"stat {path}", str(image)],
                               capture_output=True, text=True)
    return "File not found" in completed.stderr


def assert_files_on_disk(image, readblock=True):
    assert debugfs_cat(image, "/fstest/b.txt") == pattern(1, 0, 5000)
    if readblock:
        assert debugfs_cat(image, "/fstest/rb.bin") == pattern(2, 0, 16 * 4096)
        assert debugfs_cat(image, "/fstest/hole.bin") == bytes(8192) + pattern(3, 8192, 4096)
        patched = bytearray(pattern(4, 0, 8192))
        patched[100:116] = b"\x5a" * 16  # small_write_cases.c's in-place write
        assert debugfs_cat(image, "/fstest/sw.bin") == bytes(patched)
    assert debugfs_cat(image, "/fstest/rbuf.bin") == readbyte_file()


READBYTE_CASES = ["readbyte_file", "readbyte_one_block_write", "readbyte_spanning_write",
                  "readbyte_write_over_three_blocks", "readbyte_write_past_buffered_end",
                  "readbyte_whole_file_buffered", "readbyte_matches_fs", "readbyte_close"]


def readbyte_file():
    """readbyte_cases.c's file after its writes (its model, recomputed)."""
    data = bytearray(pattern(9, 0, 3 * 4096 + 100))
    data[100:116] = b"\xa1" * 16
    data[4096 - 16:4096 + 16] = b"\xb2" * 32
    data[4000:4000 + 4096 + 300] = b"\xc3" * (4096 + 300)
    data += bytes(200) + b"\xd4" * 16  # a hole of 200 bytes, then the write past the end
    return bytes(data)


def assert_sharing_on_disk(image, result):
    """After sharing_cases.c: B's file intact, A's unlinked file and the file a
    child ended holding are gone (freed: e2fsck checks the bitmaps), and FS
    closed the ended child's handle."""
    assert debugfs_cat(image, "/fstest/other") == pattern(5, 0, 8192)
    assert debugfs_cat(image, "/fstest/reuser") == pattern(7, 0, 4096)
    assert debugfs_missing(image, "/fstest/shared")
    assert debugfs_missing(image, "/fstest/held")
    assert "fs: closed 1 handles of ended processes" in result.text, result.describe()


@pytest.mark.parametrize("placement", ["1", "5"])
def test_fstest_on_placement(built, tmp_path, placement):
    image = image_copy(tmp_path)
    result = run("--smp", "3", "--placement", placement, "--disk", str(image),
                 "--cmd", "run fstest", timeout=FSTEST_TIMEOUT)
    assert result.rc == 0, result.describe()
    assert_all_cases_passed(result, READBYTE_CASES)
    assert "fstest_timing" in result.text
    assert result.kinds("fstest_readblock") == [{"kind": "fstest_readblock", "answered_by": "blk"}]
    assert result.kinds("fstest_small_write") == [{"kind": "fstest_small_write", "answered_by": "blk"}]
    assert_clean(image)
    assert_files_on_disk(image)
    assert_sharing_on_disk(image, result)


def test_fstest_on_1k_blocks(built, tmp_path):
    image = image_copy(tmp_path, "disk-1k.img")
    result = run("--smp", "3", "--placement", "5", "--disk", str(image),
                 "--cmd", "run fstest", timeout=FSTEST_TIMEOUT)
    assert result.rc == 0, result.describe()
    assert_all_cases_passed(result, READBYTE_CASES)
    assert "fs: mounted ext2, 1024-byte blocks" in result.text
    assert result.kinds("fstest_readblock")[0]["answered_by"] == "fs"  # readblock falls back
    assert result.kinds("fstest_small_write")[0]["answered_by"] == "fs"  # so do small writes
    assert_clean(image)
    assert_files_on_disk(image)
    assert_sharing_on_disk(image, result)


def test_corrupt_superblock(built, tmp_path):
    image = image_copy(tmp_path)
    with open(image, "r+b") as disk:  # s_magic: byte 56 of the superblock at 1024
        disk.seek(1024 + 56)
        disk.write(b"\0\0")
    result = run("--smp", "3", "--placement", "5", "--disk", str(image),
                 "--cmd", "run fstest unmounted; echo still here", timeout=FSTEST_TIMEOUT)
    assert result.rc == 0, result.describe()
    assert "fs: cannot mount the disk: corrupt" in result.text, result.describe()
    assert_all_cases_passed(result)
    assert "still here" in result.text
