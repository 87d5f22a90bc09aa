/* test_open_files.c: FS's open-file table (servers/fs/open_files.c): handles
 * belong to their owner, closed and forged handles name nothing, the
 * per-process and per-account shares, the table's size and init's
 * account's reserve are enforced, the last close of an
 * unlinked file is reported once, and ended processes' handles are closed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "open_files.h"
#include <formica/errors.h>

static struct open_files table;

static int set_up(void **state)
{
    (void)state;
    open_files_init(&table);
    return 0;
}

/* Each test process is in an account of its own, as `run` starts them. */
#define ACCOUNT_OF(owner) (1000 + (owner))

static uint64_t must_add_in(uint32_t owner, uint32_t account, uint32_t inode, uint32_t flags)
{
    uint64_t handle = 0;
    assert_int_equal(open_files_add(&table, owner, account, inode, flags, &handle), 0);
    return handle;
}

static uint64_t must_add(uint32_t owner, uint32_t inode, uint32_t flags)
{
    return must_add_in(owner, ACCOUNT_OF(owner), inode, flags);
}

static void test_handle_belongs_to_its_owner(void **state)
{
    (void)state;
    uint64_t handle = must_add(7, 12, OPEN_FILE_READ);
    assert_true(handle != 0);
    struct open_file *file = open_files_find(&table, 7, handle);
    assert_non_null(file);
    assert_int_equal(file->inode, 12);
    assert_int_equal(file->flags, OPEN_FILE_READ);
    assert_null(open_files_find(&table, 8, handle)); /* another process */
    assert_null(open_files_find(&table, 0, handle)); /* no owner */
    assert_int_equal(table.in_use, 1);
}

static void test_forged_handles_name_nothing(void **state)
{
    (void)state;
    uint64_t handle = must_add(7, 12, OPEN_FILE_READ);
    assert_null(open_files_find(&table, 7, 0));
    assert_null(open_files_find(&table, 7, handle + 1));            /* a free slot */
    assert_null(open_files_find(&table, 7, handle + (1ull << 16))); /* wrong generation */
    assert_null(open_files_find(&table, 7, handle | (1ull << 63))); /* high bits */
    assert_null(open_files_find(&table, 7, (1ull << 16) | 0xffff)); /* slot out of range */
    assert_null(open_files_find(&table, 7, UINT64_MAX));
}

static void test_closed_handle_never_names_the_slot_again(void **state)
{
    (void)state;
    uint64_t first = must_add(7, 12, OPEN_FILE_READ);
    assert_false(open_files_close(&table, open_files_find(&table, 7, first)));
    assert_null(open_files_find(&table, 7, first));
    assert_int_equal(table.in_use, 0);
    uint64_t second = must_add(7, 13, OPEN_FILE_WRITE); /* the same slot, reused */
    assert_true(second != first);
    assert_null(open_files_find(&table, 7, first));
    assert_int_equal(open_files_find(&table, 7, second)->inode, 13);
}

static void test_generation_wraps_past_zero(void **state)
{
    (void)state;
    table.slots[0].generation = UINT32_MAX;
    uint64_t handle = must_add(7, 12, OPEN_FILE_READ);
    assert_int_equal(handle >> OPEN_FILE_SLOT_BITS, UINT32_MAX);
    open_files_close(&table, open_files_find(&table, 7, handle));
    assert_int_equal(table.slots[0].generation, 1);
}

static void test_share_per_process(void **state)
{
    (void)state;
    for (uint32_t i = 0; i < OPEN_FILES_PER_PROCESS; i++)
        must_add(7, 100 + i, OPEN_FILE_READ);
    assert_int_equal(open_files_room(&table, 7, ACCOUNT_OF(7)), -E_BUSY);
    uint64_t handle;
    assert_int_equal(open_files_add(&table, 7, ACCOUNT_OF(7), 1, OPEN_FILE_READ, &handle), -E_BUSY);
    /* Another process of the same account is not held back by 7's share. */
    must_add_in(9, ACCOUNT_OF(7), 1, OPEN_FILE_READ);
    assert_int_equal(open_files_room(&table, 8, ACCOUNT_OF(8)), 0); /* nor others */
    must_add(8, 1, OPEN_FILE_READ);
}

static void test_share_per_account(void **state)
{
    (void)state;
    uint32_t account = 500, processes = OPEN_FILES_PER_ACCOUNT / OPEN_FILES_PER_PROCESS;
    for (uint32_t owner = 10; owner < 10 + processes; owner++)
        for (uint32_t i = 0; i < OPEN_FILES_PER_PROCESS; i++)
            must_add_in(owner, account, i + 1, OPEN_FILE_READ);
    /* A new process of the full account is refused with the account's error ... */
    uint64_t handle;
    assert_int_equal(open_files_room(&table, 99, account), -E_QUOTA);
    assert_int_equal(open_files_add(&table, 99, account, 1, OPEN_FILE_READ, &handle), -E_QUOTA);
    /* ... while other accounts and init's open as before. */
    must_add(100, 1, OPEN_FILE_READ);
    must_add_in(101, OPEN_FILES_RESERVED_ACCOUNT, 1, OPEN_FILE_READ);
    /* A close gives the account its room back. */
    open_files_close(&table, open_files_find(&table, 10, (1ull << OPEN_FILE_SLOT_BITS) | 0));
    must_add_in(99, account, 1, OPEN_FILE_READ);
}

