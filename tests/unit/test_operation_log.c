/* test_operation_log.c: FS's operation log (servers/fs/operation_log.c):
 * what the owner publishes a replica applies (blocks forgotten, images
 * read), images free once BLK has their block, a replica a ring behind or
 * after a new owner starts over, a request is seen only whole, a view is
 * told when BLK may hold part of a request it does not or file data written
 * after it, and image reads are never torn while the owner rewrites the
 * image in another thread. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "operation_log.h"
#include <formica/errors.h>

#define BLOCK_BYTES 4096u

static struct operation_log *log_region;
static struct operation_log_writer writer;
static struct operation_log_reader reader;
static bool held_blocks[100000]; /* what the "journal" holds */
static uint32_t forgotten[64], forgotten_count, everything_forgotten;

static bool held(void *context, uint32_t block)
{
    (void)context;
    return held_blocks[block];
}

static void forget_block(void *context, uint32_t block, enum operation_kind kind)
{
    (void)context, (void)kind;
    if (forgotten_count < 64)
        forgotten[forgotten_count] = block;
    forgotten_count++;
}

static void forget_everything(void *context)
{
    (void)context;
    everything_forgotten++;
}

static int set_up(void **state)
{
    (void)state;
    log_region = calloc(1, sizeof *log_region);
    memset(held_blocks, 0, sizeof held_blocks);
    forgotten_count = everything_forgotten = 0;
    operation_log_writer_start(&writer, log_region, BLOCK_BYTES, held, NULL);
    operation_log_reader_init(&reader, log_region, BLOCK_BYTES, forget_block, forget_everything,
                              NULL);
    operation_log_catch_up(&reader); /* the first look starts over */
    forgotten_count = everything_forgotten = 0;
    return 0;
}

static int tear_down(void **state)
{
    (void)state;
    free(log_region);
    return 0;
}

/* One record of a block written (its image when held), visible at once
 * as at the end of an owner's request. */
static void publish_filled(uint32_t block, uint8_t value)
{
    uint8_t bytes[BLOCK_BYTES];
    memset(bytes, value, sizeof bytes);
    assert_int_equal(operation_log_publish(&writer, block, OPERATION_METADATA, bytes), 0);
    operation_log_make_visible(&writer);
}

static void test_a_fresh_log_is_ready_after_the_owner_starts(void **state)
{
    (void)state;
    assert_true(operation_log_ready(log_region));
    assert_int_equal(log_region->owner_starts, 1);
    assert_int_equal(reader.applied, atomic_load(&log_region->tail));
    struct operation_log *unknown = calloc(1, sizeof *unknown);
    assert_false(operation_log_ready(unknown));
    free(unknown);
}

static void test_a_held_block_is_read_from_its_image(void **state)
{
    (void)state;
    held_blocks[40] = true;
    publish_filled(40, 0xab);
    operation_log_catch_up(&reader);
    assert_int_equal(forgotten_count, 1);
    assert_int_equal(forgotten[0], 40);
    assert_true(operation_log_holds(&reader, 40));
    uint8_t part[16];
    assert_int_equal(operation_log_read(&reader, 40, 100, part, sizeof part),
                     OPERATION_IMAGE_COPIED);
    assert_int_equal(part[0], 0xab);
    assert_int_equal(part[15], 0xab);
    assert_int_equal(operation_log_read(&reader, 41, 0, part, sizeof part), OPERATION_IMAGE_NONE);
    assert_int_equal(operation_log_read(&reader, 40, BLOCK_BYTES - 8, part, sizeof part),
                     OPERATION_IMAGE_NONE);
}

static void test_a_block_blk_has_is_only_recorded(void **state)
{
    (void)state;
    held_blocks[7] = true;
    publish_filled(7, 1);
    held_blocks[7] = false; /* committed: BLK has it */
    uint8_t bytes[BLOCK_BYTES] = {2};
    assert_int_equal(operation_log_publish(&writer, 7, OPERATION_DATA, bytes), 0);
    operation_log_make_visible(&writer);
    operation_log_catch_up(&reader);
    assert_int_equal(forgotten_count, 2);
    assert_false(operation_log_holds(&reader, 7));
    uint8_t part[8];
    assert_int_equal(operation_log_read(&reader, 7, 0, part, sizeof part), OPERATION_IMAGE_NONE);
}

