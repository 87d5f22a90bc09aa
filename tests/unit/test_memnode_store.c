/* test_memnode_store.c: a memory node's NVM store (lib/memnode_store.c):
 * format, restart (generation), refusal of a foreign or corrupt NVM, and a
 * store stopped at every point of the crash model (nvm_crash_model.c): the
 * block is then held whole (old or new bytes) or answered corrupt, never
 * served with bytes of neither. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "nvm_crash_model.h"
#include <formica/memnode_store.h>
#include <formica/nvm_persist.h>

#define DEVICE (64u << 10) /* 16 units: 1 of headers, 1 of tags, 14 of data */
#define BLOCK (8u << 10)
#define ALL_MODES (CRASH_SOME_UNFENCED | CRASH_SOME_EVICTED)

static const uint8_t cluster_a[MEMNODE_CLUSTER_BYTES] = {0xa1, 2,  3,  4,  5,  6,  7,  8,
                                                         9,    10, 11, 12, 13, 14, 15, 0xaf};
static const uint8_t cluster_b[MEMNODE_CLUSTER_BYTES] = {0xb1};

static uint8_t *blank_device(void)
{
    uint8_t *device = aligned_alloc(64, DEVICE);
    memset(device, 0, DEVICE);
    return device;
}

static enum memnode_store_opened open_as(struct memnode_store *store, uint8_t *device,
                                         const uint8_t *cluster, uint32_t node, char *why)
{
    return memnode_store_open(store, device, DEVICE, cluster, node, why, 160);
}

static void store_block(struct memnode_store *store, uint64_t unit, uint8_t fill, uint32_t sequence)
{
    uint8_t fragment[1024];
    memset(fragment, fill, sizeof fragment);
    for (uint32_t at = 0; at < BLOCK; at += sizeof fragment)
        memnode_store_write(store, unit * MEMNODE_STORE_UNIT + at, fragment, sizeof fragment);
    memnode_store_commit(store, unit, BLOCK, sequence);
}

static void test_the_layout_fits_the_device(void **state)
{
    (void)state;
    assert_int_equal(memnode_store_units(DEVICE), 14);
    assert_int_equal(memnode_store_units(8 << 10), 0);
    uint64_t units = memnode_store_units(64ull << 20);
    assert_true(1 + (units * 32 + 4095) / 4096 + units <= (64u << 20) / 4096);
    assert_true(units > 16000);
}

static void test_restarts_increment_the_generation_and_keep_blocks(void **state)
{
    (void)state;
    uint8_t *device = blank_device();
    struct memnode_store store;
    char why[160];
    assert_int_equal(open_as(&store, device, cluster_a, 1, why), MEMNODE_STORE_FORMATTED);
    assert_int_equal(store.generation, 1);
    assert_int_equal(memnode_store_check(&store, 2, BLOCK), MEMNODE_NOT_HELD);
    store_block(&store, 2, 0x5a, 7);
    assert_int_equal(memnode_store_check(&store, 2, BLOCK), MEMNODE_HELD);
    assert_int_equal(memnode_store_check(&store, 2, BLOCK * 2), MEMNODE_NOT_HELD);
    assert_int_equal(open_as(&store, device, cluster_a, 1, why), MEMNODE_STORE_FOUND);
    assert_int_equal(store.generation, 2);
    assert_int_equal(store.blocks_found, 1);
    assert_int_equal(memnode_store_check(&store, 2, BLOCK), MEMNODE_HELD);
    assert_int_equal(store.data[2 * MEMNODE_STORE_UNIT + 100], 0x5a);
    assert_int_equal(open_as(&store, device, cluster_a, 1, why), MEMNODE_STORE_FOUND);
    assert_int_equal(store.generation, 3);
    store.data[2 * MEMNODE_STORE_UNIT + 5] ^= 1; /* a scribbled byte: never served */
    assert_int_equal(memnode_store_check(&store, 2, BLOCK), MEMNODE_TORN);
    free(device);
}

