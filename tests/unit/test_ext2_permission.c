/* test_ext2_permission.c: Unix ownership in the ext2 library: new inodes
 * take the acting user's uid/gid (e2fsck and debugfs agree), and search,
 * create, remove, rename, chmod and chown are refused or allowed by mode,
 * owner and the sticky bit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_ext2_support.h"

#define ALICE 1000
#define BOB 2000
#define USERS 100

struct fixture {
    char image[256];
    struct ext2_fs fs;
    struct test_disk disk;
};

/* An image with /open (1777, sticky), /private (0700, root's) and
 * /private/secret (0600, root's). */
static int setup(void **state)
{
    static unsigned counter;
    struct fixture *fixture = calloc(1, sizeof *fixture);
    snprintf(fixture->image, sizeof fixture->image, "%s/permission-%u.img", scratch(), counter++);
    assert_int_equal(run("rm -rf %s/src && mkdir -p %s/src/open %s/src/private && echo s > "
                         "%s/src/private/secret && mke2fs -q -F -t ext2 -b 1024 -E root_owner=0:0 "
                         "-d %s/src %s 8M",
                         scratch(), scratch(), scratch(), scratch(), scratch(), fixture->image),
                     0);
    assert_int_equal(set_inode_field(fixture->image, "/open", "mode", "041777"), 0);
    assert_int_equal(set_inode_field(fixture->image, "/private", "mode", "040700"), 0);
    assert_int_equal(set_inode_field(fixture->image, "/private/secret", "mode", "0100600"), 0);
    assert_int_equal(set_inode_field(fixture->image, "/private", "uid", "0"), 0);
    mount_image(&fixture->fs, &fixture->disk, fixture->image);
    *state = fixture;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fixture = *state;
    disk_close(&fixture->disk);
    assert_true(fsck_clean(fixture->image));
    unlink(fixture->image);
    free(fixture);
    return 0;
}

static void act_as(struct fixture *fixture, uint32_t uid, uint32_t gid)
{
    fixture->fs.user = (struct ext2_user){.uid = uid, .gid = gid};
}

static void new_files_belong_to_their_creator(void **state)
{
    struct fixture *fixture = *state;
    uint32_t inode;
    struct ext2_stat stat;
    act_as(fixture, 70000, 70001); /* above 16 bits: the high halves in osd2 */
    assert_int_equal(ext2_create(&fixture->fs, "/open/mine", 0640, &inode), 0);
    assert_int_equal(ext2_stat(&fixture->fs, inode, &stat), 0);
    assert_int_equal(stat.uid, 70000);
    assert_int_equal(stat.gid, 70001);
    assert_int_equal(stat.mode & 07777, 0640);
    assert_int_equal(ext2_flush_superblock(&fixture->fs), 0);
    assert_int_equal(run("debugfs -R 'stat /open/mine' %s 2>/dev/null | grep -q 'User: 70000 "
                         " *Group: 70001'",
                         fixture->image),
                     0);
}

static void search_needs_execute_on_every_directory(void **state)
{
    struct fixture *fixture = *state;
    uint32_t inode;
    act_as(fixture, ALICE, USERS);
    assert_int_equal(ext2_lookup(&fixture->fs, "/private/secret", &inode), -E_PERMISSION);
    assert_int_equal(ext2_lookup(&fixture->fs, "/private", &inode), 0); /* the name itself */
    act_as(fixture, EXT2_ROOT_USER, 0);
    assert_int_equal(ext2_lookup(&fixture->fs, "/private/secret", &inode), 0);
}

