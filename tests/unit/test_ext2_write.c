/* test_ext2_write.c: changes through the ext2 library (create, write,
 * extend, overwrite, truncate across indirect levels, mkdir, unlink, rmdir,
 * rename, a full disk), each followed by e2fsck -fn and debugfs reads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_ext2_support.h"

struct fixture {
    char image[256];
    struct ext2_fs fs;
    struct test_disk disk;
    uint32_t block_size;
};

static void make_image(struct fixture *fixture, uint32_t block_size, const char *size)
{
    static unsigned counter;
    fixture->block_size = block_size;
    snprintf(fixture->image, sizeof fixture->image, "%s/write-%u.img", scratch(), counter++);
    assert_int_equal(
        run("rm -rf %s/src && mkdir -p %s/src/docs && echo hello > %s/src/docs/hello.txt"
            " && mke2fs -q -F -t ext2 -r 1 -b %u -d %s/src %s %s",
            scratch(), scratch(), scratch(), block_size, scratch(), fixture->image, size),
        0);
    mount_image(&fixture->fs, &fixture->disk, fixture->image);
}

static void finish_image(struct fixture *fixture)
{
    disk_close(&fixture->disk);
    assert_true(fsck_clean(fixture->image));
    unlink(fixture->image);
}

/* The host sees exactly `expected` in the file at `path`. */
static void host_has(struct fixture *fixture, const char *path, const uint8_t *expected,
                     size_t length)
{
    size_t got_length;
    assert_true(fsck_clean(fixture->image));
    uint8_t *got = host_cat(fixture->image, path, &got_length);
    assert_int_equal(got_length, length);
    assert_memory_equal(got, expected, length);
    free(got);
}

static void library_has(struct fixture *fixture, uint32_t inode, const uint8_t *expected,
                        size_t length)
{
    uint8_t *got = malloc(length + 1);
    assert_int_equal(ext2_read(&fixture->fs, inode, 0, got, length + 1), (long)length);
    assert_memory_equal(got, expected, length);
    free(got);
}

static void write_all(struct fixture *fixture, uint32_t inode, uint64_t offset, const uint8_t *data,
                      size_t length)
{
    assert_int_equal(ext2_write(&fixture->fs, inode, offset, data, length), (long)length);
}

static void create_write_extend(uint32_t block_size)
{
    struct fixture fixture;
    uint32_t inode;
    size_t length = 40 * block_size + 123;
    uint8_t *expected = calloc(length + 5000, 1);
    make_image(&fixture, block_size, "8M");
    assert_int_equal(ext2_create(&fixture.fs, "/docs/new.bin", 0644, &inode), 0);
    assert_int_equal(ext2_create(&fixture.fs, "/docs/new.bin", 0644, &inode), -E_EXISTS);
    host_has(&fixture, "/docs/new.bin", expected, 0);
    pattern_fill(expected, 1000, 1, 0);
    write_all(&fixture, inode, 0, expected, 1000);
    host_has(&fixture, "/docs/new.bin", expected, 1000);
    pattern_fill(expected + 1000, length - 1000, 1, 1000);
    write_all(&fixture, inode, 1000, expected + 1000, length - 1000);
    host_has(&fixture, "/docs/new.bin", expected, length);
    pattern_fill(expected + 3 * block_size - 10, 2 * block_size + 20, 2, 0);
    write_all(&fixture, inode, 3 * block_size - 10, expected + 3 * block_size - 10,
              2 * block_size + 20);
    pattern_fill(expected + length + 4000, 1000, 3, 0); /* a hole of 4000 bytes first */
    write_all(&fixture, inode, length + 4000, expected + length + 4000, 1000);
    library_has(&fixture, inode, expected, length + 5000);
    host_has(&fixture, "/docs/new.bin", expected, length + 5000);
    free(expected);
    finish_image(&fixture);
}

