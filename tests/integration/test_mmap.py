# mmap of files (docs/mmap.md; tests/programs/mmaptest): mapped reads of 12 MiB, shared and
# private, match pread of the same file; a fault past the end of the file ends the program with
# exit code 135 (as SIGBUS) and a report; stores to a private mapping (copy on write, and a
# hole's zeroes) are seen there and not by pread nor a shared mapping; every refused mmap gets
# its E_* code (a directory, length 0, an unaligned offset, a shared write on a read-only
# descriptor, another user's file); stores through a shared mapping reach pread after msync and
# survive a killed QEMU (a clean e2fsck); a file truncated while mapped ends a program that
# touches a page past its new end (the pages' lends were revoked before the blocks were freed,
# so another file written into them is never seen), an unlinked one stays mapped until munmap;
# madvise maps ahead and ends lends; a system call given a mapped page not touched yet brings it
# in (past the end: -E_FAULT); two BLK shards; a mapping outlives FS and BLK restarts; the
# account pays for a region's page tables, private copies and mapping lends (4 KiB each: a
# 12 MiB file maps within 4 MiB, a full account refuses a mapped read, 142); munmap
# and the exit of a program with mappings leave BLK with no block lent, and the disk clean; a
# 1 MiB BLK cache under 8 MiB mapped, read and stored whole, evicts mapped blocks (their
# mappings revoked, dirty ones written back) and the disk holds every store.
import shutil
import subprocess

import pytest

import formica
from test_journal import churn_and_kill, debugfs_cat
from test_storage_servers import assert_clean

pytestmark = pytest.mark.usefixtures("built")

TIMEOUT = 300
OTHER_UID = 2000  # neither root nor the console user


def disk_copy(tmp_path):
    copy = tmp_path / "disk.img"
    shutil.copyfile(formica.OUT_DIR / "disk.img", copy)
    return copy


def boot(disk, commands, smp=2):
    return formica.run("--smp", str(smp), "--disk", str(disk), "--cmd", commands,
                       timeout=TIMEOUT)


def checks(result):
    return result.kinds("mmap")


def assert_checks_held(result, expected):
    found = {line["check"]: line for line in checks(result)}
    missing = [name for name in expected if name not in found]
    failed = [name for name, line in found.items() if not line["ok"]]
    assert not missing and not failed, f"missing {missing}, failed {failed}\n{result.describe()}"


def lent_counts(result):
    return [line["blocks"] for line in result.kinds("mmap_lent")]


def test_mapped_reads_match_pread_and_end_every_lend(tmp_path):
    disk = disk_copy(tmp_path)
    # 12 MiB: more than BLK's cache (8 MiB), so a process's bound on its mapping lends (it
    # ends some of its own past 2 MiB) is what keeps the cache from filling with mapped blocks
    result = boot(disk, "run mmaptest lent; run mmaptest read /mapped.dat 12; run mmaptest lent")
    assert result.rc == 0, result.describe()
    assert_checks_held(result, ["map shared", "shared equals pread", "map private",
                                "private equals pread", "two mappings of one page agree",
                                "unmap shared", "unmap private", "lends all ended"])
    [read] = result.kinds("mmap_read")
    assert read["bytes"] == 12 << 20 and read["lent_before"] == read["lent_after"], read
    assert lent_counts(result) == [0, 0], result.describe()
    assert_clean(disk)


def stored_pattern(size):
    """What `mmaptest evict` stores at every offset: its file pattern ^ 0xa5."""
    return bytes(((at * 131 + (at >> 12) * 7 + 1) & 0xff) ^ 0xa5 for at in range(size))


