/* test_ext2_corrupt.c: damaged images (bad magic and counts, unsupported
 * features, overlapping descriptors, block pointers out of range or at
 * metadata, impossible sizes, bad directory entries and sizes, reserved
 * inodes named, indirect loops, bitmaps marking live inodes or metadata
 * free) give -E_CORRUPT or -E_INVALID, the problem is reported, and the
 * library writes nothing but the superblock's error record; s_errors
 * (continue, remount-ro, panic) is applied. */
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

static unsigned problems_reported;
static char last_problem[200];

static void note_problem(void *context, const struct ext2_problem *problem)
{
    (void)context;
    problems_reported++;
    snprintf(last_problem, sizeof last_problem, "%s", problem->what);
}

/* Mounts again, with the problem reporter attached. */
static int remount(struct damaged *damaged)
{
    damaged->disk.device.report_problem = note_problem;
    int status = ext2_mount(&damaged->fs, &damaged->disk.device);
    damaged->fs.time = 1700000000;
    return status;
}

/* A fresh image (mke2fs `options`) with /keep.txt, /victim (single
 * indirect), /big (double indirect) and /dir with entries, mounted. */
static void make_damaged_with(struct damaged *damaged, uint32_t block_size, const char *options)
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
            " && mke2fs -q -F -t ext2 -r 1 -b %u %s -d %s/src %s 16M",
            root, root, KEEP_TEXT, root, root, root, root, root, root, block_size, options, root,
            damaged->image),
        0);
    mount_image(&damaged->fs, &damaged->disk, damaged->image);
    assert_int_equal(remount(damaged), 0);
    problems_reported = 0;
}

static void make_damaged(struct damaged *damaged, uint32_t block_size)
{
    make_damaged_with(damaged, block_size, "");
}

static void snapshot(struct damaged *damaged)
{
    assert_int_equal(run("cp %s %s", damaged->image, damaged->copy), 0);
    damaged->disk.writes = 0;
}

/* Nothing but the superblock's error record was written since the
 * snapshot, a problem was reported, and the host still reads /keep.txt. */
