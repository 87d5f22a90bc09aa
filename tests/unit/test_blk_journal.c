/* test_blk_journal.c: BLK's journal of acknowledged writes in its kept
 * region (servers/blk/kept_journal.c) and the kept region's header checks
 * (lib/kept_region.c), over an in-memory disk and a real cache: what a
 * restarted BLK replays, in which order, what it refuses to trust. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cache.h"
#include "kept_journal.h"
#include "memory_disk.h"

/* The slots of one shard among several (journal_slots_for). */
#define JOURNAL_SLOTS JOURNAL_SLOTS_LEAST
#include <formica/errors.h>

#define DISK_BLOCKS 64u
#define CAPACITY 32u

static uint8_t disk_bytes[DISK_BLOCKS][CACHE_BLOCK_BYTES];
static struct memory_disk disk;
static struct journal *journal;
static struct journal_writer writer; /* this BLK's: a restart starts it again */
static struct cache cache;

static int new_cache(struct cache *fresh)
{
    struct cache_disk below = {&disk, DISK_BLOCKS, memory_disk_read, memory_disk_write, NULL};
    return cache_init(fresh, CAPACITY, &below, NULL);
}

static void free_cache(struct cache *victim)
{
    free(victim->blocks[0].data);
    free(victim->blocks);
    free(victim->buckets);
}

static int setup(void **state)
{
    (void)state;
    memory_disk_reset(&disk, disk_bytes, DISK_BLOCKS);
    journal = calloc(1, journal_bytes(JOURNAL_SLOTS));
    if (journal == NULL)
        return -1;
    kept_header_init(&journal->header, JOURNAL_MAGIC, JOURNAL_VERSION,
                     journal_bytes(JOURNAL_SLOTS));
    journal->slots = JOURNAL_SLOTS;
    journal_start(&writer, journal);
    return new_cache(&cache) != 0;
}

static int teardown(void **state)
{
    (void)state;
    free_cache(&cache);
    free(journal);
    return 0;
}

static uint8_t block_bytes[CACHE_BLOCK_BYTES];

/* What BLK_WRITE does in the kept mode: into the cache, then the journal. */
static void acknowledged_write(uint64_t number, uint8_t fill)
{
    memset(block_bytes, fill, sizeof block_bytes);
    assert_int_equal(cache_write(&cache, number, block_bytes), 0);
    assert_int_equal(journal_record(&writer, &cache, number, block_bytes), 0);
}

/* BLK ends: its cache is gone, the journal stays; a new BLK replays it. */
static long restart_and_replay(void)
{
    free_cache(&cache);
    assert_int_equal(new_cache(&cache), 0);
    long replayed = journal_replay(journal, &cache);
    if (replayed >= 0)
        journal_start(&writer, journal);
    return replayed;
}

static void test_replay_puts_acknowledged_writes_on_disk(void **state)
{
    (void)state;
    acknowledged_write(3, 0xa1);
    acknowledged_write(4, 0xa2);
    acknowledged_write(40, 0xa3);
    assert_int_equal(disk_bytes[3][0], 0); /* only in the cache and the journal */
    assert_int_equal(restart_and_replay(), 3);
    assert_int_equal(disk_bytes[3][100], 0xa1);
    assert_int_equal(disk_bytes[4][4095], 0xa2);
    assert_int_equal(disk_bytes[40][0], 0xa3);
    assert_int_equal(restart_and_replay(), 0); /* cleared after the replay */
}

static void test_latest_write_of_a_block_wins(void **state)
{
    (void)state;
    acknowledged_write(7, 0x01);
    acknowledged_write(8, 0x02);
    acknowledged_write(7, 0x03);
    uint32_t valid = 0;
    for (uint32_t slot = 0; slot < JOURNAL_SLOTS; slot++)
        valid += journal->entries[slot].state == JOURNAL_VALID;
    assert_int_equal(valid, 2); /* block 7's older entry was freed */
    assert_int_equal(restart_and_replay(), 2);
    assert_int_equal(disk_bytes[7][0], 0x03);
}

static void test_torn_entry_is_not_trusted(void **state)
{
    (void)state;
    acknowledged_write(5, 0x55);
    acknowledged_write(6, 0x66);
    for (uint32_t slot = 0; slot < JOURNAL_SLOTS; slot++)
        if (journal->entries[slot].state == JOURNAL_VALID && journal->entries[slot].block == 6)
            journal_data(journal, slot)[17] ^= 0xff; /* a BLK that died half-way through a copy */
    assert_int_equal(restart_and_replay(), 1);
    assert_int_equal(disk_bytes[5][0], 0x55);
    assert_int_equal(disk_bytes[6][0], 0);
}