static void modes_decide_read_and_write(void **state)
{
    struct fixture *fixture = *state;
    struct ext2_stat stat;
    uint32_t inode;
    act_as(fixture, ALICE, USERS);
    assert_int_equal(ext2_create(&fixture->fs, "/open/notes", 0640, &inode), 0);
    assert_int_equal(ext2_stat(&fixture->fs, inode, &stat), 0);
    const struct ext2_fs *fs = &fixture->fs;
    assert_int_equal(ext2_permit_mode(fs, stat.mode, stat.uid, stat.gid, EXT2_MAY_WRITE), 0);
    act_as(fixture, BOB, USERS); /* the group: read only */
    assert_int_equal(ext2_permit_mode(fs, stat.mode, stat.uid, stat.gid, EXT2_MAY_READ), 0);
    assert_int_equal(ext2_permit_mode(fs, stat.mode, stat.uid, stat.gid, EXT2_MAY_WRITE),
                     -E_PERMISSION);
    act_as(fixture, BOB, BOB); /* others: nothing */
    assert_int_equal(ext2_permit_mode(fs, stat.mode, stat.uid, stat.gid, EXT2_MAY_READ),
                     -E_PERMISSION);
    act_as(fixture, EXT2_ROOT_USER, 0); /* root reads and writes, but executes only an x file */
    assert_int_equal(
        ext2_permit_mode(fs, stat.mode, stat.uid, stat.gid, EXT2_MAY_READ | EXT2_MAY_WRITE), 0);
    assert_int_equal(ext2_permit_mode(fs, stat.mode, stat.uid, stat.gid, EXT2_MAY_EXECUTE),
                     -E_PERMISSION);
}

static void creating_needs_a_writable_parent(void **state)
{
    struct fixture *fixture = *state;
    uint32_t inode;
    act_as(fixture, ALICE, USERS);
    assert_int_equal(ext2_create(&fixture->fs, "/new", 0644, &inode), -E_PERMISSION); /* / 0755 */
    assert_int_equal(ext2_mkdir(&fixture->fs, "/d", 0755, &inode), -E_PERMISSION);
    assert_int_equal(ext2_mkdir(&fixture->fs, "/open/d", 0755, &inode), 0);
}

static void sticky_directories_keep_names_to_their_owners(void **state)
{
    struct fixture *fixture = *state;
    uint32_t inode;
    act_as(fixture, ALICE, USERS);
    assert_int_equal(ext2_create(&fixture->fs, "/open/alice", 0666, &inode), 0);
    act_as(fixture, BOB, USERS);
    assert_int_equal(ext2_unlink(&fixture->fs, "/open/alice"), -E_PERMISSION);
    assert_int_equal(ext2_rename(&fixture->fs, "/open/alice", "/open/bob"), -E_PERMISSION);
    assert_int_equal(ext2_create(&fixture->fs, "/open/bob", 0644, &inode), 0);
    /* renaming his own over hers removes her name: refused too */
    assert_int_equal(ext2_rename(&fixture->fs, "/open/bob", "/open/alice"), -E_PERMISSION);
    act_as(fixture, ALICE, USERS);
    assert_int_equal(ext2_unlink(&fixture->fs, "/open/alice"), 0);
    act_as(fixture, EXT2_ROOT_USER, 0);
    assert_int_equal(ext2_unlink(&fixture->fs, "/open/bob"), 0);
}

static void only_owners_chmod_and_only_root_chowns(void **state)
{
    struct fixture *fixture = *state;
    uint32_t inode;
    struct ext2_stat stat;
    act_as(fixture, ALICE, USERS);
    assert_int_equal(ext2_create(&fixture->fs, "/open/file", 0644, &inode), 0);
    assert_int_equal(ext2_change_mode(&fixture->fs, inode, 0600), 0);
    assert_int_equal(ext2_change_owner(&fixture->fs, inode, BOB, BOB), -E_PERMISSION);
    act_as(fixture, BOB, USERS);
    assert_int_equal(ext2_change_mode(&fixture->fs, inode, 0666), -E_PERMISSION);
    act_as(fixture, EXT2_ROOT_USER, 0);
    assert_int_equal(ext2_change_owner(&fixture->fs, inode, BOB, BOB), 0);
    assert_int_equal(ext2_stat(&fixture->fs, inode, &stat), 0);
    assert_int_equal(stat.uid, BOB);
    assert_int_equal(stat.mode, EXT2_S_IFREG | 0600);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(new_files_belong_to_their_creator, setup, teardown),
        cmocka_unit_test_setup_teardown(search_needs_execute_on_every_directory, setup, teardown),
        cmocka_unit_test_setup_teardown(modes_decide_read_and_write, setup, teardown),
        cmocka_unit_test_setup_teardown(creating_needs_a_writable_parent, setup, teardown),
        cmocka_unit_test_setup_teardown(sticky_directories_keep_names_to_their_owners, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(only_owners_chmod_and_only_root_chowns, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
