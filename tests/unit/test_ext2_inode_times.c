/* test_ext2_inode_times.c: ext2_only_inode_times_changed on mke2fs images
 * (128- and 256-byte inodes): times alone, in one inode or several, are a
 * change of times; a size, a block pointer, a byte past the extra times, or
 * any block outside the inode tables is not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_ext2_support.h"

struct fixture {
    char image[256];
    struct ext2_fs fs;
    struct test_disk disk;
    uint32_t block;  /* the inode table block holding /docs/hello.txt's inode */
    uint32_t offset; /* that inode's offset in it */
    uint8_t before[4096];
    uint8_t after[4096];
};

static void make_image(struct fixture *fixture, uint32_t inode_size)
{
    snprintf(fixture->image, sizeof fixture->image, "%s/times-%u.img", scratch(), inode_size);
    assert_int_equal(
        run("rm -rf %s/src && mkdir -p %s/src/docs && echo hello > %s/src/docs/hello.txt"
            " && mke2fs -q -F -t ext3 -b 4096 -I %u -d %s/src %s 8M",
            scratch(), scratch(), scratch(), inode_size, scratch(), fixture->image),
        0);
    mount_image(&fixture->fs, &fixture->disk, fixture->image);
    uint32_t inode;
    assert_int_equal(ext2_lookup(&fixture->fs, "/docs/hello.txt", &inode), 0);
    uint32_t index = (inode - 1) % fixture->fs.superblock.s_inodes_per_group;
    fixture->block =
        fixture->fs.groups[(inode - 1) / fixture->fs.superblock.s_inodes_per_group].inode_table +
        index / fixture->fs.inodes_per_block;
    fixture->offset = (index % fixture->fs.inodes_per_block) * fixture->fs.inode_size;
    assert_int_equal(ext2_read_block(&fixture->fs, fixture->block, fixture->before), 0);
    memcpy(fixture->after, fixture->before, sizeof fixture->after);
}

static void finish(struct fixture *fixture)
{
    disk_close(&fixture->disk);
    unlink(fixture->image);
}

static bool times_only(struct fixture *fixture, uint32_t block)
{
    return ext2_only_inode_times_changed(&fixture->fs, block, fixture->before, fixture->after);
}

/* Adds `delta` to the 32-bit field at `field` of the file's inode (or of
 * the inode `inodes` slots further on). */
static void bump(struct fixture *fixture, uint32_t inodes, size_t field, uint32_t delta)
{
    uint8_t *at = fixture->after + fixture->offset + inodes * fixture->fs.inode_size + field;
    uint32_t value;
    memcpy(&value, at, sizeof value);
    value += delta;
    memcpy(at, &value, sizeof value);
}

static void check_inode_size(uint32_t inode_size)
{
    struct fixture *fixture = calloc(1, sizeof *fixture);
    make_image(fixture, inode_size);
    assert_true(times_only(fixture, fixture->block)); /* nothing changed at all */
    bump(fixture, 0, offsetof(struct ext2_inode, i_mtime), 5);
    bump(fixture, 0, offsetof(struct ext2_inode, i_ctime), 5);
    bump(fixture, 1, offsetof(struct ext2_inode, i_atime), 7); /* another inode of the block */
    assert_true(times_only(fixture, fixture->block));
    /* the same bytes as a block that is no inode table: the block bitmap, a data block */
    assert_false(times_only(fixture, fixture->fs.groups[0].block_bitmap));
    assert_false(times_only(fixture, fixture->fs.superblock.s_blocks_count - 1));
    if (inode_size >= 256) {
        bump(fixture, 0, 136, 1); /* i_mtime_extra: nanoseconds */
        assert_true(times_only(fixture, fixture->block));
        bump(fixture, 0, 152, 1); /* past the extra times */
        assert_false(times_only(fixture, fixture->block));
        bump(fixture, 0, 152, (uint32_t)-1);
    }
    bump(fixture, 0, offsetof(struct ext2_inode, i_size), 4096);
    assert_false(times_only(fixture, fixture->block));
    bump(fixture, 0, offsetof(struct ext2_inode, i_size), (uint32_t)-4096);
    bump(fixture, 0, offsetof(struct ext2_inode, i_block), 1);
    assert_false(times_only(fixture, fixture->block));
    bump(fixture, 0, offsetof(struct ext2_inode, i_block), (uint32_t)-1);
    bump(fixture, 0, offsetof(struct ext2_inode, i_dtime), 1); /* a deletion is no time update */
    assert_false(times_only(fixture, fixture->block));
    finish(fixture);
    free(fixture);
}

static void test_small_inodes(void **state)
{
    (void)state;
    check_inode_size(128);
}

static void test_large_inodes(void **state)
{
    (void)state;
    check_inode_size(256);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_inodes),
        cmocka_unit_test(test_large_inodes),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    run("rm -rf %s", scratch());
    return failed;
}
