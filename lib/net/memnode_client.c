/* memnode_client.c: negotiation with memory nodes, first-free placement, and
 * asynchronous STORE / RETRIEVE transfers of whole blocks: each transfer
 * moves a window of fragments at a time, several transfers run at once
 * within per-node and receive credits, timeouts retransmit with back-off,
 * and only the liveness rule (memnode_liveness.c) declares a node dead; a
 * link down pauses them all until it returns. */
#include <formica/memnode_client.h>
#include <formica/memnode_store.h>
#include <formica/net.h>
#include <formica/errors.h>
#include <stdio.h>
#include <formica/user.h>
#include <stdlib.h>
#include <string.h>

/* Every machine on the segment receives every frame into a host socket of
 * about 200 KiB (rmem_default): the bytes in flight stay well under that. */
#define DEFAULT_TIMEOUT_US 100000 /* the first retransmission; it backs off from there */
#define DEFAULT_WINDOW_BYTES (64u << 10)
#define DEFAULT_CREDIT_BYTES (128u << 10)
/* A credit also holds at most this many frames: the host socket (and a
 * card's receive ring) fills by frames as well as bytes, so 128 KiB of 8 KiB
 * frames overflowed it where 128 KiB of 32 KiB ones did not. */
#define CREDIT_FRAMES 8
#define NEGOTIATE_INTERVAL_US 500000
#define RENEGOTIATE_INTERVAL_US 300000 /* a restarted node's NEGOTIATE is sent again this often */