/* What BLK_PATCH does in the kept mode: the bytes into the cached block,
 * only the patch into the journal. */
static void acknowledged_patch(uint64_t number, uint32_t offset, const char *bytes)
{
    uint32_t length = (uint32_t)strlen(bytes);
    assert_int_equal(cache_patch(&cache, number, offset, bytes, length), 0);
    assert_int_equal(
        journal_record_patch(&writer, &cache, number, offset, (const uint8_t *)bytes, length), 0);
}

static void test_patches_replay_in_order_over_their_blocks(void **state)
{
    (void)state;
    memset(disk_bytes[9], 0x99, CACHE_BLOCK_BYTES); /* block 9's base is on the disk */
    acknowledged_patch(9, 100, "abcd");
    acknowledged_write(5, 0x50);
    acknowledged_patch(5, 10, "WXYZ");
    acknowledged_patch(9, 102, "ZZ"); /* overlaps the first patch: order matters */
    acknowledged_patch(5, 4094, "q!");
    uint32_t valid = 0;
    for (uint32_t slot = 0; slot < JOURNAL_SLOTS; slot++)
        valid += journal->entries[slot].state == JOURNAL_VALID;
    assert_int_equal(valid, 5); /* a patch frees nothing: it needs what came before */
    assert_int_equal(restart_and_replay(), 5);
    assert_memory_equal(&disk_bytes[9][100], "abZZ", 4);
    assert_int_equal(disk_bytes[9][99], 0x99);
    assert_int_equal(disk_bytes[9][104], 0x99);
    assert_memory_equal(&disk_bytes[5][10], "WXYZ", 4);
    assert_int_equal(disk_bytes[5][9], 0x50);
    assert_memory_equal(&disk_bytes[5][4094], "q!", 2);
}

static void test_whole_block_after_patches_frees_them(void **state)
{
    (void)state;
    acknowledged_patch(12, 0, "old");
    acknowledged_patch(12, 50, "older");
    acknowledged_write(12, 0x12);
    uint32_t valid = 0;
    for (uint32_t slot = 0; slot < JOURNAL_SLOTS; slot++)
        valid += journal->entries[slot].state == JOURNAL_VALID;
    assert_int_equal(valid, 1);
    assert_int_equal(restart_and_replay(), 1);
    assert_int_equal(disk_bytes[12][0], 0x12);
    assert_int_equal(disk_bytes[12][50], 0x12);
}

static void test_torn_or_bad_patch_is_not_trusted(void **state)
{
    (void)state;
    acknowledged_patch(20, 8, "keep");
    acknowledged_patch(21, 8, "torn");
    acknowledged_patch(22, 8, "long");
    for (uint32_t slot = 0; slot < JOURNAL_SLOTS; slot++) {
        struct journal_entry *entry = &journal->entries[slot];
        if (entry->state == JOURNAL_VALID && entry->block == 21)
            journal_data(journal, slot)[1] ^= 0xff;
        if (entry->state == JOURNAL_VALID && entry->block == 22)
            entry->offset = CACHE_BLOCK_BYTES - 2; /* would run past the block */
    }
    assert_int_equal(restart_and_replay(), 1);
    assert_memory_equal(&disk_bytes[20][8], "keep", 4);
    assert_int_equal(disk_bytes[21][8], 0);
    assert_int_equal(disk_bytes[22][8], 0);
    assert_int_equal(
        journal_record_patch(&writer, &cache, 3, CACHE_BLOCK_BYTES - 1, (const uint8_t *)"xy", 2),
        -E_INVALID);
    assert_int_equal(journal_record_patch(&writer, &cache, 3, 0, (const uint8_t *)"", 0),
                     -E_INVALID);
}

/* The copy that keeps a patch computes the same checksum as the general
 * function over the kept words (a journal kept by an older BLK replays
 * unchanged), copies exactly its bytes and reads none of the source past
 * them: for every length, over a slot holding older bytes. */