static void test_a_patch_drops_the_image(void **state)
{
    (void)state;
    held_blocks[9] = true;
    publish_filled(9, 3);
    held_blocks[9] = false;
    assert_int_equal(operation_log_publish(&writer, 9, OPERATION_DATA, NULL), 0);
    operation_log_make_visible(&writer);
    operation_log_catch_up(&reader);
    assert_false(operation_log_holds(&reader, 9));
    /* a replica that starts now finds no image of it either */
    struct operation_log_reader *fresh = calloc(1, sizeof *fresh);
    operation_log_reader_init(fresh, log_region, BLOCK_BYTES, forget_block, forget_everything,
                              NULL);
    operation_log_catch_up(fresh);
    assert_false(operation_log_holds(fresh, 9));
    free(fresh);
}

static void test_images_are_reused_once_blk_has_their_blocks(void **state)
{
    (void)state;
    for (uint32_t block = 1000; block < 1000 + OPERATION_LOG_IMAGES; block++) {
        held_blocks[block] = true;
        publish_filled(block, (uint8_t)block);
    }
    held_blocks[5000] = true;
    uint8_t bytes[BLOCK_BYTES] = {0};
    assert_int_equal(operation_log_publish(&writer, 5000, OPERATION_METADATA, bytes), -E_NO_SPACE);
    operation_log_make_visible(&writer);
    operation_log_catch_up(&reader);
    assert_false(operation_log_holds(&reader, 5000)); /* recorded: it is forgotten, read from BLK */
    held_blocks[1000] = false;                        /* committed */
    publish_filled(5000, 0x55);
    operation_log_catch_up(&reader);
    assert_true(operation_log_holds(&reader, 5000));
    assert_false(operation_log_holds(&reader, 1000));
    uint8_t part[4];
    assert_int_equal(operation_log_read(&reader, 5000, 0, part, sizeof part),
                     OPERATION_IMAGE_COPIED);
    assert_int_equal(part[0], 0x55);
    assert_int_equal(operation_log_read(&reader, 1001, 0, part, sizeof part),
                     OPERATION_IMAGE_COPIED);
    assert_int_equal(part[0], (uint8_t)1001);
}

/* A replica sees an owner's request whole: records stay unseen until the
 * owner makes them visible; an image the owner rewrote after the replica's
 * view is not copied (the view must be taken again); a freed block is
 * recorded, its image left in place. */
static void test_a_view_sees_whole_requests_only(void **state)
{
    (void)state;
    held_blocks[12] = true;
    publish_filled(12, 5);
    operation_log_catch_up(&reader);
    uint64_t view = reader.applied;
    forgotten_count = 0;
    operation_log_note_freed(&writer, 12);
    uint8_t bytes[BLOCK_BYTES];
    memset(bytes, 6, sizeof bytes); /* the block's next owner, in the same request */
    assert_int_equal(operation_log_publish(&writer, 12, OPERATION_METADATA, bytes), 0);
    assert_true(operation_log_has_unseen(&writer));
    operation_log_catch_up(&reader);
    assert_int_equal(reader.applied, view); /* nothing of the request yet */
    assert_int_equal(forgotten_count, 0);
    uint8_t part[8];
    assert_int_equal(operation_log_read(&reader, 12, 0, part, sizeof part), OPERATION_IMAGE_NEWER);
    operation_log_make_visible(&writer);
    assert_false(operation_log_has_unseen(&writer));
    operation_log_catch_up(&reader);
    assert_int_equal(reader.applied, view + 2);
    assert_int_equal(forgotten_count, 2); /* the free, then the rewrite */
    assert_int_equal(forgotten[0], 12);
    assert_true(operation_log_holds(&reader, 12));
    assert_int_equal(operation_log_read(&reader, 12, 0, part, sizeof part), OPERATION_IMAGE_COPIED);
    assert_int_equal(part[0], 6);
}

/* A request that writes metadata into BLK before it is done (ext2, or a
 * commit forced in its middle): views taken before it is done are told
 * their BLK reads may show part of it, views after it are not; a new owner
 * brings down a mark its predecessor left past its visible records. */
