/* apps/memnode: the memory-node role (`run --driver memnode CAPACITY_MB [--id N]
 * [--exit-after REQUESTS]`): reserves CAPACITY in its heap and answers NEGOTIATE,
 * STORE and RETRIEVE frames (docs/memnode.md) until powered off, over the
 * network card PCI shows (virtio-net or e1000e, lib/net/). */
#include <formica/net.h>
#include <formica/json.h>
#include <formica/memnode_protocol.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CLIENTS 8
#define STORES_PER_CLIENT 16 /* a client's stores reassembled at once (pipelining) */
#define UNIT_BYTES 4096u     /* the stale-store guard keeps one entry per 4 KiB */

struct client {
    bool used;
    uint8_t mac[6];
    uint32_t session; /* a NEGOTIATE starts a new one */
    struct memnode_reassembly stores[STORES_PER_CLIENT];
    uint32_t next_victim;
    uint32_t last_retrieve; /* sequence of the last RETRIEVE counted */
    bool retrieved;
};

/* Per 4 KiB unit of the reservation: the session and sequence of the last
 * store that wrote it, so a late fragment of an older store never
 * overwrites a newer one (several stores may be in flight). */
struct unit_writer {
    uint32_t session, sequence;
};

static struct {
    uint32_t node_id;
    uint64_t capacity_bytes;
    uint8_t *memory;
    uint8_t mac[6];
    uint64_t exit_after; /* 0: serve forever */
    struct client clients[MAX_CLIENTS];
    struct unit_writer *writers;
    uint32_t sessions;
    uint64_t pings;
    uint64_t negotiations, stores, retrieves, fragments_in, fragments_out;
    uint64_t duplicates, stale, bad_frames, refused;
} node;

static const uint8_t filler[MEMNODE_LARGE_FRAGMENT_BYTES]; /* an out-of-range RETRIEVE's data */

static void reply(struct memnode_message *message, const uint8_t destination[6])
{
    memcpy(message->destination, destination, 6);
    memcpy(message->source, node.mac, 6);
    uint8_t *frame = net_send_buffer(); /* encoded in place: the block is copied once */
    if (frame == NULL)
        return;
    long length = memnode_encode(message, frame, net_max_frame());
    net_send_buffered(length > 0 ? (size_t)length : 0);
}

/* The client's record (the least recently added one is reused when full). */
static struct client *client_of(const uint8_t mac[6])
{
    static unsigned next_victim;
    for (unsigned i = 0; i < MAX_CLIENTS; i++)
        if (node.clients[i].used && memcmp(node.clients[i].mac, mac, 6) == 0)
            return &node.clients[i];
    struct client *client = &node.clients[next_victim++ % MAX_CLIENTS];
    memset(client, 0, sizeof(*client));
    client->used = true;
    memcpy(client->mac, mac, 6);
    return client;
}

static bool block_in_range(const struct memnode_message *message)
{
    uint64_t blocks = node.capacity_bytes / message->block_bytes;
    return message->block < blocks;
}

static uint8_t *block_address(const struct memnode_message *message)
{
    return node.memory + message->block * message->block_bytes;
}

/* The fragment a NEGOTIATE_REPLY carries: with LARGE_FRAGMENTS, the largest
 * our frames hold (the client uses it or less); else 1 KiB, as before. */
static uint16_t largest_fragment(const struct memnode_message *request)
{
    if (!(request->flags & MEMNODE_FLAG_LARGE_FRAGMENTS))
        return MEMNODE_FRAGMENT_BYTES;
    uint32_t fragment = memnode_fragment_for_frame(net_max_frame());
    return (uint16_t)(fragment ? fragment : MEMNODE_FRAGMENT_BYTES);
}

/* NEGOTIATE opens a session: the client's sequence numbers start afresh. */
static void answer_negotiate(const struct memnode_message *request)
{
    node.negotiations++;
    struct client *client = client_of(request->source);
    memset(client->stores, 0, sizeof(client->stores));
    client->session = ++node.sessions;
    client->retrieved = false;
    struct memnode_capacity capacity = {.capacity_bytes = node.capacity_bytes,
                                        .node_id = node.node_id,
                                        .min_block_bytes = MEMNODE_MIN_BLOCK,
                                        .max_block_bytes = MEMNODE_MAX_BLOCK};
    uint8_t payload[MEMNODE_CAPACITY_BYTES];
    memnode_capacity_encode(&capacity, payload);
    struct memnode_message answer = {.type = MEMNODE_NEGOTIATE_REPLY,
                                     .sequence = request->sequence,
                                     .block_bytes = request->block_bytes,
                                     .payload_bytes = MEMNODE_CAPACITY_BYTES,
                                     .payload = payload,
                                     .flags = request->flags & MEMNODE_FLAG_LARGE_FRAGMENTS,
                                     .fragment_bytes = largest_fragment(request),
                                     .status = memnode_block_size_valid(request->block_bytes)
                                                   ? MEMNODE_STATUS_OK
                                                   : MEMNODE_STATUS_BAD_BLOCK_SIZE};
    reply(&answer, request->source);
}

