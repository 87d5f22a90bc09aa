/* test_ext2_journal.c: the ext3 journal (servers/fs/journal*.c) against
 * images mke2fs -t ext3 makes: transactions read back by debugfs logdump,
 * crashes simulated by dropping every write after a chosen barrier, replay
 * compared with e2fsck's own, debugfs-written journals (revokes), and the
 * refusal of journal features that are not supported. */
#include "test_ext2_support.h"
#include "journal.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

/* The test disk under the journal: counts barriers, and after the barrier
 * numbered crash_at (if set) drops every write, as a power cut would; or at
 * barrier snapshot_at copies the image to snapshot (a power cut there) and
 * goes on. */
struct crash_disk {
    struct ext2_device device;
    struct test_disk disk;
    unsigned flushes;
    unsigned crash_at;
    unsigned snapshot_at;
    const char *image;
    char snapshot[300];
};

static int crash_read(void *context, uint64_t block, uint32_t offset, void *buffer, uint32_t length)
{
    struct crash_disk *crash = context;
    crash->disk.device.block_size = crash->device.block_size;
    return crash->disk.device.read_bytes(&crash->disk, block, offset, buffer, length);
}

static int crash_write(void *context, uint64_t block, const void *buffer)
{
    struct crash_disk *crash = context;
    if (crash->crash_at != 0 && crash->flushes >= crash->crash_at)
        return 0; /* lost */
    crash->disk.device.block_size = crash->device.block_size;
    return crash->disk.device.write_block(&crash->disk, block, buffer);
}

static int crash_flush(void *context)
{
    struct crash_disk *crash = context;
    crash->flushes++;
    if (crash->snapshot_at != 0 && crash->flushes == crash->snapshot_at)
        assert_int_equal(run("cp %s %s", crash->image, crash->snapshot), 0);
    return 0;
}

struct fixture {
    char image[256];
    uint32_t block_size;
    struct crash_disk crash;
    struct ext2_fs fs;
    struct journal *journal;
};

static struct journal_lower lower_of(struct crash_disk *crash)
{
    return (struct journal_lower){&crash->device, crash_flush, crash};
}

static int mount_journaled(struct fixture *fixture)
{
    struct crash_disk *crash = &fixture->crash;
    *crash = (struct crash_disk){.device = {.read_bytes = crash_read, .write_block = crash_write}};
    crash->device.context = crash;
    crash->image = fixture->image;
    snprintf(crash->snapshot, sizeof crash->snapshot, "%s.snapshot", fixture->image);
    disk_open(&crash->disk, fixture->image);
    int status = journal_mount(fixture->journal, &fixture->fs, lower_of(crash));
    fixture->fs.time = 1700000000;
    return status;
}

static void unmount(struct fixture *fixture)
{
    disk_close(&fixture->crash.disk);
}

static void make_ext3(struct fixture *fixture, uint32_t block_size)
{
    static unsigned counter;
    fixture->block_size = block_size;
    snprintf(fixture->image, sizeof fixture->image, "%s/ext3-%u.img", scratch(), counter++);
    assert_int_equal(
        run("rm -rf %s/src && mkdir -p %s/src/docs && echo hello > %s/src/docs/hello.txt"
            " && mke2fs -q -F -t ext3 -b %u -J size=%u -d %s/src %s 16M 2>/dev/null",
            scratch(), scratch(), scratch(), block_size, block_size / 1024, scratch(),
            fixture->image),
        0);
}

static int setup(void **state, uint32_t block_size)
{
    struct fixture *fixture = calloc(1, sizeof *fixture);
    fixture->journal = calloc(1, sizeof *fixture->journal);
    make_ext3(fixture, block_size);
    *state = fixture;
    return 0;
}
static int setup_1k(void **state)
{
    return setup(state, 1024);
}
static int setup_4k(void **state)
{
    return setup(state, 4096);
}
static int teardown(void **state)
{
    struct fixture *fixture = *state;
    free(fixture->journal);
    free(fixture);
    return 0;
}

/* Some metadata-heavy work: a file of `bytes`, a directory, a file in it. */
static void churn(struct fixture *fixture, uint32_t seed, size_t bytes)
{
    static uint8_t data[300000];
    char path[64];
    uint32_t inode;
    assert_true(bytes <= sizeof data);
    pattern_fill(data, bytes, seed, 0);
    snprintf(path, sizeof path, "/file%u", seed);
    assert_int_equal(ext2_create(&fixture->fs, path, 0644, &inode), 0);
    assert_int_equal(ext2_write(&fixture->fs, inode, 0, data, bytes), (long)bytes);
    snprintf(path, sizeof path, "/dir%u", seed);
    assert_int_equal(ext2_mkdir(&fixture->fs, path, 0755, &inode), 0);
    snprintf(path, sizeof path, "/dir%u/small", seed);
    assert_int_equal(ext2_create(&fixture->fs, path, 0644, &inode), 0);
    assert_int_equal(ext2_write(&fixture->fs, inode, 0, "small", 5), 5);
}

static bool file_matches(const char *image, uint32_t seed, size_t bytes)
{
    char path[64];
    snprintf(path, sizeof path, "/file%u", seed);
    size_t length;
    uint8_t *got = host_cat(image, path, &length);
    bool same = length == bytes;
    for (size_t i = 0; same && i < bytes; i++)
        same = got[i] == pattern_byte(seed, i);
    free(got);
    return same;
}

static unsigned count_lines(const char *command, const char *image, const char *needle)
{
    char line[512], full[1024];
    snprintf(full, sizeof full, "%s %s 2>/dev/null", command, image);
    FILE *pipe = popen(full, "r");
    assert_non_null(pipe);
    unsigned count = 0;
    while (fgets(line, sizeof line, pipe) != NULL)
        count += strstr(line, needle) != NULL;
    pclose(pipe);
    return count;
}

