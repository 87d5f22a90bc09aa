# The vems backend of teramalloc (docs/design.md, "One memory storage the size of the device";
# docs/pager.md, "VEMS"): memseq and sort over a region larger than the NVM tier, whose pages
# are the tier's lines lent into the process and the disk behind them: the data verified, the
# tier's counters showing lines lent themselves, lines taken back from the mapping and write-back
# to the disk, the region's file gone afterwards and e2fsck -fn clean once the tier is flushed;
# and the refusals: a region larger than the device, one the file system cannot hold, no tier,
# a write-through tier.
import shutil
import subprocess

import pytest

import formica

pytestmark = pytest.mark.usefixtures("built")

TIMEOUT = 600
DISK_IMAGE = formica.OUT_DIR / "disk.img"
TIER_SIZE = "6M"  # 16 sets of 95 lines (1,520): much smaller than the 16 MiB regions
REGION = 16 << 20


def disk_copy(tmp_path):
    copy = tmp_path / "disk.img"
    shutil.copyfile(DISK_IMAGE, copy)
    return copy


def boot(commands, disk, *flags, timeout=TIMEOUT, placement="1"):
    return formica.run("--smp", "3", "--accel", "tcg", "--placement", placement, "--disk",
                       str(disk), *flags, "--cmd", commands, timeout=timeout)


def tier_flag(tmp_path):
    return ["--nvm-tier", f"{tmp_path / 'tier.nvm'}:{TIER_SIZE}"]


def e2fsck_clean(image):
    check = subprocess.run(["e2fsck", "-fn", str(image)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.parametrize("placement", ["1", "5"])  # 5: the program, FS and BLK on three cores
def test_programs_over_a_vems_region_larger_than_the_tier(tmp_path, placement):
    disk = disk_copy(tmp_path)
    result = boot("run memseq -s 16M -l 1M -b 64K --backend vems; "
                  "run sort -n 80000 -l 256K -b 16K --capacity 16M --backend vems; "
                  "tier; tier flush; tier; ls /", disk, *tier_flag(tmp_path), placement=placement)
    assert result.rc == 0, result.describe()
    memseq = [line for line in result.kinds("memseq") if line["mode"] == "sequential"]
    assert len(memseq) == 1 and memseq[0]["verified"] is True, result.describe()
    assert memseq[0]["backend"] == "vems" and memseq[0]["bytes"] == REGION
    sorts = result.kinds("sort")
    assert len(sorts) == 1 and sorts[0]["verified"] is True, result.describe()
    assert sorts[0]["backend"] == "vems"
    regions = result.kinds("vems_region")
    assert len(regions) == 2, result.describe()
    for region in regions:
        assert region["bytes"] == REGION and region["disk_bytes"] == DISK_IMAGE.stat().st_size
        beyond = region["bytes"] - region["nvm_bytes"]
        assert beyond > 0, region  # the region is larger than the tier
        # what did not fit the lines went to the disk and came back from it
        assert region["writeback_bytes"] >= beyond, region
        assert region["swap_in_blocks"] * 4096 >= beyond, region
    # memseq's read of the 16 MiB after writing them: most of it came back from the disk
    assert memseq[0]["swap_in_blocks"] * 4096 >= REGION - regions[0]["nvm_bytes"], memseq[0]
    assert "taking lines only mappings see" in result.text, result.describe()
    assert all(region["mapped_evictions"] > 0 for region in regions), regions
    before, after = result.kinds("tier")
    assert before["state"] == "attached" and before["lines"] * 4096 < REGION, before
    assert before["direct_lends"] > 0 and before["lend_copies"] == 0, before  # the lines themselves
    assert before["writeback_runs"] > 0 and before["passes"] > 0, before
    assert before["mapped_evictions"] > 0 and before["disk_bytes"] == DISK_IMAGE.stat().st_size
    assert after["dirty_lines"] == 0 and after["writeback_bytes"] > before["writeback_bytes"]
    assert "vems." not in result.text.split("formica> ls /")[-1], result.describe()
    assert "could not be served" not in result.text, result.describe()
    e2fsck_clean(disk)


def test_a_region_of_three_quarters_of_the_device(tmp_path):
    # 48 MiB of the 64 MiB disk, eight times the tier: bounded by what the file system lets the
    # user hold (fs_quota=100 lifts the default half of the disk per user), not by the tier
    disk = disk_copy(tmp_path)
    result = boot("run memseq -s 48M -l 1M -b 64K --backend vems; tier flush", disk,
                  *tier_flag(tmp_path), "--append", "fs_quota=100")
    assert result.rc == 0, result.describe()
    memseq = [line for line in result.kinds("memseq") if line["mode"] == "sequential"]
    assert len(memseq) == 1 and memseq[0]["verified"] is True, result.describe()
    region = result.kinds("vems_region")[0]
    assert region["bytes"] == 48 << 20 and region["bytes"] * 4 == region["disk_bytes"] * 3
    assert region["writeback_bytes"] >= region["bytes"] - region["nvm_bytes"], region
    e2fsck_clean(disk)


def test_vems_refusals(tmp_path):
    disk = disk_copy(tmp_path)
    result = boot("run memseq -s 96M --backend vems; run memseq -s 60M --backend vems; ls /; "
                  "tier detach; run memseq -s 4M --backend vems", disk, *tier_flag(tmp_path),
                  timeout=300)
    text = result.text
    assert ("teramem: a vems region of 98304 KiB is larger than the device behind the tier "
            "(65536 KiB)") in text, result.describe()
    assert ("teramem: vems region of 61440 KiB refused: its file's blocks on the disk: "
            "no space left on device") in text, result.describe()
    assert "vems." not in text.split("formica> ls /")[-1].split("formica> tier")[0]
    assert "teramem: the vems backend needs BLK's NVM tier, and the tier is detached" in text
    assert text.count("memseq exited with code 1") == 3, result.describe()
    assert not result.kinds("vems_region"), result.describe()
    e2fsck_clean(disk)
    plain = boot("run memseq -s 4M --backend vems", disk_copy(tmp_path), timeout=300)
    assert "teramem: the vems backend needs BLK's NVM tier, and the tier is none" in plain.text, \
        plain.describe()
    assert "memseq exited with code 1" in plain.text, plain.describe()
    through = boot("run memseq -s 4M --backend vems", disk_copy(tmp_path), *tier_flag(tmp_path),
                   "--append", "blk_tier=write-through", timeout=300)
    assert "teramem: the vems backend needs a write-back tier" in through.text, \
        through.describe()
    assert "memseq exited with code 1" in through.text, through.describe()
