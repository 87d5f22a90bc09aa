# The remote pager (servers/pager, lib/teramem.c): sort with the local limit at a quarter of
# its working set on NVM, the disk and memory nodes, under LRU and FIFO; NVM persistence
# across a reboot; the fault cases (beyond capacity, released region, NVM absent, node dead);
# and the disk swap file's size (pager_swap_mib: larger, bad values, larger than the disk).
import shutil

import pytest

import formica
import disk_image  # noqa: E402 (build/, on the path through formica)
from nvm_order import check_pager_order, records_of

pytestmark = pytest.mark.usefixtures("built")

TIMEOUT = 400
DISK_IMAGE = formica.OUT_DIR / "disk.img"
# 10000 records: ~1 MiB of line records, scratch and text; a quarter is 256 KiB.
SORT_ARGS = "-n 10000 -l 256K -b 16K"


def boot(commands, *flags, timeout=TIMEOUT):
    return formica.run("--smp", "2", "--accel", "tcg", *flags, "--cmd", commands,
                       timeout=timeout)


def disk_copy(tmp_path):
    copy = tmp_path / "disk.img"
    shutil.copyfile(DISK_IMAGE, copy)
    return copy


def nvm_flags(tmp_path, name="pager.nvm", size="64M"):
    return ["--nvm", f"{tmp_path / name}:{size}"]


def check_sort(result, backend, policy):
    sorts = result.kinds("sort")
    assert result.rc == 0 and len(sorts) == 1, result.describe()
    line = sorts[0]
    assert line["verified"] is True, result.describe()
    assert line["backend"] == backend and line["policy"] == policy
    assert line["local_limit_bytes"] == 256 << 10 and line["block_bytes"] == 16 << 10
    assert line["swap_out_blocks"] > 0 and line["swap_in_blocks"] > 0, line
    pager = result.kinds("pager")
    assert len(pager) == 1 and pager[0]["clean_drops"] == line["clean_drops"], result.describe()


@pytest.mark.parametrize("policy", ["lru", "fifo"])
def test_sort_on_nvm(tmp_path, policy):
    result = boot(f"run sort {SORT_ARGS} -P {policy} --backend nvm", *nvm_flags(tmp_path))
    check_sort(result, "nvm", policy)


@pytest.mark.parametrize("policy", ["lru", "fifo"])
def test_sort_on_disk(tmp_path, policy):
    result = boot(f"run sort {SORT_ARGS} -P {policy} --backend disk",
                  "--disk", str(disk_copy(tmp_path)))
    check_sort(result, "disk", policy)


@pytest.mark.parametrize("policy", ["lru", "fifo"])
def test_sort_on_memory_node(policy):
    result = boot(f"run sort {SORT_ARGS} -P {policy} --backend node", "--memnodes", "1")
    check_sort(result, "node", policy)
    assert "1 memory node(s)" in result.text, result.describe()


@pytest.mark.parametrize("policy", ["lru", "fifo"])
def test_sort_with_the_pager_on_another_core(tmp_path, policy):
    # The pager on core 1, the program on core 0: a fault reaches the pager before the
    # faulting process has blocked, and the kernel touches only a waiting process's
    # blocks (-E_BUSY until then): the pager asks again instead of ending the process.
    # Core 0 idles while sort waits and resumes it without a CR3 write unless a
    # translation of it was removed (kernel/translation_stamp.h): with FIFO no accessed-bit
    # scan bumps sort's stamp, so only the eviction's own bump does (without it, sort
    # faulted on a stale translation of an evicted block).
    placement = tmp_path / "pager1.conf"
    placement.write_text("fs 0\nblk 0\ndk 0\npager 1\napp 0\n")
    result = boot(f"run sort {SORT_ARGS} -P {policy} --backend nvm", *nvm_flags(tmp_path),
                  "--placement", str(placement))
    check_sort(result, "nvm", policy)
    assert "resource busy" not in result.text, result.describe()


