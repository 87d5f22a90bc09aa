# Freed blocks are never seen by anyone but their old file's readers (docs/storage.md, "Freed
# blocks and lent pages", "FS replicas"): an ordinary user that keeps the pages its own file's
# readblocks lent (BLK's four-block lends, FS's lends on) past the file's truncate, unlink and
# sync sees only its own old bytes while another user's private file takes the blocks, with one
# FS and through a replica with two BLK shards; a reader through a replica, while the owner
# rewrites, truncates and extends a file (ext3, and ext2 without a journal), sees only words of
# their own offset and zeros; and a replica's read held in flight (fs_replica_delay) while the
# owner frees the blocks and another user's private file takes them brings the reader its own
# bytes or none, by each of the replica's three ways to BLK, and through an indirect block the
# other user's directories take; and one held in flight while the owner cuts the file inside its
# last block brings the file as of its view or the shorter one, never the old count with the
# tail the owner zeroed in place.
import shutil
import subprocess

import pytest

import formica
from test_storage_servers import assert_clean

pytestmark = pytest.mark.usefixtures("built")

TIMEOUT = 600
PLACEMENTS = {  # (placement, the attacker's core, the other user's core)
    "one_fs": ("1", 0, 0),
    "replica_and_two_shards": ("9", 1, 0),  # --smp 2: FS's owner and BLK shard 0 on C0
}
KEPT = {"blk": 60, "fs": 32}  # tests/programs/hostile/stale_lends.c: each mode's file
PAUSE_MS = 6000  # fs_replica_delay: the replica's read waits this long as of its view
# What the read in flight brings: the pin's own old bytes (the replica lends on the block it
# borrowed, which BLK retired with the attacker's bytes), else nothing (BLK refused the old
# view, and the replica or the library asked again: the file is empty by then).
IN_FLIGHT_RESULT = {"forward": 0, "pin": 4096, "read": 0, "indirect": 0}
SHORTENED_BYTES = 8 * 4096 - 2048  # `shorten`: RACE_BLOCKS less RACE_SHORTEN_BYTES


def disk_copy(tmp_path):
    disk = tmp_path / "disk.img"
    shutil.copyfile(formica.OUT_DIR / "disk.img", disk)
    return disk


@pytest.mark.parametrize("where", sorted(PLACEMENTS))
def test_kept_lent_pages_show_only_their_own_bytes(tmp_path, where):
    placement, attacker, victim = PLACEMENTS[where]
    disk = disk_copy(tmp_path)
    rounds = [f"start --user 2001 hostile keeplends {mode} @{attacker}; "
              f"run --user 2002 hostile secret {mode} @{victim}; wait" for mode in KEPT]
    result = formica.run("--smp", "2", "--placement", placement, "--disk", str(disk),
                         "--cmd", "; ".join(rounds), timeout=TIMEOUT)
    assert result.rc == 0, result.describe()
    secrets = result.kinds("stale_lends_secret")
    assert [line["error"] for line in secrets] == [0, 0], result.describe()
    lines = {line["mode"]: line for line in result.kinds("stale_lends")}
    assert sorted(lines) == sorted(KEPT), result.describe()
    for mode, blocks in KEPT.items():
        line = lines[mode]
        assert line["core"] == attacker and line["freed"] and line["secret_written"], line
        # every block came lent, BLK's own four-block lends or each lent on by FS
        assert line["lent"] == blocks and line["not_lent"] == 0, line
        assert line["by_fs"] == (blocks if mode == "fs" else 0), line
        # the pages keep the attacker's old bytes: none of the other user's file or directory
        assert line["secret_pages"] == 0 and line["changed_pages"] == 0, line
    assert_clean(disk)


@pytest.mark.parametrize("journal", ["ext3", "ext2"])
def test_a_reader_through_a_replica_sees_no_freed_block(tmp_path, journal):
    disk = disk_copy(tmp_path)
    if journal == "ext2":  # no images: the replica reads all metadata from BLK
        subprocess.run(["tune2fs", "-O", "^has_journal", str(disk)], check=True,
                       capture_output=True)
    result = formica.run("--smp", "2", "--placement", "9", "--disk", str(disk), "--cmd",
                         "run replicatest churn 0 1 100 @0", timeout=TIMEOUT)
    assert result.rc == 0, result.describe()
    readers = result.kinds("churn_reader")
    assert len(readers) == 1 and readers[0]["core"] == 1, result.describe()
    reader = readers[0]
    assert reader["reads"] > 100 * 48 * 3, reader  # each lockstep round reads every block thrice
    assert reader["mismatches"] == 0 and reader["errors"] == 0, result.kinds("churn_mismatch")
    assert result.kinds("churn_writer")[0]["error"] == 0, result.describe()
    assert_clean(disk)


def race_read_in_flight(tmp_path, way):
    """hostile raceread WAY on the replica's core, its read paused as of its view while
    hostile racefree changes the file through the owner and hostile secret writes another
    user's file: the race_read line, once the race is shown forced."""
    disk = disk_copy(tmp_path)
    result = formica.run("--smp", "2", "--placement", "9", "--disk", str(disk),
                         "--append", f"fs_replica_delay={PAUSE_MS}", "--cmd",
                         f"start --user 2001 hostile raceread {way} @1; "
                         f"run --user 2002 hostile secret {way} @0; wait", timeout=TIMEOUT)
    assert result.rc == 0, result.describe()
    [read] = result.kinds("race_read")
    [freed] = result.kinds("race_free")
    [secret] = result.kinds("stale_lends_secret")
    assert read["core"] == 1 and freed["error"] == 0 and secret["error"] == 0, result.describe()
    assert read["freer_exit"] == 0, read
    # The race was forced: a read's view was taken (its pause began) before the truncate, and
    # the other user's file was written before that pause ended and the read went to BLK.
    pauses = result.kinds("fs_replica_pause")
    assert any(pause["from_us"] < freed["truncate_us"] and secret["written_us"] < pause["to_us"]
               for pause in pauses), (pauses, freed, secret)
    assert_clean(disk)
    return read


@pytest.mark.parametrize("way", sorted(IN_FLIGHT_RESULT))
def test_a_replica_read_in_flight_while_the_owner_frees_its_blocks(tmp_path, way):
    read = race_read_in_flight(tmp_path, way)
    # Its own bytes (the replica's view was before the truncate) or none (asked again as of a
    # newer view, or of the owner): never another user's.
    assert read["result"] == IN_FLIGHT_RESULT[way], read
    assert read["foreign_bytes"] == 0 and not read["secret"], read


def test_a_replica_read_in_flight_while_the_owner_cuts_the_file_inside_a_block(tmp_path):
    # ftruncate to 2 KiB short of the file's 8 blocks: no block freed, the last one's tail
    # zeroed in place. The paused pread's count is from its view (the whole file), its bytes
    # from BLK after the cut: it must be answered again as of a newer view (the shorter file,
    # all its own bytes), never with the old count and the new zeros (POSIX: read and
    # ftruncate are atomic with respect to each other).
    read = race_read_in_flight(tmp_path, "shorten")
    assert read["result"] == SHORTENED_BYTES, read
    assert read["zero_bytes"] == 0 and read["foreign_bytes"] == 0, read
