/* tests/programs/memclient: `run --driver memclient NODES BLOCK_KB COUNT [WAIT_S]` negotiates
 * with NODES nodes (waiting up to WAIT_S, default 60 s), stores COUNT pattern blocks
 * first-free over their summed capacity, retrieves and verifies them (@json, bandwidth). */
#include <formica/memnode_client.h>
#include <formica/net.h>
#include <formica/json.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NEGOTIATE_WAIT_US 60000000ull /* nodes boot alongside this machine */

struct timing {
    uint64_t store_us, retrieve_us;
    uint64_t stored, retrieved;
};

static struct memnode_cluster cluster;

static uint8_t pattern_byte(uint64_t slot, uint64_t offset)
{
    return (uint8_t)((slot * 131 + offset * 7 + (offset >> 10) + 0x3c) & 0xff);
}

static void fill_pattern(uint8_t *block, uint64_t slot, uint32_t bytes)
{
    for (uint32_t offset = 0; offset < bytes; offset++)
        block[offset] = pattern_byte(slot, offset);
}

static bool check_pattern(const uint8_t *block, uint64_t slot, uint32_t bytes)
{
    for (uint32_t offset = 0; offset < bytes; offset++)
        if (block[offset] != pattern_byte(slot, offset))
            return false;
    return true;
}

static uint64_t per_second(uint64_t bytes, uint64_t microseconds)
{
    return microseconds ? bytes * 1000000 / microseconds : 0;
}

static void print_failure(const char *stage, uint64_t index, long error)
{
    printf("memclient: %s of block %lu failed: %s\n", stage, index,
           error == -E_IO ? "memory node not answering (dead)" : error_text(error));
    printf("@json {\"kind\":\"memclient\",\"ok\":false,\"stage\":\"%s\",\"block\":%lu,"
           "\"error\":%ld,\"dead_node\":%s,\"retransmissions\":%lu}\n",
           stage, index, error, error == -E_IO ? "true" : "false", cluster.stats.retransmissions);
}

static void print_nodes(void)
{
    uint64_t total = 0;
    for (unsigned i = 0; i < cluster.node_count; i++) {
        total += cluster.nodes[i].capacity_bytes;
        printf("memclient: node %u: %lu MiB\n", cluster.nodes[i].node_id,
               cluster.nodes[i].capacity_bytes >> 20);
    }
    printf("@json {\"kind\":\"memnegotiate\",\"nodes\":%u,\"capacity_bytes\":%lu,"
           "\"block_bytes\":%u,\"blocks\":%lu,\"nic\":\"%s\",\"fragment_bytes\":%u}\n",
           cluster.node_count, total, cluster.block_bytes, cluster.placement.total_blocks,
           net_card_kind(), cluster.fragment_bytes);
}

static long store_all(int64_t *slots, uint64_t count, uint8_t *block, struct timing *timing)
{
    for (uint64_t i = 0; i < count; i++) {
        slots[i] = memnode_slot_allocate(&cluster);
        if (slots[i] < 0) {
            printf("memclient: memory nodes full after %lu blocks\n", i);
            print_failure("allocate", i, -E_NO_SPACE);
            return -E_NO_SPACE;
        }
        fill_pattern(block, (uint64_t)slots[i], cluster.block_bytes);
        uint64_t start = net_now_us();
        long result = memnode_store(&cluster, (uint64_t)slots[i], block);
        timing->store_us += net_now_us() - start;
        if (result < 0) {
            print_failure("store", i, result);
            return result;
        }
        timing->stored++;
    }
    return 0;
}

static long retrieve_all(const int64_t *slots, uint64_t count, uint8_t *block,
                         struct timing *timing, uint64_t *bad_blocks)
{
    for (uint64_t i = 0; i < count; i++) {
        memset(block, 0, cluster.block_bytes);
        uint64_t start = net_now_us();
        long result = memnode_retrieve(&cluster, (uint64_t)slots[i], block);
        timing->retrieve_us += net_now_us() - start;
        if (result < 0) {
            print_failure("retrieve", i, result);
            return result;
        }
        timing->retrieved++;
        if (!check_pattern(block, (uint64_t)slots[i], cluster.block_bytes))
            (*bad_blocks)++;
    }
    return 0;
}