static void test_copy_checksummed_equals_the_checksum_of_the_copy(void **state)
{
    (void)state;
    uint8_t source[CACHE_BLOCK_BYTES], kept[CACHE_BLOCK_BYTES], before[CACHE_BLOCK_BYTES];
    for (uint32_t i = 0; i < CACHE_BLOCK_BYTES; i++) {
        source[i] = (uint8_t)(i * 7 + 1);
        before[i] = (uint8_t)(0xA5 ^ i);
    }
    uint32_t lengths[] = {1, 7, 8, 9, 15, 16, 17, 24, 31, 255, 256, CACHE_BLOCK_BYTES};
    for (uint32_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
        uint32_t length = lengths[k], words = (length + 7u) & ~7u;
        /* the source exactly `length` bytes long: a read past it is ASan's error */
        uint8_t *exact = malloc(length);
        assert_non_null(exact);
        memcpy(exact, source, length);
        memcpy(kept, before, sizeof kept);
        uint64_t sum = kept_copy_checksummed(kept, exact, length);
        free(exact);
        assert_memory_equal(kept, source, length);
        assert_memory_equal(kept + length, before + length, CACHE_BLOCK_BYTES - length);
        assert_true(sum == kept_checksum(kept, words));
        assert_true(journal_checksum_from(sum, 9, 100, length) ==
                    journal_checksum(kept, 9, 100, length));
    }
}

/* A 16-byte patch (a small write's) is kept with the checksum the replay
 * computes. */
static void test_sixteen_byte_patch_checksum_is_the_general_one(void **state)
{
    (void)state;
    acknowledged_patch(30, 40, "sixteen bytes!!!");
    uint32_t kept_entries = 0;
    for (uint32_t slot = 0; slot < JOURNAL_SLOTS; slot++) {
        const struct journal_entry *entry = &journal->entries[slot];
        if (entry->state != JOURNAL_VALID || entry->block != 30)
            continue;
        kept_entries++;
        assert_int_equal(entry->length, 16);
        assert_true(entry->checksum == journal_checksum(journal_data(journal, slot), 30,
                                                        entry->offset, entry->length));
    }
    assert_int_equal(kept_entries, 1);
    assert_int_equal(restart_and_replay(), 1);
    assert_memory_equal(&disk_bytes[30][40], "sixteen bytes!!!", 16);
}

static uint32_t valid_entries(void)
{
    uint32_t valid = 0;
    for (uint32_t slot = 0; slot < JOURNAL_SLOTS; slot++)
        valid += journal->entries[slot].state == JOURNAL_VALID;
    return valid;
}

static void test_a_patch_frees_the_older_patch_it_covers(void **state)
{
    (void)state;
    memset(disk_bytes[41], 0x41, CACHE_BLOCK_BYTES);
    for (uint32_t i = 0; i < 300; i++) /* the same place, again and again: one entry */
        acknowledged_patch(40, 16, i % 2 ? "aaaa" : "AAAA");
    assert_int_equal(valid_entries(), 1);
    acknowledged_patch(40, 14, "bbbbbbbb"); /* covers it: still one */
    assert_int_equal(valid_entries(), 1);
    acknowledged_patch(40, 15, "c"); /* covers a part only: both kept */
    acknowledged_patch(41, 15, "dd");
    acknowledged_patch(41, 16, "e"); /* covers a part of 41's only */
    assert_int_equal(valid_entries(), 4);
    assert_int_equal(restart_and_replay(), 4);
    assert_memory_equal(&disk_bytes[40][13], "\0bcbbbbbb\0", 10);
    assert_memory_equal(&disk_bytes[41][14], "AdeA", 4); /* 0x41 around the patches */
}

static void test_many_patches_fold_into_whole_blocks(void **state)
{
    (void)state;
    /* 1,000 small writes over 10 blocks: folded, never a sync (the disk stays untouched) */
    char bytes[2] = {0, 0};
    for (uint32_t i = 0; i < 1000; i++) {
        bytes[0] = (char)('a' + i % 26);
        acknowledged_patch(30 + i % 10, (i / 10) % 100, bytes);
        assert_true(valid_entries() < JOURNAL_SLOTS);
    }
    for (uint32_t block = 30; block < 40; block++)
        assert_int_equal(disk_bytes[block][0], 0);
    long replayed = restart_and_replay();
    assert_true(replayed > 0 && replayed < JOURNAL_SLOTS);
    for (uint32_t i = 900; i < 1000; i++) /* the last write of each place wins */
        assert_int_equal(disk_bytes[30 + i % 10][(i / 10) % 100], 'a' + i % 26);
}