static void mount_plain_ext3(void **state)
{
    struct fixture *fixture = *state;
    assert_int_equal(mount_journaled(fixture), 0);
    assert_true(fixture->fs.has_journal);
    assert_ptr_equal(fixture->fs.device, &fixture->journal->device);
    assert_true(fixture->fs.superblock.s_feature_incompat & EXT2_FEATURE_INCOMPAT_RECOVER);
    uint32_t inode;
    assert_int_equal(ext2_lookup(&fixture->fs, "/docs/hello.txt", &inode), 0);
    unmount(fixture);
    assert_true(fsck_clean(fixture->image));
}

/* Committed transactions are where logdump finds them, as many blocks as logged. */
static void logdump_reads_transactions(void **state)
{
    struct fixture *fixture = *state;
    assert_int_equal(mount_journaled(fixture), 0);
    churn(fixture, 1, 20000);
    assert_int_equal(journal_commit(fixture->journal), 0);
    churn(fixture, 2, 5000);
    assert_int_equal(journal_commit(fixture->journal), 0);
    struct journal_statistics stats = fixture->journal->statistics;
    unmount(fixture);
    assert_int_equal(stats.commits, 2);
    assert_int_equal(count_lines("debugfs -R 'logdump'", fixture->image, "(commit block)"), 2);
    assert_int_equal(count_lines("debugfs -R 'logdump'", fixture->image, "(descriptor block)"), 2);
    assert_int_equal(count_lines("debugfs -R 'logdump -a'", fixture->image, "logged at journal"),
                     stats.blocks_logged);
    assert_true(fsck_clean(fixture->image)); /* the homes were written too */
    assert_true(file_matches(fixture->image, 1, 20000));
    /* e2fsck replays it and stays clean */
    assert_int_equal(run("cp %s %s.e2fsck && e2fsck -fy %s.e2fsck >/dev/null 2>&1", fixture->image,
                         fixture->image, fixture->image) &
                         ~1,
                     0);
    char copy[300];
    snprintf(copy, sizeof copy, "%s.e2fsck", fixture->image);
    assert_true(fsck_clean(copy));
    assert_true(file_matches(copy, 2, 5000));
}

static bool blocks_equal(const char *left, const char *right, uint32_t block_size, uint32_t block)
{
    return run("cmp -s -i %lu:%lu -n %u %s %s", (unsigned long)block * block_size,
               (unsigned long)block * block_size, block_size, left, right) == 0;
}

/* Power cut after the commit block, before any metadata reached its home:
 * our replay and e2fsck's give the same blocks; the files are whole. */
static void crash_after_commit_replays(void **state)
{
    struct fixture *fixture = *state;
    assert_int_equal(mount_journaled(fixture), 0);
    churn(fixture, 3, 250000);
    uint32_t count = fixture->journal->transaction_blocks;
    uint32_t *blocks = malloc(count * sizeof *blocks);
    memcpy(blocks, fixture->journal->transaction_numbers, count * sizeof *blocks);
    fixture->crash.crash_at = fixture->crash.flushes + 2;
    assert_int_equal(journal_commit(fixture->journal), 0);
    unmount(fixture);
    char theirs[300];
    snprintf(theirs, sizeof theirs, "%s.e2fsck", fixture->image);
    assert_int_equal(
        run("cp %s %s && e2fsck -fy %s >/dev/null 2>&1", fixture->image, theirs, theirs) & ~1, 0);
    assert_false(file_matches(fixture->image, 3, 250000)); /* not home before replay */
    assert_int_equal(mount_journaled(fixture), 0);
    assert_int_equal(fixture->journal->statistics.transactions_replayed, 1);
    assert_int_equal(fixture->journal->statistics.blocks_replayed, count);
    unmount(fixture);
    uint32_t superblock_block = fixture->block_size == 1024 ? 1 : 0;
    for (uint32_t i = 0; i < count; i++)
        if (blocks[i] != superblock_block)
            assert_true(blocks_equal(fixture->image, theirs, fixture->block_size, blocks[i]));
    free(blocks);
    assert_true(fsck_clean(fixture->image));
    assert_true(file_matches(fixture->image, 3, 250000));
    assert_true(file_matches(theirs, 3, 250000));
}

/* Power cut before the commit block: nothing of the transaction is replayed. */
static void crash_before_commit_is_undone(void **state)
{
    struct fixture *fixture = *state;
    assert_int_equal(mount_journaled(fixture), 0);
    churn(fixture, 4, 3000);
    assert_int_equal(journal_commit(fixture->journal), 0);
    churn(fixture, 5, 3000);
    fixture->crash.crash_at = fixture->crash.flushes + 1;
    assert_int_equal(journal_commit(fixture->journal), 0);
    unmount(fixture);
    assert_int_equal(mount_journaled(fixture), 0);
    assert_int_equal(fixture->journal->statistics.transactions_replayed, 1);
    uint32_t inode;
    assert_int_equal(ext2_lookup(&fixture->fs, "/file5", &inode), -E_NOT_FOUND);
    assert_int_equal(ext2_lookup(&fixture->fs, "/dir4/small", &inode), 0);
    unmount(fixture);
    assert_true(fsck_clean(fixture->image));
    assert_true(file_matches(fixture->image, 4, 3000));
}

/* Many transactions through a 1024-block journal: checkpoints empty it. The
 * disk as it was at every 13th barrier (a power cut there) replays to a
 * clean file system. */
static void checkpoints_and_crashes(void **state)
{
    struct fixture *fixture = *state;
    char pristine[300];
    snprintf(pristine, sizeof pristine, "%s.pristine", fixture->image);
    assert_int_equal(run("cp %s %s", fixture->image, pristine), 0);
    for (unsigned crash_at = 0; crash_at <= 200; crash_at += 13) {
        assert_int_equal(run("cp %s %s", pristine, fixture->image), 0);
        assert_int_equal(mount_journaled(fixture), 0);
        fixture->crash.snapshot_at = crash_at == 0 ? 0 : fixture->crash.flushes + crash_at;
        for (uint32_t seed = 10; seed < 160; seed++) {
            churn(fixture, seed, 40000);
            char path[64];
            snprintf(path, sizeof path, "/file%u", seed - 1);
            if (seed % 3 == 0)
                assert_int_equal(ext2_unlink(&fixture->fs, path), 0);
            if (seed % 4 != 0)
                assert_int_equal(journal_commit(fixture->journal), 0);
            assert_int_equal(journal_commit_if_due(fixture->journal), 0);
            fixture->fs.time += 2;
        }
        assert_int_equal(journal_sync(fixture->journal), 0);
        assert_true(fixture->journal->statistics.checkpoints >=
                    (fixture->block_size == 1024 ? 2u : 1u));
        unmount(fixture);
        assert_true(fsck_clean(fixture->image));
        if (crash_at == 0)
            continue;
        assert_int_equal(run("cp %s %s", fixture->crash.snapshot, fixture->image), 0);
        assert_int_equal(mount_journaled(fixture), 0);
        unmount(fixture);
        assert_true(fsck_clean(fixture->image));
    }
}

