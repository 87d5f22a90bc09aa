/* test_memnode_one_sided.c: a client's one-sided access to a memory node's
 * NVM store (lib/memnode_one_sided.c): the mapped store checked against the
 * negotiated layout and identity, block arithmetic within what the node
 * serves, blocks stored one-sided found by the node after its restart (the
 * same format), corrupt tags and bytes never served, and a one-sided store
 * stopped at every point of the crash model held whole or not served. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "nvm_crash_model.h"
#include <formica/errors.h>
#include <formica/memnode_one_sided.h>
#include <formica/nvm_persist.h>

#define DEVICE (128u << 10) /* 32 units: 1 of headers, 1 of tags, 30 of data */
#define BLOCK (8u << 10)
#define ALL_MODES (CRASH_SOME_UNFENCED | CRASH_SOME_EVICTED)

static const uint8_t cluster[MEMNODE_CLUSTER_BYTES] = {0xc1, 2,  3,  4,  5,  6,  7,  8,
                                                       9,    10, 11, 12, 13, 14, 15, 0xcf};

struct node {
    uint8_t *device;
    struct memnode_store store;
    struct memnode_layout layout;
    struct memnode_capacity capacity;
};

/* What the node does at its start and says in its NEGOTIATE_REPLY. */
static enum memnode_store_opened node_start(struct node *node, uint8_t *device,
                                            uint64_t capacity_bytes)
{
    char why[160];
    node->device = device;
    enum memnode_store_opened opened =
        memnode_store_open(&node->store, device, DEVICE, cluster, 1, why, sizeof why);
    memnode_store_layout(&node->store, &node->layout);
    node->capacity = (struct memnode_capacity){.capacity_bytes = capacity_bytes,
                                               .node_id = 1,
                                               .node_flags = MEMNODE_NODE_PERSISTENT,
                                               .generation = node->store.generation};
    memcpy(node->capacity.cluster, cluster, sizeof cluster);
    return opened;
}

static uint8_t *blank_device(void)
{
    uint8_t *device = aligned_alloc(64, DEVICE);
    memset(device, 0, DEVICE);
    return device;
}

static void open_side(struct memnode_one_sided *side, struct node *node)
{
    char why[160];
    assert_true(memnode_one_sided_open(side, node->device, DEVICE, &node->layout, &node->capacity,
                                       why, sizeof why));
}

/* A node started on a blank device and a client's one-sided view of it;
 * the device, for the caller to free. */
static uint8_t *started_with_side(struct node *node, struct memnode_one_sided *side)
{
    uint8_t *device = blank_device();
    node_start(node, device, DEVICE);
    open_side(side, node);
    return device;
}

static void fill(uint8_t *block, uint8_t value)
{
    for (uint32_t i = 0; i < BLOCK; i++)
        block[i] = (uint8_t)(value + i);
}

static void test_the_layout_round_trips_through_the_reply(void **state)
{
    (void)state;
    struct node node;
    uint8_t *device = blank_device();
    assert_int_equal(node_start(&node, device, DEVICE), MEMNODE_STORE_FORMATTED);
    assert_int_equal(node.layout.tags_at, MEMNODE_STORE_UNIT);
    assert_int_equal(node.layout.units, memnode_store_units(DEVICE));
    assert_int_equal(node.layout.data_at, 2 * MEMNODE_STORE_UNIT);
    uint8_t payload[MEMNODE_CAPACITY_BYTES + MEMNODE_LAYOUT_BYTES];
    memnode_capacity_encode(&node.capacity, payload);
    memnode_layout_encode(&node.layout, payload + MEMNODE_CAPACITY_BYTES);
    struct memnode_message reply = {.type = MEMNODE_NEGOTIATE_REPLY,
                                    .flags = MEMNODE_FLAG_LAYOUT,
                                    .fragment_bytes = 1024,
                                    .payload_bytes = sizeof payload,
                                    .payload = payload};
    uint8_t frame[256];
    long length = memnode_encode(&reply, frame, sizeof frame);
    assert_true(length > 0);
    struct memnode_message decoded;
    assert_int_equal(memnode_decode(frame, (size_t)length, &decoded), MEMNODE_OK);
    struct memnode_layout layout;
    assert_true(memnode_reply_layout(&decoded, &layout));
    assert_memory_equal(&layout, &node.layout, sizeof layout);
    reply.flags = 0; /* 88 bytes without the flag: refused */
    length = memnode_encode(&reply, frame, sizeof frame);
    assert_int_equal(memnode_decode(frame, (size_t)length, &decoded), MEMNODE_ERROR_LENGTH);
    reply.payload_bytes = MEMNODE_CAPACITY_BYTES;
    length = memnode_encode(&reply, frame, sizeof frame);
    assert_int_equal(memnode_decode(frame, (size_t)length, &decoded), MEMNODE_OK);
    assert_false(memnode_reply_layout(&decoded, &layout));
    free(device);
}