static const uint8_t broadcast_mac[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

static void send_message(struct memnode_cluster *cluster, struct memnode_message *message,
                         const uint8_t destination[6])
{
    memcpy(message->destination, destination, 6);
    memcpy(message->source, cluster->mac, 6);
    uint8_t *frame = net_send_buffer(); /* encoded in place: no copy */
    if (frame == NULL)
        return;
    long length = memnode_encode(message, frame, net_max_frame());
    net_send_buffered(length > 0 ? (size_t)length : 0);
}

/* Waits up to `timeout_us` for a valid memory-node frame: true and decoded
 * (its payload stays in the driver's receive buffer until the next receive). */
static bool receive_message(struct memnode_cluster *cluster, struct memnode_message *message,
                            uint64_t timeout_us)
{
    uint64_t deadline = net_now_us() + timeout_us;
    for (;;) {
        uint64_t now = net_now_us();
        const void *frame;
        long length = net_receive_in_place(&frame, deadline > now ? deadline - now : 0);
        if (length <= 0)
            return false;
        if (memnode_decode(frame, (size_t)length, message) == MEMNODE_OK)
            return true;
        cluster->stats.frames_ignored++;
    }
}

static uint16_t fragments_of(const struct memnode_cluster *cluster, uint32_t bytes)
{
    uint16_t count = memnode_fragments(bytes, cluster->fragment_bytes);
    return count ? count : 1;
}

/* A credit of `bytes` in fragments, at most CREDIT_FRAMES. */
static uint32_t credit_fragments(const struct memnode_cluster *cluster, uint32_t bytes)
{
    uint32_t fragments = fragments_of(cluster, bytes);
    return fragments < CREDIT_FRAMES ? fragments : CREDIT_FRAMES;
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
    memset(node, 0, sizeof(*node));
    memcpy(node->mac, reply->source, 6);
    node->node_id = capacity.node_id;
    node->capacity_bytes = capacity.capacity_bytes;
    node->blocks = capacity.capacity_bytes / cluster->block_bytes;
    node->largest_fragment = memnode_fragment_agreed(cluster->fragment_bytes, reply);
    node->generation = capacity.generation;
    node->persistent = (capacity.node_flags & MEMNODE_NODE_PERSISTENT) != 0;
    memcpy(node->cluster, capacity.cluster, sizeof node->cluster);
    node->negotiated = capacity;
    node->has_layout = memnode_reply_layout(reply, &node->layout);
    node->shared_bar = -1;
    memnode_liveness_init(&node->liveness, net_now_us());
}

static void print_mac(const char *before, const uint8_t mac[6])
{
    printf("%s%02x:%02x:%02x:%02x:%02x:%02x", before, mac[0], mac[1], mac[2], mac[3], mac[4],
           mac[5]);
}

/* A node whose store is refused (foreign or corrupt NVM): said once, not used. */
static void note_refusal(struct memnode_cluster *cluster, const struct memnode_message *reply)
{
    for (unsigned i = 0; i < cluster->refused_nodes; i++)
        if (memcmp(cluster->refused_macs[i], reply->source, 6) == 0)
            return;
    if (cluster->refused_nodes == MEMNODE_MAX_NODES)
        return;
    memcpy(cluster->refused_macs[cluster->refused_nodes++], reply->source, 6);
    struct memnode_capacity capacity;
    memnode_capacity_decode(reply->payload, &capacity);
    printf("memnode client: node %u", capacity.node_id);
    print_mac(" (", reply->source);
    printf(") refused the negotiation (status 3): its NVM is not served (foreign or corrupt; "
           "the node's log says why); not used\n");
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

/* A NEGOTIATE's flags: larger fragments, and the store's layout when one-sided is wanted. */
static uint8_t negotiate_flags(const struct memnode_cluster *cluster)
{
    return (uint8_t)(MEMNODE_FLAG_LARGE_FRAGMENTS |
                     (cluster->one_sided_wanted ? MEMNODE_FLAG_LAYOUT : 0));
}

/* A NEGOTIATE's own fragment shift stays within what every node decodes (8 KiB). */
static uint32_t negotiate_fragment(const struct memnode_cluster *cluster)
{
    return cluster->fragment_bytes < MEMNODE_JUMBO_FRAGMENT_BYTES ? cluster->fragment_bytes
                                                                  : MEMNODE_JUMBO_FRAGMENT_BYTES;
}

/* Nodes that answered NEGOTIATE: used ones and refused ones. */
static unsigned answered(const struct memnode_cluster *cluster)
{
    return cluster->node_count + cluster->refused_nodes;
}

/* Waits up to `wait_us` for the first node, then MEMNODE_SETTLE_US more for
 * the others (they boot at about the same time), or until `wanted_nodes`. */
static long negotiate(struct memnode_cluster *cluster, unsigned wanted_nodes, uint64_t wait_us)
{
    uint64_t deadline = net_now_us() + wait_us;
    uint32_t sequence = ++cluster->sequence;
    while (answered(cluster) < wanted_nodes && net_now_us() < deadline) {
        if (answered(cluster) > 0 && deadline > net_now_us() + MEMNODE_SETTLE_US)
            deadline = net_now_us() + MEMNODE_SETTLE_US;
        struct memnode_message request = {.type = MEMNODE_NEGOTIATE,
                                          .flags = negotiate_flags(cluster),
                                          .sequence = sequence,
                                          .block_bytes = cluster->block_bytes,
                                          .fragment_bytes = (uint16_t)negotiate_fragment(cluster)};
        send_message(cluster, &request, broadcast_mac);
        uint64_t round_end = net_now_us() + NEGOTIATE_INTERVAL_US;
        struct memnode_message reply;
        while (answered(cluster) < wanted_nodes && net_now_us() < round_end &&
               receive_message(cluster, &reply, round_end - net_now_us())) {
            if (reply.type != MEMNODE_NEGOTIATE_REPLY || reply.sequence != sequence)
                continue;
            if (reply.status == MEMNODE_STATUS_REFUSED) {
                note_refusal(cluster, &reply);
                continue;
            }
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
    if (memnode_placement_init(&cluster->placement, blocks, cluster->node_count, bitmap) != 0)
        return -E_INVALID;
    memnode_cluster_keep_part(cluster); /* one of several client machines: its part only */
    return 0;
}

/* The largest fragment our frames carry (never above the block). */
static uint32_t largest_fragment(uint32_t block_bytes)
{
    uint32_t fragment = memnode_fragment_for_frame(net_max_frame());
    if (fragment == 0)
        fragment = MEMNODE_FRAGMENT_BYTES;
    return block_bytes < fragment ? block_bytes : fragment;
}

/* Once the nodes answered: the largest fragment every one of them takes,
 * and the credits counted in such fragments. */
static void settle_fragments(struct memnode_cluster *cluster)
{
    for (unsigned i = 0; i < cluster->node_count; i++)
        if (cluster->nodes[i].largest_fragment < cluster->fragment_bytes)
            cluster->fragment_bytes = cluster->nodes[i].largest_fragment;
    for (unsigned i = 0; i < cluster->node_count; i++)
        cluster->nodes[i].store_credit = credit_fragments(cluster, cluster->node_credit_bytes);
    cluster->receive_credit = credit_fragments(cluster, cluster->receive_credit_bytes);
}

long memnode_cluster_open(struct memnode_cluster *cluster, unsigned wanted_nodes,
                          uint32_t block_bytes, uint64_t wait_us)
{
    memset(cluster, 0, sizeof(*cluster));
    if (!memnode_block_size_valid(block_bytes) || wanted_nodes == 0 ||
        wanted_nodes > MEMNODE_MAX_NODES)
        return -E_INVALID;
    long result = net_open();
    if (result < 0)
        return result;
    cluster->block_bytes = block_bytes;
    cluster->fragment_bytes = largest_fragment(block_bytes);
    cluster->timeout_us = DEFAULT_TIMEOUT_US;
    cluster->dead_after_us = MEMNODE_DEAD_AFTER_US;
    cluster->window_bytes = DEFAULT_WINDOW_BYTES;
    cluster->node_credit_bytes = DEFAULT_CREDIT_BYTES;
    cluster->receive_credit_bytes = DEFAULT_CREDIT_BYTES;
    net_mac(cluster->mac);
    cluster->link_down = !net_link_up();
    cluster->sequence = (uint32_t)read_timestamp_counter(); /* differs from a previous run's */
    char cluster_text[40] = "";
    if (kernel_option("memnode_cluster", cluster_text, sizeof cluster_text) > 0 &&
        !memnode_cluster_parse(cluster_text, cluster->cluster_id))
        memset(cluster->cluster_id, 0, sizeof cluster->cluster_id);
    cluster->one_sided_wanted = memnode_ivshmem_wanted();
    result = negotiate(cluster, wanted_nodes, wait_us);
    if (cluster->node_count == 0)
        return result < 0 ? result : -E_NOT_FOUND;
    settle_fragments(cluster);
    /* Fewer nodes than wanted still get a placement: the caller may use them. */
    long placed = set_up_placement(cluster);
    if (placed == 0 && cluster->one_sided_wanted)
        memnode_ivshmem_attach(cluster);
    return placed != 0 ? placed : result;
}

/* ---- transfers ---- */

static uint64_t current_rto(const struct memnode_cluster *cluster)
{
    return memnode_rto(cluster->srtt_us, cluster->timeout_us);
}

static void node_active(struct memnode_cluster *cluster, unsigned node, int change)
{
    struct memnode_node *n = &cluster->nodes[node];
    n->active = (unsigned)((int)n->active + change);
    memnode_liveness_waiting(&n->liveness, n->active > 0, net_now_us());
}

static void close_window(struct memnode_cluster *cluster, struct memnode_transfer *t)
{
    if (!t->window_open)
        return;
    if (!t->retransmitted && !t->done) /* answered in time: a round-trip sample */
        cluster->srtt_us = memnode_rtt_update(cluster->srtt_us, net_now_us() - t->window_sent);
    t->window_open = false;
    if (t->kind == MEMNODE_TRANSFER_STORE)
        cluster->nodes[t->node].store_credit += t->window_fragments;
    else
        cluster->receive_credit += t->window_fragments;
    t->window_fragments = 0;
}

static void finish(struct memnode_cluster *cluster, struct memnode_transfer *t, long result)
{
    close_window(cluster, t);
    t->done = true;
    t->result = result;
    node_active(cluster, t->node, -1);
    if (result != 0)
        return;
    struct memnode_node *node = &cluster->nodes[t->node];
    if (t->kind == MEMNODE_TRANSFER_STORE) {
        node->stores++;
        cluster->stats.stores++;
        cluster->stats.bytes_stored += cluster->block_bytes;
    } else {
        node->retrieves++;
        cluster->stats.retrieves++;
        cluster->stats.bytes_retrieved += cluster->block_bytes;
    }
}

static long locate(struct memnode_cluster *cluster, uint64_t slot, unsigned *node, uint64_t *block)
{
    if (!memnode_placement_locate(&cluster->placement, slot, node, block))
        return -E_INVALID;
    return cluster->nodes[*node].dead ? -E_IO : 0;
}

static void restart_seen(struct memnode_cluster *cluster, unsigned node);

/* A retrieve's copy that fails its tag: never served as good, and said:
 * the first CORRUPT_LINES of a node, then at every power of two. */
#define CORRUPT_LINES 8
static void say_corrupt(const struct memnode_cluster *cluster, const struct memnode_transfer *t,
                        enum memnode_store_held held)
{
    const struct memnode_node *n = &cluster->nodes[t->node];
    uint64_t count = n->one_sided.corrupt;
    if (count <= CORRUPT_LINES)
        printf("memnode client: node %u block %lu (%u bytes) read one-sided %s: corrupt, not "
               "served\n",
               n->node_id, (unsigned long)t->progress.block, cluster->block_bytes,
               held == MEMNODE_TORN ? "does not match its tag's checksum" : "has no valid tag");
    else if ((count & (count - 1)) == 0)
        printf("memnode client: node %u: %lu blocks read one-sided were corrupt, none served\n",
               n->node_id, (unsigned long)count);
}

/* Transfer `t` to a one-sided node, by memcpy through its BAR: true when it
 * finished; false when it waits (the link is down, or the node restarted:
 * its store's generation changed, and it is negotiated again first). */
static bool run_one_sided(struct memnode_cluster *cluster, struct memnode_transfer *t)
{
    struct memnode_node *n = &cluster->nodes[t->node];
    if (!n->one_sided.on || n->dead || n->renegotiating || cluster->link_down)
        return false;
    if (memnode_one_sided_generation(&n->one_sided) != n->generation) {
        restart_seen(cluster, t->node);
        return false;
    }
    if (t->kind == MEMNODE_TRANSFER_STORE) {
        long error = memnode_one_sided_store(&n->one_sided, t->progress.block, cluster->block_bytes,
                                             t->data, t->progress.sequence);
        finish(cluster, t, error);
        return true;
    }
    enum memnode_store_held held =
        memnode_one_sided_retrieve(&n->one_sided, t->progress.block, cluster->block_bytes, t->data);
    if (held != MEMNODE_HELD)
        say_corrupt(cluster, t, held);
    finish(cluster, t, held == MEMNODE_HELD ? 0 : -E_CORRUPT);
    return true;
}

static long submit(struct memnode_cluster *cluster, uint8_t kind, uint64_t slot, void *data,
                   uint64_t tag)
{
    unsigned node;
    uint64_t block;
    long error = locate(cluster, slot, &node, &block);
    if (error != 0)
        return error;
    for (long id = 0; id < MEMNODE_MAX_TRANSFERS; id++) {
        struct memnode_transfer *t = &cluster->transfers[id];
        if (t->kind != 0)
            continue;
        memset(t, 0, sizeof(*t));
        t->kind = kind;
        t->node = node;
        t->slot = slot;
        t->tag = tag;
        t->data = data;
        t->timeout = current_rto(cluster);
        memnode_reassembly_start_sized(&t->progress, ++cluster->sequence, block,
                                       cluster->block_bytes, cluster->fragment_bytes);
        node_active(cluster, node, +1);
        if (++cluster->in_flight > cluster->stats.peak_in_flight)
            cluster->stats.peak_in_flight = cluster->in_flight;
        run_one_sided(cluster, t); /* a one-sided node's: done now, collected as any other */
        return id;
    }
    return -E_BUSY;
}

long memnode_submit_store(struct memnode_cluster *cluster, uint64_t slot, const void *data,
                          uint64_t tag)
{
    return submit(cluster, MEMNODE_TRANSFER_STORE, slot, (void *)data, tag);
}

long memnode_submit_retrieve(struct memnode_cluster *cluster, uint64_t slot, void *data,
                             uint64_t tag)
{
    return submit(cluster, MEMNODE_TRANSFER_RETRIEVE, slot, data, tag);
}

static uint16_t window_limit(const struct memnode_cluster *cluster)
{
    uint16_t limit = fragments_of(cluster, cluster->window_bytes);
    return limit > MEMNODE_WINDOW ? MEMNODE_WINDOW : limit;
}

/* STORE: the fragments not yet acknowledged, the last asking for a STORE_ACK. */
static void send_store_window(struct memnode_cluster *cluster, struct memnode_transfer *t)
{
    struct memnode_node *node = &cluster->nodes[t->node];
    uint16_t room = window_limit(cluster);
    if (room > node->store_credit)
        room = (uint16_t)node->store_credit;
    uint16_t window[MEMNODE_WINDOW];
    unsigned n =
        memnode_missing_fragments(t->progress.bitmap, t->progress.fragment_count, 0, window, room);
    for (unsigned i = 0; i < n; i++) {
        struct memnode_message message = {
            .type = MEMNODE_STORE,
            .flags = i + 1 == n ? MEMNODE_FLAG_ACK_REQUEST : 0,
            .sequence = t->progress.sequence,
            .block = t->progress.block,
            .block_bytes = cluster->block_bytes,
            .fragment = window[i],
            .fragment_count = t->progress.fragment_count,
            .fragment_bytes = (uint16_t)cluster->fragment_bytes,
            .payload_bytes = (uint16_t)memnode_fragment_length_sized(
                cluster->block_bytes, window[i], cluster->fragment_bytes),
            .payload = t->data + memnode_fragment_offset_sized(window[i], cluster->fragment_bytes)};
        send_message(cluster, &message, node->mac);
    }
    node->store_credit -= n;
    t->window_fragments = (uint16_t)n;
    t->window_open = n > 0;
}

/* RETRIEVE: our bitmap and how many fragments to send (the `fragment` field). */
static void send_retrieve_request(struct memnode_cluster *cluster, struct memnode_transfer *t)
{
    uint16_t missing = (uint16_t)(t->progress.fragment_count - t->progress.received);
    uint16_t room = window_limit(cluster);
    if (room > cluster->receive_credit)
        room = (uint16_t)cluster->receive_credit;
    if (room > missing)
        room = missing;
    if (room == 0)
        return;
    struct memnode_message request = {.type = MEMNODE_RETRIEVE,
                                      .sequence = t->progress.sequence,
                                      .block = t->progress.block,
                                      .block_bytes = cluster->block_bytes,
                                      .fragment = room,
                                      .fragment_count = t->progress.fragment_count,
                                      .fragment_bytes = (uint16_t)cluster->fragment_bytes,
                                      .payload_bytes =
                                          (uint16_t)((t->progress.fragment_count + 7) / 8),
                                      .payload = t->progress.bitmap};
    send_message(cluster, &request, cluster->nodes[t->node].mac);
    cluster->receive_credit -= room;
    t->window_fragments = room;
    t->window_open = true;
}

static void open_windows(struct memnode_cluster *cluster)
{
    uint64_t now = net_now_us();
    for (unsigned id = 0; id < MEMNODE_MAX_TRANSFERS; id++) {
        struct memnode_transfer *t = &cluster->transfers[id];
        if (t->kind == 0 || t->done || t->window_open || cluster->nodes[t->node].dead ||
            cluster->nodes[t->node].renegotiating)
            continue;
        if (cluster->nodes[t->node].one_sided.on) {
            run_one_sided(cluster, t);
            continue;
        }
        if (t->kind == MEMNODE_TRANSFER_STORE)
            send_store_window(cluster, t);
        else
            send_retrieve_request(cluster, t);
        if (t->window_open) {
            t->deadline = now + t->timeout;
            t->window_sent = now;
        }
    }
}

static struct memnode_transfer *transfer_of(struct memnode_cluster *cluster,
                                            const struct memnode_message *message)
{
    for (unsigned id = 0; id < MEMNODE_MAX_TRANSFERS; id++) {
        struct memnode_transfer *t = &cluster->transfers[id];
        if (t->kind != 0 && !t->done && t->progress.sequence == message->sequence &&
            memcmp(cluster->nodes[t->node].mac, message->source, 6) == 0)
            return t;
    }
    return NULL;
}

static void progress_made(struct memnode_transfer *t, struct memnode_cluster *cluster)
{
    t->retransmitted = false;
    t->timeout = current_rto(cluster); /* progress: the back-off starts again */
    t->deadline = net_now_us() + t->timeout;
}

static void lose_node(struct memnode_cluster *cluster, unsigned node, const char *reason);

/* A reply's non-OK status: true when it was handled (the transfer waits or ended). */
static bool absorb_status(struct memnode_cluster *cluster, struct memnode_transfer *t,
                          const struct memnode_message *message)
{
    switch (message->status) {
    case MEMNODE_STATUS_OK:
        return false;
    case MEMNODE_STATUS_RESTARTED: /* its windows are sent again once it is renegotiated */
        close_window(cluster, t);
        restart_seen(cluster, t->node);
        return true;
    case MEMNODE_STATUS_REFUSED:
        lose_node(cluster, t->node, "its store is now refused (status 3)");
        return true;
    case MEMNODE_STATUS_CORRUPT:
        finish(cluster, t, -E_CORRUPT);
        return true;
    default:
        finish(cluster, t, -E_INVALID);
        return true;
    }
}

static void absorb_store_ack(struct memnode_cluster *cluster, struct memnode_transfer *t,
                             const struct memnode_message *message)
{
    if (absorb_status(cluster, t, message))
        return;
    unsigned before = t->progress.received;
    close_window(cluster, t); /* before progress_made clears `retransmitted` */
    for (unsigned byte = 0; byte < message->payload_bytes && byte < MEMNODE_BITMAP_BYTES; byte++)
        t->progress.bitmap[byte] |= message->payload[byte];
    t->progress.received =
        (uint16_t)memnode_bits_count(t->progress.bitmap, t->progress.fragment_count);
    close_window(cluster, t);
    if (t->progress.received > before)
        progress_made(t, cluster);
    if (t->progress.received == t->progress.fragment_count)
        finish(cluster, t, 0);
}

static void absorb_retrieve_data(struct memnode_cluster *cluster, struct memnode_transfer *t,
                                 const struct memnode_message *message)
{
    if (absorb_status(cluster, t, message))
        return;
    enum memnode_accept verdict = memnode_reassembly_accept(&t->progress, message);
    if (message->flags & MEMNODE_FLAG_ACK_REQUEST)
        close_window(cluster, t);
    if (verdict == MEMNODE_ACCEPT_NEW) {
        memcpy(t->data + memnode_fragment_offset_sized(message->fragment, cluster->fragment_bytes),
               message->payload, message->payload_bytes);
        progress_made(t, cluster);
    } else {
        cluster->stats.duplicates++;
    }
    if (memnode_reassembly_complete(&t->progress))
        finish(cluster, t, 0);
}

static void heard_from(struct memnode_cluster *cluster, const struct memnode_message *message)
{
    for (unsigned i = 0; i < cluster->node_count; i++) {
        if (memcmp(cluster->nodes[i].mac, message->source, 6) != 0)
            continue;
        memnode_liveness_heard(&cluster->nodes[i].liveness, net_now_us());
        if (message->type == MEMNODE_PONG)
            cluster->nodes[i].pongs++;
        if (message->type == MEMNODE_PONG && !cluster->nodes[i].dead) {
            struct memnode_capacity capacity;
            memnode_capacity_decode(message->payload, &capacity);
            if (capacity.generation != cluster->nodes[i].generation)
                restart_seen(cluster, i);
        }
    }
}

static int node_of_mac(const struct memnode_cluster *cluster, const uint8_t mac[6])
{
    for (unsigned i = 0; i < cluster->node_count; i++)
        if (memcmp(cluster->nodes[i].mac, mac, 6) == 0)
            return (int)i;
    return -1;
}

static void take_renegotiation(struct memnode_cluster *cluster, unsigned node,
                               const struct memnode_message *reply);

static void dispatch(struct memnode_cluster *cluster, const struct memnode_message *message)
{
    heard_from(cluster, message);
    if (message->type == MEMNODE_NEGOTIATE_REPLY) {
        int node = node_of_mac(cluster, message->source);
        if (node >= 0 && cluster->nodes[node].renegotiating &&
            message->sequence == cluster->nodes[node].renegotiate_sequence)
            take_renegotiation(cluster, (unsigned)node, message);
        return;
    }
    if (message->type != MEMNODE_STORE_ACK && message->type != MEMNODE_RETRIEVE_DATA)
        return;
    struct memnode_transfer *t = transfer_of(cluster, message);
    if (t == NULL)
        return; /* a late frame of a finished transfer */
    if (message->type == MEMNODE_STORE_ACK && t->kind == MEMNODE_TRANSFER_STORE)
        absorb_store_ack(cluster, t, message);
    else if (message->type == MEMNODE_RETRIEVE_DATA && t->kind == MEMNODE_TRANSFER_RETRIEVE)
        absorb_retrieve_data(cluster, t, message);
}

/* A window without an answer in time: give its credit back and send again,
 * waiting twice as long next time (up to MEMNODE_BACKOFF_MAX_US). */
static void retransmit_late_windows(struct memnode_cluster *cluster, uint64_t now)
{
    for (unsigned id = 0; id < MEMNODE_MAX_TRANSFERS; id++) {
        struct memnode_transfer *t = &cluster->transfers[id];
        if (t->kind == 0 || t->done || !t->window_open || now < t->deadline)
            continue;
        t->retransmitted = true;
        close_window(cluster, t);
        t->timeout = memnode_backoff(t->timeout);
        cluster->stats.retransmissions++;
        cluster->nodes[t->node].retransmissions++;
    }
}

static void declare_dead(struct memnode_cluster *cluster, unsigned node)
{
    cluster->nodes[node].dead = true;
    for (unsigned id = 0; id < MEMNODE_MAX_TRANSFERS; id++) {
        struct memnode_transfer *t = &cluster->transfers[id];
        if (t->kind != 0 && !t->done && t->node == node)
            finish(cluster, t, -E_IO);
    }
    if (cluster->node_died != NULL)
        cluster->node_died(cluster, node);
}

/* Lost: the node answers, but its blocks are gone (or no longer served).
 * Treated as dead: its transfers fail with -E_IO and node_died is told. */
static void lose_node(struct memnode_cluster *cluster, unsigned node, const char *reason)
{
    if (cluster->nodes[node].dead)
        return;
    cluster->nodes[node].lost_reason = reason;
    declare_dead(cluster, node);
}

static void send_renegotiation(struct memnode_cluster *cluster, unsigned node)
{
    struct memnode_node *n = &cluster->nodes[node];
    n->renegotiate_sequence = ++cluster->sequence;
    n->renegotiate_sent = net_now_us();
    struct memnode_message request = {.type = MEMNODE_NEGOTIATE,
                                      .flags = negotiate_flags(cluster),
                                      .sequence = n->renegotiate_sequence,
                                      .block_bytes = cluster->block_bytes,
                                      .fragment_bytes = (uint16_t)negotiate_fragment(cluster)};
    send_message(cluster, &request, n->mac);
}

/* The node restarted (a new generation, or it says we have not negotiated
 * with it): its transfers wait while we ask it again what it holds. */
static void restart_seen(struct memnode_cluster *cluster, unsigned node)
{
    struct memnode_node *n = &cluster->nodes[node];
    if (n->dead || n->renegotiating)
        return;
    n->renegotiating = true;
    for (unsigned id = 0; id < MEMNODE_MAX_TRANSFERS; id++) {
        struct memnode_transfer *t = &cluster->transfers[id];
        if (t->kind != 0 && !t->done && t->node == node)
            close_window(cluster, t);
    }
    send_renegotiation(cluster, node);
}

static void renegotiate_late(struct memnode_cluster *cluster, uint64_t now)
{
    for (unsigned node = 0; node < cluster->node_count; node++) {
        struct memnode_node *n = &cluster->nodes[node];
        if (n->renegotiating && !n->dead && now >= n->renegotiate_sent + RENEGOTIATE_INTERVAL_US)
            send_renegotiation(cluster, node);
    }
}

/* Every transfer in flight to the node starts afresh: the node that came
 * back has none of their fragments reassembled. */
static void restart_transfers_on(struct memnode_cluster *cluster, unsigned node)
{
    for (unsigned id = 0; id < MEMNODE_MAX_TRANSFERS; id++) {
        struct memnode_transfer *t = &cluster->transfers[id];
        if (t->kind == 0 || t->done || t->node != node)
            continue;
        close_window(cluster, t);
        t->retransmitted = true;
        t->timeout = current_rto(cluster);
        memnode_reassembly_start_sized(&t->progress, ++cluster->sequence, t->progress.block,
                                       cluster->block_bytes, cluster->fragment_bytes);
    }
}

/* Why a restarted node's blocks cannot be had, or NULL when it kept them:
 * persistent, of our cluster, the same node and no smaller. */
static const char *restart_verdict(const struct memnode_cluster *cluster,
                                   const struct memnode_node *n,
                                   const struct memnode_message *reply,
                                   const struct memnode_capacity *capacity)
{
    if (reply->status == MEMNODE_STATUS_REFUSED)
        return "restarted with its store refused (status 3)";
    if (reply->status != MEMNODE_STATUS_OK)
        return "restarted and refused our block size";
    if (!(capacity->node_flags & MEMNODE_NODE_PERSISTENT))
        return "restarted empty (its blocks were in DRAM)";
    if (memcmp(capacity->cluster, cluster->cluster_id, sizeof capacity->cluster) != 0 ||
        capacity->node_id != n->node_id)
        return "restarted as another cluster's or node's store";
    if (capacity->capacity_bytes < n->capacity_bytes)
        return "restarted smaller than before";
    return NULL;
}

static void take_renegotiation(struct memnode_cluster *cluster, unsigned node,
                               const struct memnode_message *reply)
{
    struct memnode_node *n = &cluster->nodes[node];
    struct memnode_capacity capacity;
    memnode_capacity_decode(reply->payload, &capacity);
    n->renegotiating = false;
    const char *lost = restart_verdict(cluster, n, reply, &capacity);
    if (lost != NULL) {
        lose_node(cluster, node, lost);
        return;
    }
    uint64_t old_generation = n->generation;
    n->generation = capacity.generation;
    n->restarts_kept++;
    n->negotiated = capacity;
    n->has_layout = memnode_reply_layout(reply, &n->layout);
    if (n->one_sided.on || n->shared_bar >= 0)
        memnode_ivshmem_recheck(cluster, node);
    restart_transfers_on(cluster, node);
    if (cluster->node_restarted != NULL)
        cluster->node_restarted(cluster, node, old_generation);
}

static void probe(struct memnode_cluster *cluster, unsigned node)
{
    struct memnode_node *n = &cluster->nodes[node];
    n->probe_sequence = ++cluster->sequence;
    struct memnode_message ping = {.type = MEMNODE_PING, .sequence = n->probe_sequence};
    send_message(cluster, &ping, n->mac);
    n->probes++;
    cluster->stats.probes++;
}

static void check_liveness(struct memnode_cluster *cluster, uint64_t now)
{
    for (unsigned node = 0; node < cluster->node_count; node++) {
        struct memnode_node *n = &cluster->nodes[node];
        if (n->dead)
            continue;
        n->liveness.dead_after = cluster->dead_after_us;
        enum memnode_liveness_decision decision = memnode_liveness_check(&n->liveness, now);
        if (decision == MEMNODE_PROBE)
            probe(cluster, node);
        else if (decision == MEMNODE_DEAD)
            declare_dead(cluster, node);
    }
}

static unsigned finished_count(const struct memnode_cluster *cluster)
{
    unsigned count = 0;
    for (unsigned id = 0; id < MEMNODE_MAX_TRANSFERS; id++)
        count += cluster->transfers[id].kind != 0 && cluster->transfers[id].done;
    return count;
}

/* The next retransmission or liveness check; none while the link is down
 * (the wait then ends at `until`, or when the link's interrupt comes). */
static uint64_t next_deadline(const struct memnode_cluster *cluster, uint64_t now, uint64_t until)
{
    uint64_t next = until;
    for (unsigned id = 0; id < MEMNODE_MAX_TRANSFERS && !cluster->link_down; id++) {
        const struct memnode_transfer *t = &cluster->transfers[id];
        if (t->kind != 0 && !t->done && t->window_open && t->deadline < next)
            next = t->deadline;
    }
    uint64_t probe_at = now + MEMNODE_PROBE_INTERVAL_US / 4; /* liveness checks */
    return probe_at < next ? probe_at : next;
}

/* Dispatches every frame already received; true if there was one. */
static bool take_arrived(struct memnode_cluster *cluster)
{
    struct memnode_message message;
    bool any = false;
    while (receive_message(cluster, &message, 0)) {
        dispatch(cluster, &message);
        any = true;
    }
    return any;
}

unsigned memnode_poll(struct memnode_cluster *cluster, uint64_t timeout_us)
{
    uint64_t until = net_now_us() + timeout_us;
    for (;;) {
        take_arrived(cluster); /* first: a zero timeout still moves the transfers on */
        memnode_watch_link(cluster);
        uint64_t now = net_now_us();
        if (!cluster->link_down) { /* without a link, nothing is sent and nothing is late */
            retransmit_late_windows(cluster, now);
            check_liveness(cluster, now);
            renegotiate_late(cluster, now);
            open_windows(cluster);
        }
        unsigned finished = finished_count(cluster);
        if (finished > 0 || now >= until)
            return finished;
        struct memnode_message message;
        uint64_t wake = next_deadline(cluster, now, until);
        if (receive_message(cluster, &message, wake > now ? wake - now : 0))
            dispatch(cluster, &message);
    }
}

void memnode_send_pending(struct memnode_cluster *cluster)
{
    if (!cluster->link_down)
        open_windows(cluster);
}

/* The link is back: each open window is sent again now, from the timeout
 * the round trip gives (the back-off of the silent time is forgotten). */
static void resend_open_windows(struct memnode_cluster *cluster)
{
    for (unsigned id = 0; id < MEMNODE_MAX_TRANSFERS; id++) {
        struct memnode_transfer *t = &cluster->transfers[id];
        if (t->kind == 0 || t->done || !t->window_open)
            continue;
        t->retransmitted = true; /* Karn: no round-trip sample from it */
        close_window(cluster, t);
        t->timeout = current_rto(cluster);
    }
}

void memnode_watch_link(struct memnode_cluster *cluster)
{
    bool down = !net_link_up();
    if (down == cluster->link_down)
        return;
    cluster->link_down = down;
    uint64_t now = net_now_us();
    for (unsigned node = 0; node < cluster->node_count; node++)
        memnode_liveness_reachable(&cluster->nodes[node].liveness, !down, now);
    if (down)
        cluster->link_downs++;
    else
        resend_open_windows(cluster);
    if (cluster->link_changed != NULL)
        cluster->link_changed(cluster, !down);
}

static void release(struct memnode_cluster *cluster, struct memnode_transfer *t)
{
    t->kind = 0;
    cluster->in_flight--;
}

bool memnode_collect(struct memnode_cluster *cluster, struct memnode_completion *done)
{
    for (unsigned id = 0; id < MEMNODE_MAX_TRANSFERS; id++) {
        struct memnode_transfer *t = &cluster->transfers[id];
        if (t->kind == 0 || !t->done)
            continue;
        *done = (struct memnode_completion){t->tag, t->kind, t->result, t->slot};
        release(cluster, t);
        return true;
    }
    return false;
}

long memnode_wait(struct memnode_cluster *cluster, long id)
{
    if (id < 0 || id >= MEMNODE_MAX_TRANSFERS || cluster->transfers[id].kind == 0)
        return -E_INVALID;
    struct memnode_transfer *t = &cluster->transfers[id];
    while (!t->done) {
        memnode_poll(cluster, cluster->timeout_us);
        if (!t->done)
            cluster->stats.slow_waits++;
    }
    long result = t->result;
    release(cluster, t);
    return result;
}

long memnode_store(struct memnode_cluster *cluster, uint64_t slot, const void *data)
{
    long id = memnode_submit_store(cluster, slot, data, 0);
    return id < 0 ? id : memnode_wait(cluster, id);
}

long memnode_retrieve(struct memnode_cluster *cluster, uint64_t slot, void *data)
{
    long id = memnode_submit_retrieve(cluster, slot, data, 0);
    return id < 0 ? id : memnode_wait(cluster, id);
}

long memnode_redirect(struct memnode_cluster *cluster, long id, uint64_t slot)
{
    struct memnode_transfer *t = &cluster->transfers[id];
    unsigned node;
    uint64_t block;
    long error = locate(cluster, slot, &node, &block);
    if (error != 0 || t->kind != MEMNODE_TRANSFER_RETRIEVE || t->done)
        return error != 0 ? error : -E_INVALID;
    close_window(cluster, t);
    node_active(cluster, t->node, -1);
    t->node = node;
    t->slot = slot;
    t->timeout = current_rto(cluster);
    memnode_reassembly_start_sized(&t->progress, ++cluster->sequence, block, cluster->block_bytes,
                                   cluster->fragment_bytes);
    node_active(cluster, node, +1);
    return 0;
}

uint64_t memnode_transfer_silence(struct memnode_cluster *cluster, long id)
{
    const struct memnode_transfer *t = &cluster->transfers[id];
    return memnode_liveness_silence(&cluster->nodes[t->node].liveness, net_now_us());
}