static void free_counts(struct fixture *fixture, uint32_t *blocks, uint32_t *inodes)
{
    *blocks = fixture->fs.superblock.s_free_blocks_count;
    *inodes = fixture->fs.superblock.s_free_inodes_count;
}

static void truncate_to(struct fixture *fixture, uint32_t inode, uint8_t *expected, size_t old_size,
                        size_t size)
{
    assert_int_equal(ext2_truncate(&fixture->fs, inode, size), 0);
    if (size > old_size)
        memset(expected + old_size, 0, size - old_size);
    library_has(fixture, inode, expected, size);
    host_has(fixture, "/big", expected, size);
}

static void truncate_levels(uint32_t block_size)
{
    struct fixture fixture;
    uint32_t inode, free_blocks, free_inodes, blocks_after, inodes_after;
    size_t pointers = block_size / 4;
    size_t length = (12 + pointers + 2 * pointers + 5) * block_size + 17;
    uint8_t *expected = malloc(length);
    make_image(&fixture, block_size, "16M");
    free_counts(&fixture, &free_blocks, &free_inodes);
    assert_int_equal(ext2_create(&fixture.fs, "/big", 0600, &inode), 0);
    pattern_fill(expected, length, 9, 0);
    write_all(&fixture, inode, 0, expected, length);
    host_has(&fixture, "/big", expected, length);
    size_t sizes[] = {(12 + pointers + 3) * block_size + 5,
                      (12 + 7) * block_size,
                      12 * block_size - 1,
                      3 * block_size + 100,
                      block_size,
                      77,
                      0,
                      (12 + pointers + 1) * block_size + 9,
                      5 * block_size + 3,
                      length};
    size_t old = length;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        truncate_to(&fixture, inode, expected, old, sizes[i]);
        old = sizes[i];
    }
    assert_int_equal(ext2_unlink(&fixture.fs, "/big"), 0);
    free_counts(&fixture, &blocks_after, &inodes_after);
    assert_int_equal(blocks_after, free_blocks);
    assert_int_equal(inodes_after, free_inodes);
    free(expected);
    finish_image(&fixture);
}

static void sparse_triple(uint32_t block_size)
{
    struct fixture fixture;
    uint32_t inode, free_blocks, free_inodes, blocks_after, inodes_after;
    uint64_t pointers = block_size / 4;
    uint64_t offset = (12 + pointers + pointers * pointers + 3) * (uint64_t)block_size - 5;
    uint8_t data[100], got[100];
    make_image(&fixture, block_size, "8M");
    free_counts(&fixture, &free_blocks, &free_inodes);
    assert_int_equal(ext2_create(&fixture.fs, "/sparse", 0644, &inode), 0);
    pattern_fill(data, sizeof data, 4, 0);
    write_all(&fixture, inode, offset, data, sizeof data);
    assert_int_equal(ext2_read(&fixture.fs, inode, offset, got, sizeof got), (long)sizeof got);
    assert_memory_equal(got, data, sizeof data);
    assert_int_equal(ext2_read(&fixture.fs, inode, offset - 50, got, 50), 50);
    for (int i = 0; i < 50; i++)
        assert_int_equal(got[i], 0);
    assert_true(fsck_clean(fixture.image));
    assert_int_equal(ext2_truncate(&fixture.fs, inode, offset + 2), 0);
    assert_true(fsck_clean(fixture.image));
    assert_int_equal(ext2_unlink(&fixture.fs, "/sparse"), 0);
    free_counts(&fixture, &blocks_after, &inodes_after);
    assert_int_equal(blocks_after, free_blocks);
    assert_int_equal(inodes_after, free_inodes);
    finish_image(&fixture);
}