static void test_a_view_is_told_of_a_request_blk_holds_part_of(void **state)
{
    (void)state;
    publish_filled(20, 1);
    operation_log_catch_up(&reader);
    assert_false(operation_log_unfinished_after_view(&reader));
    operation_log_note_unfinished(&writer); /* then the write reaches BLK */
    assert_int_equal(operation_log_publish(&writer, 21, OPERATION_METADATA, NULL), 0);
    assert_true(operation_log_unfinished_after_view(&reader));
    operation_log_catch_up(&reader); /* nothing visible yet: the same view */
    assert_true(operation_log_unfinished_after_view(&reader));
    operation_log_make_visible(&writer);
    operation_log_catch_up(&reader);
    assert_false(operation_log_unfinished_after_view(&reader));
    /* an owner that ends with the request under way: its successor's RESET */
    operation_log_note_unfinished(&writer);
    for (uint32_t i = 0; i < 10; i++)
        assert_int_equal(operation_log_publish(&writer, 30 + i, OPERATION_METADATA, NULL), 0);
    assert_true(operation_log_unfinished_after_view(&reader));
    operation_log_writer_start(&writer, log_region, BLOCK_BYTES, held, NULL);
    assert_true(operation_log_unfinished_after_view(&reader)); /* a view from before the RESET */
    operation_log_catch_up(&reader);
    assert_false(operation_log_unfinished_after_view(&reader));
}

/* File data written in place (a truncate's zeroed tail): views taken before
 * the request is done are told that block (and only blocks sharing its
 * mark) may be newer in BLK, views after it are not; a new owner brings
 * down a mark its predecessor left past its visible records. */
static void test_a_view_is_told_of_data_written_after_it(void **state)
{
    (void)state;
    publish_filled(20, 1);
    operation_log_catch_up(&reader);
    assert_false(operation_log_data_written_after_view(&reader, 500));
    operation_log_note_data_write(&writer, 500); /* then the write reaches BLK */
    assert_int_equal(operation_log_publish(&writer, 500, OPERATION_DATA, NULL), 0);
    assert_true(operation_log_data_written_after_view(&reader, 500));
    assert_true(operation_log_data_written_after_view(&reader, 500 + OPERATION_LOG_DATA_MARKS));
    assert_false(operation_log_data_written_after_view(&reader, 501)); /* another block's read */
    assert_false(operation_log_unfinished_after_view(&reader));        /* metadata as it was */
    operation_log_catch_up(&reader); /* nothing visible yet: the same view */
    assert_true(operation_log_data_written_after_view(&reader, 500));
    operation_log_make_visible(&writer);
    operation_log_catch_up(&reader);
    assert_false(operation_log_data_written_after_view(&reader, 500));
    /* a small write's patch: visible at once, marked before it */
    operation_log_note_data_write(&writer, 600);
    assert_int_equal(operation_log_publish(&writer, 600, OPERATION_DATA, NULL), 0);
    assert_true(operation_log_data_written_after_view(&reader, 600));
    operation_log_make_visible(&writer);
    operation_log_catch_up(&reader);
    assert_false(operation_log_data_written_after_view(&reader, 600));
    /* an owner that ends with the request under way: its successor's RESET */
    operation_log_note_data_write(&writer, 700);
    for (uint32_t i = 0; i < 10; i++)
        assert_int_equal(operation_log_publish(&writer, 30 + i, OPERATION_METADATA, NULL), 0);
    operation_log_note_data_write(&writer, 701);
    assert_true(operation_log_data_written_after_view(&reader, 700));
    operation_log_writer_start(&writer, log_region, BLOCK_BYTES, held, NULL);
    assert_true(operation_log_data_written_after_view(&reader, 701)); /* a view from before */
    operation_log_catch_up(&reader);
    assert_false(operation_log_data_written_after_view(&reader, 700));
    assert_false(operation_log_data_written_after_view(&reader, 701));
}

static void test_a_replica_a_ring_behind_starts_over(void **state)
{
    (void)state;
    held_blocks[3] = true;
    publish_filled(3, 9);
    for (uint32_t i = 0; i < OPERATION_LOG_RECORDS + 5; i++)
        assert_int_equal(operation_log_publish(&writer, 10 + i % 50, OPERATION_DATA, NULL), 0);
    operation_log_make_visible(&writer);
    operation_log_catch_up(&reader);
    assert_int_equal(everything_forgotten, 1);
    assert_int_equal(reader.rebuilds, 2);
    assert_true(operation_log_holds(&reader, 3)); /* found again among the images */
    assert_int_equal(reader.applied, atomic_load(&log_region->tail));
}