static void acknowledge_store(const struct memnode_message *request,
                              const struct memnode_reassembly *store, uint16_t status)
{
    static const uint8_t nothing[MEMNODE_BITMAP_BYTES];
    struct memnode_message answer = {.type = MEMNODE_STORE_ACK,
                                     .status = status,
                                     .sequence = request->sequence,
                                     .block = request->block,
                                     .block_bytes = request->block_bytes,
                                     .fragment_count = request->fragment_count,
                                     .fragment_bytes = request->fragment_bytes,
                                     .payload_bytes = (uint16_t)((request->fragment_count + 7) / 8),
                                     .payload = store ? store->bitmap : nothing};
    reply(&answer, request->source);
}

/* The reassembly of this store: the one with its sequence number, else a
 * fresh one (a finished store is reused first, else the oldest). */
static struct memnode_reassembly *store_of(struct client *client,
                                           const struct memnode_message *request)
{
    for (unsigned i = 0; i < STORES_PER_CLIENT; i++)
        if (client->stores[i].active && client->stores[i].sequence == request->sequence)
            return &client->stores[i];
    for (unsigned i = 0; i < STORES_PER_CLIENT; i++)
        if (!client->stores[i].active || memnode_reassembly_complete(&client->stores[i]))
            return &client->stores[i];
    return &client->stores[client->next_victim++ % STORES_PER_CLIENT];
}

/* False when a newer store of this client already wrote the block. */
static bool store_is_current(const struct client *client, const struct memnode_message *request)
{
    struct unit_writer *writer = &node.writers[request->block * request->block_bytes / UNIT_BYTES];
    if (writer->session == client->session &&
        memnode_sequence_newer(writer->sequence, request->sequence))
        return false;
    writer->session = client->session;
    writer->sequence = request->sequence;
    return true;
}

/* STORE: copy a new fragment in place; acknowledge on request or completion. */
static void take_store(const struct memnode_message *request)
{
    if (!block_in_range(request)) {
        node.refused++;
        acknowledge_store(request, NULL, MEMNODE_STATUS_OUT_OF_RANGE);
        return;
    }
    struct client *client = client_of(request->source);
    node.fragments_in++;
    if (!store_is_current(client, request)) {
        node.stale++;
        return;
    }
    struct memnode_reassembly *store = store_of(client, request);
    if (store->active && store->sequence != request->sequence)
        store->active = false; /* reused: start this store afresh */
    bool was_complete = memnode_reassembly_complete(store) && store->sequence == request->sequence;
    enum memnode_accept verdict = memnode_reassembly_accept(store, request);
    if (verdict == MEMNODE_ACCEPT_STALE || verdict == MEMNODE_ACCEPT_MISMATCH) {
        node.stale++;
        return;
    }
    if (verdict == MEMNODE_ACCEPT_DUPLICATE)
        node.duplicates++;
    else
        memcpy(block_address(request) +
                   memnode_fragment_offset_sized(request->fragment, request->fragment_bytes),
               request->payload, request->payload_bytes);
    bool complete = memnode_reassembly_complete(store);
    if (complete && !was_complete)
        node.stores++;
    if ((request->flags & MEMNODE_FLAG_ACK_REQUEST) || (complete && !was_complete))
        acknowledge_store(request, store, MEMNODE_STATUS_OK);
}

static void send_fragment(const struct memnode_message *request, uint16_t fragment, bool last)
{
    struct memnode_message answer = {
        .type = MEMNODE_RETRIEVE_DATA,
        .flags = last ? MEMNODE_FLAG_ACK_REQUEST : 0,
        .sequence = request->sequence,
        .block = request->block,
        .block_bytes = request->block_bytes,
        .fragment = fragment,
        .fragment_count = request->fragment_count,
        .fragment_bytes = request->fragment_bytes,
        .payload_bytes = (uint16_t)memnode_fragment_length_sized(request->block_bytes, fragment,
                                                                 request->fragment_bytes),
        .payload = block_address(request) +
                   memnode_fragment_offset_sized(fragment, request->fragment_bytes)};
    reply(&answer, request->source);
    node.fragments_out++;
}

/* RETRIEVE: the fragments the client lacks, a window at a time; the last one
 * of the window is flagged so the client asks for the next at once. */