static uint32_t first_block_of(struct fixture *fixture, const char *path)
{
    uint32_t number, physical;
    struct ext2_inode inode;
    assert_int_equal(ext2_lookup(&fixture->fs, path, &number), 0);
    assert_int_equal(ext2_read_inode(&fixture->fs, number, &inode), 0);
    assert_int_equal(ext2_map_block(&fixture->fs, &inode, 0, &physical), 0);
    return physical;
}

/* A block freed by the running transaction is not reused before it commits. */
static void freed_blocks_wait_for_the_commit(void **state)
{
    struct fixture *fixture = *state;
    assert_int_equal(mount_journaled(fixture), 0);
    uint32_t inode;
    assert_int_equal(ext2_create(&fixture->fs, "/a", 0644, &inode), 0);
    assert_int_equal(ext2_write(&fixture->fs, inode, 0, "a", 1), 1);
    assert_int_equal(journal_commit(fixture->journal), 0);
    uint32_t freed = first_block_of(fixture, "/a");
    assert_int_equal(ext2_unlink(&fixture->fs, "/a"), 0);
    assert_int_equal(ext2_create(&fixture->fs, "/b", 0644, &inode), 0);
    assert_int_equal(ext2_write(&fixture->fs, inode, 0, "b", 1), 1);
    assert_int_not_equal(first_block_of(fixture, "/b"), freed);
    assert_int_equal(journal_commit(fixture->journal), 0);
    assert_int_equal(ext2_truncate(&fixture->fs, inode, 0), 0);
    assert_int_equal(journal_commit(fixture->journal), 0);
    assert_int_equal(ext2_write(&fixture->fs, inode, 0, "c", 1), 1);
    assert_int_equal(first_block_of(fixture, "/b"), freed); /* free again after the commit */
    assert_int_equal(fixture->journal->statistics.data_blocks_logged, 0);
    assert_int_equal(journal_sync(fixture->journal), 0);
    unmount(fixture);
    assert_true(fsck_clean(fixture->image));
}

/* What the device under the journal heard freed, and the one block it holds back. */
static uint64_t heard[16];
static unsigned heard_count;
static uint64_t held = UINT64_MAX;

static void lower_forget(void *context, uint64_t block)
{
    (void)context;
    if (heard_count < 16)
        heard[heard_count++] = block;
}

static bool lower_may_allocate(void *context, uint64_t block)
{
    (void)context;
    return block != held;
}

/* The device under the journal hears of each free (FS's: BLK is told,
 * docs/storage.md "Freed blocks and lent pages") and may hold a freed block
 * back past the commit: the journal asks it too. */
static void frees_reach_the_device_below(void **state)
{
    struct fixture *fixture = *state;
    assert_int_equal(mount_journaled(fixture), 0);
    fixture->crash.device.forget = lower_forget;
    fixture->crash.device.may_allocate = lower_may_allocate;
    heard_count = 0;
    uint32_t inode;
    assert_int_equal(ext2_create(&fixture->fs, "/a", 0644, &inode), 0);
    assert_int_equal(ext2_write(&fixture->fs, inode, 0, "a", 1), 1);
    assert_int_equal(journal_commit(fixture->journal), 0);
    uint32_t freed = first_block_of(fixture, "/a");
    held = freed;
    assert_int_equal(ext2_unlink(&fixture->fs, "/a"), 0);
    bool told = false;
    for (unsigned i = 0; i < heard_count; i++)
        told |= heard[i] == freed;
    assert_true(told);
    assert_int_equal(journal_commit(fixture->journal), 0); /* the journal's own hold ends */
    assert_int_equal(ext2_create(&fixture->fs, "/b", 0644, &inode), 0);
    assert_int_equal(ext2_write(&fixture->fs, inode, 0, "b", 1), 1);
    assert_int_not_equal(first_block_of(fixture, "/b"), freed);
    held = UINT64_MAX;
    assert_int_equal(ext2_truncate(&fixture->fs, inode, 0), 0);
    assert_int_equal(journal_commit(fixture->journal), 0);
    assert_int_equal(ext2_write(&fixture->fs, inode, 0, "c", 1), 1);
    assert_int_equal(first_block_of(fixture, "/b"), freed); /* given out once let go */
    assert_int_equal(journal_sync(fixture->journal), 0);
    unmount(fixture);
    assert_true(fsck_clean(fixture->image));
}

/* More frees than the transaction can track (a 7 MiB file truncated on
 * 1 KiB blocks): blocks it no longer knows may be reused at once, so every
 * data write until the commit is logged; a power cut after the commit
 * replays to a clean file system with the new file whole. */
