/* test_ext2_quota.c: disk quotas in the ext2 library (ext2_quota.c) with
 * FS's per-uid table (servers/fs/disk_quota.c) on mke2fs images: the sum
 * at mount, writes stopped at a uid's limit while other uids and root go
 * on, blocks given back by truncate, unlink-while-open and chown, root's
 * reserved blocks, and counts that match a new sum. e2fsck -fn after each. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "disk_quota.h"
#include "test_ext2_support.h"

#define ATTACKER 2001
#define OWNER 2002 /* owns /open/big in the image */
#define NEIGHBOUR 2003
#define USERS 100
#define CHUNK 16384

struct fixture {
    char image[256];
    struct ext2_fs fs;
    struct test_disk disk;
    struct disk_quota quota;
    uint32_t kept; /* the inode last_name_gone keeps (as if open), 0: none */
};

static int may_grow(void *context, uint32_t uid, uint64_t sectors)
{
    return (int)disk_quota_may_grow(context, uid, sectors);
}

static void changed(void *context, uint32_t uid, int64_t sectors)
{
    disk_quota_change(context, uid, sectors);
}

static void count_inode(void *context, uint32_t uid, uint64_t sectors)
{
    disk_quota_change(context, uid, (int64_t)sectors);
}

static bool last_name_gone(void *context, uint32_t inode, bool directory)
{
    struct fixture *fixture = context;
    return !directory && inode == fixture->kept;
}

/* Counts from the inode table into `quota`, with `percent` of the data
 * sectors (free plus held) as each uid's limit. */
static void sum_into(struct fixture *fixture, struct disk_quota *quota, uint32_t percent)
{
    disk_quota_init(quota);
    assert_int_equal(ext2_quota_sum(&fixture->fs, count_inode, quota), 0);
    uint64_t held = 0;
    for (uint32_t i = 0; i < DISK_QUOTA_USERS; i++)
        held += quota->users[i].in_use ? quota->users[i].sectors : 0;
    uint64_t free_sectors =
        (uint64_t)fixture->fs.superblock.s_free_blocks_count * (fixture->fs.block_size / 512);
    disk_quota_set_limit(quota, held + free_sectors, percent);
}

static void start_quotas(struct fixture *fixture, uint32_t percent)
{
    sum_into(fixture, &fixture->quota, percent);
    fixture->fs.quota =
        (struct ext2_quota){.may_grow = may_grow, .changed = changed, .context = &fixture->quota};
}

/* An 8 MiB ext2 image (1 KiB blocks, 5 % reserved) with a sticky /open and
 * /open/big, 100 KiB of OWNER's. */
static int setup(void **state)
{
    static unsigned counter;
    struct fixture *fixture = calloc(1, sizeof *fixture);
    snprintf(fixture->image, sizeof fixture->image, "%s/quota-%u.img", scratch(), counter++);
    assert_int_equal(run("rm -rf %s/src && mkdir -p %s/src/open && head -c 102400 /dev/urandom > "
                         "%s/src/open/big && mke2fs -q -F -t ext2 -b 1024 -m 5 -E root_owner=0:0 "
                         "-d %s/src %s 8M",
                         scratch(), scratch(), scratch(), scratch(), fixture->image),
                     0);
    char owner[16];
    snprintf(owner, sizeof owner, "%u", OWNER);
    assert_int_equal(set_inode_field(fixture->image, "/open", "mode", "041777"), 0);
    assert_int_equal(set_inode_field(fixture->image, "/open/big", "uid", owner), 0);
    mount_image(&fixture->fs, &fixture->disk, fixture->image);
    fixture->fs.last_name_gone = last_name_gone;
    fixture->fs.last_name_context = fixture;
    *state = fixture;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fixture = *state;
    assert_int_equal(ext2_flush_superblock(&fixture->fs), 0);
    disk_close(&fixture->disk);
    assert_true(fsck_clean(fixture->image));
    unlink(fixture->image);
    free(fixture);
    return 0;
}

static void act_as(struct fixture *fixture, uint32_t uid)
{
    fixture->fs.user = (struct ext2_user){.uid = uid, .gid = USERS};
}

static uint64_t blocks_of(struct fixture *fixture, uint32_t inode)
{
    struct ext2_stat stat;
    assert_int_equal(ext2_stat(&fixture->fs, inode, &stat), 0);
    return stat.blocks;
}