/* Stored one-sided, found by the node after its restart; the node's own blocks read one-sided. */
static void test_blocks_stored_one_sided_are_the_nodes_after_its_restart(void **state)
{
    (void)state;
    struct node node;
    struct memnode_one_sided side;
    uint8_t *device = started_with_side(&node, &side);
    uint8_t block[BLOCK], back[BLOCK];
    fill(block, 0x40);
    assert_int_equal(memnode_one_sided_store(&side, 3, BLOCK, block, 9), 0);
    assert_int_equal(memnode_one_sided_retrieve(&side, 3, BLOCK, back), MEMNODE_HELD);
    assert_memory_equal(block, back, BLOCK);
    assert_int_equal(memnode_store_check(&node.store, 3 * BLOCK / MEMNODE_STORE_UNIT, BLOCK),
                     MEMNODE_HELD);
    assert_int_equal(node_start(&node, device, DEVICE), MEMNODE_STORE_FOUND); /* a restart */
    assert_int_equal(node.store.generation, 2);
    assert_int_equal(node.store.blocks_found, 1);
    assert_int_equal(node.store.tags[6].sequence, 9);
    assert_int_equal(memnode_one_sided_generation(&side), 2);
    /* a block the node stored itself (two-sided) reads one-sided */
    fill(block, 0x90);
    for (uint32_t at = 0; at < BLOCK; at += 1024)
        memnode_store_write(&node.store, 5 * BLOCK + at, block + at, 1024);
    memnode_store_commit(&node.store, 5 * BLOCK / MEMNODE_STORE_UNIT, BLOCK, 4);
    open_side(&side, &node);
    assert_int_equal(memnode_one_sided_retrieve(&side, 5, BLOCK, back), MEMNODE_HELD);
    assert_memory_equal(block, back, BLOCK);
    assert_int_equal(memnode_one_sided_retrieve(&side, 3, BLOCK, back), MEMNODE_HELD);
    assert_int_equal(side.retrieves, 2);
    free(device);
}

static void test_blocks_lie_within_what_the_node_serves(void **state)
{
    (void)state;
    struct node node;
    uint8_t *device = blank_device();
    node_start(&node, device, 40u << 10); /* the node serves 40 KiB of its 30 units */
    struct memnode_one_sided side;
    open_side(&side, &node);
    assert_int_equal(side.limit_bytes, 40u << 10);
    uint64_t unit = 0;
    assert_int_equal(memnode_one_sided_locate(&side, 4, BLOCK, &unit), 0);
    assert_int_equal(unit, 8);
    assert_int_equal(memnode_one_sided_locate(&side, 5, BLOCK, &unit), -E_INVALID);
    assert_int_equal(memnode_one_sided_locate(&side, 9, 4096, &unit), 0);
    assert_int_equal(unit, 9);
    assert_int_equal(memnode_one_sided_locate(&side, 10, 4096, &unit), -E_INVALID);
    assert_int_equal(memnode_one_sided_locate(&side, 0, 2048, &unit), -E_INVALID);
    assert_int_equal(memnode_one_sided_locate(&side, UINT64_MAX / 2, BLOCK, &unit), -E_INVALID);
    uint8_t block[BLOCK] = {0};
    assert_int_equal(memnode_one_sided_store(&side, 5, BLOCK, block, 1), -E_INVALID);
    assert_int_equal(memnode_one_sided_retrieve(&side, 5, BLOCK, block), MEMNODE_NOT_HELD);
    node_start(&node, device, DEVICE); /* capacity above the store: the store's units */
    open_side(&side, &node);
    assert_int_equal(side.limit_bytes, node.layout.units * MEMNODE_STORE_UNIT);
    free(device);
}

static void expect_refused(struct node *node, uint64_t bar_bytes, const char *reason)
{
    struct memnode_one_sided side;
    char why[160];
    assert_false(memnode_one_sided_open(&side, node->device, bar_bytes, &node->layout,
                                        &node->capacity, why, sizeof why));
    assert_string_equal(why, reason);
    assert_false(side.on);
}