static void test_table_full_but_the_reserve(void **state)
{
    (void)state;
    /* Accounts other than init's fill the table up to its reserve ... */
    uint32_t owners = (OPEN_FILES_MAX - OPEN_FILES_RESERVE) / OPEN_FILES_PER_PROCESS;
    for (uint32_t owner = 1; owner <= owners; owner++)
        for (uint32_t i = 0; i < OPEN_FILES_PER_PROCESS; i++)
            must_add(owner, i + 1, OPEN_FILE_READ);
    assert_int_equal(table.in_use, OPEN_FILES_MAX - OPEN_FILES_RESERVE);
    uint64_t handle;
    assert_int_equal(
        open_files_add(&table, owners + 1, ACCOUNT_OF(owners + 1), 1, OPEN_FILE_READ, &handle),
        -E_BUSY);
    /* ... which init's account (the servers, the shell) still has. */
    uint32_t reserved_owners = OPEN_FILES_RESERVE / OPEN_FILES_PER_PROCESS;
    for (uint32_t owner = 200; owner < 200 + reserved_owners; owner++)
        for (uint32_t i = 0; i < OPEN_FILES_PER_PROCESS; i++)
            must_add_in(owner, OPEN_FILES_RESERVED_ACCOUNT, i + 1, OPEN_FILE_READ);
    assert_int_equal(table.in_use, OPEN_FILES_MAX);
    assert_int_equal(
        open_files_add(&table, 300, OPEN_FILES_RESERVED_ACCOUNT, 1, OPEN_FILE_READ, &handle),
        -E_BUSY);
}

static void test_last_close_of_unlinked_file(void **state)
{
    (void)state;
    uint64_t a = must_add(7, 12, OPEN_FILE_READ);
    uint64_t b = must_add(8, 12, OPEN_FILE_WRITE);
    must_add(8, 13, OPEN_FILE_WRITE);
    assert_int_equal(open_files_count_inode(&table, 12), 2);
    assert_int_equal(open_files_mark_inode(&table, 12, OPEN_FILE_UNLINKED), 2);
    assert_true(open_files_find(&table, 8, b)->flags & OPEN_FILE_UNLINKED);
    assert_false(open_files_close(&table, open_files_find(&table, 7, a))); /* b remains */
    assert_true(open_files_close(&table, open_files_find(&table, 8, b)));  /* the last */
    assert_int_equal(open_files_count_inode(&table, 12), 0);
    assert_int_equal(open_files_mark_inode(&table, 12, OPEN_FILE_UNLINKED), 0);
}

static void test_last_close_of_linked_file_frees_nothing(void **state)
{
    (void)state;
    uint64_t a = must_add(7, 12, OPEN_FILE_READ);
    assert_false(open_files_close(&table, open_files_find(&table, 7, a)));
}

/* A removed directory's handles name no inode: a new file that takes the
 * number is not held by them. */
static void test_removed_directory_detached(void **state)
{
    (void)state;
    uint64_t directory = must_add(7, 30, OPEN_FILE_READ | OPEN_FILE_DIRECTORY);
    assert_int_equal(open_files_detach_directory(&table, 30), 1);
    struct open_file *file = open_files_find(&table, 7, directory);
    assert_non_null(file);
    assert_true(file->flags & OPEN_FILE_REMOVED);
    assert_int_equal(file->inode, 0);
    uint64_t reuser = must_add(8, 30, OPEN_FILE_WRITE); /* a new file took inode 30 */
    assert_int_equal(open_files_count_inode(&table, 30), 1);
    assert_int_equal(open_files_mark_inode(&table, 30, OPEN_FILE_UNLINKED), 1);
    assert_false(open_files_find(&table, 7, directory)->flags & OPEN_FILE_UNLINKED);
    assert_true(open_files_close(&table, open_files_find(&table, 8, reuser)));
    assert_false(open_files_close(&table, open_files_find(&table, 7, directory)));
}

static uint32_t released[8];
static uint32_t released_count;

static void record_release(void *context, uint32_t inode)
{
    assert_ptr_equal(context, &table);
    released[released_count++] = inode;
}

static void test_dead_owners_closed(void **state)
{
    (void)state;
    released_count = 0;
    uint64_t live = must_add(5, 20, OPEN_FILE_READ);
    must_add(9, 21, OPEN_FILE_READ);
    must_add(9, 22, OPEN_FILE_WRITE);
    must_add(11, 22, OPEN_FILE_READ);
    open_files_mark_inode(&table, 21, OPEN_FILE_UNLINKED);
    open_files_mark_inode(&table, 22, OPEN_FILE_UNLINKED);
    const uint32_t alive[] = {1, 2, 5, 11}; /* sorted; 9 has ended */
    assert_int_equal(open_files_close_dead(&table, alive, 4, record_release, &table), 2);
    assert_int_equal(released_count, 1); /* 21; 22 is still open by 11 */
    assert_int_equal(released[0], 21);
    assert_non_null(open_files_find(&table, 5, live));
    assert_int_equal(table.in_use, 2);
    const uint32_t none_alive[] = {0};
    assert_int_equal(open_files_close_dead(&table, none_alive, 0, record_release, &table), 2);
    assert_int_equal(released_count, 2);
    assert_int_equal(released[1], 22);
    assert_int_equal(table.in_use, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_handle_belongs_to_its_owner, set_up),
        cmocka_unit_test_setup(test_forged_handles_name_nothing, set_up),
        cmocka_unit_test_setup(test_closed_handle_never_names_the_slot_again, set_up),
        cmocka_unit_test_setup(test_generation_wraps_past_zero, set_up),
        cmocka_unit_test_setup(test_share_per_process, set_up),
        cmocka_unit_test_setup(test_share_per_account, set_up),
        cmocka_unit_test_setup(test_table_full_but_the_reserve, set_up),
        cmocka_unit_test_setup(test_last_close_of_unlinked_file, set_up),
        cmocka_unit_test_setup(test_last_close_of_linked_file_frees_nothing, set_up),
        cmocka_unit_test_setup(test_removed_directory_detached, set_up),
        cmocka_unit_test_setup(test_dead_owners_closed, set_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
