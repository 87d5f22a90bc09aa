/* test_open_files_mirror.c: the owner's open-file table mirrored for FS
 * replicas (servers/fs/open_files_mirror.c): a mirrored handle is found
 * with its inode and access, closed and foreign handles are not, a removed
 * directory reads as removed, and a reader racing the owner (a thread that
 * closes a slot and gives it to another process again and again) never
 * takes one process's handle with another's inode. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "open_files_mirror.h"
#include <formica/errors.h>

static struct open_files table, mirror;

static void mirror_slot(const struct open_files *changed, uint32_t slot)
{
    open_files_mirror_slot(&mirror, changed, slot);
}

static int set_up(void **state)
{
    (void)state;
    open_files_init(&table);
    open_files_init(&mirror);
    open_files_slot_changed = mirror_slot;
    return 0;
}

static int tear_down(void **state)
{
    (void)state;
    open_files_slot_changed = NULL;
    return 0;
}

static uint64_t must_add(uint32_t owner, uint32_t inode, uint32_t flags)
{
    uint64_t handle = 0;
    assert_int_equal(open_files_add(&table, owner, 1000 + owner, inode, flags, &handle), 0);
    return handle;
}

static void test_a_mirrored_handle_is_found_whole(void **state)
{
    (void)state;
    uint64_t handle = must_add(7, 12, OPEN_FILE_READ);
    struct open_file found;
    assert_true(open_files_mirror_find(&mirror, 7, handle, &found));
    assert_int_equal(found.inode, 12);
    assert_int_equal(found.flags, OPEN_FILE_READ);
    assert_int_equal(found.account, 1007);
    assert_int_equal(mirror.in_use, 1);
    assert_false(open_files_mirror_find(&mirror, 8, handle, &found)); /* another process */
    assert_false(open_files_mirror_find(&mirror, 7, handle + 1, &found));
    assert_false(open_files_mirror_find(&mirror, 7, OPEN_FILES_MAX, &found));
}

static void test_a_closed_handle_is_gone_from_the_mirror(void **state)
{
    (void)state;
    uint64_t handle = must_add(7, 12, OPEN_FILE_READ);
    struct open_file found;
    open_files_close(&table, open_files_find(&table, 7, handle));
    assert_false(open_files_mirror_find(&mirror, 7, handle, &found));
    uint64_t again = must_add(7, 13, OPEN_FILE_READ); /* the same slot, a new generation */
    assert_false(open_files_mirror_find(&mirror, 7, handle, &found));
    assert_true(open_files_mirror_find(&mirror, 7, again, &found));
    assert_int_equal(found.inode, 13);
}

static void test_a_removed_directory_reads_as_removed(void **state)
{
    (void)state;
    uint64_t handle = must_add(7, 40, OPEN_FILE_READ | OPEN_FILE_DIRECTORY);
    assert_int_equal(open_files_detach_directory(&table, 40), 1);
    struct open_file found;
    assert_true(open_files_mirror_find(&mirror, 7, handle, &found));
    assert_int_equal(found.inode, 0);
    assert_true(found.flags & OPEN_FILE_REMOVED);
}

static void test_the_whole_table_is_mirrored(void **state)
{
    (void)state;
    open_files_slot_changed = NULL; /* changes the mirror is not told of */
    uint64_t handle = must_add(9, 21, OPEN_FILE_WRITE);
    struct open_file found;
    assert_false(open_files_mirror_find(&mirror, 9, handle, &found));
    open_files_mirror_all(&mirror, &table);
    assert_true(open_files_mirror_find(&mirror, 9, handle, &found));
    assert_int_equal(found.inode, 21);
}

/* The race: process 7 holds the slot with inode 1000 + its round, then
 * gives it up and process 8 takes it with inode 2000 + its round, over and
 * over; a reader asking for 7's handles never sees an inode of 8's. */
#define ROUNDS 50000
static _Atomic bool owner_done;

static void *churn_one_slot(void *argument)
{
    (void)argument;
    for (uint32_t round = 0; round < ROUNDS; round++) {
        uint64_t sevens = must_add(7, 1000 + round % 500, OPEN_FILE_READ);
        open_files_close(&table, open_files_find(&table, 7, sevens));
        uint64_t eights = must_add(8, 2000 + round % 500, OPEN_FILE_READ);
        open_files_close(&table, open_files_find(&table, 8, eights));
    }
    atomic_store(&owner_done, true);
    return NULL;
}

static void test_a_racing_reader_never_takes_another_process_s_inode(void **state)
{
    (void)state;
    atomic_store(&owner_done, false);
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, churn_one_slot, NULL), 0);
    uint32_t wrong = 0, found_count = 0;
    while (!atomic_load(&owner_done)) {
        const struct open_file *slot = &mirror.slots[0];
        uint64_t generation = atomic_load((const _Atomic uint32_t *)&slot->generation);
        struct open_file found;
        if (open_files_mirror_find(&mirror, 7, generation << OPEN_FILE_SLOT_BITS, &found)) {
            found_count++;
            wrong += found.inode < 1000 || found.inode >= 1500;
        }
    }
    pthread_join(thread, NULL);
    assert_int_equal(wrong, 0);
    (void)found_count; /* how often the reader caught 7 holding it depends on the host */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_mirrored_handle_is_found_whole, set_up, tear_down),
        cmocka_unit_test_setup_teardown(test_a_closed_handle_is_gone_from_the_mirror, set_up,
                                        tear_down),
        cmocka_unit_test_setup_teardown(test_a_removed_directory_reads_as_removed, set_up,
                                        tear_down),
        cmocka_unit_test_setup_teardown(test_the_whole_table_is_mirrored, set_up, tear_down),
        cmocka_unit_test_setup_teardown(test_a_racing_reader_never_takes_another_process_s_inode,
                                        set_up, tear_down),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