/* Blocks per node, from the slots used (first-free fills node 0 first). */
static void print_placement(const int64_t *slots, uint64_t count)
{
    printf("[");
    for (unsigned node = 0; node < cluster.node_count; node++) {
        uint64_t on_node = 0;
        for (uint64_t i = 0; i < count; i++) {
            unsigned where;
            uint64_t block;
            if (memnode_placement_locate(&cluster.placement, (uint64_t)slots[i], &where, &block) &&
                where == node)
                on_node++;
        }
        printf("%s%lu", node ? "," : "", on_node);
    }
    printf("]");
}

static void print_results(const int64_t *slots, uint64_t count, const struct timing *timing,
                          uint64_t bad_blocks)
{
    uint64_t bytes = count * cluster.block_bytes;
    printf("@json {\"kind\":\"memclient\",\"ok\":%s,\"nodes\":%u,\"block_bytes\":%u,"
           "\"blocks\":%lu,\"verified\":%s,\"bad_blocks\":%lu,\"placement\":",
           bad_blocks ? "false" : "true", cluster.node_count, cluster.block_bytes, count,
           bad_blocks ? "false" : "true", bad_blocks);
    print_placement(slots, count);
    printf(",\"store_us\":%lu,\"retrieve_us\":%lu,\"store_bytes_per_s\":%lu,"
           "\"retrieve_bytes_per_s\":%lu,\"store_latency_us\":%lu,\"retrieve_latency_us\":%lu,"
           "\"retransmissions\":%lu,\"duplicates\":%lu,\"nic\":\"%s\",\"clock\":\"tsc\"}\n",
           timing->store_us, timing->retrieve_us, per_second(bytes, timing->store_us),
           per_second(bytes, timing->retrieve_us), timing->store_us / count,
           timing->retrieve_us / count, cluster.stats.retransmissions, cluster.stats.duplicates,
           net_card_kind());
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5) {
        printf("usage: memclient NODES BLOCK_KB COUNT [WAIT_S]\n");
        return 2;
    }
    unsigned nodes = (unsigned)strtoul(argv[1], NULL, 0);
    uint32_t block_bytes = (uint32_t)strtoul(argv[2], NULL, 0) << 10;
    uint64_t count = strtoul(argv[3], NULL, 0);
    uint64_t wait_us = argc == 5 ? strtoul(argv[4], NULL, 0) * 1000000 : NEGOTIATE_WAIT_US;
    long result = net_open();
    if (result < 0) {
        printf("memclient: no usable network card: %s\n", error_text(result));
        printf("@json {\"kind\":\"memclient\",\"ok\":false,\"stage\":\"network\",\"error\":%ld}\n",
               result);
        return 1;
    }
    result = memnode_cluster_open(&cluster, nodes, block_bytes, wait_us);
    if (result < 0) {
        printf("memclient: negotiation failed (%u of %u nodes answered): %s\n", cluster.node_count,
               nodes, error_text(result));
        printf("@json {\"kind\":\"memclient\",\"ok\":false,\"stage\":\"negotiate\",\"error\":%ld,"
               "\"nodes_found\":%u}\n",
               result, cluster.node_count);
        return 1;
    }
    print_nodes();
    uint8_t *block = malloc(block_bytes);
    int64_t *slots = malloc((count ? count : 1) * sizeof(int64_t));
    if (block == NULL || slots == NULL || count == 0) {
        printf("memclient: nothing to do or out of memory\n");
        return 1;
    }
    struct timing timing = {0};
    uint64_t bad_blocks = 0;
    if (store_all(slots, count, block, &timing) < 0 ||
        retrieve_all(slots, count, block, &timing, &bad_blocks) < 0)
        return 1;
    print_results(slots, count, &timing, bad_blocks);
    return bad_blocks ? 1 : 0;
}