static void test_a_new_owner_resets_every_replica(void **state)
{
    (void)state;
    held_blocks[12] = true;
    publish_filled(12, 4);
    operation_log_catch_up(&reader);
    uint64_t tail = atomic_load(&log_region->tail);
    operation_log_writer_start(&writer, log_region, BLOCK_BYTES, held, NULL); /* a restart */
    assert_int_equal(log_region->owner_starts, 2);
    assert_int_equal(atomic_load(&log_region->tail), tail + 1); /* the sequence goes on */
    operation_log_catch_up(&reader);
    assert_int_equal(everything_forgotten, 1);
    assert_false(operation_log_holds(&reader, 12));
}

/* The torn-read test: the owner rewrites one image with uniform bytes, a
 * new value each time, while the replica reads it whole. The writer starts
 * once the reader has read, and goes on until the reader has read a while
 * too, so the two overlap however a loaded host schedules the threads. */
#define REWRITES 20000
#define OVERLAPPING_READS 1000
static _Atomic bool writer_done;
static _Atomic uint32_t reads_done;

static void *rewrite_image(void *argument)
{
    (void)argument;
    uint8_t bytes[BLOCK_BYTES];
    while (atomic_load(&reads_done) == 0)
        sched_yield();
    for (uint32_t i = 0; i < REWRITES || atomic_load(&reads_done) < OVERLAPPING_READS; i++) {
        memset(bytes, (int)(i & 0xff), sizeof bytes);
        operation_log_publish(&writer, 77, OPERATION_METADATA, bytes);
        operation_log_make_visible(&writer);
    }
    atomic_store(&writer_done, true);
    return NULL;
}

static void test_image_reads_are_never_torn(void **state)
{
    (void)state;
    held_blocks[77] = true;
    publish_filled(77, 0);
    operation_log_catch_up(&reader);
    atomic_store(&writer_done, false);
    atomic_store(&reads_done, 0);
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, rewrite_image, NULL), 0);
    static uint8_t copy[BLOCK_BYTES];
    uint32_t torn = 0;
    uint32_t copied = 0;
    while (!atomic_load(&writer_done)) {
        operation_log_catch_up(&reader); /* a new view each time: most reads are as of it */
        enum operation_image_read read = operation_log_read(&reader, 77, 0, copy, sizeof copy);
        assert_int_not_equal(read, OPERATION_IMAGE_NONE);
        copied += read == OPERATION_IMAGE_COPIED;
        for (uint32_t i = 1; read == OPERATION_IMAGE_COPIED && i < BLOCK_BYTES; i++)
            torn += copy[i] != copy[0];
        atomic_fetch_add(&reads_done, 1);
    }
    pthread_join(thread, NULL);
    assert_int_equal(torn, 0);
    assert_true(atomic_load(&reads_done) >= OVERLAPPING_READS);
    assert_true(copied > 0); /* the check of torn copies looked at some */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_fresh_log_is_ready_after_the_owner_starts, set_up,
                                        tear_down),
        cmocka_unit_test_setup_teardown(test_a_held_block_is_read_from_its_image, set_up,
                                        tear_down),
        cmocka_unit_test_setup_teardown(test_a_block_blk_has_is_only_recorded, set_up, tear_down),
        cmocka_unit_test_setup_teardown(test_a_patch_drops_the_image, set_up, tear_down),
        cmocka_unit_test_setup_teardown(test_images_are_reused_once_blk_has_their_blocks, set_up,
                                        tear_down),
        cmocka_unit_test_setup_teardown(test_a_view_sees_whole_requests_only, set_up, tear_down),
        cmocka_unit_test_setup_teardown(test_a_view_is_told_of_a_request_blk_holds_part_of, set_up,
                                        tear_down),
        cmocka_unit_test_setup_teardown(test_a_view_is_told_of_data_written_after_it, set_up,
                                        tear_down),
        cmocka_unit_test_setup_teardown(test_a_replica_a_ring_behind_starts_over, set_up,
                                        tear_down),
        cmocka_unit_test_setup_teardown(test_a_new_owner_resets_every_replica, set_up, tear_down),
        cmocka_unit_test_setup_teardown(test_image_reads_are_never_torn, set_up, tear_down),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