static void directories(uint32_t block_size)
{
    struct fixture fixture;
    uint32_t inode, sub;
    struct ext2_stat stat;
    make_image(&fixture, block_size, "8M");
    assert_int_equal(ext2_mkdir(&fixture.fs, "/a", 0755, &inode), 0);
    assert_int_equal(ext2_mkdir(&fixture.fs, "/a/b", 0755, &sub), 0);
    assert_int_equal(ext2_mkdir(&fixture.fs, "/a/b", 0755, &sub), -E_EXISTS);
    assert_int_equal(ext2_stat(&fixture.fs, inode, &stat), 0);
    assert_int_equal(stat.links, 3);
    assert_int_equal(ext2_create(&fixture.fs, "/a/b/file", 0644, &inode), 0);
    assert_int_equal(ext2_create(&fixture.fs, "/a/b/file/x", 0644, &inode), -E_NOT_DIRECTORY);
    assert_int_equal(ext2_create(&fixture.fs, "/nowhere/x", 0644, &inode), -E_NOT_FOUND);
    write_all(&fixture, inode, 0, (const uint8_t *)"content", 7);
    assert_true(fsck_clean(fixture.image));
    assert_int_equal(ext2_rmdir(&fixture.fs, "/a/b"), -E_NOT_EMPTY);
    assert_int_equal(ext2_unlink(&fixture.fs, "/a/b"), -E_IS_DIRECTORY);
    assert_int_equal(ext2_rmdir(&fixture.fs, "/a/b/file"), -E_NOT_DIRECTORY);
    assert_int_equal(ext2_unlink(&fixture.fs, "/a/b/file"), 0);
    assert_int_equal(ext2_unlink(&fixture.fs, "/a/b/file"), -E_NOT_FOUND);
    assert_int_equal(ext2_rmdir(&fixture.fs, "/a/b"), 0);
    assert_int_equal(ext2_rmdir(&fixture.fs, "/a/."), -E_INVALID);
    assert_true(fsck_clean(fixture.image));
    char path[64];
    for (int i = 0; i < 300; i++) {
        snprintf(path, sizeof path, "/a/entry_with_a_longish_name_%03d", i);
        assert_int_equal(ext2_create(&fixture.fs, path, 0644, &inode), 0);
    }
    for (int i = 0; i < 300; i += 2) {
        snprintf(path, sizeof path, "/a/entry_with_a_longish_name_%03d", i);
        assert_int_equal(ext2_unlink(&fixture.fs, path), 0);
    }
    assert_true(fsck_clean(fixture.image));
    for (int i = 1; i < 300; i += 2) {
        snprintf(path, sizeof path, "/a/entry_with_a_longish_name_%03d", i);
        assert_int_equal(ext2_lookup(&fixture.fs, path, &inode), 0);
        assert_int_equal(ext2_unlink(&fixture.fs, path), 0);
    }
    assert_int_equal(ext2_rmdir(&fixture.fs, "/a"), 0);
    finish_image(&fixture);
}

static void renames(uint32_t block_size)
{
    struct fixture fixture;
    uint32_t inode, moved, dir;
    struct ext2_stat stat;
    make_image(&fixture, block_size, "8M");
    assert_int_equal(ext2_create(&fixture.fs, "/one", 0644, &inode), 0);
    write_all(&fixture, inode, 0, (const uint8_t *)"first", 5);
    assert_int_equal(ext2_rename(&fixture.fs, "/one", "/two"), 0);
    assert_int_equal(ext2_lookup(&fixture.fs, "/one", &moved), -E_NOT_FOUND);
    assert_int_equal(ext2_lookup(&fixture.fs, "/two", &moved), 0);
    assert_int_equal(moved, inode);
    assert_int_equal(ext2_rename(&fixture.fs, "/two", "/docs/three"), 0);
    host_has(&fixture, "/docs/three", (const uint8_t *)"first", 5);
    assert_int_equal(ext2_rename(&fixture.fs, "/docs/three", "/docs/hello.txt"), 0);
    host_has(&fixture, "/docs/hello.txt", (const uint8_t *)"first", 5);
    assert_int_equal(ext2_mkdir(&fixture.fs, "/x", 0755, &dir), 0);
    assert_int_equal(ext2_mkdir(&fixture.fs, "/x/y", 0755, &dir), 0);
    assert_int_equal(ext2_rename(&fixture.fs, "/x", "/x/y/z"), -E_INVALID);
    assert_int_equal(ext2_rename(&fixture.fs, "/x/y", "/docs/y"), 0);
    assert_int_equal(ext2_lookup(&fixture.fs, "/docs/y/..", &inode), 0);
    assert_int_equal(ext2_lookup(&fixture.fs, "/docs", &moved), 0);
    assert_int_equal(inode, moved);
    assert_int_equal(ext2_stat(&fixture.fs, moved, &stat), 0);
    assert_int_equal(stat.links, 3);
    assert_true(fsck_clean(fixture.image));
    assert_int_equal(ext2_rename(&fixture.fs, "/docs/hello.txt", "/x"), -E_IS_DIRECTORY);
    assert_int_equal(ext2_rename(&fixture.fs, "/docs/y", "/x"), 0);
    assert_int_equal(ext2_lookup(&fixture.fs, "/x/..", &inode), 0);
    assert_int_equal(inode, EXT2_ROOT_INODE);
    finish_image(&fixture);
}

