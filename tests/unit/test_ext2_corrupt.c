/* test_ext2_corrupt.c: damaged images (bad magic and counts, unsupported
 * features, block pointers out of range, bad directory entries, indirect
 * loops) give -E_CORRUPT or -E_INVALID, and the library writes nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_ext2_support.h"

static const char KEEP_TEXT[] = "this file must survive every corruption test\n";

struct damaged {
    char image[256];
    char copy[256];
    struct ext2_fs fs;
    struct test_disk disk;
};

/* A fresh 1 KiB-block image with /keep.txt, /victim (single indirect),
 * /big (double indirect) and /dir with entries, mounted. */
static void make_damaged(struct damaged *damaged, uint32_t block_size)
{
    static unsigned counter;
    const char *root = scratch();
    snprintf(damaged->image, sizeof damaged->image, "%s/corrupt-%u.img", root, counter);
    snprintf(damaged->copy, sizeof damaged->copy, "%s/corrupt-%u.copy", root, counter++);
    assert_int_equal(
        run("rm -rf %s/src && mkdir -p %s/src/dir && printf '%%s' '%s' > %s/src/keep.txt"
            " && head -c 20000 /dev/urandom > %s/src/victim"
            " && head -c 5000000 /dev/urandom > %s/src/big"
            " && touch %s/src/dir/one %s/src/dir/two %s/src/dir/three"
            " && mke2fs -q -F -t ext2 -r 1 -b %u -d %s/src %s 16M",
            root, root, KEEP_TEXT, root, root, root, root, root, root, block_size, root,
            damaged->image),
        0);
    mount_image(&damaged->fs, &damaged->disk, damaged->image);
}

static void snapshot(struct damaged *damaged)
{
    assert_int_equal(run("cp %s %s", damaged->image, damaged->copy), 0);
    damaged->disk.writes = 0;
}

/* Nothing was written since the snapshot, and the host still reads /keep.txt. */
static void check_untouched(struct damaged *damaged)
{
    size_t length;
    assert_int_equal(damaged->disk.writes, 0);
    assert_true(files_equal(damaged->image, damaged->copy));
    uint8_t *text = host_cat(damaged->image, "/keep.txt", &length);
    assert_int_equal(length, strlen(KEEP_TEXT));
    assert_memory_equal(text, KEEP_TEXT, length);
    free(text);
    disk_close(&damaged->disk);
}

static void poke(struct damaged *damaged, uint64_t offset, const void *bytes, size_t length)
{
    assert_int_equal(pwrite(damaged->disk.fd, bytes, length, (off_t)offset), (ssize_t)length);
}

static void poke_superblock_u32(struct damaged *damaged, size_t field, uint32_t value)
{
    poke(damaged, EXT2_SUPERBLOCK_OFFSET + field, &value, sizeof value);
}

static int remount(struct damaged *damaged)
{
    return ext2_mount(&damaged->fs, &damaged->disk.device);
}

static void test_bad_magic(void **state)
{
    (void)state;
    struct damaged damaged;
    make_damaged(&damaged, 1024);
    uint16_t magic = 0x1234;
    poke(&damaged, EXT2_SUPERBLOCK_OFFSET + offsetof(struct ext2_superblock, s_magic), &magic, 2);
    snapshot(&damaged);
    assert_int_equal(remount(&damaged), -E_CORRUPT);
    assert_int_equal(damaged.disk.writes, 0);
    disk_close(&damaged.disk);
}

static void test_bad_counts(void **state)
{
    (void)state;
    struct damaged damaged;
    make_damaged(&damaged, 4096);
    uint32_t inodes = damaged.fs.superblock.s_inodes_count;
    poke_superblock_u32(&damaged, offsetof(struct ext2_superblock, s_inodes_count), inodes + 1);
    assert_int_equal(remount(&damaged), -E_CORRUPT);
    poke_superblock_u32(&damaged, offsetof(struct ext2_superblock, s_inodes_count), inodes);
    poke_superblock_u32(&damaged, offsetof(struct ext2_superblock, s_log_block_size), 7);
    assert_int_equal(remount(&damaged), -E_INVALID);
    poke_superblock_u32(&damaged, offsetof(struct ext2_superblock, s_log_block_size), 2);
    poke_superblock_u32(&damaged, offsetof(struct ext2_superblock, s_blocks_per_group), 0);
    assert_int_equal(remount(&damaged), -E_CORRUPT);
    disk_close(&damaged.disk);
}