def test_nvm_contents_survive_a_reboot(tmp_path):
    flags = nvm_flags(tmp_path, size="16M")
    common = "-s 2M -l 256K -b 16K --backend nvm --key 7"
    first = boot(f"run memseq --mode persist-write {common}", *flags)
    assert first.rc == 0 and first.kinds("memseq")[0]["reattached"] is False, first.describe()
    second = boot(f"run memseq --mode persist-check {common}", *flags)
    assert second.rc == 0, second.describe()
    check = second.kinds("memseq")[0]
    assert check["reattached"] is True and check["mismatches"] == 0, second.describe()
    assert "pager layout found" in second.text
    # Another key on the same NVM starts empty.
    third = boot("run memseq --mode persist-check -s 2M -l 256K -b 16K --backend nvm --key 8",
                 *flags)
    assert third.rc != 0 and third.kinds("memseq")[0]["reattached"] is False, third.describe()


# The NVDIMM is mapped write-back (PAT entry 0 and the MTRRs say WB under QEMU), so the
# pager's keyed stores must make themselves durable through the flush layer: recorded
# (nvm_record) and replayed by nvm_order.py, with each flush instruction CPUID can offer.
@pytest.mark.parametrize("cpu, flush", [("max", "clwb"), ("max,-clwb", "clflushopt"),
                                        ("max,-clwb,-clflushopt", "clflush")])
def test_nvm_stores_are_durable_in_order(tmp_path, cpu, flush):
    result = boot("run memseq -s 512K -l 64K -b 16K --backend nvm --key 7",
                  *nvm_flags(tmp_path, size="16M"), "--cpu", cpu, "--append", "nvm_record=8192")
    assert result.rc == 0, result.describe()
    ranges = result.kinds("nvm_range")
    assert len(ranges) == 1 and ranges[0]["write_back"] is True, result.describe()
    assert ranges[0]["pat"] == "WB" and ranges[0]["mtrr"] == "WB"
    assert "maps persistent memory 0x100000000 (16384 KiB) write-back" in result.text
    assert f"made durable with {flush} and sfence" in result.text, result.describe()
    layouts = result.kinds("nvm_layout")
    assert len(layouts) == 1 and layouts[0]["key"] == 7, result.describe()
    dumps = result.kinds("nvm_order")
    assert dumps and dumps[-1]["last"] is True and dumps[-1]["dropped"] == 0, result.describe()
    records = records_of(dumps)
    assert len(records) == dumps[-1]["recorded"]
    assert check_pager_order(records, layouts[0]) == []
    pager = result.kinds("pager")[0]
    data_writes = [r for r in records if r[0] == "w" and r[2] == 16 << 10]
    assert len(data_writes) == pager["swap_out_blocks"] > 0, (len(data_writes), pager)


def test_teramalloc_beyond_capacity_is_null(tmp_path):
    result = boot("run memseq --mode overalloc -s 1M -l 256K -b 16K --backend nvm",
                  *nvm_flags(tmp_path, size="16M"))
    assert result.rc == 0, result.describe()
    line = result.kinds("memseq")[0]
    assert line["fits"] is True and line["too_big_null"] is True
    assert "teramalloc: 1048576 bytes do not fit" in result.text


def test_fault_on_released_region_ends_the_process(tmp_path):
    result = boot("run memseq --mode released -s 1M -l 256K -b 16K --backend nvm; run hello",
                  *nvm_flags(tmp_path, size="16M"))
    assert "memseq: touching the released region" in result.text, result.describe()
    assert "killed by page fault" in result.text and "went through" not in result.text
    assert "memseq exited with code 0" not in result.text
    assert result.kinds("hello"), "the system goes on after the fault"


def test_nvm_absent_is_a_clear_error():
    result = boot("run sort -n 100 --backend nvm; run hello")
    assert "pager: no NVDIMM" in result.text, result.describe()
    assert "teramem: the pager refused the region (nvm backend" in result.text
    assert "sort exited with code 1" in result.text and result.kinds("hello")


def test_nvm_too_small_is_a_clear_error(tmp_path):
    result = boot("run sort -n 100000 --capacity 32M --backend nvm",
                  *nvm_flags(tmp_path, size="8M"))
    assert "pager: NVM too small" in result.text, result.describe()
    assert "sort exited with code 1" in result.text