static void too_many_frees_log_data(void **state)
{
    struct fixture *fixture = *state;
    static uint8_t data[1 << 20];
    assert_int_equal(mount_journaled(fixture), 0);
    uint32_t big, small;
    assert_int_equal(ext2_create(&fixture->fs, "/big", 0644, &big), 0);
    for (uint32_t mib = 0; mib < 7; mib++) {
        pattern_fill(data, sizeof data, 40, (uint64_t)mib << 20);
        assert_int_equal(ext2_write(&fixture->fs, big, (uint64_t)mib << 20, data, sizeof data),
                         (long)sizeof data);
        assert_int_equal(journal_commit(fixture->journal), 0);
    }
    assert_int_equal(ext2_truncate(&fixture->fs, big, 0), 0);
    bool overflow = fixture->journal->freed_overflow;
    assert_int_equal(ext2_create(&fixture->fs, "/file8", 0644, &small), 0);
    pattern_fill(data, 100000, 8, 0);
    assert_int_equal(ext2_write(&fixture->fs, small, 0, data, 100000), 100000);
    if (fixture->block_size == 1024) {
        assert_true(overflow);
        assert_true(fixture->journal->statistics.data_blocks_logged > 0);
    }
    fixture->crash.crash_at = fixture->crash.flushes + 2; /* homes lost */
    assert_int_equal(journal_commit(fixture->journal), 0);
    unmount(fixture);
    assert_int_equal(mount_journaled(fixture), 0);
    assert_true(fixture->journal->statistics.transactions_replayed >= 1);
    unmount(fixture);
    assert_true(fsck_clean(fixture->image));
    assert_true(file_matches(fixture->image, 8, 100000));
}

/* A journal debugfs wrote (jo/jw/jc): a transaction of two blocks and a
 * later one revoking the second. We replay what e2fsck replays. */
static void replays_debugfs_journal(void **state)
{
    struct fixture *fixture = *state;
    uint32_t bs = fixture->block_size, first = bs == 1024 ? 9000 : 3000;
    assert_int_equal(run("head -c %u /dev/urandom > %s/jw.bin && cp %s %s.before && "
                         "debugfs -w %s -f - >/dev/null 2>&1 <<EOF\njo\njw -b %u,%u %s/jw.bin\n"
                         "jw -r %u\njc\nEOF",
                         2 * bs, scratch(), fixture->image, fixture->image, fixture->image, first,
                         first + 1, scratch(), first + 1),
                     0);
    assert_int_equal(count_lines("debugfs -R 'logdump'", fixture->image, "(revoke table)"), 1);
    char theirs[300], before[300], written[300];
    snprintf(theirs, sizeof theirs, "%s.e2fsck", fixture->image);
    snprintf(before, sizeof before, "%s.before", fixture->image);
    snprintf(written, sizeof written, "%s/jw.bin", scratch());
    assert_int_equal(
        run("cp %s %s && e2fsck -fy %s >/dev/null 2>&1", fixture->image, theirs, theirs) & ~1, 0);
    assert_int_equal(mount_journaled(fixture), 0);
    assert_int_equal(fixture->journal->statistics.transactions_replayed, 2);
    assert_int_equal(fixture->journal->statistics.blocks_replayed, 1);
    unmount(fixture);
    assert_true(blocks_equal(fixture->image, theirs, bs, first));
    assert_true(blocks_equal(fixture->image, theirs, bs, first + 1));
    assert_true(blocks_equal(fixture->image, before, bs, first + 1)); /* revoked */
    assert_int_equal(
        run("cmp -s -i %lu:0 -n %u %s %s", (unsigned long)first * bs, bs, fixture->image, written),
        0);
    assert_true(fsck_clean(fixture->image));
}

/* The v1 transaction checksum (debugfs jo -c on a file system without
 * metadata_csum): debugfs's transaction replays; ours carry a checksum
 * e2fsck accepts; a damaged logged block ends the log before its
 * transaction, for us as for e2fsck. */
static void journal_checksum_v1(void **state)
{
    struct fixture *fixture = *state;
    uint32_t bs = fixture->block_size, target = bs == 1024 ? 9000 : 3000;
    assert_int_equal(run("head -c %u /dev/urandom > %s/jw.bin && debugfs -w %s -f - >/dev/null "
                         "2>&1 <<EOF\njo -c\njw -b %u %s/jw.bin\njc\nEOF",
                         bs, scratch(), fixture->image, target, scratch()),
                     0);
    assert_int_equal(mount_journaled(fixture), 0);
    assert_true(fixture->journal->checksum_v1);
    assert_int_equal(fixture->journal->statistics.transactions_replayed, 1);
    churn(fixture, 7, 20000);
    fixture->crash.crash_at = fixture->crash.flushes + 2; /* only the log has it */
    assert_int_equal(journal_commit(fixture->journal), 0);
    uint32_t data_copy; /* the first logged copy: after the descriptor at s_first */
    assert_int_equal(journal_map(fixture->journal, fixture->journal->first + 1, &data_copy), 0);
    unmount(fixture);
    assert_int_equal(run("cmp -s -i %lu:0 -n %u %s %s/jw.bin", (unsigned long)target * bs, bs,
                         fixture->image, scratch()),
                     0);
    char theirs[300], damaged[300];
    snprintf(theirs, sizeof theirs, "%s.e2fsck", fixture->image);
    snprintf(damaged, sizeof damaged, "%s.damaged", fixture->image);
    assert_int_equal(run("cp %s %s && cp %s %s && e2fsck -fy %s >/dev/null 2>&1", fixture->image,
                         theirs, fixture->image, damaged, theirs) &
                         ~1,
                     0);
    assert_true(file_matches(theirs, 7, 20000)); /* e2fsck accepted our checksum */
    /* one flipped byte in a logged block: nobody replays that transaction */
    assert_int_equal(flip_byte(fixture->image, (uint64_t)data_copy * bs + 100), 0);
    assert_int_equal(
        run("cp %s %s && e2fsck -fy %s >/dev/null 2>&1", fixture->image, damaged, damaged) & ~1, 0);
    assert_false(file_matches(damaged, 7, 20000));
    assert_int_equal(mount_journaled(fixture), 0);
    assert_int_equal(fixture->journal->statistics.transactions_replayed, 0);
    uint32_t inode;
    assert_int_equal(ext2_lookup(&fixture->fs, "/file7", &inode), -E_NOT_FOUND);
    unmount(fixture);
    assert_true(fsck_clean(fixture->image));
}

static void refuses_bad_journal_superblock(void **state)
{
    struct fixture *fixture = *state;
    assert_int_equal(mount_journaled(fixture), 0);
    uint32_t physical;
    assert_int_equal(journal_map(fixture->journal, 0, &physical), 0);
    unmount(fixture);
    assert_int_equal(run("printf 'XXXX' | dd of=%s bs=1 seek=%lu conv=notrunc status=none",
                         fixture->image, (unsigned long)physical * fixture->block_size),
                     0);
    assert_int_equal(mount_journaled(fixture), -E_CORRUPT);
    assert_non_null(strstr(fixture->journal->problem, "journal superblock"));
    unmount(fixture);
}