static void test_unknown_incompat_feature(void **state)
{
    (void)state;
    struct damaged damaged;
    make_damaged(&damaged, 1024);
    uint32_t features = damaged.fs.superblock.s_feature_incompat | 0x40; /* extents */
    poke_superblock_u32(&damaged, offsetof(struct ext2_superblock, s_feature_incompat), features);
    assert_int_equal(remount(&damaged), -E_INVALID);
    disk_close(&damaged.disk);
}

static void test_descriptor_outside_disk(void **state)
{
    (void)state;
    struct damaged damaged;
    make_damaged(&damaged, 1024);
    uint32_t table = damaged.fs.superblock.s_blocks_count - 2; /* table runs off the end */
    poke(&damaged, 2 * 1024 + offsetof(struct ext2_group_descriptor, bg_inode_table), &table, 4);
    assert_int_equal(remount(&damaged), -E_CORRUPT);
    disk_close(&damaged.disk);
}

static uint32_t inode_of(struct damaged *damaged, const char *path, struct ext2_inode *inode)
{
    uint32_t number;
    assert_int_equal(ext2_lookup(&damaged->fs, path, &number), 0);
    assert_int_equal(ext2_read_inode(&damaged->fs, number, inode), 0);
    return number;
}

/* Every operation on a damaged file fails with -E_CORRUPT and writes nothing. */
static void expect_file_corrupt(struct damaged *damaged, const char *path, uint64_t offset)
{
    static uint8_t buffer[8192];
    uint32_t number;
    snapshot(damaged);
    assert_int_equal(ext2_lookup(&damaged->fs, path, &number), 0);
    assert_int_equal(ext2_read(&damaged->fs, number, offset, buffer, sizeof buffer), -E_CORRUPT);
    assert_int_equal(ext2_write(&damaged->fs, number, offset, buffer, 10), -E_CORRUPT);
    assert_int_equal(damaged->disk.writes, 0);
    assert_int_equal(ext2_truncate(&damaged->fs, number, 0), -E_CORRUPT);
    assert_int_equal(damaged->disk.writes, 0);
    assert_int_equal(ext2_unlink(&damaged->fs, path), -E_CORRUPT);
    check_untouched(damaged);
}

static void test_pointer_out_of_range(void **state)
{
    (void)state;
    struct damaged damaged;
    struct ext2_inode inode;
    make_damaged(&damaged, 1024);
    uint32_t number = inode_of(&damaged, "/victim", &inode);
    inode.i_block[3] = damaged.fs.superblock.s_blocks_count + 5;
    assert_int_equal(ext2_write_inode(&damaged.fs, number, &inode), 0);
    expect_file_corrupt(&damaged, "/victim", 3 * 1024);
}

static void test_indirect_points_to_itself(void **state)
{
    (void)state;
    struct damaged damaged;
    struct ext2_inode inode;
    make_damaged(&damaged, 1024);
    inode_of(&damaged, "/victim", &inode);
    uint32_t indirect = inode.i_block[EXT2_SINGLE_INDIRECT];
    assert_true(indirect != 0);
    poke(&damaged, (uint64_t)indirect * 1024 + 4 * 2, &indirect, 4);
    expect_file_corrupt(&damaged, "/victim", (12 + 2) * 1024);
}

static void test_double_indirect_loop(void **state)
{
    (void)state;
    struct damaged damaged;
    struct ext2_inode inode;
    make_damaged(&damaged, 1024);
    inode_of(&damaged, "/big", &inode);
    uint32_t dbl = inode.i_block[EXT2_DOUBLE_INDIRECT];
    assert_true(dbl != 0);
    poke(&damaged, (uint64_t)dbl * 1024 + 4, &dbl, 4); /* second child: the block itself */
    expect_file_corrupt(&damaged, "/big", (12 + 256 + 256 + 3) * 1024);
}

/* Breaks the third entry of /dir's first block with `change`, then every
 * directory operation fails with -E_CORRUPT and writes nothing. */