def test_dead_memory_node_ends_the_process_cleanly():
    # The node answers a few requests, then stops. Once it has been silent for the liveness
    # deadline (20 s) it is dead; a block only it held is reported to its owner (the sort
    # ends with the kernel's report) and the next command still runs.
    result = boot(f"run sort {SORT_ARGS} -P lru --backend node; run hello", "--memnodes", "1",
                  "--memnode-args", "--exit-after 40")
    [dead] = result.kinds("memnode_dead")
    assert dead["node"] == 1 and "is dead: silent for 20 s" in result.text, result.describe()
    assert "cannot be had" in result.text or "has no backend copy" in result.text, \
        result.describe()
    assert "killed by page fault" in result.text, result.describe()
    assert result.kinds("hello"), result.describe()
    assert "PANIC" not in result.text
    assert result.rc == 1, result.describe()


def test_external_sort_on_nvm(tmp_path):
    # sort -S: GNU sort's external merge (apps/sort/external.c), 10,000 records in runs of a
    # 32 KiB buffer (about 30), merged 16 at a time in two passes, all in pager memory at 256 KiB.
    result = boot("run sort -n 10000 -S 32K -l 256K -b 16K -P lru --backend nvm",
                  *nvm_flags(tmp_path))
    check_sort(result, "nvm", "lru")
    line = result.kinds("sort")[0]
    assert line["buffer_bytes"] == 32 << 10 and line["runs"] > 16, line


# The disk backend's /swap holds 40 MiB unless the kernel option pager_swap_mib=N says otherwise
# (servers/pager/swap_size.c): an account's regions may claim three quarters of it, 30 MiB by
# default. 48 MiB of memseq through a 96 MiB swap file on a 192 MiB disk (by default the file is
# too small for it).
SWAP_REGION = "run memseq -s 48M -l 8M -b 64K --backend disk"


def check_memseq_verified(result):
    seq = [line for line in result.kinds("memseq") if line["mode"] == "sequential"]
    assert seq and all(line["verified"] is True for line in seq), result.describe()
    return seq


def test_a_larger_swap_file_holds_a_region_past_the_default_share(tmp_path):
    disk = disk_image.make(tmp_path / "disk.img", "ext2", 4096, "192M")
    result = boot(SWAP_REGION, "--disk", str(disk), "--append", "pager_swap_mib=96")
    assert "pager: /swap holds 96 MiB (pager_swap_mib)" in result.text, result.describe()
    assert result.rc == 0 and "refused" not in result.text, result.describe()
    [line] = check_memseq_verified(result)
    assert line["bytes"] == 48 << 20 and line["swap_in_blocks"] > 0, line


@pytest.mark.parametrize("value,why", [("lots", "invalid argument"), ("0", "invalid argument"),
                                        ("4097", "too big")])
def test_a_bad_swap_size_is_logged_and_the_default_kept(tmp_path, value, why):
    disk = disk_image.make(tmp_path / "disk.img", "ext2", 4096, "192M")
    commands = f"{SWAP_REGION}; run memseq -s 2M -l 256K -b 16K --backend disk"
    result = boot(commands, "--disk", str(disk), "--append", f"pager_swap_mib={value}")
    assert (f"pager: pager_swap_mib={value} is not a size in MiB of 1..4096 ({why}): "
            "/swap holds 40 MiB") in result.text, result.describe()
    assert "pager: swap file too small: 49152 KiB asked, 40960 KiB free" in result.text
    assert "teramem: the pager refused the region (disk backend, 49152 KiB" in result.text
    assert check_memseq_verified(result)[0]["bytes"] == 2 << 20


def test_a_swap_file_larger_than_the_disk_refuses_the_region(tmp_path):
    # 1 GiB of /swap on a 32 MiB disk: the option is taken, the region whose blocks the disk
    # cannot hold is refused when it is made (as a full disk refuses it), and the system goes on.
    disk = disk_image.make(tmp_path / "disk.img", "ext2", 4096, "32M")
    result = boot(f"{SWAP_REGION}; run hello", "--disk", str(disk),
                  "--append", "pager_swap_mib=1024")
    assert "pager: /swap holds 1024 MiB (pager_swap_mib)" in result.text, result.describe()
    assert "pager: no disk space for pid" in result.text, result.describe()
    assert "KiB region in /swap" in result.text and result.kinds("hello"), result.describe()
    assert "memseq exited with code 0" not in result.text
