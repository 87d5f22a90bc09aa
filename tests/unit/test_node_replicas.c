/* test_node_replicas.c: the memory-node replica table across a pager restart
 * (servers/pager/node_replicas.c, node_directory.c): copies named by node id
 * come back whatever order the new negotiation gives, copies on a node that
 * did not answer are forgotten and counted, overlapping copies are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "node_directory.h"
#include "node_replicas.h"
#include <formica/errors.h>

#define BLOCKS 4
#define REPLICAS 2

struct node_state node_backend; /* backend_node.c's, in the pager */

long memnode_store(struct memnode_cluster *cluster, uint64_t slot, const void *data)
{
    (void)cluster, (void)slot, (void)data;
    return 0;
}

long memnode_retrieve(struct memnode_cluster *cluster, uint64_t slot, void *data)
{
    (void)cluster, (void)slot, (void)data;
    return 0;
}

static struct node_directory kept_directory;
static uint8_t bitmap[64];
static uint8_t state[BLOCKS], has_copy[BLOCKS];
static uint32_t slot[BLOCKS], copies[BLOCKS * REPLICAS];

/* A negotiation that found these node ids (ascending, as memnode_cluster_open sorts them). */
static void negotiate(const uint32_t *ids, const uint64_t *blocks, unsigned count, bool fresh)
{
    struct memnode_cluster *cluster = &node_backend.cluster;
    memset(&node_backend, 0, sizeof(node_backend));
    cluster->node_count = count;
    for (unsigned i = 0; i < count; i++)
        cluster->nodes[i].node_id = ids[i];
    assert_int_equal(memnode_placement_init(&cluster->placement, blocks, count, bitmap),
                     MEMNODE_OK);
    node_directory_open(&kept_directory, fresh);
    assert_true(node_directory_learn(cluster));
}

static struct client make_client(uint32_t pid, uint32_t *table)
{
    return (struct client){.used = true,
                           .pid = pid,
                           .block_bytes = 4096,
                           .block_count = BLOCKS,
                           .replicas = REPLICAS,
                           .state = state,
                           .has_copy = has_copy,
                           .slot = slot,
                           .copies = table,
                           .kept = true};
}

/* Nodes 1 and 2 with 8 blocks each: every block stored on both, then the pager ends. */
static struct client stored_on_two_nodes(void)
{
    static const uint32_t ids[2] = {1, 2};
    static const uint64_t blocks[2] = {8, 8};
    negotiate(ids, blocks, 2, true);
    memset(copies, 0xff, sizeof(copies));
    struct client client = make_client(7, copies);
    assert_int_equal(node_replicas_attach(&client), 0);
    for (uint32_t block = 0; block < BLOCKS; block++) {
        assert_int_equal(node_replicas_place(&client, block), 0);
        assert_int_equal(node_replicas_slot(&client, block, 0), block);     /* node 1 */
        assert_int_equal(node_replicas_slot(&client, block, 1), 8 + block); /* node 2 */
        state[block] = BLOCK_ON_BACKEND;
        has_copy[block] = 1;
    }
    node_replicas_detach(&client); /* the table is the kept region's: its copies stay */
    return client;
}

static void test_copies_come_back_by_node_id(void **unused)
{
    (void)unused;
    struct client client = stored_on_two_nodes();
    /* node 0 is new and sorts first: node 1's blocks now start at slot 4, node 2's at 12 */
    static const uint32_t ids[3] = {0, 1, 2};
    static const uint64_t blocks[3] = {4, 8, 8};
    negotiate(ids, blocks, 3, false);
    assert_int_equal(node_replicas_take_back(&client), 0);
    for (uint32_t block = 0; block < BLOCKS; block++) {
        assert_int_equal(node_replicas_slot(&client, block, 0), 4 + block);
        assert_int_equal(node_replicas_slot(&client, block, 1), 12 + block);
        assert_int_equal(node_replicas_live(&client, block), 2);
    }
    assert_true(node_backend.cluster.placement.used_blocks == 2 * BLOCKS);
    assert_true(node_backend.copies_lost == 0);
    /* a new copy never lands on a kept one */
    int64_t fresh = memnode_slot_allocate_on(&node_backend.cluster, 1);
    assert_true(fresh == 4 + BLOCKS);
    node_replicas_detach(&client);
    assert_true(node_backend.cluster.placement.used_blocks == 1);
}

static void test_a_node_missing_after_the_restart_loses_its_copies(void **unused)
{
    (void)unused;
    struct client client = stored_on_two_nodes();
    state[3] = BLOCK_RESIDENT; /* resident: its copies must be written again at eviction */
    static const uint32_t ids[1] = {2};
    static const uint64_t blocks[1] = {8};
    negotiate(ids, blocks, 1, false); /* node 1 did not answer */
    assert_int_equal(node_replicas_take_back(&client), 0);
    for (uint32_t block = 0; block < BLOCKS; block++) {
        assert_int_equal(node_replicas_slot(&client, block, 0), PAGER_NO_SLOT);
        assert_int_equal(node_replicas_slot(&client, block, 1), block); /* node 2, now first */
        assert_int_equal(has_copy[block], 1);
    }
    assert_true(node_backend.copies_lost == BLOCKS);
    assert_true(node_backend.blocks_lost == 0); /* each still has its copy on node 2 */
    assert_true(node_replicas_need_repair());
    node_replicas_detach(&client);
}

static void test_a_block_with_every_copy_gone_is_counted(void **unused)
{
    (void)unused;
    struct client client = stored_on_two_nodes();
    state[3] = BLOCK_RESIDENT;
    static const uint32_t ids[1] = {5};
    static const uint64_t blocks[1] = {8};
    negotiate(ids, blocks, 1, false); /* only a node never seen before answered */
    assert_int_equal(node_replicas_take_back(&client), 0);
    assert_int_equal(node_replicas_live(&client, 0), 0);
    assert_true(node_backend.copies_lost == 2 * BLOCKS);
    /* the three blocks on the backend lost both copies (each node's report names them) */
    assert_true(node_backend.blocks_lost == 3);
    assert_int_equal(has_copy[0], 1); /* its fault reads, finds no copy and reports it */
    assert_int_equal(has_copy[3], 0); /* resident: stored again when evicted */
    node_replicas_detach(&client);
}

static void test_overlapping_copies_are_refused(void **unused)
{
    (void)unused;
    struct client client = stored_on_two_nodes();
    static const uint32_t ids[2] = {1, 2};
    static const uint64_t blocks[2] = {8, 8};
    negotiate(ids, blocks, 2, false);
    assert_int_equal(node_replicas_take_back(&client), 0);
    static uint32_t same[BLOCKS * REPLICAS];
    memcpy(same, copies, sizeof(same));
    struct client other = make_client(8, same);
    assert_int_equal(node_replicas_take_back(&other), -E_INVALID);
    assert_true(node_backend.cluster.placement.used_blocks == 2 * BLOCKS); /* untouched */
    node_replicas_detach(&client);
    assert_true(node_backend.cluster.placement.used_blocks == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copies_come_back_by_node_id),
        cmocka_unit_test(test_a_node_missing_after_the_restart_loses_its_copies),
        cmocka_unit_test(test_a_block_with_every_copy_gone_is_counted),
        cmocka_unit_test(test_overlapping_copies_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