static void check_untouched(struct damaged *damaged)
{
    size_t length;
    assert_int_equal(damaged->disk.writes, damaged->disk.superblock_writes);
    assert_true(only_error_record_differs(damaged->image, damaged->copy));
    assert_true(problems_reported > 0);
    uint16_t state;
    uint32_t errors;
    error_state_of(damaged->image, &state, &errors);
    assert_true(state & EXT2_ERROR_FS);
    assert_true(errors >= 1);
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

static void test_bad_magic(void **state)
{
    (void)state;
    struct damaged damaged;
    make_damaged(&damaged, 1024);
    uint16_t magic = 0x1234;
    poke(&damaged, EXT2_SUPERBLOCK_OFFSET + offsetof(struct ext2_superblock, s_magic), &magic, 2);
    snapshot(&damaged);
    assert_int_equal(remount(&damaged), -E_CORRUPT);
    assert_int_equal(damaged.disk.writes, 0); /* a refused mount writes nothing */
    assert_string_equal(last_problem, "superblock: no ext2 magic number");
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

/* Every operation on a damaged file fails with -E_CORRUPT and writes
 * nothing but the error record. A damage in the inode itself is found when
 * the lookup reads it; one deeper in the tree, when the tree is walked. */
static void expect_file_corrupt(struct damaged *damaged, const char *path, uint64_t offset)
{
    static uint8_t buffer[8192];
    uint32_t number;
    snapshot(damaged);
    int found = ext2_lookup(&damaged->fs, path, &number);
    if (found == 0) {
        assert_int_equal(ext2_read(&damaged->fs, number, offset, buffer, sizeof buffer),
                         -E_CORRUPT);
        assert_int_equal(ext2_write(&damaged->fs, number, offset, buffer, 10), -E_CORRUPT);
        assert_int_equal(ext2_truncate(&damaged->fs, number, 0), -E_CORRUPT);
    } else {
        assert_int_equal(found, -E_CORRUPT);
    }
    assert_int_equal(damaged->disk.writes, damaged->disk.superblock_writes);
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

static void poke_descriptor_u32(struct damaged *damaged, size_t field, uint32_t value)
{
    uint32_t block_size = damaged->fs.block_size;
    uint64_t table = (uint64_t)(block_size == 1024 ? 2 : 1) * block_size;
    poke(damaged, table + field, &value, sizeof value);
}

/* An inode bitmap inside the inode table, an inode table on the superblock. */
static void test_descriptors_overlap(void **state)
{
    (void)state;
    struct damaged damaged;
    make_damaged(&damaged, 1024);
    struct ext2_group_descriptor group;
    assert_int_equal(ext2_read_group(&damaged.fs, 0, &group), 0);
    poke_descriptor_u32(&damaged, offsetof(struct ext2_group_descriptor, bg_inode_bitmap),
                        group.bg_inode_table + 3);
    snapshot(&damaged);
    assert_int_equal(remount(&damaged), -E_CORRUPT);
    assert_non_null(strstr(last_problem, "overlap"));
    poke_descriptor_u32(&damaged, offsetof(struct ext2_group_descriptor, bg_inode_bitmap),
                        group.bg_inode_bitmap);
    poke_descriptor_u32(&damaged, offsetof(struct ext2_group_descriptor, bg_inode_table), 1);
    assert_int_equal(remount(&damaged), -E_CORRUPT);
    assert_non_null(strstr(last_problem, "superblock or group descriptors"));
    poke_descriptor_u32(&damaged, offsetof(struct ext2_group_descriptor, bg_inode_table),
                        group.bg_inode_table);
    uint32_t dirs_and_flags = group.bg_used_dirs_count | (uint32_t)EXT2_BG_INODE_UNINIT << 16;
    poke_descriptor_u32(&damaged, offsetof(struct ext2_group_descriptor, bg_used_dirs_count),
                        dirs_and_flags);
    assert_int_equal(remount(&damaged), -E_CORRUPT);
    assert_non_null(strstr(last_problem, "uninitialised without the feature"));
    poke_descriptor_u32(&damaged, offsetof(struct ext2_group_descriptor, bg_used_dirs_count),
                        0xFFFF);
    assert_int_equal(remount(&damaged), -E_CORRUPT);
    assert_non_null(strstr(last_problem, "directories than its group has"));
    assert_int_equal(damaged.disk.writes, 0);
    disk_close(&damaged.disk);
}

/* Changes /victim's inode on disk, then mounts again. */
static void change_victim(struct damaged *damaged,
                          void (*change)(struct damaged *, struct ext2_inode *))
{
    struct ext2_inode inode;
    uint32_t number = inode_of(damaged, "/victim", &inode);
    change(damaged, &inode);
    assert_int_equal(ext2_write_inode(&damaged->fs, number, &inode), 0);
    assert_int_equal(remount(damaged), 0);
    problems_reported = 0;
}

static void size_2_44(struct damaged *damaged, struct ext2_inode *inode)
{
    (void)damaged;
    inode->i_size_high = 1u << 12;
}

static void size_max(struct damaged *damaged, struct ext2_inode *inode)
{
    (void)damaged;
    inode->i_size = inode->i_size_high = UINT32_MAX;
}

static void pointer_at_inode_table(struct damaged *damaged, struct ext2_inode *inode)
{
    struct ext2_group_descriptor group;
    assert_int_equal(ext2_read_group(&damaged->fs, 0, &group), 0);
    inode->i_block[0] = group.bg_inode_table;
}

static void pointer_at_descriptors(struct damaged *damaged, struct ext2_inode *inode)
{
    inode->i_block[2] = damaged->fs.block_size == 1024 ? 2 : 1;
}

static void file_acl_high(struct damaged *damaged, struct ext2_inode *inode)
{
    (void)damaged;
    inode->i_osd2[EXT2_OSD2_FILE_ACL_HIGH] = 16;
}

static void size_shrunk(struct damaged *damaged, struct ext2_inode *inode)
{
    (void)damaged;
    inode->i_size = 1000; /* its blocks 1 to 19 and the indirect block lie past it */
}

static void test_blocks_past_size(void **state)
{
    (void)state;
    struct damaged damaged;
    make_damaged(&damaged, 1024);
    change_victim(&damaged, size_shrunk);
    expect_file_corrupt(&damaged, "/victim", 0);
    assert_string_equal(last_problem, "an inode has a block past its size");
}

/* Fields ext2 leaves 0 that e2fsck insists on. */
static void test_nonzero_high_fields(void **state)
{
    (void)state;
    struct damaged damaged;
    make_damaged(&damaged, 1024);
    change_victim(&damaged, file_acl_high);
    expect_file_corrupt(&damaged, "/victim", 0);
    assert_non_null(strstr(last_problem, "i_file_acl_hi"));
}

static void test_impossible_sizes(void **state)
{
    (void)state;
    struct damaged damaged;
    make_damaged(&damaged, 4096);
    change_victim(&damaged, size_2_44);
    expect_file_corrupt(&damaged, "/victim", 0);
    assert_string_equal(last_problem, "an inode's size is beyond the largest file");
    make_damaged(&damaged, 1024);
    change_victim(&damaged, size_max);
    expect_file_corrupt(&damaged, "/victim", 0);
}

static void test_pointer_at_metadata(void **state)
{
    (void)state;
    struct damaged damaged;
    make_damaged(&damaged, 1024);
    change_victim(&damaged, pointer_at_inode_table);
    expect_file_corrupt(&damaged, "/victim", 0);
    assert_non_null(strstr(last_problem, "metadata block"));
    make_damaged(&damaged, 4096);
    change_victim(&damaged, pointer_at_descriptors);
    expect_file_corrupt(&damaged, "/victim", 0);
}

/* Pointers that passed are not checked again while unchanged, but a block
 * that became protected since (the journal's, at its open) is refused once
 * the remembered checks are forgotten, and a changed pointer always is. */
static void test_checked_pointers_remembered(void **state)
{
    (void)state;
    struct damaged damaged;
    struct ext2_inode inode;
    make_damaged(&damaged, 1024);
    uint32_t number = inode_of(&damaged, "/victim", &inode);
    assert_int_equal(ext2_read_inode(&damaged.fs, number, &inode), 0); /* remembered */
    assert_int_not_equal(inode.i_block[0], 0);
    damaged.fs.protected_ranges[0] = (struct ext2_block_range){inode.i_block[0], 1};
    damaged.fs.protected_count = 1;
    ext2_forget_checked_inodes(&damaged.fs);
    assert_int_equal(ext2_read_inode(&damaged.fs, number, &inode), -E_CORRUPT);
    damaged.fs.protected_count = 0;
    ext2_forget_checked_inodes(&damaged.fs);
    assert_int_equal(ext2_read_inode(&damaged.fs, number, &inode), 0);
    inode.i_block[1] = damaged.fs.groups[0].inode_table; /* a pointer at metadata */
    assert_int_equal(ext2_write_inode(&damaged.fs, number, &inode), 0);
    assert_int_equal(ext2_read_inode(&damaged.fs, number, &inode), -E_CORRUPT);
    disk_close(&damaged.disk);
}

static void names_journal_inode(struct ext2_directory_entry *entry, uint32_t block_size)
{
    (void)block_size;
    entry->inode = 8;
}

static void names_bad_blocks_inode(struct ext2_directory_entry *entry, uint32_t block_size)
{
    (void)block_size;
    entry->inode = 1;
}

static void test_reserved_inodes_named(void **state)
{
    (void)state;
    expect_directory_corrupt(names_journal_inode, 1024);
    assert_string_equal(last_problem, "a directory entry names a reserved inode");
    expect_directory_corrupt(names_bad_blocks_inode, 4096);
}

static void directory_size_zero(struct damaged *damaged, struct ext2_inode *inode)
{
    (void)damaged;
    inode->i_size = 0;
}

static void test_directory_size_zero(void **state)
{
    (void)state;
    struct damaged damaged;
    struct ext2_inode inode;
    make_damaged(&damaged, 1024);
    uint32_t number = inode_of(&damaged, "/dir", &inode);
    directory_size_zero(&damaged, &inode);
    assert_int_equal(ext2_write_inode(&damaged.fs, number, &inode), 0);
    assert_int_equal(remount(&damaged), 0);
    problems_reported = 0;
    snapshot(&damaged);
    uint32_t found;
    assert_int_equal(ext2_lookup(&damaged.fs, "/dir/one", &found), -E_CORRUPT);
    assert_int_equal(ext2_mkdir(&damaged.fs, "/dir/sub", 0755, NULL), -E_CORRUPT);
    assert_int_equal(ext2_rmdir(&damaged.fs, "/dir"), -E_CORRUPT);
    assert_string_equal(last_problem, "a directory's size is 0");
    check_untouched(&damaged);
}

/* Clears bit `bit` of the bitmap block `block`, then mounts again. */
static void clear_bitmap_bit(struct damaged *damaged, uint32_t block, uint32_t bit)
{
    uint8_t byte;
    uint64_t at = (uint64_t)block * damaged->fs.block_size + bit / 8;
    assert_int_equal(pread(damaged->disk.fd, &byte, 1, (off_t)at), 1);
    assert_true(byte & (1u << (bit % 8)));
    byte = (uint8_t)(byte & ~(1u << (bit % 8)));
    poke(damaged, at, &byte, 1);
    assert_int_equal(remount(damaged), 0);
    problems_reported = 0;
}

static void test_live_inode_marked_free(void **state)
{
    (void)state;
    struct damaged damaged;
    struct ext2_inode inode;
    make_damaged(&damaged, 1024);
    uint32_t keep = inode_of(&damaged, "/keep.txt", &inode);
    struct ext2_group_descriptor group;
    assert_int_equal(ext2_read_group(&damaged.fs, 0, &group), 0);
    clear_bitmap_bit(&damaged, group.bg_inode_bitmap, keep - 1);
    snapshot(&damaged);
    assert_int_equal(ext2_create(&damaged.fs, "/new", 0644, NULL), -E_CORRUPT);
    assert_string_equal(last_problem, "the inode bitmap marks a live inode free");
    check_untouched(&damaged);
}

static void test_metadata_marked_free(void **state)
{
    (void)state;
    struct damaged damaged;
    make_damaged(&damaged, 1024);
    struct ext2_group_descriptor group;
    assert_int_equal(ext2_read_group(&damaged.fs, 0, &group), 0);
    clear_bitmap_bit(&damaged, group.bg_block_bitmap, group.bg_inode_table + 2 - 1);
    snapshot(&damaged);
    uint32_t keep;
    assert_int_equal(ext2_lookup(&damaged.fs, "/keep.txt", &keep), 0);
    assert_int_equal(ext2_write(&damaged.fs, keep, 100000, "x", 1), -E_CORRUPT);
    assert_string_equal(last_problem, "the block bitmap marks a metadata block free");
    check_untouched(&damaged);
}

/* e2fsck -fn's report without its first (version) line. */
static void fsck_report(const char *image, const char *into)
{
    run("e2fsck -fn %s 2>&1 | tail -n +2 > %s", image, into);
}

static void test_root_block_marked_free(void **state)
{
    (void)state;
    struct damaged damaged;
    struct ext2_inode root;
    make_damaged(&damaged, 4096);
    assert_int_equal(ext2_read_inode(&damaged.fs, EXT2_ROOT_INODE, &root), 0);
    struct ext2_group_descriptor group;
    assert_int_equal(ext2_read_group(&damaged.fs, 0, &group), 0);
    clear_bitmap_bit(&damaged, group.bg_block_bitmap, root.i_block[0]);
    char before[300], after[300];
    snprintf(before, sizeof before, "%s.fsck-before", damaged.image);
    snprintf(after, sizeof after, "%s.fsck-after", damaged.image);
    fsck_report(damaged.image, before);
    assert_int_equal(ext2_mkdir(&damaged.fs, "/sub", 0755, NULL), -E_CORRUPT);
    assert_string_equal(last_problem, "the block bitmap marks a block of the root directory free");
    disk_close(&damaged.disk);
    fsck_report(damaged.image, after);
    assert_true(files_equal(before, after)); /* no damage but the injected one */
}

/* Makes the bad-block list (inode 1) the one block `bad`, as e2fsck -l
 * would record it, without touching the bitmaps; mounts again. */
static void list_bad_block(struct damaged *damaged, uint32_t bad)
{
    char value[16];
    snprintf(value, sizeof value, "%u", bad);
    assert_int_equal(set_inode_field(damaged->image, "<1>", "block[0]", value), 0);
    assert_int_equal(set_inode_field(damaged->image, "<1>", "size", "1024"), 0);
    assert_int_equal(set_inode_field(damaged->image, "<1>", "blocks", "2"), 0);
    assert_int_equal(remount(damaged), 0);
    problems_reported = 0;
}

/* The first block group 0's bitmap marks free. */
static uint32_t first_free_block(struct damaged *damaged)
{
    struct ext2_group_descriptor group;
    uint8_t bitmap[EXT2_MAX_BLOCK_SIZE];
    assert_int_equal(ext2_read_group(&damaged->fs, 0, &group), 0);
    assert_int_equal(ext2_read_block(&damaged->fs, group.bg_block_bitmap, bitmap), 0);
    for (uint32_t bit = 0; bit < damaged->fs.superblock.s_blocks_per_group; bit++)
        if (!(bitmap[bit / 8] & (1u << (bit % 8))))
            return damaged->fs.superblock.s_first_data_block + bit;
    fail_msg("no free block in group 0");
    return 0;
}

/* A block on the bad-block list that the bitmap marks free is not handed
 * out (the allocation is refused as the inconsistency it is). */
static void test_bad_block_marked_free(void **state)
{
    (void)state;
    struct damaged damaged;
    make_damaged(&damaged, 1024);
    list_bad_block(&damaged, first_free_block(&damaged));
    snapshot(&damaged);
    uint32_t keep;
    assert_int_equal(ext2_lookup(&damaged.fs, "/keep.txt", &keep), 0);
    assert_int_equal(ext2_write(&damaged.fs, keep, 100000, "x", 1), -E_CORRUPT);
    assert_string_equal(last_problem, "the block bitmap marks a block of the bad-block list free");
    check_untouched(&damaged);
}

/* With the bad block marked in use (a consistent list), files never get it,
 * and a file that points at it is refused like one pointing at metadata. */
static void test_bad_block_in_use(void **state)
{
    (void)state;
    struct damaged damaged;
    struct ext2_inode inode;
    make_damaged(&damaged, 1024);
    uint32_t bad = first_free_block(&damaged);
    assert_int_equal(run("debugfs -w -R 'setb %u' %s >/dev/null 2>&1", bad, damaged.image), 0);
    list_bad_block(&damaged, bad);
    assert_int_equal(run("e2fsck -fy %s >/dev/null 2>&1", damaged.image) & ~1, 0); /* counts */
    assert_true(fsck_clean(damaged.image));
    assert_int_equal(remount(&damaged), 0);
    uint32_t keep;
    assert_int_equal(ext2_lookup(&damaged.fs, "/keep.txt", &keep), 0);
    assert_int_equal(ext2_write(&damaged.fs, keep, 100000, "x", 1), 1);
    assert_int_equal(ext2_read_inode(&damaged.fs, keep, &inode), 0);
    uint32_t physical;
    assert_int_equal(ext2_map_block(&damaged.fs, &inode, 100000 / 1024, &physical), 0);
    assert_int_not_equal(physical, bad);
    assert_int_equal(problems_reported, 0);
    disk_close(&damaged.disk);
    assert_true(fsck_clean(damaged.image));
    make_damaged(&damaged, 1024);
    uint32_t number = inode_of(&damaged, "/victim", &inode);
    list_bad_block(&damaged, inode.i_block[2]);
    expect_file_corrupt(&damaged, "/victim", 0);
    assert_string_equal(last_problem,
                        "an inode's block pointer names a block on the bad-block list");
    (void)number;
}

/* The inode-table block holding inode `number`. */
static uint32_t table_block_of(struct damaged *damaged, uint32_t number)
{
    struct ext2_group_descriptor group;
    uint32_t per_group = damaged->fs.superblock.s_inodes_per_group;
    assert_int_equal(ext2_read_group(&damaged->fs, (number - 1) / per_group, &group), 0);
    return group.bg_inode_table + ((number - 1) % per_group) / damaged->fs.inodes_per_block;
}

/* An inode-table block on the bad-block list: the inodes in it are neither
 * handed out (the bitmap marks them free: refused) nor used when a
 * directory entry names one (e2fsck clears such entries). */
static void test_inode_table_block_on_bad_block_list(void **state)
{
    (void)state;
    struct damaged damaged;
    struct ext2_inode inode;
    make_damaged(&damaged, 1024);
    uint32_t next = damaged.fs.superblock.s_inodes_count; /* the next inode create would take */
    for (uint32_t number = damaged.fs.first_inode; number < next; number++) {
        assert_int_equal(ext2_read_raw_inode(&damaged.fs, number, &inode), 0);
        if (inode.i_mode == 0)
            next = number;
    }
    list_bad_block(&damaged, table_block_of(&damaged, next));
    snapshot(&damaged);
    assert_int_equal(ext2_create(&damaged.fs, "/new", 0644, NULL), -E_CORRUPT);
    assert_string_equal(last_problem,
                        "the inode bitmap marks free an inode that lies in a bad block");
    check_untouched(&damaged);

    make_damaged(&damaged, 1024);
    uint32_t keep = inode_of(&damaged, "/keep.txt", &inode);
    list_bad_block(&damaged, table_block_of(&damaged, keep));
    snapshot(&damaged);
    uint32_t found;
    assert_int_equal(ext2_lookup(&damaged.fs, "/keep.txt", &found), -E_CORRUPT);
    assert_string_equal(last_problem, "a directory entry names an inode in a bad block");
    assert_int_equal(ext2_unlink(&damaged.fs, "/keep.txt"), -E_CORRUPT);
    check_untouched(&damaged);
}

/* A bad-block list FS cannot read whole (a block past the disk's end, as
 * e2fsprogs' f_badbblocks has): mounted read-only, nothing written. */
static void test_bad_block_list_corrupt(void **state)
{
    (void)state;
    struct damaged damaged;
    make_damaged(&damaged, 1024);
    list_bad_block(&damaged, damaged.fs.superblock.s_blocks_count + 3);
    assert_true(damaged.fs.read_only);
    assert_non_null(strstr(damaged.fs.read_only_reason, "bad-block list"));
    assert_string_equal(last_problem, "a block on the bad-block list lies outside the disk");
    snapshot(&damaged);
    assert_int_equal(ext2_create(&damaged.fs, "/new", 0644, NULL), -E_READ_ONLY);
    uint32_t keep;
    assert_int_equal(ext2_lookup(&damaged.fs, "/keep.txt", &keep), 0);
    assert_int_equal(damaged.disk.writes, 0);
    disk_close(&damaged.disk);
}

/* A directory whose first block is another directory's (its "." names the
 * root): nothing reads or writes through it, so mkdir /dir/sub cannot land
 * in the root; then a first block whose second entry is not "..". */
static void test_directory_dots(void **state)
{
    (void)state;
    struct damaged damaged;
    struct ext2_inode root, inode;
    make_damaged(&damaged, 1024);
    assert_int_equal(ext2_read_inode(&damaged.fs, EXT2_ROOT_INODE, &root), 0);
    uint32_t number = inode_of(&damaged, "/dir", &inode);
    inode.i_block[0] = root.i_block[0];
    assert_int_equal(ext2_write_inode(&damaged.fs, number, &inode), 0);
    assert_int_equal(remount(&damaged), 0);
    problems_reported = 0;
    snapshot(&damaged);
    uint32_t found;
    uint64_t cursor = 0;
    struct ext2_dirent entry;
    assert_int_equal(ext2_mkdir(&damaged.fs, "/dir/sub", 0755, NULL), -E_CORRUPT);
    assert_string_equal(last_problem, "a directory's first entry is not '.' naming the directory");
    assert_int_equal(ext2_lookup(&damaged.fs, "/dir/keep.txt", &found), -E_CORRUPT);
    assert_int_equal(ext2_readdir(&damaged.fs, number, &cursor, &entry), -E_CORRUPT);
    assert_int_equal(ext2_rmdir(&damaged.fs, "/dir"), -E_CORRUPT);
    assert_int_equal(ext2_lookup(&damaged.fs, "/sub", &found), -E_NOT_FOUND);
    check_untouched(&damaged);

    make_damaged(&damaged, 4096);
    number = inode_of(&damaged, "/dir", &inode);
    uint8_t block[EXT2_MAX_BLOCK_SIZE];
    assert_int_equal(pread(damaged.disk.fd, block, 4096, (off_t)inode.i_block[0] * 4096), 4096);
    struct ext2_directory_entry *second = (struct ext2_directory_entry *)(block + 12);
    second->name[1] = 'x'; /* ".x" */
    poke(&damaged, (uint64_t)inode.i_block[0] * 4096, block, 4096);
    snapshot(&damaged);
    assert_int_equal(ext2_create(&damaged.fs, "/dir/new", 0644, NULL), -E_CORRUPT);
    assert_string_equal(last_problem, "a directory's second entry is not '..'");
    check_untouched(&damaged);
}

/* The claims' bitmap of the tests (ext2_claims.c): 16 MiB images have at
 * most 16384 blocks. */
static uint8_t claims_bits[16384 / 8];

/* Two files share a block (/victim's first block is /keep.txt's): the scan
 * finds it claimed twice, and freeing it, which would let the next file
 * take /keep.txt's data, is refused with nothing written. */
static void test_cross_linked_block_not_freed(void **state)
{
    (void)state;
    struct damaged damaged;
    struct ext2_inode keep, victim;
    make_damaged(&damaged, 1024);
    inode_of(&damaged, "/keep.txt", &keep);
    uint32_t number = inode_of(&damaged, "/victim", &victim);
    victim.i_block[0] = keep.i_block[0];
    assert_int_equal(ext2_write_inode(&damaged.fs, number, &victim), 0);
    assert_int_equal(remount(&damaged), 0);
    assert_int_equal(ext2_claims_scan(&damaged.fs, claims_bits, sizeof claims_bits), 0);
    assert_int_equal(damaged.fs.claims.twice_blocks, 1);
    assert_false(damaged.fs.claims.partial);
    problems_reported = 0;
    snapshot(&damaged);
    assert_int_equal(ext2_unlink(&damaged.fs, "/victim"), -E_CORRUPT);
    assert_string_equal(last_problem, "freeing a block another file also claims");
    check_untouched(&damaged);
}

/* A block a file uses that the bitmap marks free is not handed out again
 * (without the claims only a scan of every inode could tell). */
static void test_claimed_block_marked_free(void **state)
{
    (void)state;
    struct damaged damaged;
    struct ext2_inode keep;
    make_damaged(&damaged, 1024);
    inode_of(&damaged, "/keep.txt", &keep);
    struct ext2_group_descriptor group;
    assert_int_equal(ext2_read_group(&damaged.fs, 0, &group), 0);
    clear_bitmap_bit(&damaged, group.bg_block_bitmap,
                     keep.i_block[0] - damaged.fs.superblock.s_first_data_block);
    assert_int_equal(ext2_claims_scan(&damaged.fs, claims_bits, sizeof claims_bits), 0);
    assert_int_equal(first_free_block(&damaged), keep.i_block[0]); /* what FS would take */
    snapshot(&damaged);
    assert_int_equal(ext2_create(&damaged.fs, "/new", 0644, NULL), 0); /* takes no block */
    uint32_t fresh;
    assert_int_equal(ext2_lookup(&damaged.fs, "/new", &fresh), 0);
    assert_int_equal(ext2_write(&damaged.fs, fresh, 0, "x", 1), -E_CORRUPT);
    assert_string_equal(last_problem, "the block bitmap marks free a block a file claims");
    disk_close(&damaged.disk);
    size_t length;
    uint8_t *text = host_cat(damaged.image, "/keep.txt", &length);
    assert_int_equal(length, strlen(KEEP_TEXT));
    assert_memory_equal(text, KEEP_TEXT, length);
    free(text);
}

/* The claims follow what the library does (an allocation claims, a free
 * gives back, an aborted operation changes nothing): a workload of writes,
 * truncates and unlinks finds no false inconsistency and stays clean. */
static void test_claims_follow_changes(void **state)
{
    (void)state;
    static uint8_t data[60000];
    struct damaged damaged;
    struct ext2_inode inode;
    pattern_fill(data, sizeof data, 5, 0);
    make_damaged(&damaged, 1024);
    assert_int_equal(ext2_claims_scan(&damaged.fs, claims_bits, sizeof claims_bits), 0);
    assert_int_equal(damaged.fs.claims.twice_blocks, 0);
    for (uint32_t round = 0; round < 6; round++) {
        uint32_t a, b;
        assert_int_equal(ext2_create(&damaged.fs, "/a", 0644, &a), 0);
        assert_int_equal(ext2_write(&damaged.fs, a, 0, data, sizeof data), (long)sizeof data);
        assert_int_equal(ext2_truncate(&damaged.fs, a, 5000), 0);
        assert_int_equal(ext2_create(&damaged.fs, "/b", 0644, &b), 0);
        assert_int_equal(ext2_write(&damaged.fs, b, 0, data, 30000 + round * 1000),
                         30000 + round * 1000);
        assert_int_equal(ext2_create(&damaged.fs, "/b", 0644, NULL), -E_EXISTS); /* aborted */
        assert_int_equal(ext2_read_inode(&damaged.fs, b, &inode), 0);
        assert_true(ext2_claimed(&damaged.fs, inode.i_block[0]));
        assert_int_equal(ext2_unlink(&damaged.fs, "/a"), 0);
        assert_int_equal(ext2_unlink(&damaged.fs, "/b"), 0);
        assert_false(ext2_claimed(&damaged.fs, inode.i_block[0]));
    }
    assert_int_equal(problems_reported, 0);
    disk_close(&damaged.disk);
    assert_true(fsck_clean(damaged.image));
}

/* The quota changes an operation reports, summed (test_operation_aborted). */
static int64_t quota_changed_sum;

static void note_quota_change(void *context, uint32_t uid, int64_t sectors)
{
    (void)context, (void)uid;
    quota_changed_sum += sectors;
}

/* An inconsistency found in the middle of an operation: an unlink whose
 * block frees meet a block the bitmap already marks free. The operation is
 * aborted (as ext4 aborts the running transaction): its directory entry,
 * inode and bitmaps stay as they were (e2fsck finds no unattached inode),
 * the quota charges are given back, only the error record is written; and
 * under errors=continue the next operation goes on. */
static void test_operation_aborted(void **state)
{
    (void)state;
    struct damaged damaged;
    struct ext2_inode inode;
    make_damaged_with(&damaged, 1024, "-e continue");
    inode_of(&damaged, "/victim", &inode);
    struct ext2_group_descriptor group;
    assert_int_equal(ext2_read_group(&damaged.fs, 0, &group), 0);
    uint32_t late = inode.i_block[EXT2_SINGLE_INDIRECT + 0] + 3; /* a block freed late */
    clear_bitmap_bit(&damaged, group.bg_block_bitmap,
                     late - damaged.fs.superblock.s_first_data_block);
    char before[300], after[300];
    snprintf(before, sizeof before, "%s.fsck-before", damaged.image);
    snprintf(after, sizeof after, "%s.fsck-after", damaged.image);
    fsck_report(damaged.image, before);
    damaged.fs.quota = (struct ext2_quota){.changed = note_quota_change};
    quota_changed_sum = 0;
    snapshot(&damaged);
    assert_int_equal(ext2_unlink(&damaged.fs, "/victim"), -E_CORRUPT);
    assert_string_equal(last_problem, "freeing a block the bitmap marks free");
    assert_int_equal(quota_changed_sum, 0);
    assert_int_equal(damaged.fs.operation_aborts, 1);
    assert_false(damaged.fs.read_only); /* errors=continue */
    uint32_t victim;
    assert_int_equal(ext2_lookup(&damaged.fs, "/victim", &victim), 0);
    assert_int_equal(damaged.disk.writes, damaged.disk.superblock_writes);
    assert_true(only_error_record_differs(damaged.image, damaged.copy));
    assert_int_equal(ext2_create(&damaged.fs, "/after", 0644, NULL), 0);
    disk_close(&damaged.disk);
    fsck_report(damaged.image, after);
    assert_int_equal(run("diff %s %s | grep -v 'after\\|files' | grep -q '^>'", before, after), 1);
}

/* s_errors: remount-ro stops writes, panic also stops FS, continue goes on;
 * the error record is what dumpe2fs shows. */
static void test_errors_policies(void **state)
{
    (void)state;
    struct damaged damaged;
    make_damaged_with(&damaged, 1024, "-e remount-ro");
    change_victim(&damaged, pointer_at_inode_table);
    uint32_t number;
    assert_int_equal(ext2_lookup(&damaged.fs, "/victim", &number), -E_CORRUPT);
    assert_true(damaged.fs.read_only);
    assert_false(damaged.fs.stopped);
    assert_int_equal(ext2_create(&damaged.fs, "/new", 0644, NULL), -E_READ_ONLY);
    disk_close(&damaged.disk);
    assert_int_equal(
        run("dumpe2fs -h %s 2>/dev/null | grep -q 'state:.*with errors' && "
            "dumpe2fs -h %s 2>/dev/null | grep -q 'First error function: *check_pointer' && "
            "dumpe2fs -h %s 2>/dev/null | grep -q 'FS Error count: *1$'",
            damaged.image, damaged.image, damaged.image),
        0);
    assert_true(fsck_clean(damaged.image) == false); /* the injected pointer */

    make_damaged_with(&damaged, 1024, "-e panic");
    change_victim(&damaged, pointer_at_inode_table);
    assert_int_equal(ext2_lookup(&damaged.fs, "/victim", &number), -E_CORRUPT);
    assert_true(damaged.fs.read_only && damaged.fs.stopped);
    disk_close(&damaged.disk);

    make_damaged_with(&damaged, 1024, "-e continue");
    change_victim(&damaged, pointer_at_inode_table);
    assert_int_equal(ext2_lookup(&damaged.fs, "/victim", &number), -E_CORRUPT);
    assert_false(damaged.fs.read_only);
    assert_int_equal(ext2_create(&damaged.fs, "/new", 0644, NULL), 0);
    disk_close(&damaged.disk);
}

static void test_unknown_ro_compat_feature(void **state)
{
    (void)state;
    struct damaged damaged;
    make_damaged(&damaged, 1024);
    uint32_t features = damaged.fs.superblock.s_feature_ro_compat | 0x1000;
    poke_superblock_u32(&damaged, offsetof(struct ext2_superblock, s_feature_ro_compat), features);
    assert_int_equal(remount(&damaged), 0);
    assert_true(damaged.fs.read_only);
    assert_non_null(strstr(damaged.fs.read_only_reason, "read-only-compatible features"));
    assert_int_equal(ext2_create(&damaged.fs, "/new", 0644, NULL), -E_READ_ONLY);
    disk_close(&damaged.disk);
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
        cmocka_unit_test(test_descriptors_overlap),
        cmocka_unit_test(test_impossible_sizes),
        cmocka_unit_test(test_nonzero_high_fields),
        cmocka_unit_test(test_blocks_past_size),
        cmocka_unit_test(test_pointer_at_metadata),
        cmocka_unit_test(test_reserved_inodes_named),
        cmocka_unit_test(test_directory_size_zero),
        cmocka_unit_test(test_live_inode_marked_free),
        cmocka_unit_test(test_metadata_marked_free),
        cmocka_unit_test(test_root_block_marked_free),
        cmocka_unit_test(test_bad_block_marked_free),
        cmocka_unit_test(test_bad_block_in_use),
        cmocka_unit_test(test_inode_table_block_on_bad_block_list),
        cmocka_unit_test(test_bad_block_list_corrupt),
        cmocka_unit_test(test_operation_aborted),
        cmocka_unit_test(test_directory_dots),
        cmocka_unit_test(test_cross_linked_block_not_freed),
        cmocka_unit_test(test_claimed_block_marked_free),
        cmocka_unit_test(test_claims_follow_changes),
        cmocka_unit_test(test_checked_pointers_remembered),
        cmocka_unit_test(test_errors_policies),
        cmocka_unit_test(test_unknown_ro_compat_feature),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    run("rm -rf %s", scratch());
    return failed;
}