/* Writes CHUNKs to a new file until the library refuses; the bytes written. */
static uint64_t fill(struct fixture *fixture, const char *path, uint32_t *inode)
{
    static uint8_t chunk[CHUNK];
    memset(chunk, 0x5a, sizeof chunk);
    assert_int_equal(ext2_create(&fixture->fs, path, 0644, inode), 0);
    uint64_t offset = 0;
    for (;;) {
        long written = ext2_write(&fixture->fs, *inode, offset, chunk, sizeof chunk);
        if (written < 0) {
            assert_int_equal(written, -E_NO_SPACE);
            return offset;
        }
        offset += (uint64_t)written;
        if (written < CHUNK)
            return offset;
    }
}

/* The running counts are what a new sum of the inode table finds. */
static void assert_counts_match_a_new_sum(struct fixture *fixture)
{
    struct disk_quota *again = malloc(sizeof *again);
    sum_into(fixture, again, 100);
    const uint32_t uids[] = {0, ATTACKER, OWNER, NEIGHBOUR};
    for (size_t i = 0; i < sizeof uids / sizeof uids[0]; i++)
        assert_int_equal(disk_quota_held(&fixture->quota, uids[i]),
                         disk_quota_held(again, uids[i]));
    free(again);
}

static void mount_sum_counts_each_owner(void **state)
{
    struct fixture *fixture = *state;
    start_quotas(fixture, 50);
    uint32_t big;
    assert_int_equal(ext2_lookup(&fixture->fs, "/open/big", &big), 0);
    assert_int_equal(disk_quota_held(&fixture->quota, OWNER), blocks_of(fixture, big));
    assert_true(disk_quota_held(&fixture->quota, 0) > 0); /* /, lost+found, /open */
    assert_int_equal(disk_quota_held(&fixture->quota, ATTACKER), 0);
}

static void writes_stop_at_the_quota_for_that_uid_only(void **state)
{
    struct fixture *fixture = *state;
    start_quotas(fixture, 25);
    uint64_t limit = fixture->quota.limit_sectors;
    uint32_t hog, other, roots;
    act_as(fixture, ATTACKER);
    uint64_t written = fill(fixture, "/open/hog", &hog);
    uint64_t held = disk_quota_held(&fixture->quota, ATTACKER);
    assert_int_equal(held, blocks_of(fixture, hog));
    assert_true(held <= limit);
    assert_true(held + 2 * 2 * CHUNK / 1024 > limit); /* stopped near it, not before */
    assert_true(written >= (limit / 2 - 200) * 1024);
    /* Another uid and root still write: the disk is not full. */
    act_as(fixture, NEIGHBOUR);
    assert_true(fill(fixture, "/open/neighbour", &other) > 0);
    assert_true(disk_quota_held(&fixture->quota, NEIGHBOUR) <= limit);
    act_as(fixture, EXT2_ROOT_USER);
    uint8_t byte = 1;
    assert_int_equal(ext2_create(&fixture->fs, "/open/roots", 0644, &roots), 0);
    assert_int_equal(ext2_write(&fixture->fs, roots, 0, &byte, 1), 1);
    /* The attacker is still refused. */
    act_as(fixture, ATTACKER);
    assert_int_equal(ext2_write(&fixture->fs, hog, written + 65536, &byte, 1), -E_NO_SPACE);
    assert_counts_match_a_new_sum(fixture);
}

static void truncate_and_unlink_while_open_give_blocks_back(void **state)
{
    struct fixture *fixture = *state;
    start_quotas(fixture, 25);
    uint32_t hog;
    act_as(fixture, ATTACKER);
    uint64_t written = fill(fixture, "/open/hog", &hog);
    assert_int_equal(ext2_truncate(&fixture->fs, hog, written / 2), 0);
    assert_int_equal(disk_quota_held(&fixture->quota, ATTACKER), blocks_of(fixture, hog));
    assert_int_equal(ext2_truncate(&fixture->fs, hog, 0), 0);
    assert_int_equal(disk_quota_held(&fixture->quota, ATTACKER), 0);
    /* Unlinked while open: its blocks stay counted until the last close. */
    fill(fixture, "/open/open", &hog);
    uint64_t held = disk_quota_held(&fixture->quota, ATTACKER);
    fixture->kept = hog;
    assert_int_equal(ext2_unlink(&fixture->fs, "/open/open"), 0);
    assert_int_equal(disk_quota_held(&fixture->quota, ATTACKER), held);
    assert_counts_match_a_new_sum(fixture);
    assert_int_equal(ext2_release_unlinked(&fixture->fs, hog), 0);
    fixture->kept = 0; /* closed */
    assert_int_equal(disk_quota_held(&fixture->quota, ATTACKER), 0);
    /* A plain unlink gives them back at once. */
    fill(fixture, "/open/again", &hog);
    assert_int_equal(ext2_unlink(&fixture->fs, "/open/again"), 0);
    assert_int_equal(disk_quota_held(&fixture->quota, ATTACKER), 0);
    assert_counts_match_a_new_sum(fixture);
}