/* csum v3 (debugfs jo -c -v 3 on a metadata_csum file system, which the
 * library mounts read-only): replayed as e2fsck replays it, revoke honoured;
 * a flipped byte in a logged block or in the journal superblock refused. */
static void replays_checksum_v3(void **state)
{
    struct fixture *fixture = *state;
    uint32_t bs = fixture->block_size, target = bs == 1024 ? 9000 : 3000;
    assert_int_equal(
        run("mke2fs -q -F -t ext3 -O metadata_csum -b %u %s 16M 2>/dev/null && "
            "head -c %u /dev/urandom > %s/jw.bin && cp %s %s.before && "
            "debugfs -w %s -f - >/dev/null 2>&1 <<EOF\njo -c -v 3\njw -b %u,%u %s/jw.bin\n"
            "jw -r %u\njc\nEOF",
            bs, fixture->image, 2 * bs, scratch(), fixture->image, fixture->image, fixture->image,
            target, target + 1, scratch(), target + 1),
        0);
    assert_int_equal(count_lines("dumpe2fs -h", fixture->image, "journal_checksum_v3"), 1);
    char theirs[300], before[300], damaged[300];
    snprintf(theirs, sizeof theirs, "%s.e2fsck", fixture->image);
    snprintf(before, sizeof before, "%s.before", fixture->image);
    snprintf(damaged, sizeof damaged, "%s.damaged", fixture->image);
    assert_int_equal(run("cp %s %s && cp %s %s && e2fsck -fy %s >/dev/null 2>&1", fixture->image,
                         theirs, fixture->image, damaged, theirs) &
                         ~1,
                     0);
    int mounted = mount_journaled(fixture);
    if (mounted != 0)
        fail_msg("mount: %d %s", mounted,
                 fixture->journal->problem ? fixture->journal->problem : "-");
    assert_true(fixture->fs.read_only);
    assert_int_equal(fixture->journal->checksum_version, 3);
    assert_int_equal(fixture->journal->statistics.transactions_replayed, 2);
    assert_int_equal(fixture->journal->statistics.blocks_replayed, 1);
    uint32_t copy; /* the first logged block, after the descriptor */
    assert_int_equal(journal_map(fixture->journal, fixture->journal->first + 1, &copy), 0);
    uint32_t superblock;
    assert_int_equal(journal_map(fixture->journal, 0, &superblock), 0);
    unmount(fixture);
    assert_true(blocks_equal(fixture->image, theirs, bs, target));
    assert_true(blocks_equal(fixture->image, before, bs, target + 1)); /* revoked */
    assert_int_equal(run("cmp -s -i %lu:0 -n %u %s %s/jw.bin", (unsigned long)target * bs, bs,
                         fixture->image, scratch()),
                     0);
    assert_true(fsck_clean(fixture->image));
    /* damage: a logged block, then the journal superblock */
    assert_int_equal(run("cp %s %s", damaged, fixture->image), 0);
    assert_int_equal(flip_byte(fixture->image, (uint64_t)copy * bs + 7), 0);
    assert_int_equal(mount_journaled(fixture), -E_CORRUPT);
    assert_non_null(strstr(fixture->journal->problem, "checksum is wrong"));
    unmount(fixture);
    assert_int_equal(run("cp %s %s", damaged, fixture->image), 0);
    assert_int_equal(flip_byte(fixture->image, (uint64_t)superblock * bs + 0x30), 0);
    assert_int_equal(mount_journaled(fixture), -E_CORRUPT);
    assert_non_null(strstr(fixture->journal->problem, "superblock checksum"));
    unmount(fixture);
}

/* Writes a big-endian word into the journal superblock (byte offset). */
static void patch_journal_superblock(struct fixture *fixture, uint32_t offset, uint32_t value)
{
    assert_int_equal(mount_journaled(fixture), 0);
    uint32_t physical;
    assert_int_equal(journal_map(fixture->journal, 0, &physical), 0);
    unmount(fixture);
    uint32_t be = __builtin_bswap32(value);
    FILE *image = fopen(fixture->image, "r+b");
    assert_non_null(image);
    assert_int_equal(fseek(image, (long)physical * fixture->block_size + offset, SEEK_SET), 0);
    assert_int_equal(fwrite(&be, sizeof be, 1, image), 1);
    fclose(image);
}

struct refusal {
    uint32_t offset, value;
    int error;
    const char *problem;
};