static void test_folding_drops_patches_already_on_disk(void **state)
{
    (void)state;
    acknowledged_patch(33, 5, "disk");
    assert_int_equal(cache_sync(&cache), 0); /* written back: block 33 is clean */
    for (uint32_t i = 0; valid_entries() < JOURNAL_SLOTS * 3 / 4; i++)
        acknowledged_patch(34, i % 4000, "x");
    acknowledged_patch(35, 0, "y");       /* folds: 33's patch goes, 34 becomes one whole entry */
    assert_int_equal(valid_entries(), 2); /* block 34 whole, block 35's patch */
    assert_int_equal(restart_and_replay(), 2);
    assert_memory_equal(&disk_bytes[33][5], "disk", 4);
    assert_int_equal(disk_bytes[34][0], 'x');
    assert_int_equal(disk_bytes[35][0], 'y');
}

/* The journal's size follows the shards: 8 MiB of blocks in all, 1 MiB
 * each at least; the kept bytes start on a page past the entries; a kept
 * region claiming more slots than any BLK makes is not replayed. */
static void test_slots_follow_the_shards(void **state)
{
    (void)state;
    assert_int_equal(journal_slots_for(1), JOURNAL_SLOTS_ALL);
    assert_int_equal(journal_slots_for(2), JOURNAL_SLOTS_ALL / 2);
    assert_int_equal(journal_slots_for(JOURNAL_SLOTS_ALL / JOURNAL_SLOTS_LEAST),
                     JOURNAL_SLOTS_LEAST);
    assert_int_equal(journal_slots_for(64), JOURNAL_SLOTS_LEAST);
    for (uint32_t slots = JOURNAL_SLOTS_LEAST; slots <= JOURNAL_SLOTS_ALL; slots *= 2) {
        size_t offset = journal_data_offset(slots);
        assert_int_equal(offset % STORAGE_BLOCK_BYTES, 0);
        assert_true(offset >= sizeof(struct journal) + slots * sizeof(struct journal_entry));
        assert_int_equal(journal_bytes(slots), offset + (size_t)slots * STORAGE_BLOCK_BYTES);
    }
    assert_true(journal_bytes(JOURNAL_SLOTS_ALL) <= KEPT_REGION_MAX_BYTES);
    journal->slots = JOURNAL_SLOTS_ALL + 1;
    assert_int_equal(journal_replay(journal, &cache), -E_CORRUPT);
    journal->slots = JOURNAL_SLOTS;
}

static void test_full_journal_syncs_and_starts_over(void **state)
{
    (void)state;
    for (uint32_t i = 0; i < JOURNAL_SLOTS; i++)
        acknowledged_write(i % DISK_BLOCKS, (uint8_t)i); /* same blocks: older entries freed */
    for (uint32_t slot = 0; slot < JOURNAL_SLOTS; slot++)
        journal->entries[slot].state = JOURNAL_VALID; /* as if 256 distinct blocks were in it */
    memset(block_bytes, 0x77, sizeof block_bytes);
    assert_int_equal(cache_write(&cache, 9, block_bytes), 0);
    assert_int_equal(journal_record(&writer, &cache, 9, block_bytes), 0);
    assert_int_equal(disk_bytes[9][0], 0x77); /* the sync wrote the cache out */
    uint32_t valid = 0;
    for (uint32_t slot = 0; slot < JOURNAL_SLOTS; slot++)
        valid += journal->entries[slot].state == JOURNAL_VALID;
    assert_int_equal(valid, 1);
}

/* The index's invariant after each step: valid_count counts the valid
 * entries, and no valid entry of a block is older than the block's newest
 * whole one (journal_record freed it). */
static void check_no_older_entries(void)
{
    uint32_t valid = 0;
    for (uint32_t slot = 0; slot < JOURNAL_SLOTS; slot++) {
        const struct journal_entry *entry = &journal->entries[slot];
        if (entry->state != JOURNAL_VALID)
            continue;
        valid++;
        for (uint32_t other = 0; other < JOURNAL_SLOTS; other++) {
            const struct journal_entry *newer = &journal->entries[other];
            assert_false(other != slot && newer->state == JOURNAL_VALID &&
                         newer->block == entry->block && newer->length == CACHE_BLOCK_BYTES &&
                         newer->sequence > entry->sequence);
        }
    }
    assert_int_equal(valid, writer.valid_count);
}

/* The index itself: each bucket's list is linked both ways and holds only
 * valid entries of blocks of that bucket, and every valid entry is in its
 * block's list once. */