# BLK's cache of 1 MiB (256 blocks) under mappings of 8 MiB, more than a process's 512 mapping
# lends: BLK's CLOCK revokes mapped blocks to evict them (docs/mmap.md, "Mapping lends"); without
# that, faults get -E_BUSY until the kernel gives up and the program is killed. "@2": the program
# on another core than BLK's, so each revocation is a MESSAGE_TRANSLATIONS_REVOKED.
@pytest.mark.parametrize("core", ["", "@2"])
def test_mappings_larger_than_a_small_blk_cache_evict_mapped_blocks(tmp_path, core):
    disk = disk_copy(tmp_path)
    result = formica.run("--smp", "3", "--disk", str(disk), "--append", "blk_cache_kib=1024",
                         "--cmd", f"run mmaptest lent; run mmaptest read /big-read.dat 8 {core}; "
                                  f"run mmaptest evict /big.dat 8 {core}; run mmaptest lent",
                         timeout=TIMEOUT)
    assert result.rc == 0, result.describe()
    assert "cache of 256 blocks" in result.text, result.describe()
    assert "evicting blocks only mappings see" in result.text, result.describe()
    assert_checks_held(result, ["shared equals pread", "private equals pread",
                                "every mapped page equals pread", "every stored page equals pread",
                                "pread reads every store", "unmap", "lends all ended"])
    [evict] = result.kinds("mmap_evict")
    assert evict["bytes"] == 8 << 20 and evict["lent_before"] == evict["lent_after"], evict
    assert lent_counts(result) == [0, 0], result.describe()
    assert_clean(disk)
    # the stores reached the disk: most were written back when their blocks were evicted
    data = debugfs_cat(disk, "/big.dat")
    assert len(data) == 8 << 20, len(data)
    expected = stored_pattern(8 << 20)
    wrong = [page for page in range(2048)
             if data[page * 4096:(page + 1) * 4096] != expected[page * 4096:(page + 1) * 4096]]
    assert not wrong, f"{len(wrong)} pages not stored on the disk, first {wrong[:8]}"


def make_other_users_file(disk, tmp_path):
    """/other.dat, 8 KiB owned by OTHER_UID, mode 0644: readable by all, writable by its owner."""
    host = tmp_path / "other.dat"
    host.write_bytes(bytes(range(256)) * 32)
    for request in (f"write {host} /other.dat", f"set_inode_field /other.dat uid {OTHER_UID}",
                    f"set_inode_field /other.dat gid {OTHER_UID}",
                    "set_inode_field /other.dat mode 0100644"):
        subprocess.run(["debugfs", "-w", "-R", request, str(disk)], capture_output=True,
                       check=True)


def test_refused_mappings_get_their_error_values(tmp_path):
    disk = disk_copy(tmp_path)
    make_other_users_file(disk, tmp_path)
    result = boot(disk, "run mmaptest errors /errors.dat; run mmaptest other /other.dat; "
                        "run mmaptest lent")
    assert result.rc == 0, result.describe()
    found = {line["check"]: line["detail"] for line in checks(result)}
    assert found["directory"] == -15, found  # -E_IS_DIRECTORY
    assert found["length 0"] == -1 and found["unaligned offset"] == -1, found  # -E_INVALID
    assert found["neither shared nor private"] == -1 and found["negative offset"] == -1, found
    assert found["shared write on a read-only descriptor"] == -8, found  # -E_PERMISSION
    assert found["another user's file, shared write"] == -8, found
    assert found["not a descriptor"] == -22, found  # -E_BAD_HANDLE
    assert found["fixed outside the window"] == -1 and found["too large"] == -1, found
    assert_checks_held(result, ["a good mapping after the refusals", "open for writing refused",
                                "another user's file, read", "its bytes"])
    assert "refused: mmap of a directory" in result.text, result.describe()
    assert lent_counts(result) == [0], result.describe()
    assert_clean(disk)


def test_a_page_past_the_end_ends_the_program_as_sigbus(tmp_path):
    disk = disk_copy(tmp_path)
    result = boot(disk, "run mmaptest pastend /short.dat; run mmaptest lent")
    assert result.rc != 0, result.describe()  # the shell saw a command fail
    assert "mmaptest exited with code 135" in result.text, result.describe()
    assert "a mapped page past the end of its file" in result.text, result.describe()
    assert "not ended" not in result.text, result.describe()
    assert_checks_held(result, ["map", "last byte of the file", "past the end in its last page"])
    assert lent_counts(result) == [0], result.describe()
    assert_clean(disk)


# "@2": the program ends on a p-kernel's core, which ends its lends before its parent (the
# shell) is woken, so the `lent` right after counts none.
@pytest.mark.parametrize("core", ["", "@2"])
def test_exit_with_mappings_leaves_no_block_lent(tmp_path, core):
    disk = disk_copy(tmp_path)
    result = boot(disk, f"run mmaptest lent; run mmaptest keep /kept.dat {core}; "
                        f"run mmaptest lent; run mmaptest keep /kept.dat {core}; run mmaptest lent",
                  smp=3)
    assert result.rc == 0, result.describe()
    assert_checks_held(result, ["map", "blocks lent while mapped"])
    assert lent_counts(result) == [0, 0, 0], result.describe()
    assert_clean(disk)