/* Each journal superblock the code refuses, with its error and message. */
static void refuses_unsupported_or_broken_journals(void **state)
{
    struct fixture *fixture = *state;
    const struct refusal refusals[] = {
        {0x28, 0x10, -E_INVALID, "csum v2/v3"},
        {0x28, 0x08, -E_INVALID, "csum v2/v3"},
        {0x28, 0x04, -E_INVALID, "asynchronous"},
        {0x28, 0x20, -E_INVALID, "fast commits"},
        {0x28, 0x40, -E_INVALID, "unknown journal"},
        {0x2C, 0x01, -E_INVALID, "unknown journal"},
        {0x0C, 2048, -E_CORRUPT, "block size"},
        {0x14, 0, -E_CORRUPT, "first block"},
        {0x1C, 1u << 30, -E_CORRUPT, "start out of range"},
        {0x10, 1u << 30, -E_CORRUPT, "length"},
        {0x04, 9, -E_CORRUPT, "no journal superblock"},
        {0x04, 3, -E_CORRUPT, "version 1 but carries version-2 fields"}, /* nr_users is 1 */
        {0x40, 2, -E_CORRUPT, "more than one file system"},
    };
    char pristine[300];
    snprintf(pristine, sizeof pristine, "%s.pristine", fixture->image);
    assert_int_equal(run("cp %s %s", fixture->image, pristine), 0);
    for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; i++) {
        const struct refusal *refusal = &refusals[i];
        if (refusal->value == 2048 && fixture->block_size == 2048)
            continue;
        assert_int_equal(run("cp %s %s", pristine, fixture->image), 0);
        patch_journal_superblock(fixture, refusal->offset, refusal->value);
        char patched[300];
        snprintf(patched, sizeof patched, "%s.patched", fixture->image);
        assert_int_equal(run("cp %s %s", fixture->image, patched), 0);
        assert_int_equal(mount_journaled(fixture), refusal->error);
        assert_non_null(fixture->journal->problem);
        if (strstr(fixture->journal->problem, refusal->problem) == NULL)
            fail_msg("refusal %zu: '%s' lacks '%s'", i, fixture->journal->problem,
                     refusal->problem);
        unmount(fixture);
        assert_true(files_equal(fixture->image, patched)); /* a refused mount writes nothing */
    }
    /* an external journal device */
    assert_int_equal(run("cp %s %s", pristine, fixture->image), 0);
    uint32_t device = 0x0801;
    FILE *image = fopen(fixture->image, "r+b");
    assert_int_equal(fseek(image, 1024 + 0xE4, SEEK_SET), 0);
    assert_int_equal(fwrite(&device, sizeof device, 1, image), 1);
    fclose(image);
    assert_int_equal(mount_journaled(fixture), -E_INVALID);
    assert_non_null(strstr(fixture->journal->problem, "external"));
    unmount(fixture);
}

/* The 64bit journal feature: 12-byte tags, which logdump and e2fsck read. */
static void writes_64bit_tags(void **state)
{
    struct fixture *fixture = *state;
    patch_journal_superblock(fixture, 0x28, 0x2); /* 64bit */
    assert_int_equal(mount_journaled(fixture), 0);
    assert_int_equal(fixture->journal->tag_bytes, 12);
    churn(fixture, 6, 30000);
    fixture->crash.crash_at = fixture->crash.flushes + 2; /* homes lost: only the log has it */
    assert_int_equal(journal_commit(fixture->journal), 0);
    uint64_t logged = fixture->journal->statistics.blocks_logged;
    unmount(fixture);
    assert_int_equal(count_lines("debugfs -R 'logdump -a'", fixture->image, "logged at journal"),
                     logged);
    char theirs[300];
    snprintf(theirs, sizeof theirs, "%s.e2fsck", fixture->image);
    assert_int_equal(
        run("cp %s %s && e2fsck -fy %s >/dev/null 2>&1", fixture->image, theirs, theirs) & ~1, 0);
    assert_true(file_matches(theirs, 6, 30000));
    assert_int_equal(mount_journaled(fixture), 0);
    assert_int_equal(fixture->journal->statistics.blocks_replayed, logged);
    unmount(fixture);
    assert_true(fsck_clean(fixture->image));
    assert_true(file_matches(fixture->image, 6, 30000));
}

/* A committed transaction naming a block outside the file system. */
static void refuses_replay_outside_the_disk(void **state)
{
    struct fixture *fixture = *state;
    assert_int_equal(mount_journaled(fixture), 0);
    uint32_t descriptor; /* where debugfs will put the first descriptor: log block s_first */
    assert_int_equal(journal_map(fixture->journal, fixture->journal->first, &descriptor), 0);
    unmount(fixture);
    assert_int_equal(
        run("head -c %u /dev/zero > %s/zero.bin && "
            "debugfs -w %s -f - >/dev/null 2>&1 <<EOF\njo\njw -b 300 %s/zero.bin\njc\nEOF",
            fixture->block_size, scratch(), fixture->image, scratch()),
        0);
    uint32_t outside = __builtin_bswap32(4000000); /* the first tag's t_blocknr */
    FILE *image = fopen(fixture->image, "r+b");
    assert_int_equal(fseek(image, (long)descriptor * fixture->block_size + 12, SEEK_SET), 0);
    assert_int_equal(fwrite(&outside, sizeof outside, 1, image), 1);
    fclose(image);
    assert_int_equal(count_lines("debugfs -R 'logdump -a'", fixture->image, "FS block 4000000"), 1);
    assert_int_equal(mount_journaled(fixture), -E_CORRUPT);
    assert_non_null(strstr(fixture->journal->problem, "outside the file system"));
    unmount(fixture);
}

/* A committed transaction (debugfs) logging a zero block for `home`: the
 * replay refuses it before writing anything; journal_mount_or_read_only
 * then mounts read-only without it, writing nothing either. */
static void expect_replay_refused(struct fixture *fixture, uint32_t home, const char *problem)
{
    char before[300];
    snprintf(before, sizeof before, "%s.before-replay", fixture->image);
    assert_int_equal(
        run("head -c %u /dev/zero > %s/zero.bin && "
            "debugfs -w %s -f - >/dev/null 2>&1 <<EOF\njo\njw -b %u %s/zero.bin\njc\nEOF",
            fixture->block_size, scratch(), fixture->image, home, scratch()),
        0);
    assert_int_equal(run("cp %s %s", fixture->image, before), 0);
    assert_int_equal(mount_journaled(fixture), -E_CORRUPT);
    assert_non_null(fixture->journal->problem);
    if (strstr(fixture->journal->problem, problem) == NULL)
        fail_msg("block %u: '%s' lacks '%s'", home, fixture->journal->problem, problem);
    assert_int_equal(fixture->journal->statistics.blocks_replayed, 0);
    unmount(fixture);
    assert_true(files_equal(fixture->image, before));
    struct crash_disk *crash = &fixture->crash;
    *crash = (struct crash_disk){.device = {.read_bytes = crash_read, .write_block = crash_write}};
    crash->device.context = crash;
    disk_open(&crash->disk, fixture->image);
    bool refused = false;
    assert_int_equal(
        journal_mount_or_read_only(fixture->journal, &fixture->fs, lower_of(crash), &refused), 0);
    assert_true(refused && fixture->fs.read_only);
    assert_int_equal(ext2_create(&fixture->fs, "/new", 0644, NULL), -E_READ_ONLY);
    uint32_t inode;
    assert_int_equal(ext2_lookup(&fixture->fs, "/docs/hello.txt", &inode), 0);
    unmount(fixture);
    assert_true(files_equal(fixture->image, before));
}