static void chown_moves_the_blocks(void **state)
{
    struct fixture *fixture = *state;
    start_quotas(fixture, 50);
    uint32_t big;
    assert_int_equal(ext2_lookup(&fixture->fs, "/open/big", &big), 0);
    uint64_t blocks = blocks_of(fixture, big);
    act_as(fixture, EXT2_ROOT_USER);
    assert_int_equal(ext2_change_owner(&fixture->fs, big, NEIGHBOUR, USERS), 0);
    assert_int_equal(disk_quota_held(&fixture->quota, OWNER), 0);
    assert_int_equal(disk_quota_held(&fixture->quota, NEIGHBOUR), blocks);
    assert_counts_match_a_new_sum(fixture);
}

static void reserved_blocks_are_roots(void **state)
{
    struct fixture *fixture = *state;
    start_quotas(fixture, 100); /* no limit but the disk's */
    uint32_t reserved = fixture->fs.superblock.s_r_blocks_count, hog, roots;
    assert_true(reserved > 0);
    act_as(fixture, ATTACKER);
    fill(fixture, "/open/hog", &hog);
    assert_true(fixture->fs.superblock.s_free_blocks_count >= reserved);
    assert_true(fixture->fs.superblock.s_free_blocks_count < reserved + 2 * CHUNK / 1024);
    act_as(fixture, EXT2_ROOT_USER);
    assert_true(fill(fixture, "/open/roots", &roots) > 0);
    assert_true(fixture->fs.superblock.s_free_blocks_count < reserved);
    assert_counts_match_a_new_sum(fixture);
}

static void table_limit_and_exemptions(void **state)
{
    (void)state;
    struct disk_quota *quota = calloc(1, sizeof *quota);
    disk_quota_init(quota);
    disk_quota_set_limit(quota, 1000, 50);
    assert_int_equal(quota->limit_sectors, 500);
    assert_int_equal(disk_quota_may_grow(quota, ATTACKER, 500), 0);
    assert_int_equal(disk_quota_may_grow(quota, ATTACKER, 501), -E_NO_SPACE);
    disk_quota_change(quota, ATTACKER, 400);
    assert_int_equal(disk_quota_may_grow(quota, ATTACKER, 100), 0);
    assert_int_equal(disk_quota_may_grow(quota, ATTACKER, 101), -E_NO_SPACE);
    disk_quota_change(quota, ATTACKER, -1000); /* never below 0 */
    assert_int_equal(disk_quota_held(quota, ATTACKER), 0);
    /* Root and the servers' users are exempt. */
    disk_quota_change(quota, 0, 900);
    assert_int_equal(disk_quota_may_grow(quota, 0, 100000), 0);
    assert_int_equal(disk_quota_may_grow(quota, 13, 100000), 0); /* the pager's */
    assert_int_equal(disk_quota_may_grow(quota, 1000, 100000), -E_NO_SPACE);
    /* A full table refuses a uid it cannot count. */
    for (uint32_t uid = 3000; uid < 3000 + DISK_QUOTA_USERS - 1; uid++)
        disk_quota_change(quota, uid, 1);
    assert_int_equal(disk_quota_may_grow(quota, ATTACKER, 1), -E_NO_SPACE);
    assert_int_equal(disk_quota_may_grow(quota, 3001, 1), 0);
    disk_quota_change(quota, 3001, -1); /* an entry frees when its uid holds nothing */
    assert_int_equal(disk_quota_may_grow(quota, ATTACKER, 1), 0);
    free(quota);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(mount_sum_counts_each_owner, setup, teardown),
        cmocka_unit_test_setup_teardown(writes_stop_at_the_quota_for_that_uid_only, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(truncate_and_unlink_while_open_give_blocks_back, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(chown_moves_the_blocks, setup, teardown),
        cmocka_unit_test_setup_teardown(reserved_blocks_are_roots, setup, teardown),
        cmocka_unit_test(table_limit_and_exemptions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