def test_private_stores_are_copies_the_file_never_sees(tmp_path):
    disk = disk_copy(tmp_path)
    result = boot(disk, "run mmaptest private /private.dat; run mmaptest lent; "
                        "run mmaptest read /private.dat 1")
    assert result.rc == 0, result.describe()
    assert_checks_held(result, ["store seen in the mapping", "rest of the copied page kept",
                                "hole reads zeroes", "hole store seen", "pread does not see it",
                                "a shared mapping does not see it",
                                "untouched private pages equal pread", "lends all ended"])
    assert lent_counts(result) == [0], result.describe()
    assert_clean(disk)


# "@2": the program on another core than BLK's (core 0): each write-protection before a
# write-back is a MESSAGE_TRANSLATIONS_REVOKED to the mapper's core, answered before BLK writes.
@pytest.mark.parametrize("core", ["", "@2"])
def test_shared_stores_reach_the_file_through_msync(tmp_path, core):
    disk = disk_copy(tmp_path)
    result = boot(disk, f"run mmaptest shared /shared.dat {core}; run mmaptest lent", smp=3)
    assert result.rc == 0, result.describe()
    assert_checks_held(result, ["another mapping sees the stores", "msync",
                                "pread sees the stores", "rest of the filled hole is zeroes",
                                "rest of the page kept", "pread sees the second store",
                                "pwrite seen in the mapping", "msync async",
                                "msync outside a mapping", "pread after munmap",
                                "lends all ended"])
    assert lent_counts(result) == [0], result.describe()
    assert_clean(disk)


def test_msynced_stores_survive_a_killed_qemu(tmp_path):
    disk = disk_copy(tmp_path)
    lines = churn_and_kill(disk, 1, commands="run mmaptest crash /crash.dat @2",
                           marker="mmap_synced")
    assert not [line for line in lines if '"ok":false' in line], "\n".join(lines)
    assert_clean(disk)  # the holes the stores filled are in a committed transaction
    data = debugfs_cat(disk, "/crash.dat")
    assert len(data) == 64 * 4096, len(data)
    for page in range(2, 64):
        assert data[page * 4096:(page + 1) * 4096] == bytes([0x40 + page]) * 4096, page
    # page 1 was stored into again after its write-back: the store faulted, dirtied it again
    assert data[4096:8192] == b"\x99" * 4096
    assert set(data[1:4096]) == {0x40}  # page 0's first byte may hold the unsynced store


@pytest.mark.parametrize("core", ["", "@2"])
def test_truncate_while_mapped_revokes_the_freed_pages(tmp_path, core):
    disk = disk_copy(tmp_path)
    result = boot(disk, f"run mmaptest truncate /truncated.dat {core}; run mmaptest lent", smp=3)
    assert result.rc != 0, result.describe()
    assert "mmaptest exited with code 135" in result.text, result.describe()
    assert "not ended" not in result.text, result.describe()
    assert_checks_held(result, ["map", "mapped before", "truncate", "another file written",
                                "page 0 still the file's"])
    assert lent_counts(result) == [0], result.describe()
    assert_clean(disk)


def test_unlink_while_mapped_keeps_the_file_until_munmap(tmp_path):
    disk = disk_copy(tmp_path)
    result = boot(disk, "run mmaptest unlink /unlinked.dat; run mmaptest lent; "
                        "run mmaptest advise /advised.dat; run mmaptest lent")
    assert result.rc == 0, result.describe()
    assert_checks_held(result, ["unlink", "the name is gone", "another file written",
                                "still the unlinked file's bytes", "unmap", "lends all ended",
                                "sequential", "will need", "will need mapped the range",
                                "don't need", "don't need ended its lends", "normal",
                                "read again after don't need", "range past the region",
                                "unaligned", "outside a mapping"])
    assert lent_counts(result) == [0, 0], result.describe()
    assert_clean(disk)  # the unlinked file's blocks were freed at munmap


def test_a_system_call_brings_mapped_pages_in(tmp_path):
    disk = disk_copy(tmp_path)
    result = boot(disk, "run mmaptest syscall /syscall.dat; run mmaptest lent")
    assert result.rc == 0, result.describe()
    assert_checks_held(result, ["a system call reads an untouched mapped page",
                                "a page past the end refused to a system call",
                                "still running after it", "unmap"])
    assert "mmaptest: printed from a mapped page" in result.text, result.describe()
    assert lent_counts(result) == [0], result.describe()