/* Logged blocks whose home is the journal itself, a reserved descriptor
 * block, or the superblock (with contents that do not match it). */
static void refuses_replay_over_metadata(void **state)
{
    struct fixture *fixture = *state;
    char pristine[300];
    snprintf(pristine, sizeof pristine, "%s.pristine", fixture->image);
    assert_int_equal(run("cp %s %s", fixture->image, pristine), 0);
    assert_int_equal(mount_journaled(fixture), 0);
    uint32_t journal_superblock, journal_middle;
    assert_int_equal(journal_map(fixture->journal, 0, &journal_superblock), 0);
    assert_int_equal(journal_map(fixture->journal, fixture->journal->maxlen / 2, &journal_middle),
                     0);
    uint32_t first = fixture->fs.superblock.s_first_data_block;
    uint32_t reserved = first + 1 + fixture->fs.descriptor_blocks;
    bool has_reserved = fixture->fs.superblock.s_reserved_gdt_blocks > 0; /* 1 KiB: yes */
    unmount(fixture);
    expect_replay_refused(fixture, journal_superblock, "in the journal itself");
    assert_int_equal(run("cp %s %s", pristine, fixture->image), 0);
    expect_replay_refused(fixture, journal_middle, "in the journal itself");
    assert_int_equal(run("cp %s %s", pristine, fixture->image), 0);
    if (has_reserved)
        expect_replay_refused(fixture, reserved, "reserved descriptor block");
    assert_int_equal(run("cp %s %s", pristine, fixture->image), 0);
    expect_replay_refused(fixture, first, "logged superblock does not match");
    assert_int_equal(run("cp %s %s", pristine, fixture->image), 0);
    expect_replay_refused(fixture, first + 1, "logged group descriptors");
    assert_int_equal(run("cp %s %s", pristine, fixture->image), 0);
    assert_int_equal(mount_journaled(fixture), 0);
    struct ext2_group_descriptor group;
    assert_int_equal(ext2_read_group(&fixture->fs, 0, &group), 0);
    uint32_t holding_journal_inode = group.bg_inode_table + (8 - 1) / fixture->fs.inodes_per_block;
    unmount(fixture);
    expect_replay_refused(fixture, holding_journal_inode, "changes the journal's own inode");
}

/* A version-1 journal superblock is accepted when it carries nothing of
 * version 2 (e2fsck's rule): mounted, used and clean. */
static void accepts_plain_version_1_superblock(void **state)
{
    struct fixture *fixture = *state;
    assert_int_equal(mount_journaled(fixture), 0);
    uint32_t physical;
    assert_int_equal(journal_map(fixture->journal, 0, &physical), 0);
    unmount(fixture);
    uint8_t version_1[] = {0, 0, 0, 3}; /* JBD2_SUPERBLOCK_V1, big-endian */
    uint8_t zeros[0x44 - 0x24] = {0};   /* the features, the UUID, s_nr_users */
    FILE *image = fopen(fixture->image, "r+b");
    assert_non_null(image);
    long superblock = (long)physical * (long)fixture->block_size;
    assert_int_equal(fseek(image, superblock + 0x04, SEEK_SET), 0);
    assert_int_equal(fwrite(version_1, sizeof version_1, 1, image), 1);
    assert_int_equal(fseek(image, superblock + 0x24, SEEK_SET), 0);
    assert_int_equal(fwrite(zeros, sizeof zeros, 1, image), 1);
    fclose(image);
    assert_int_equal(mount_journaled(fixture), 0);
    assert_int_equal(fixture->journal->version, 1);
    churn(fixture, 11, 5000);
    assert_int_equal(journal_sync(fixture->journal), 0);
    unmount(fixture);
    assert_true(fsck_clean(fixture->image));
    assert_true(file_matches(fixture->image, 11, 5000));
}

/* A file whose block pointer names a journal block is refused on sight:
 * nothing frees or overwrites the journal through it. */
static void refuses_files_in_the_journal(void **state)
{
    struct fixture *fixture = *state;
    assert_int_equal(mount_journaled(fixture), 0);
    uint32_t journal_block, inode;
    assert_int_equal(journal_map(fixture->journal, 5, &journal_block), 0);
    assert_int_equal(ext2_lookup(&fixture->fs, "/docs/hello.txt", &inode), 0);
    struct ext2_inode record;
    assert_int_equal(ext2_read_inode(&fixture->fs, inode, &record), 0);
    record.i_block[0] = journal_block;
    assert_int_equal(ext2_write_inode(&fixture->fs, inode, &record), 0);
    assert_int_equal(ext2_lookup(&fixture->fs, "/docs/hello.txt", &inode), -E_CORRUPT);
    assert_int_equal(ext2_unlink(&fixture->fs, "/docs/hello.txt"), -E_CORRUPT);
    unmount(fixture);
}

/* A journal inode whose indirect block points into the inode table (commits
 * would write over inodes): the journal is refused, read-only without it. */
static void refuses_journal_tree_into_metadata(void **state)
{
    struct fixture *fixture = *state;
    struct test_disk disk;
    struct ext2_fs fs;
    struct ext2_inode journal_inode;
    struct ext2_group_descriptor group;
    mount_image(&fs, &disk, fixture->image);
    assert_int_equal(ext2_read_inode(&fs, 8, &journal_inode), 0);
    assert_int_equal(ext2_read_group(&fs, 0, &group), 0);
    journal_inode.i_block[EXT2_SINGLE_INDIRECT] = group.bg_inode_table + 1;
    assert_int_equal(ext2_write_inode(&fs, 8, &journal_inode), 0);
    disk_close(&disk);
    char before[300];
    snprintf(before, sizeof before, "%s.before", fixture->image);
    assert_int_equal(run("cp %s %s", fixture->image, before), 0);
    assert_int_equal(mount_journaled(fixture), -E_CORRUPT);
    assert_non_null(strstr(fixture->journal->problem, "journal inode"));
    unmount(fixture);
    assert_true(files_equal(fixture->image, before));
}

