/* test_ext2_unlinked.c: the ext2 library's unlink-while-open support on real
 * images: the last_name_gone hook keeps an open file's inode and blocks
 * (links 0) through unlink and rename-over, writes still reach it, a new
 * file never takes its inode, and ext2_release_unlinked frees it; a removed
 * directory is reported but always freed. Checked with e2fsck -fn. */
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
    uint32_t kept;     /* the inode the hook keeps (as if open), 0: none */
    uint32_t reported; /* the last inode the hook was told about */
    bool reported_directory;
};

static bool last_name_gone(void *context, uint32_t inode, bool directory)
{
    struct fixture *fixture = context;
    fixture->reported = inode;
    fixture->reported_directory = directory;
    return inode == fixture->kept;
}

static void make_image(struct fixture *fixture, uint32_t block_size)
{
    static unsigned counter;
    memset(fixture, 0, sizeof *fixture);
    snprintf(fixture->image, sizeof fixture->image, "%s/unlinked-%u.img", scratch(), counter++);
    assert_int_equal(run("rm -rf %s/src && mkdir -p %s/src && mke2fs -q -F -t ext2 -r 1 -b %u"
                         " -d %s/src %s 8M",
                         scratch(), scratch(), block_size, scratch(), fixture->image),
                     0);
    mount_image(&fixture->fs, &fixture->disk, fixture->image);
    fixture->fs.last_name_gone = last_name_gone;
    fixture->fs.last_name_context = fixture;
}

static void finish_image(struct fixture *fixture)
{
    disk_close(&fixture->disk);
    assert_true(fsck_clean(fixture->image));
    unlink(fixture->image);
}

static uint32_t free_blocks(const struct fixture *fixture)
{
    return fixture->fs.superblock.s_free_blocks_count;
}

static uint32_t new_file(struct fixture *fixture, const char *path, uint32_t seed, size_t length)
{
    uint32_t inode;
    uint8_t *data = malloc(length);
    pattern_fill(data, length, seed, 0);
    assert_int_equal(ext2_create(&fixture->fs, path, 0644, &inode), 0);
    assert_int_equal(ext2_write(&fixture->fs, inode, 0, data, length), (long)length);
    free(data);
    return inode;
}

static void assert_holds(struct fixture *fixture, uint32_t inode, uint32_t seed, size_t length)
{
    uint8_t *got = malloc(length + 1), *expected = malloc(length);
    pattern_fill(expected, length, seed, 0);
    assert_int_equal(ext2_read(&fixture->fs, inode, 0, got, length + 1), (long)length);
    assert_memory_equal(got, expected, length);
    free(got);
    free(expected);
}

static void test_unlink_keeps_open_file(void **state)
{
    (void)state;
    struct fixture fixture;
    make_image(&fixture, 1024);
    uint32_t before = free_blocks(&fixture);
    uint32_t inode = new_file(&fixture, "/a", 1, 20000);
    uint32_t used = before - free_blocks(&fixture);
    fixture.kept = inode;
    assert_int_equal(ext2_unlink(&fixture.fs, "/a"), 0);
    assert_int_equal(fixture.reported, inode);
    assert_false(fixture.reported_directory);
    uint32_t found;
    assert_int_equal(ext2_lookup(&fixture.fs, "/a", &found), -E_NOT_FOUND);
    struct ext2_stat stat;
    assert_int_equal(ext2_stat(&fixture.fs, inode, &stat), 0);
    assert_int_equal(stat.links, 0);
    assert_int_equal(before - free_blocks(&fixture), used); /* blocks kept */
    uint32_t other = new_file(&fixture, "/b", 2, 5000);
    assert_true(other != inode); /* the kept inode is not reused */
    assert_int_equal(ext2_write(&fixture.fs, inode, 0, "xyz", 3), 3); /* writes still land */
    assert_holds(&fixture, other, 2, 5000);
    fixture.kept = 0;
    assert_int_equal(ext2_release_unlinked(&fixture.fs, inode), 0);
    assert_int_equal(ext2_unlink(&fixture.fs, "/b"), 0);
    assert_int_equal(free_blocks(&fixture), before);
    uint32_t reused = new_file(&fixture, "/c", 3, 100);
    assert_int_equal(reused, inode); /* freed now: the lowest free inode again */
    finish_image(&fixture);
}

static void test_rename_over_open_file(void **state)
{
    (void)state;
    struct fixture fixture;
    make_image(&fixture, 4096);
    uint32_t target = new_file(&fixture, "/target", 4, 9000);
    new_file(&fixture, "/source", 5, 3000);
    fixture.kept = target;
    assert_int_equal(ext2_rename(&fixture.fs, "/source", "/target"), 0);
    assert_int_equal(fixture.reported, target);
    assert_holds(&fixture, target, 4, 9000);
    assert_true(fsck_clean(fixture.image) == false); /* links 0 while "open": e2fsck objects */
    assert_int_equal(ext2_release_unlinked(&fixture.fs, target), 0);
    assert_int_equal(ext2_release_unlinked(&fixture.fs, target), -E_CORRUPT); /* already freed */
    finish_image(&fixture);
}

static void test_release_of_linked_file_does_nothing(void **state)
{
    (void)state;
    struct fixture fixture;
    make_image(&fixture, 1024);
    uint32_t inode = new_file(&fixture, "/linked", 6, 2000);
    uint32_t before = free_blocks(&fixture);
    assert_int_equal(ext2_release_unlinked(&fixture.fs, inode), 0);
    assert_int_equal(free_blocks(&fixture), before);
    assert_holds(&fixture, inode, 6, 2000);
    finish_image(&fixture);
}

static void test_removed_directory_is_reported_and_freed(void **state)
{
    (void)state;
    struct fixture fixture;
    make_image(&fixture, 1024);
    uint32_t directory;
    assert_int_equal(ext2_mkdir(&fixture.fs, "/d", 0755, &directory), 0);
    fixture.kept = directory; /* a directory is freed all the same */
    assert_int_equal(ext2_rmdir(&fixture.fs, "/d"), 0);
    assert_int_equal(fixture.reported, directory);
    assert_true(fixture.reported_directory);
    assert_int_equal(ext2_release_unlinked(&fixture.fs, directory), -E_CORRUPT);
    finish_image(&fixture);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unlink_keeps_open_file),
        cmocka_unit_test(test_rename_over_open_file),
        cmocka_unit_test(test_release_of_linked_file_does_nothing),
        cmocka_unit_test(test_removed_directory_is_reported_and_freed),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    run("rm -rf %s", scratch());
    return failed;
}