static void expect_directory_corrupt(void (*change)(struct ext2_directory_entry *, uint32_t),
                                     uint32_t block_size)
{
    struct damaged damaged;
    struct ext2_inode inode;
    uint8_t block[EXT2_MAX_BLOCK_SIZE];
    uint32_t physical, number;
    uint64_t cursor = 0;
    struct ext2_dirent entry;
    make_damaged(&damaged, block_size);
    number = inode_of(&damaged, "/dir", &inode);
    assert_int_equal(ext2_map_block(&damaged.fs, &inode, 0, &physical), 0);
    assert_int_equal(pread(damaged.disk.fd, block, block_size, (off_t)physical * block_size),
                     (ssize_t)block_size);
    struct ext2_directory_entry *third = (struct ext2_directory_entry *)(block + 24);
    change(third, block_size);
    poke(&damaged, (uint64_t)physical * block_size, block, block_size);
    snapshot(&damaged);
    assert_int_equal(ext2_lookup(&damaged.fs, "/dir/zzz", &physical), -E_CORRUPT);
    assert_int_equal(ext2_readdir(&damaged.fs, number, &cursor, &entry), -E_CORRUPT);
    assert_int_equal(ext2_create(&damaged.fs, "/dir/new", 0644, NULL), -E_CORRUPT);
    assert_int_equal(ext2_mkdir(&damaged.fs, "/dir/sub", 0755, NULL), -E_CORRUPT);
    assert_int_equal(ext2_rmdir(&damaged.fs, "/dir"), -E_CORRUPT);
    assert_int_equal(ext2_rename(&damaged.fs, "/keep.txt", "/dir/keep"), -E_CORRUPT);
    check_untouched(&damaged);
}

static void rec_len_zero(struct ext2_directory_entry *entry, uint32_t block_size)
{
    (void)block_size;
    entry->rec_len = 0;
}

static void rec_len_three(struct ext2_directory_entry *entry, uint32_t block_size)
{
    (void)block_size;
    entry->rec_len = 3;
}

static void rec_len_beyond_block(struct ext2_directory_entry *entry, uint32_t block_size)
{
    entry->rec_len = (uint16_t)(block_size);
}

static void name_longer_than_entry(struct ext2_directory_entry *entry, uint32_t block_size)
{
    (void)block_size;
    entry->rec_len = 12;
    entry->name_len = 200;
}

static void inode_out_of_range(struct ext2_directory_entry *entry, uint32_t block_size)
{
    (void)block_size;
    entry->inode = 0x7FFFFFFF;
}

static void test_rec_len_zero(void **state)
{
    (void)state;
    expect_directory_corrupt(rec_len_zero, 1024);
}

static void test_rec_len_three(void **state)
{
    (void)state;
    expect_directory_corrupt(rec_len_three, 4096);
}

static void test_rec_len_beyond_block(void **state)
{
    (void)state;
    expect_directory_corrupt(rec_len_beyond_block, 1024);
}

static void test_name_longer_than_entry(void **state)
{
    (void)state;
    expect_directory_corrupt(name_longer_than_entry, 1024);
}

static void test_entry_inode_out_of_range(void **state)
{
    (void)state;
    expect_directory_corrupt(inode_out_of_range, 4096);
}

/* A device error on writes is passed up and e2fsck-visible data stays intact. */
static void test_device_write_error(void **state)
{
    (void)state;
    struct damaged damaged;
    make_damaged(&damaged, 1024);
    damaged.disk.fail_writes = true;
    assert_int_equal(ext2_create(&damaged.fs, "/new", 0644, NULL), -E_IO);
    damaged.disk.fail_writes = false;
    disk_close(&damaged.disk);
    assert_true(fsck_clean(damaged.image));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_magic),
        cmocka_unit_test(test_bad_counts),
        cmocka_unit_test(test_unknown_incompat_feature),
        cmocka_unit_test(test_descriptor_outside_disk),
        cmocka_unit_test(test_pointer_out_of_range),
        cmocka_unit_test(test_indirect_points_to_itself),
        cmocka_unit_test(test_double_indirect_loop),
        cmocka_unit_test(test_rec_len_zero),
        cmocka_unit_test(test_rec_len_three),
        cmocka_unit_test(test_rec_len_beyond_block),
        cmocka_unit_test(test_name_longer_than_entry),
        cmocka_unit_test(test_entry_inode_out_of_range),
        cmocka_unit_test(test_device_write_error),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    run("rm -rf %s", scratch());
    return failed;
}