def test_mappings_over_two_blk_shards(tmp_path):
    """BLK as two shards (each 64-block stripe its own): faults go to the shard that owns the
    block, fault-around stops at a stripe's end, stores and msync reach both."""
    disk = disk_copy(tmp_path)
    placement = tmp_path / "shards.conf"
    placement.write_text("fs 0\nblk 0,1\ndk 0\npager 0\napp 0,1\n")
    result = formica.run("--smp", "2", "--placement", str(placement), "--disk", str(disk),
                         "--cmd", "run mmaptest read /sharded.dat 6; run mmaptest shared "
                                  "/sharded-shared.dat; run mmaptest lent", timeout=TIMEOUT)
    assert result.rc == 0, result.describe()
    assert "shard 1 of 2" in result.text, result.describe()
    assert_checks_held(result, ["shared equals pread", "private equals pread",
                                "pread sees the stores", "pread sees the second store",
                                "lends all ended"])
    assert lent_counts(result) == [0], result.describe()
    assert_clean(disk)


def test_a_mapping_outlives_fs_and_blk_restarts(tmp_path):
    """FS and BLK killed while a program maps a file: its next faults go to the restarted FS
    (whose handles are the ended one's) and BLK, and what it stores and syncs reaches the file."""
    disk = disk_copy(tmp_path)
    result = boot(disk, "start mmaptest restart /restart.dat; sleep 800; kill fs; kill blk; "
                        "wait; run mmaptest lent")
    assert result.rc == 0, result.describe()
    assert_checks_held(result, ["read before", "msync before", "every page after the restarts",
                                "msync after", "pread sees both stores", "unmap"])
    assert "its faults go to pid" in result.text, result.describe()
    assert [line["exit_code"] for line in result.kinds("waited")] == [0], result.describe()
    assert lent_counts(result) == [0], result.describe()
    assert_clean(disk)


def test_the_account_pays_for_tables_and_private_copies(tmp_path):
    """In an account of 4 MiB: a region whose page tables would pass it is refused (-E_QUOTA),
    300 map and unmap cycles reuse one place (no tables piling up), and private copies past it
    end the program as a fault it could not be served (142, 'quota exceeded')."""
    disk = disk_copy(tmp_path)
    result = boot(disk, "run --memory 4M mmaptest quota /quota.dat; run mmaptest lent")
    assert_checks_held(result, ["page tables past the account refused",
                                "300 cycles in one place", "map private"])
    assert "mmaptest exited with code 142" in result.text, result.describe()
    assert "could not be served: quota exceeded" in result.text, result.describe()
    assert "not refused" not in result.text, result.describe()
    assert lent_counts(result) == [0], result.describe()
    assert_clean(disk)


# "@2": the faults install and end their lends on a p-kernel's core, the m-kernel reads the count.
@pytest.mark.parametrize("core", ["", "@2"])
def test_a_large_file_maps_within_a_small_account(tmp_path, core):
    """In an account of 4 MiB left 1 MiB by private copies (less than the 2 MiB of lends a
    process may hold), 12 MiB mapped and read whole equal pread: each mapping lend counts 4 KiB
    in the account, so the faults end the process's own lends to stay within it. The lends
    count while mapped (the account may count less), and after munmap exactly what it did."""
    disk = disk_copy(tmp_path)
    result = boot(disk, f"run --memory 4M mmaptest account /account.dat 12 {core}; "
                        "run mmaptest lent", smp=3)
    assert result.rc == 0, result.describe()
    assert_checks_held(result, ["write", "pread", "copies leave 1 MiB or less",
                                "map again in the same place",
                                "mapped pages equal pread within the account",
                                "the lends count in the account",
                                "the account's use back after munmap"])
    [account] = result.kinds("mmap_account")
    assert account["after"] == account["before"] > account["mapped"], result.describe()
    assert lent_counts(result) == [0], result.describe()
    assert_clean(disk)


def test_a_mapped_read_in_a_full_account_ends_the_program(tmp_path):
    """Private copies fill an account of 4 MiB; a mapped read then, with no lend of its own to
    give back, is refused (-E_QUOTA) and ends the program as a page fault (142), with a line
    that says why; nothing stays lent."""
    disk = disk_copy(tmp_path)
    result = boot(disk, "run --memory 4M mmaptest accountfull /full.dat; run mmaptest lent")
    assert_checks_held(result, ["write", "grow with holes", "map", "copies fill the account"])
    assert "mmaptest exited with code 142" in result.text, result.describe()
    assert ("is at its memory limit (4096 KiB) and it holds no mapping lend to give back: "
            "refused (quota exceeded)") in result.text, result.describe()
    assert "not refused" not in result.text, result.describe()
    assert lent_counts(result) == [0], result.describe()
    assert_clean(disk)


