/* memnode_client.c: negotiation with memory nodes, first-free placement, and
 * STORE / RETRIEVE of whole blocks a window of fragments at a time, with
 * retransmission on timeout and a retry limit that declares a node dead. */
#include "memnode_client.h"
#include "net.h"
#include <formica/errors.h>
#include <formica/user.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_TIMEOUT_US 300000
#define DEFAULT_RETRY_LIMIT 10
#define NEGOTIATE_INTERVAL_US 500000

static const uint8_t broadcast_mac[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
static uint8_t frame_out[MEMNODE_FRAME_MAX];
static uint8_t frame_in[NET_FRAME_MAX];

static void send_message(struct memnode_cluster *cluster, struct memnode_message *message,
                         const uint8_t destination[6])
{
    memcpy(message->destination, destination, 6);
    memcpy(message->source, cluster->mac, 6);
    long length = memnode_encode(message, frame_out, sizeof(frame_out));
    if (length > 0)
        net_send(frame_out, (size_t)length);
}

/* Waits up to `timeout_us` for a valid memory-node frame: true and decoded. */
static bool receive_message(struct memnode_cluster *cluster, struct memnode_message *message,
                            uint64_t timeout_us)
{
    uint64_t deadline = net_now_us() + timeout_us;
    for (;;) {
        uint64_t now = net_now_us();
        if (now >= deadline)
            return false;
        long length = net_receive(frame_in, sizeof(frame_in), deadline - now);
        if (length <= 0)
            return false;
        if (memnode_decode(frame_in, (size_t)length, message) == MEMNODE_OK)
            return true;
        cluster->stats.frames_ignored++;
    }
}

static void add_node(struct memnode_cluster *cluster, const struct memnode_message *reply)
{
    for (unsigned i = 0; i < cluster->node_count; i++)
        if (memcmp(cluster->nodes[i].mac, reply->source, 6) == 0)
            return;
    if (cluster->node_count == MEMNODE_MAX_NODES)
        return;
    struct memnode_capacity capacity;
    memnode_capacity_decode(reply->payload, &capacity);
    struct memnode_node *node = &cluster->nodes[cluster->node_count++];
    memcpy(node->mac, reply->source, 6);
    node->node_id = capacity.node_id;
    node->capacity_bytes = capacity.capacity_bytes;
    node->blocks = capacity.capacity_bytes / cluster->block_bytes;
    node->dead = false;
}

static void sort_nodes_by_id(struct memnode_cluster *cluster)
{
    for (unsigned i = 1; i < cluster->node_count; i++)
        for (unsigned j = i; j > 0 && cluster->nodes[j].node_id < cluster->nodes[j - 1].node_id;
             j--) {
            struct memnode_node swap = cluster->nodes[j];
            cluster->nodes[j] = cluster->nodes[j - 1];
            cluster->nodes[j - 1] = swap;
        }
}

static long negotiate(struct memnode_cluster *cluster, unsigned wanted_nodes, uint64_t wait_us)
{
    uint64_t deadline = net_now_us() + wait_us;
    uint32_t sequence = ++cluster->sequence;
    while (cluster->node_count < wanted_nodes && net_now_us() < deadline) {
        struct memnode_message request = {
            .type = MEMNODE_NEGOTIATE, .sequence = sequence, .block_bytes = cluster->block_bytes};
        send_message(cluster, &request, broadcast_mac);
        uint64_t round_end = net_now_us() + NEGOTIATE_INTERVAL_US;
        struct memnode_message reply;
        while (cluster->node_count < wanted_nodes && net_now_us() < round_end &&
               receive_message(cluster, &reply, round_end - net_now_us())) {
            if (reply.type != MEMNODE_NEGOTIATE_REPLY || reply.sequence != sequence)
                continue;
            if (reply.status != MEMNODE_STATUS_OK)
                return -E_INVALID;
            add_node(cluster, &reply);
        }
    }
    sort_nodes_by_id(cluster);
    return cluster->node_count < wanted_nodes ? -E_NOT_FOUND : 0;
}

static long set_up_placement(struct memnode_cluster *cluster)
{
    uint64_t blocks[MEMNODE_MAX_NODES];
    for (unsigned i = 0; i < cluster->node_count; i++)
        blocks[i] = cluster->nodes[i].blocks;
    size_t bytes = memnode_placement_bitmap_bytes(blocks, cluster->node_count);
    uint8_t *bitmap = malloc(bytes ? bytes : 1);
    if (bitmap == NULL)
        return -E_NO_MEMORY;
    return memnode_placement_init(&cluster->placement, blocks, cluster->node_count, bitmap) == 0
               ? 0
               : -E_INVALID;
}

long memnode_cluster_open(struct memnode_cluster *cluster, unsigned wanted_nodes,
                          uint32_t block_bytes, uint64_t wait_us)
{
    memset(cluster, 0, sizeof(*cluster));
    if (!memnode_block_size_valid(block_bytes) || wanted_nodes == 0 ||
        wanted_nodes > MEMNODE_MAX_NODES)
        return -E_INVALID;
    cluster->block_bytes = block_bytes;
    cluster->timeout_us = DEFAULT_TIMEOUT_US;
    cluster->retry_limit = DEFAULT_RETRY_LIMIT;
    long result = net_open();
    if (result < 0)
        return result;
    net_mac(cluster->mac);
    cluster->sequence = (uint32_t)read_timestamp_counter(); /* differs from a previous run's */
    result = negotiate(cluster, wanted_nodes, wait_us);
    if (cluster->node_count == 0)
        return result < 0 ? result : -E_NOT_FOUND;
    /* Fewer nodes than wanted still get a placement: the caller may use them. */
    long placed = set_up_placement(cluster);
    return placed != 0 ? placed : result;
}

int64_t memnode_slot_allocate(struct memnode_cluster *cluster)
{
    return memnode_placement_allocate(&cluster->placement);
}

void memnode_slot_free(struct memnode_cluster *cluster, uint64_t slot)
{
    memnode_placement_free(&cluster->placement, slot);
}

/* The node and block of `slot`, or NULL when out of range or the node is dead. */
static struct memnode_node *locate(struct memnode_cluster *cluster, uint64_t slot, uint64_t *block,
                                   long *error)
{
    unsigned index;
    if (!memnode_placement_locate(&cluster->placement, slot, &index, block)) {
        *error = -E_INVALID;
        return NULL;
    }
    if (cluster->nodes[index].dead) {
        *error = -E_IO;
        return NULL;
    }
    return &cluster->nodes[index];
}

static bool from_node(const struct memnode_message *message, const struct memnode_node *node,
                      uint8_t type, uint32_t sequence)
{
    return message->type == type && message->sequence == sequence &&
           memcmp(message->source, node->mac, 6) == 0;
}

/* STORE: the fragments not yet acknowledged, a window at a time, the last
 * of each window asking for a STORE_ACK. */
static void send_store_window(struct memnode_cluster *cluster, const struct memnode_node *node,
                              uint32_t sequence, uint64_t block, const uint8_t *data,
                              const uint8_t *acknowledged)
{
    uint16_t count = memnode_fragment_count(cluster->block_bytes);
    uint16_t window[MEMNODE_WINDOW];
    unsigned n = memnode_missing_fragments(acknowledged, count, 0, window, MEMNODE_WINDOW);
    for (unsigned i = 0; i < n; i++) {
        struct memnode_message message = {
            .type = MEMNODE_STORE,
            .flags = i + 1 == n ? MEMNODE_FLAG_ACK_REQUEST : 0,
            .sequence = sequence,
            .block = block,
            .block_bytes = cluster->block_bytes,
            .fragment = window[i],
            .fragment_count = count,
            .payload_bytes = (uint16_t)memnode_fragment_length(cluster->block_bytes, window[i]),
            .payload = data + memnode_fragment_offset(window[i])};
        send_message(cluster, &message, node->mac);
    }
}

/* Waits for progress or a retransmission decision; returns 1 on new data,
 * 0 to retransmit, -E_IO to give up. `absorb` takes a matching message and
 * says whether it brought anything new (or sets *status). */
static long wait_for_progress(struct memnode_cluster *cluster, struct memnode_retry *retry,
                              bool (*absorb)(void *context, const struct memnode_message *),
                              void *context)
{
    for (;;) {
        uint64_t now = net_now_us();
        struct memnode_message message;
        uint64_t left = retry->deadline > now ? retry->deadline - now : 0;
        if (left && receive_message(cluster, &message, left)) {
            if (absorb(context, &message)) {
                memnode_retry_progress(retry, net_now_us());
                return 1;
            }
            continue;
        }
        enum memnode_retry_decision decision = memnode_retry_check(retry, net_now_us());
        if (decision == MEMNODE_RETRY_GIVE_UP)
            return -E_IO;
        if (decision == MEMNODE_RETRY_RETRANSMIT) {
            cluster->stats.retransmissions++;
            return 0;
        }
    }
}

struct store_context {
    const struct memnode_node *node;
    uint32_t sequence;
    uint16_t count;
    uint8_t acknowledged[MEMNODE_BITMAP_BYTES];
    int status;
};

static bool absorb_store_ack(void *opaque, const struct memnode_message *message)
{
    struct store_context *context = opaque;
    if (!from_node(message, context->node, MEMNODE_STORE_ACK, context->sequence))
        return false;
    if (message->status != MEMNODE_STATUS_OK) {
        context->status = message->status;
        return true;
    }
    unsigned before = memnode_bits_count(context->acknowledged, context->count);
    for (unsigned byte = 0; byte < message->payload_bytes; byte++)
        context->acknowledged[byte] |= message->payload[byte];
    return memnode_bits_count(context->acknowledged, context->count) > before;
}

long memnode_store(struct memnode_cluster *cluster, uint64_t slot, const void *data)
{
    uint64_t block;
    long error = 0;
    struct memnode_node *node = locate(cluster, slot, &block, &error);
    if (node == NULL)
        return error;
    static struct store_context context;
    memset(&context, 0, sizeof(context));
    context.node = node;
    context.sequence = ++cluster->sequence;
    context.count = memnode_fragment_count(cluster->block_bytes);
    struct memnode_retry retry;
    memnode_retry_start(&retry, net_now_us(), cluster->timeout_us, cluster->retry_limit);
    while (memnode_bits_count(context.acknowledged, context.count) < context.count) {
        send_store_window(cluster, node, context.sequence, block, data, context.acknowledged);
        long result = wait_for_progress(cluster, &retry, absorb_store_ack, &context);
        if (result < 0) {
            node->dead = true;
            return result;
        }
        if (context.status != MEMNODE_STATUS_OK)
            return -E_INVALID;
    }
    cluster->stats.stores++;
    cluster->stats.bytes_stored += cluster->block_bytes;
    return 0;
}

struct retrieve_context {
    const struct memnode_node *node;
    struct memnode_reassembly assembly;
    uint8_t *data;
    bool window_done;
    int status;
    uint64_t *duplicates;
};

static bool absorb_retrieve_data(void *opaque, const struct memnode_message *message)
{
    struct retrieve_context *context = opaque;
    if (!from_node(message, context->node, MEMNODE_RETRIEVE_DATA, context->assembly.sequence))
        return false;
    if (message->status != MEMNODE_STATUS_OK) {
        context->status = message->status;
        return true;
    }
    if (message->flags & MEMNODE_FLAG_ACK_REQUEST)
        context->window_done = true;
    enum memnode_accept verdict = memnode_reassembly_accept(&context->assembly, message);
    if (verdict != MEMNODE_ACCEPT_NEW) {
        (*context->duplicates)++;
        return false;
    }
    memcpy(context->data + memnode_fragment_offset(message->fragment), message->payload,
           message->payload_bytes);
    return true;
}

static void send_retrieve_request(struct memnode_cluster *cluster,
                                  const struct retrieve_context *context)
{
    struct memnode_message request = {.type = MEMNODE_RETRIEVE,
                                      .sequence = context->assembly.sequence,
                                      .block = context->assembly.block,
                                      .block_bytes = cluster->block_bytes,
                                      .fragment_count = context->assembly.fragment_count,
                                      .payload_bytes =
                                          (uint16_t)((context->assembly.fragment_count + 7) / 8),
                                      .payload = context->assembly.bitmap};
    send_message(cluster, &request, context->node->mac);
}

long memnode_retrieve(struct memnode_cluster *cluster, uint64_t slot, void *data)
{
    uint64_t block;
    long error = 0;
    struct memnode_node *node = locate(cluster, slot, &block, &error);
    if (node == NULL)
        return error;
    static struct retrieve_context context;
    memset(&context, 0, sizeof(context));
    context.node = node;
    context.data = data;
    context.duplicates = &cluster->stats.duplicates;
    memnode_reassembly_start(&context.assembly, ++cluster->sequence, block, cluster->block_bytes);
    struct memnode_retry retry;
    memnode_retry_start(&retry, net_now_us(), cluster->timeout_us, cluster->retry_limit);
    bool ask = true;
    while (!memnode_reassembly_complete(&context.assembly)) {
        if (ask)
            send_retrieve_request(cluster, &context);
        context.window_done = false;
        long result = wait_for_progress(cluster, &retry, absorb_retrieve_data, &context);
        if (result < 0) {
            node->dead = true;
            return result;
        }
        if (context.status != MEMNODE_STATUS_OK)
            return -E_INVALID;
        ask = result == 0 || context.window_done; /* timeout, or the node's window ended */
    }
    cluster->stats.retrieves++;
    cluster->stats.bytes_retrieved += cluster->block_bytes;
    return 0;
}
