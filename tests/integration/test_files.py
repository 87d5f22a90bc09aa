# File tests through the shell's file commands (apps/shell/files.c) over FS/BLK/DK:
# cksum against the host's cksum, cp, mkdir/ls/rm, a tree of files of many sizes made
# with mke2fs -d (4 KiB and 1 KiB blocks, direct to double indirect), and clean errors.
import re
import shutil
import subprocess

import pytest

import formica

pytestmark = pytest.mark.usefixtures("built")

TIMEOUT = 240
DISK_SOURCE = formica.REPO_ROOT / "build" / "disk"
DISK_IMAGE = formica.OUT_DIR / "disk.img"
# Sizes around every block-map boundary: direct (12 blocks), single indirect
# (+1024 blocks of 4 KiB, +256 of 1 KiB), double indirect.
TREE_SIZES = [0, 1, 1023, 1024, 1025, 4095, 4096, 4097, 12 * 1024 + 1, 12 * 4096, 12 * 4096 + 1,
              (12 + 256) * 1024 + 1, 300 * 1024, (12 + 1024) * 4096, (12 + 1024) * 4096 + 1,
              5 * 1024 * 1024 + 7]


def shell(commands, *flags, smp=2):
    return formica.run("--smp", str(smp), "--accel", "tcg", *flags, "--cmd", commands,
                       timeout=TIMEOUT)


def host_cksum(path):
    crc, size, _ = subprocess.run(["cksum", str(path)], capture_output=True, check=True,
                                  text=True).stdout.split(maxsplit=2)
    return int(crc), int(size)


def guest_cksums(result):
    """{guest path: (crc, size)} from the shell's cksum lines."""
    found = {}
    for line in result.lines:
        match = re.match(r"^(\d+) (\d+) (/\S*)$", line)
        if match:
            found[match.group(3)] = (int(match.group(1)), int(match.group(2)))
    return found


def disk_copy(tmp_path):
    copy = tmp_path / "disk.img"
    shutil.copyfile(DISK_IMAGE, copy)
    return copy


def test_cksum_matches_host(tmp_path):
    files = sorted(path for path in DISK_SOURCE.rglob("*") if path.is_file())
    guest_paths = ["/" + str(path.relative_to(DISK_SOURCE)) for path in files]
    result = shell("cksum " + " ".join(guest_paths), "--disk", str(disk_copy(tmp_path)))
    assert result.rc == 0, result.describe()
    found = guest_cksums(result)
    for path, guest_path in zip(files, guest_paths):
        assert found.get(guest_path) == host_cksum(path), guest_path


def test_cp_then_cat_and_cksum(tmp_path):
    result = shell("cp /hello.txt /copy.txt; cat /copy.txt; cksum /copy.txt; sync",
                   "--disk", str(disk_copy(tmp_path)))
    assert result.rc == 0, result.describe()
    text = (DISK_SOURCE / "hello.txt").read_text().strip()
    assert text in result.lines, result.describe()
    assert guest_cksums(result)["/copy.txt"] == host_cksum(DISK_SOURCE / "hello.txt")


def test_mkdir_ls_rm(tmp_path):
    disk = disk_copy(tmp_path)
    result = shell("mkdir /newdir; cp /hello.txt /newdir/f; ls /newdir; rm /newdir/f; "
                   "rmdir /newdir; ls /; sync", "--disk", str(disk))
    assert result.rc == 0, result.describe()
    assert any(line.endswith("  f") for line in result.lines), result.describe()
    after = result.lines[result.lines.index("formica> ls /"):]
    assert not any(line.endswith("  newdir") for line in after), result.describe()
    check = subprocess.run(["e2fsck", "-fn", str(disk)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def make_tree_image(tmp_path, block_size, size):
    """An ext2 image with /t/f<N> of every TREE_SIZES entry, made by mke2fs -d."""
    source = tmp_path / f"tree{block_size}"
    (source / "t").mkdir(parents=True)
    for index, length in enumerate(TREE_SIZES):
        data = bytes((offset * 7 + index + (offset >> 10)) & 0xFF for offset in range(length))
        (source / "t" / f"f{index}").write_bytes(data)
    image = tmp_path / f"tree{block_size}.img"
    subprocess.run(["mke2fs", "-q", "-F", "-t", "ext2", "-r", "1", "-b", str(block_size), "-d",
                    str(source), str(image), size], check=True, capture_output=True)
    return source, image


@pytest.mark.parametrize("block_size,size", [(4096, "64M"), (1024, "32M")])
def test_tree_of_sizes_reads_back(tmp_path, block_size, size):
    source, image = make_tree_image(tmp_path, block_size, size)
    paths = [f"/t/f{index}" for index in range(len(TREE_SIZES))]
    result = shell("cksum " + " ".join(paths), "--disk", str(image), "--mem", "512M")
    assert result.rc == 0, result.describe()
    found = guest_cksums(result)
    for path in paths:
        assert found.get(path) == host_cksum(source / path.lstrip("/")), path


def test_errors_are_clean(tmp_path):
    long_name = "/" + "x" * 300
    result = shell(f"cat /nosuch; stat {long_name}; ls /hello.txt; cat /data; cksum /hello.txt",
                   "--disk", str(disk_copy(tmp_path)))
    assert result.rc == 1, result.describe()  # the failing commands fail, nothing else
    assert "cat: /nosuch: not found" in result.lines, result.describe()
    assert any(line.startswith("stat: /xxxx") for line in result.lines), result.describe()
    assert any(line.startswith("ls: /hello.txt: ") for line in result.lines), result.describe()
    assert any(line.startswith("cat: /data: ") for line in result.lines), result.describe()
    assert guest_cksums(result)["/hello.txt"] == host_cksum(DISK_SOURCE / "hello.txt")