static void full_disk(uint32_t block_size)
{
    struct fixture fixture;
    uint32_t inode, free_blocks, free_inodes, blocks_after, inodes_after;
    static uint8_t chunk[10000];
    make_image(&fixture, block_size, "2M");
    free_counts(&fixture, &free_blocks, &free_inodes);
    pattern_fill(chunk, sizeof chunk, 5, 0);
    assert_int_equal(ext2_create(&fixture.fs, "/fill", 0644, &inode), 0);
    uint64_t offset = 0;
    long written;
    while ((written = ext2_write(&fixture.fs, inode, offset, chunk, sizeof chunk)) > 0)
        offset += (uint64_t)written;
    assert_int_equal(written, -E_NO_SPACE);
    assert_true(offset > 1000000);
    assert_true(fsck_clean(fixture.image));
    char path[64];
    int made = 0, status;
    while ((status = ext2_mkdir(&fixture.fs, (snprintf(path, sizeof path, "/d%d", made), path),
                                0755, NULL)) == 0)
        made++;
    assert_int_equal(status, -E_NO_SPACE);
    assert_true(fsck_clean(fixture.image));
    for (int i = 0; i < made; i++) {
        snprintf(path, sizeof path, "/d%d", i);
        assert_int_equal(ext2_rmdir(&fixture.fs, path), 0);
    }
    assert_int_equal(ext2_unlink(&fixture.fs, "/fill"), 0);
    free_counts(&fixture, &blocks_after, &inodes_after);
    assert_int_equal(blocks_after, free_blocks);
    assert_int_equal(inodes_after, free_inodes);
    finish_image(&fixture);
}

#define BOTH_SIZES(name)                                                                           \
    static void test_##name##_1k(void **state)                                                     \
    {                                                                                              \
        (void)state;                                                                               \
        name(1024);                                                                                \
    }                                                                                              \
    static void test_##name##_4k(void **state)                                                     \
    {                                                                                              \
        (void)state;                                                                               \
        name(4096);                                                                                \
    }
BOTH_SIZES(create_write_extend)
BOTH_SIZES(truncate_levels)
BOTH_SIZES(sparse_triple)
BOTH_SIZES(directories)
BOTH_SIZES(renames)
BOTH_SIZES(full_disk)
#define BOTH_TESTS(name) cmocka_unit_test(test_##name##_1k), cmocka_unit_test(test_##name##_4k)

int main(void)
{
    const struct CMUnitTest tests[] = {
        BOTH_TESTS(create_write_extend), BOTH_TESTS(truncate_levels), BOTH_TESTS(sparse_triple),
        BOTH_TESTS(directories),         BOTH_TESTS(renames),         BOTH_TESTS(full_disk),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    run("rm -rf %s", scratch());
    return failed;
}