static void test_a_foreign_nvm_is_refused_and_untouched(void **state)
{
    (void)state;
    uint8_t *device = blank_device();
    struct memnode_store store;
    char why[160];
    assert_int_equal(open_as(&store, device, cluster_a, 2, why), MEMNODE_STORE_FORMATTED);
    uint8_t *before = malloc(DEVICE);
    memcpy(before, device, DEVICE);
    assert_int_equal(open_as(&store, device, cluster_b, 1, why), MEMNODE_STORE_FOREIGN);
    assert_string_equal(why, "NVM belongs to cluster a102030405060708090a0b0c0d0e0faf node 2, "
                             "not cluster b1000000000000000000000000000000 node 1");
    assert_int_equal(open_as(&store, device, cluster_a, 1, why), MEMNODE_STORE_FOREIGN);
    assert_memory_equal(before, device, DEVICE);
    assert_int_equal(open_as(&store, device, cluster_a, 2, why), MEMNODE_STORE_FOUND);
    free(before);
    free(device);
}

static void test_a_corrupt_header_or_tag_is_refused(void **state)
{
    (void)state;
    uint8_t *device = blank_device();
    struct memnode_store store;
    char why[160];
    assert_int_equal(open_as(&store, device, cluster_a, 1, why), MEMNODE_STORE_FORMATTED);
    store_block(&store, 4, 0x11, 1);
    store.tags[4].bytes ^= 0x1000; /* a tag scribbled on: its seal fails */
    assert_int_equal(open_as(&store, device, cluster_a, 1, why), MEMNODE_STORE_CORRUPT);
    assert_string_equal(why, "NVM tag of unit 4 fails its checksum (corrupt)");
    store.tags[4].bytes ^= 0x1000;
    assert_int_equal(open_as(&store, device, cluster_a, 1, why), MEMNODE_STORE_FOUND);
    store.headers[0].geometry[1] ^= 4;
    store.headers[1].geometry[1] ^= 4;
    assert_int_equal(open_as(&store, device, cluster_a, 1, why), MEMNODE_STORE_CORRUPT);
    assert_string_equal(why, "NVM header fails its checksum (corrupt, or not a memory node's)");
    free(device);
}

static void check_block_after(const uint8_t *image, uint8_t old_fill, uint8_t new_fill,
                              bool finished)
{
    uint8_t *device = blank_device();
    memcpy(device, image, DEVICE);
    struct memnode_store store;
    char why[160];
    assert_int_equal(open_as(&store, device, cluster_a, 1, why), MEMNODE_STORE_FOUND);
    enum memnode_store_held held = memnode_store_check(&store, 3, BLOCK);
    if (finished)
        assert_int_equal(held, MEMNODE_HELD);
    if (held == MEMNODE_HELD) {
        const uint8_t *block = store.data + 3 * MEMNODE_STORE_UNIT;
        uint8_t fill = block[0];
        assert_true(fill == old_fill || fill == new_fill);
        for (uint32_t i = 0; i < BLOCK; i++)
            assert_int_equal(block[i], fill);
    }
    free(device);
}

/* A store over a stored block, stopped at every event in every mode. */
static void test_a_torn_store_is_never_served_with_wrong_bytes(void **state)
{
    (void)state;
    for (unsigned mode = 0; mode <= ALL_MODES; mode++) {
        for (uint64_t crash_at = 0; crash_at < 32; crash_at++) {
            for (uint64_t seed = 1; seed < 6; seed++) {
                struct crash_model model;
                uint64_t done = 0;
                crash_model_init(&model, DEVICE, 0, mode, UINT64_MAX, seed, &done);
                struct memnode_store store;
                char why[160];
                open_as(&store, model.memory, cluster_a, 1, why);
                store_block(&store, 3, 0x33, 1);
                model.crash_at = model.events + crash_at;
                store_block(&store, 3, 0x77, 2);
                done = 1;
                nvm_observe(NULL);
                const uint8_t *image = crash_model_image(&model);
                check_block_after(image, 0x33, 0x77, !model.crashed);
                crash_model_free(&model);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_layout_fits_the_device),
        cmocka_unit_test(test_restarts_increment_the_generation_and_keep_blocks),
        cmocka_unit_test(test_a_foreign_nvm_is_refused_and_untouched),
        cmocka_unit_test(test_a_corrupt_header_or_tag_is_refused),
        cmocka_unit_test(test_a_torn_store_is_never_served_with_wrong_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