static void test_a_store_that_does_not_match_is_not_used(void **state)
{
    (void)state;
    struct node node;
    uint8_t *device = blank_device();
    node_start(&node, device, DEVICE);
    uint8_t *before = malloc(DEVICE);
    memcpy(before, device, DEVICE);
    expect_refused(&node, DEVICE / 2, "the store is larger than the BAR (another node's file?)");
    node.layout.units--;
    expect_refused(&node, DEVICE, "the negotiated layout is not this build's store format");
    node.layout.units++;
    node.capacity.node_id = 2;
    expect_refused(&node, DEVICE, "the BAR holds another cluster's or node's store");
    node.capacity.node_id = 1;
    node.capacity.generation = 7;
    expect_refused(&node, DEVICE, "the BAR's generation is not the negotiated one");
    node.capacity.generation = 1;
    assert_memory_equal(before, device, DEVICE); /* nothing written */
    memset(device, 0, MEMNODE_STORE_UNIT);       /* no header */
    expect_refused(&node, DEVICE, "no valid FORMNODE header in the BAR");
    free(before);
    free(device);
}

static void test_corrupt_bytes_or_tags_are_never_served(void **state)
{
    (void)state;
    struct node node;
    struct memnode_one_sided side;
    uint8_t *device = started_with_side(&node, &side);
    uint8_t block[BLOCK], back[BLOCK];
    fill(block, 1);
    assert_int_equal(memnode_one_sided_retrieve(&side, 1, BLOCK, back), MEMNODE_NOT_HELD);
    assert_int_equal(memnode_one_sided_store(&side, 1, BLOCK, block, 2), 0);
    node.store.data[BLOCK + 77] ^= 0x10;
    assert_int_equal(memnode_one_sided_retrieve(&side, 1, BLOCK, back), MEMNODE_TORN);
    node.store.data[BLOCK + 77] ^= 0x10;
    assert_int_equal(memnode_one_sided_retrieve(&side, 1, BLOCK, back), MEMNODE_HELD);
    node.store.tags[2].kept_checksum ^= 1; /* its seal fails */
    assert_int_equal(memnode_one_sided_retrieve(&side, 1, BLOCK, back), MEMNODE_NOT_HELD);
    assert_int_equal(memnode_one_sided_retrieve(&side, 1, BLOCK / 2, back), MEMNODE_NOT_HELD);
    assert_int_equal(side.corrupt, 4);
    free(device);
}

/* The node's view after a crash cut a one-sided store of block 2 over an older one. */
static void check_after_crash(const uint8_t *image, bool finished)
{
    struct node node;
    uint8_t *device = blank_device();
    memcpy(device, image, DEVICE);
    assert_int_equal(node_start(&node, device, DEVICE), MEMNODE_STORE_FOUND);
    enum memnode_store_held held = memnode_store_check(&node.store, 4, BLOCK);
    if (finished)
        assert_int_equal(held, MEMNODE_HELD);
    if (held == MEMNODE_HELD) {
        const uint8_t *block = node.store.data + 4 * MEMNODE_STORE_UNIT;
        uint8_t first = block[0];
        assert_true(first == 0x33 || first == 0x77);
        for (uint32_t i = 0; i < BLOCK; i++)
            assert_int_equal(block[i], (uint8_t)(first + i));
    }
    free(device);
}

static void test_a_torn_one_sided_store_is_never_served_with_wrong_bytes(void **state)
{
    (void)state;
    for (unsigned mode = 0; mode <= ALL_MODES; mode++) {
        for (uint64_t crash_at = 0; crash_at < 24; crash_at++) {
            for (uint64_t seed = 1; seed < 4; seed++) {
                struct crash_model model;
                uint64_t done = 0;
                crash_model_init(&model, DEVICE, 0, mode, UINT64_MAX, seed, &done);
                struct node node;
                node_start(&node, model.memory, DEVICE);
                struct memnode_one_sided side;
                open_side(&side, &node);
                uint8_t block[BLOCK];
                fill(block, 0x33);
                memnode_one_sided_store(&side, 2, BLOCK, block, 1);
                model.crash_at = model.events + crash_at;
                fill(block, 0x77);
                memnode_one_sided_store(&side, 2, BLOCK, block, 2);
                done = 1;
                nvm_observe(NULL);
                check_after_crash(crash_model_image(&model), !model.crashed);
                crash_model_free(&model);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_layout_round_trips_through_the_reply),
        cmocka_unit_test(test_blocks_stored_one_sided_are_the_nodes_after_its_restart),
        cmocka_unit_test(test_blocks_lie_within_what_the_node_serves),
        cmocka_unit_test(test_a_store_that_does_not_match_is_not_used),
        cmocka_unit_test(test_corrupt_bytes_or_tags_are_never_served),
        cmocka_unit_test(test_a_torn_one_sided_store_is_never_served_with_wrong_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