# "@2": the program on a p-kernel's core: the m-kernel frees the copies and cuts the records of a
# process that runs elsewhere, while its own core ends the lends.
@pytest.mark.parametrize("core", ["", "@2"])
def test_munmap_of_a_head_a_tail_a_middle_and_over_gaps(tmp_path, core):
    """munmap of a part of a region (its head, its tail, its middle: two regions then) leaves the
    rest mapped, each part faulting at its own file offset with the region's handle (msync of
    the tail part), and one munmap over parts and gaps ends them all; unaligned and empty
    ranges are refused. Then a page unmapped from the middle of a private mapping (its copy
    freed) ends the program as any fault on unmapped memory (exit 142)."""
    disk = disk_copy(tmp_path)
    result = boot(disk, f"run mmaptest partial /partial.dat {core}; run mmaptest lent; "
                        f"run mmaptest unmapped /unmapped.dat {core}; run mmaptest lent", smp=3)
    assert result.rc != 0, result.describe()  # the second program ends with a fault
    assert_checks_held(result, ["read before", "unmap the head", "unmap the tail",
                                "unmap the middle", "the parts left equal pread",
                                "cut before a fault", "each part faults at its own offset",
                                "msync of the tail part", "pread sees the tail's store",
                                "msync of the unmapped middle", "unaligned refused",
                                "length 0 refused", "a range that wraps refused",
                                "unmap over parts and gaps",
                                "unmap the cold parts", "unmap of nothing", "lends all ended",
                                "unmap pages 2 and 3", "pages 1 and 5 still read"])
    assert "mmaptest exited with code 142" in result.text, result.describe()
    assert "not ended" not in result.text, result.describe()
    assert lent_counts(result) == [0, 0], result.describe()
    assert_clean(disk)


def test_map_fixed_replaces_part_of_a_mapping(tmp_path):
    """MAP_FIXED over pages 4-7 of a mapping shows the other file there and keeps the rest;
    unaligned, past the window's end and too large are refused (-E_INVALID, logged) and
    unmap nothing."""
    disk = disk_copy(tmp_path)
    result = boot(disk, "run mmaptest fixed /fixed.dat; run mmaptest lent")
    assert result.rc == 0, result.describe()
    assert_checks_held(result, ["read before", "fixed over a part", "the part shows the other file",
                                "the rest is the first file's", "fixed unaligned",
                                "fixed past the window's end", "fixed too large over the mapping",
                                "a refused fixed unmapped nothing", "unmap all three",
                                "lends all ended"])
    assert "refused: not page-aligned" in result.text, result.describe()
    assert "refused: not inside the mmap window" in result.text, result.describe()
    assert lent_counts(result) == [0], result.describe()
    assert_clean(disk)


@pytest.mark.parametrize("core", ["", "@2"])
def test_dontneed_drops_private_copies(tmp_path, core):
    """MADV_DONTNEED on a private mapping frees its copies (the next read equals pread, a
    hole's store reads zeroes again); on a shared one it ends the lends (faulted back); a
    shared read-only hole's zeroes go, so a write() into the hole is seen after it."""
    disk = disk_copy(tmp_path)
    result = boot(disk, f"run mmaptest dontneed /dontneed.dat {core}; run mmaptest lent", smp=3)
    assert result.rc == 0, result.describe()
    assert_checks_held(result, ["stores seen", "don't need, private",
                                "private reads equal pread again", "the hole reads zeroes again",
                                "shared read", "don't need, shared", "shared reads again",
                                "a shared read-only hole reads zeroes", "hole written",
                                "don't need, the hole", "the hole's write seen", "unmap",
                                "lends all ended"])
    assert lent_counts(result) == [0], result.describe()
    assert_clean(disk)


# "@2": the m-kernel frees the copies of a process on another core, whose core must drop their
# translations before it resumes (a stale one would show an earlier cycle's copy).
@pytest.mark.parametrize("core", ["", "@2"])
def test_partial_unmap_cycles_leak_nothing_in_a_small_account(tmp_path, core):
    """300 cycles, in an account of 4 MiB, of a private mapping with three private copies cut
    in three munmaps (a split first): a leaked copy would pass the account, a leaked record
    the 16 regions, a leaked FS handle FS's 128 a process; the tail's fault after the cuts
    needs the handle the split shares."""
    disk = disk_copy(tmp_path)
    result = boot(disk, f"run --memory 4M mmaptest cycles /cycles.dat {core}; run mmaptest lent",
                  smp=3)
    assert result.rc == 0, result.describe()
    assert_checks_held(result, ["write", "300 partial cycles"])
    assert lent_counts(result) == [0], result.describe()
    assert_clean(disk)