/* An unlink whose block frees meet a block the bitmap already marks free:
 * the operation is aborted, so nothing of it joins the running transaction
 * (no directory block, inode, bitmap or revoke: only the superblock with
 * its error record), and after the commit e2fsck finds no problem it did
 * not find before (no unattached inode). */
static void aborted_operation_leaves_the_transaction(void **state)
{
    struct fixture *fixture = *state;
    static uint8_t data[64 * 1024];
    pattern_fill(data, sizeof data, 9, 0);
    assert_int_equal(mount_journaled(fixture), 0);
    uint32_t inode;
    assert_int_equal(ext2_create(&fixture->fs, "/big", 0644, &inode), 0);
    assert_int_equal(ext2_write(&fixture->fs, inode, 0, data, sizeof data), (long)sizeof data);
    assert_int_equal(journal_sync(fixture->journal), 0);
    struct ext2_inode record;
    assert_int_equal(ext2_read_inode(&fixture->fs, inode, &record), 0);
    struct ext2_group_descriptor group;
    assert_int_equal(ext2_read_group(&fixture->fs, 0, &group), 0);
    uint32_t late = record.i_block[EXT2_DIRECT_BLOCKS - 1]; /* freed after eleven others */
    unmount(fixture);
    uint32_t bit = late - fixture->fs.superblock.s_first_data_block;
    FILE *image = fopen(fixture->image, "r+b");
    assert_non_null(image);
    long at = (long)group.bg_block_bitmap * (long)fixture->block_size + (long)(bit / 8);
    assert_int_equal(fseek(image, at, SEEK_SET), 0);
    int byte = fgetc(image);
    assert_true(byte & (1 << (bit % 8)));
    assert_int_equal(fseek(image, at, SEEK_SET), 0);
    fputc(byte & ~(1 << (bit % 8)), image);
    fclose(image);
    char before[300], after[300];
    snprintf(before, sizeof before, "%s.fsck-before", fixture->image);
    snprintf(after, sizeof after, "%s.fsck-after", fixture->image);
    run("e2fsck -fn %s 2>&1 | tail -n +2 | grep -v 'files\\|^$' > %s", fixture->image, before);
    assert_int_equal(mount_journaled(fixture), 0);
    assert_int_equal(ext2_unlink(&fixture->fs, "/big"), -E_CORRUPT);
    struct journal *journal = fixture->journal;
    uint32_t superblock = fixture->block_size == 1024 ? 1 : 0;
    assert_int_equal(journal->transaction_blocks, 1);
    assert_int_equal(journal->transaction_numbers[0], superblock);
    assert_int_equal(journal->revoke_count, 0);
    assert_int_equal(journal->freed.count, 0);
    assert_false(fixture->fs.read_only); /* mke2fs's default: errors=continue */
    assert_int_equal(journal_sync(fixture->journal), 0);
    unmount(fixture);
    run("e2fsck -fn %s 2>&1 | tail -n +2 | grep -v 'files\\|^$' > %s", fixture->image, after);
    assert_true(files_equal(before, after));
}

#define BOTH(test)                                                                                 \
    cmocka_unit_test_setup_teardown(test, setup_1k, teardown),                                     \
        cmocka_unit_test_setup_teardown(test, setup_4k, teardown)

/* The journal's block sets: a clear after few keys empties only the slots they took
 * (keys of one home chain: each removal shifts the rest back into slots they took); after
 * many, every slot. */
static uint32_t colliding_key(const struct block_set *set, uint32_t home, uint32_t index)
{
    for (uint32_t key = 0, found = 0;; key++)
        if (block_set_home(set, key) == home && found++ == index)
            return key;
}

static void check_block_set_round(struct block_set *set, uint32_t keys_count, uint32_t home)
{
    for (uint32_t i = 0; i < keys_count; i++)
        assert_true(block_set_put(set, colliding_key(set, home, i), i));
    for (uint32_t i = 0; i < keys_count; i += 3)
        block_set_remove(set, colliding_key(set, home, i));
    block_set_clear(set);
    assert_int_equal(set->count, 0);
    for (uint32_t slot = 0; slot < set->capacity; slot++)
        assert_int_equal(set->keys[slot], UINT32_MAX);
}

static void block_set_clears_what_it_holds(void **state)
{
    (void)state;
    static uint32_t keys[1024], values[1024];
    struct block_set set;
    block_set_init(&set, keys, values, 1024);
    for (uint32_t round = 0; round < 3; round++) {
        check_block_set_round(&set, 5, 1020 + round);
        check_block_set_round(&set, BLOCK_SET_TOUCHED / 2, 17 * round);
        check_block_set_round(&set, BLOCK_SET_TOUCHED + 1, 500 + round);
        check_block_set_round(&set, 700, 3 + round);
    }
    block_set_clear(&set); /* twice in a row: nothing to do */
    assert_true(block_set_put(&set, 42, 1));
    assert_true(block_set_find(&set, 42) != UINT32_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(block_set_clears_what_it_holds),
        BOTH(mount_plain_ext3),
        BOTH(logdump_reads_transactions),
        BOTH(crash_after_commit_replays),
        BOTH(crash_before_commit_is_undone),
        BOTH(checkpoints_and_crashes),
        BOTH(freed_blocks_wait_for_the_commit),
        BOTH(frees_reach_the_device_below),
        BOTH(too_many_frees_log_data),
        BOTH(replays_debugfs_journal),
        BOTH(journal_checksum_v1),
        BOTH(refuses_bad_journal_superblock),
        BOTH(refuses_unsupported_or_broken_journals),
        BOTH(writes_64bit_tags),
        BOTH(refuses_replay_outside_the_disk),
        BOTH(replays_checksum_v3),
        BOTH(refuses_replay_over_metadata),
        BOTH(refuses_files_in_the_journal),
        BOTH(refuses_journal_tree_into_metadata),
        BOTH(aborted_operation_leaves_the_transaction),
        BOTH(accepts_plain_version_1_superblock),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    run("rm -rf %s", scratch());
    return failed;
}