static void answer_retrieve(const struct memnode_message *request)
{
    if (!block_in_range(request)) {
        node.refused++;
        struct memnode_message answer = {.type = MEMNODE_RETRIEVE_DATA,
                                         .status = MEMNODE_STATUS_OUT_OF_RANGE,
                                         .sequence = request->sequence,
                                         .block = request->block,
                                         .block_bytes = request->block_bytes,
                                         .fragment_count = request->fragment_count,
                                         .fragment_bytes = request->fragment_bytes,
                                         .payload_bytes = (uint16_t)memnode_fragment_length_sized(
                                             request->block_bytes, 0, request->fragment_bytes),
                                         .payload = filler};
        reply(&answer, request->source);
        return;
    }
    struct client *client = client_of(request->source);
    if (!client->retrieved || client->last_retrieve != request->sequence) {
        client->retrieved = true;
        client->last_retrieve = request->sequence;
        node.retrieves++;
    }
    /* `fragment` says how many the client can take now (0: a whole window) */
    unsigned most = request->fragment && request->fragment < MEMNODE_WINDOW ? request->fragment
                                                                            : MEMNODE_WINDOW;
    uint16_t window[MEMNODE_WINDOW];
    unsigned n =
        memnode_missing_fragments(request->payload, request->fragment_count, 0, window, most);
    for (unsigned i = 0; i < n; i++)
        send_fragment(request, window[i], i + 1 == n);
}

/* A liveness probe: answered at once, whatever else is going on. */
static void answer_ping(const struct memnode_message *request)
{
    node.pings++;
    struct memnode_message answer = {.type = MEMNODE_PONG, .sequence = request->sequence};
    reply(&answer, request->source);
}

static void print_report(void)
{
    struct net_stats net;
    net_statistics(&net);
    printf("@json {\"kind\":\"memnode\",\"node\":%u,\"mac\":\"%02x:%02x:%02x:%02x:%02x:%02x\","
           "\"capacity_bytes\":%lu,\"negotiations\":%lu,\"stores\":%lu,\"retrieves\":%lu,"
           "\"fragments_in\":%lu,\"fragments_out\":%lu,\"duplicates\":%lu,\"stale\":%lu,"
           "\"refused\":%lu,\"bad_frames\":%lu,\"pings\":%lu,\"frames_not_ours\":%lu,"
           "\"nic\":\"%s\",\"link_changes\":%lu}\n",
           node.node_id, node.mac[0], node.mac[1], node.mac[2], node.mac[3], node.mac[4],
           node.mac[5], node.capacity_bytes, node.negotiations, node.stores, node.retrieves,
           node.fragments_in, node.fragments_out, node.duplicates, node.stale, node.refused,
           node.bad_frames, node.pings, net.dropped_not_mine, net_card_kind(), net.link_changes);
}

static void dispatch(const struct memnode_message *message)
{
    switch (message->type) {
    case MEMNODE_NEGOTIATE:
        answer_negotiate(message);
        break;
    case MEMNODE_STORE:
        take_store(message);
        break;
    case MEMNODE_RETRIEVE:
        answer_retrieve(message);
        break;
    case MEMNODE_PING:
        answer_ping(message);
        break;
    default:
        break; /* replies are for clients */
    }
}

static void serve(void)
{
    for (;;) {
        const void *frame_in; /* in the receive buffer until the next receive */
        long length = net_receive_in_place(&frame_in, NET_WAIT_FOREVER);
        struct memnode_message message;
        if (length <= 0)
            continue;
        int result = memnode_decode(frame_in, (size_t)length, &message);
        if (result != MEMNODE_OK) {
            if (result != MEMNODE_ERROR_ETHERTYPE)
                node.bad_frames++;
            continue;
        }
        dispatch(&message);
        if (node.exit_after && node.stores + node.retrieves >= node.exit_after)
            return;
    }
}

static bool parse_arguments(int argc, char **argv)
{
    if (argc < 2)
        return false;
    node.capacity_bytes = strtoul(argv[1], NULL, 0) << 20;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--id") == 0)
            node.node_id = (uint32_t)strtoul(argv[i + 1], NULL, 0);
        else if (strcmp(argv[i], "--exit-after") == 0)
            node.exit_after = strtoul(argv[i + 1], NULL, 0);
        else
            return false;
    }
    return node.capacity_bytes > 0 && (argc % 2) == 0;
}

int main(int argc, char **argv)
{
    if (!parse_arguments(argc, argv)) {
        printf("usage: memnode CAPACITY_MB [--id N] [--exit-after REQUESTS]\n");
        return 2;
    }
    long result = memory_grow(node.capacity_bytes);
    if (result < 0) {
        printf("memnode: cannot reserve %lu MiB: %s\n", node.capacity_bytes >> 20,
               error_text(result));
        return 1;
    }
    node.memory = (uint8_t *)result;
    node.writers = calloc(node.capacity_bytes / UNIT_BYTES, sizeof(struct unit_writer));
    if (node.writers == NULL) {
        printf("memnode: no memory for the store guard\n");
        return 1;
    }
    result = net_open();
    if (result < 0) {
        printf("memnode: no usable network card: %s\n", error_text(result));
        return 1;
    }
    net_mac(node.mac);
    printf("memnode: node %u serving %lu MiB at %02x:%02x:%02x:%02x:%02x:%02x\n", node.node_id,
           node.capacity_bytes >> 20, node.mac[0], node.mac[1], node.mac[2], node.mac[3],
           node.mac[4], node.mac[5]);
    serve();
    print_report();
    return 0;
}