static void check_index_lists(void)
{
    static uint32_t seen[JOURNAL_SLOTS];
    memset(seen, 0, sizeof seen);
    uint32_t listed = 0;
    for (uint32_t bucket = 0; bucket <= writer.index.mask; bucket++) {
        uint32_t previous = JOURNAL_INDEX_NONE;
        for (uint32_t slot = writer.index.head[bucket]; slot != JOURNAL_INDEX_NONE;
             slot = writer.index.next[slot]) {
            assert_true(slot < JOURNAL_SLOTS);
            assert_int_equal(writer.index.previous[slot], previous);
            assert_int_equal(journal->entries[slot].state, JOURNAL_VALID);
            assert_int_equal(journal_index_bucket(&writer.index, journal->entries[slot].block),
                             bucket);
            assert_int_equal(seen[slot]++, 0);
            listed++;
            previous = slot;
        }
    }
    assert_int_equal(listed, writer.valid_count);
}

static void test_random_writes_and_patches_replay_to_the_model(void **state)
{
    (void)state;
    static uint8_t model[DISK_BLOCKS][CACHE_BLOCK_BYTES];
    memset(model, 0, sizeof model);
    srand(7);
    for (uint32_t step = 0; step < 3000; step++) {
        uint64_t number = (uint64_t)rand() % DISK_BLOCKS;
        if (rand() % 3 == 0) {
            acknowledged_write(number, (uint8_t)step);
            memset(model[number], (uint8_t)step, CACHE_BLOCK_BYTES);
        } else {
            /* half the patches at one of a few places, so a patch often
             * covers the older one (it takes that one's place in the index) */
            bool few = rand() % 2 == 0;
            uint32_t offset = few ? 16u * (uint32_t)(rand() % 4)
                                  : (uint32_t)rand() % (CACHE_BLOCK_BYTES - 64),
                     length = few ? 16u + 16u * (uint32_t)(rand() % 2) : 1 + (uint32_t)rand() % 64;
            uint8_t bytes[64];
            memset(bytes, (uint8_t)(step * 7), sizeof bytes);
            assert_int_equal(cache_patch(&cache, number, offset, bytes, length), 0);
            assert_int_equal(journal_record_patch(&writer, &cache, number, offset, bytes, length),
                             0);
            memcpy(model[number] + offset, bytes, length);
        }
        check_no_older_entries();
        check_index_lists();
    }
    assert_true(restart_and_replay() >= 0);
    for (uint32_t block = 0; block < DISK_BLOCKS; block++)
        assert_memory_equal(disk_bytes[block], model[block], CACHE_BLOCK_BYTES);
}

static void test_replay_error_keeps_the_journal(void **state)
{
    (void)state;
    acknowledged_write(2, 0x22);
    disk.fail_writes = 1;
    assert_int_equal(restart_and_replay(), -E_IO);
    disk.fail_writes = 0;
    assert_int_equal(restart_and_replay(), 1);
    assert_int_equal(disk_bytes[2][0], 0x22);
}

static void test_kept_header_checks(void **state)
{
    (void)state;
    struct kept_header header;
    kept_header_init(&header, 0x1234, 2, 8192);
    assert_true(kept_header_valid(&header, 0x1234, 2, 8192));
    assert_false(kept_header_valid(&header, 0x1235, 2, 8192));
    assert_false(kept_header_valid(&header, 0x1234, 3, 8192));
    assert_false(kept_header_valid(&header, 0x1234, 2, 4096));
    kept_header_count_start(&header);
    assert_true(kept_header_valid(&header, 0x1234, 2, 8192));
    assert_int_equal(header.starts, 1);
    header.starts = 7; /* changed without its checksum */
    assert_false(kept_header_valid(&header, 0x1234, 2, 8192));
    struct kept_header zeroed = {0};
    assert_false(kept_header_valid(&zeroed, 0, 0, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_replay_puts_acknowledged_writes_on_disk, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_latest_write_of_a_block_wins, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_entry_is_not_trusted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_patches_replay_in_order_over_their_blocks, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_whole_block_after_patches_frees_them, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_or_bad_patch_is_not_trusted, setup, teardown),
        cmocka_unit_test(test_copy_checksummed_equals_the_checksum_of_the_copy),
        cmocka_unit_test_setup_teardown(test_sixteen_byte_patch_checksum_is_the_general_one, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_patch_frees_the_older_patch_it_covers, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_many_patches_fold_into_whole_blocks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_folding_drops_patches_already_on_disk, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_slots_follow_the_shards, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_journal_syncs_and_starts_over, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replay_error_keeps_the_journal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random_writes_and_patches_replay_to_the_model, setup,
                                        teardown),
        cmocka_unit_test(test_kept_header_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
