/* apps/memnode: the memory-node role (`run --driver memnode CAPACITY_MB [--id N]
 * [--exit-after REQUESTS] [--report-ms MS]`): keeps CAPACITY in its NVDIMM (store_attach.c) or
 * its heap and answers NEGOTIATE, STORE and RETRIEVE frames (docs/memnode.md)
 * until powered off, over the network card PCI shows (virtio-net or e1000e). */
#include "store_attach.h"
#include <formica/net.h>
#include <formica/json.h>
#include <formica/memnode_protocol.h>
#include <formica/protocol/syscalls.h>
#include <formica/syscalls.h>
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
    bool negotiated;        /* a NEGOTIATE since this node started */
    uint16_t retrieve_held; /* the store's verdict on the last RETRIEVE's block */
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
    struct node_store store;
    uint8_t mac[6];
    uint64_t exit_after; /* 0: serve forever */
    struct client clients[MAX_CLIENTS];
    struct unit_writer *writers;
    uint32_t sessions;
    uint64_t pings;
    uint64_t negotiations, stores, retrieves, fragments_in, fragments_out;
    uint64_t duplicates, stale, bad_frames, refused;
    uint64_t corrupt, restarted_answers;
    uint64_t layouts_given; /* NEGOTIATE_REPLYs that carried the store's layout (one-sided) */
    uint64_t report_us;     /* --report-ms: the counters' line this often (0: at exit only) */
    uint32_t share_weight;  /* remote_share's weight (0: an ordinary account) */
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

/* What NEGOTIATE_REPLY and PONG carry: the capacity, the store's
 * generation and whether it is persistent (refused: no capacity). */
static void capacity_payload(uint8_t payload[MEMNODE_CAPACITY_BYTES])
{
    struct memnode_capacity capacity = {
        .capacity_bytes = node.store.refused ? 0 : node.capacity_bytes,
        .node_id = node.node_id,
        .min_block_bytes = MEMNODE_MIN_BLOCK,
        .max_block_bytes = MEMNODE_MAX_BLOCK,
        .node_flags = node.store.persistent ? MEMNODE_NODE_PERSISTENT : 0,
        .generation = node.store.generation};
    memcpy(capacity.cluster, node.store.cluster, sizeof capacity.cluster);
    memnode_capacity_encode(&capacity, payload);
}

static uint16_t negotiate_status(const struct memnode_message *request)
{
    if (node.store.refused)
        return MEMNODE_STATUS_REFUSED;
    return memnode_block_size_valid(request->block_bytes) ? MEMNODE_STATUS_OK
                                                          : MEMNODE_STATUS_BAD_BLOCK_SIZE;
}

/* NEGOTIATE opens a session: the client's sequence numbers start afresh. */
/* A client that would go one-sided (MEMNODE_FLAG_LAYOUT) is told where the
 * store keeps its tags and data, when the node has a store in NVM it serves. */
static bool layout_given(const struct memnode_message *request)
{
    return (request->flags & MEMNODE_FLAG_LAYOUT) && node.store.persistent && !node.store.refused;
}

static void answer_negotiate(const struct memnode_message *request)
{
    node.negotiations++;
    struct client *client = client_of(request->source);
    memset(client->stores, 0, sizeof(client->stores));
    client->session = ++node.sessions;
    client->retrieved = false;
    client->negotiated = true;
    uint8_t payload[MEMNODE_CAPACITY_BYTES + MEMNODE_LAYOUT_BYTES];
    capacity_payload(payload);
    bool layout = layout_given(request);
    if (layout) {
        struct memnode_layout where;
        memnode_store_layout(&node.store.nvm, &where);
        memnode_layout_encode(&where, payload + MEMNODE_CAPACITY_BYTES);
        node.layouts_given++;
    }
    struct memnode_message answer = {
        .type = MEMNODE_NEGOTIATE_REPLY,
        .sequence = request->sequence,
        .block_bytes = request->block_bytes,
        .payload_bytes = (uint16_t)(MEMNODE_CAPACITY_BYTES + (layout ? MEMNODE_LAYOUT_BYTES : 0)),
        .payload = payload,
        .flags = (uint8_t)((request->flags & MEMNODE_FLAG_LARGE_FRAGMENTS) |
                           (layout ? MEMNODE_FLAG_LAYOUT : 0)),
        .fragment_bytes = largest_fragment(request),
        .status = negotiate_status(request)};
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

/* The status a STORE or RETRIEVE is refused with, or OK to go on: a
 * client that has not negotiated since this node started is told so. */
static uint16_t transfer_refusal(const struct memnode_message *request)
{
    if (node.store.refused)
        return MEMNODE_STATUS_REFUSED;
    if (!block_in_range(request))
        return MEMNODE_STATUS_OUT_OF_RANGE;
    if (!client_of(request->source)->negotiated) {
        node.restarted_answers++;
        return MEMNODE_STATUS_RESTARTED;
    }
    return MEMNODE_STATUS_OK;
}

/* A fragment's bytes into the block: flushed at once in NVM. */
static void copy_fragment(const struct memnode_message *request)
{
    uint64_t offset = request->block * request->block_bytes +
                      memnode_fragment_offset_sized(request->fragment, request->fragment_bytes);
    if (node.store.persistent)
        memnode_store_write(&node.store.nvm, offset, request->payload, request->payload_bytes);
    else
        memcpy(node.memory + offset, request->payload, request->payload_bytes);
}

/* STORE: copy a new fragment in place; acknowledge on request or completion
 * (in NVM: the block's tag persisted first, after one fence). */
static void take_store(const struct memnode_message *request)
{
    uint16_t refusal = transfer_refusal(request);
    if (refusal != MEMNODE_STATUS_OK) {
        node.refused++;
        acknowledge_store(request, NULL, refusal);
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
        copy_fragment(request);
    bool complete = memnode_reassembly_complete(store);
    if (complete && !was_complete && node.store.persistent)
        memnode_store_commit(&node.store.nvm, request->block * request->block_bytes / UNIT_BYTES,
                             request->block_bytes, request->sequence);
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
static void refuse_retrieve(const struct memnode_message *request, uint16_t status)
{
    struct memnode_message answer = {.type = MEMNODE_RETRIEVE_DATA,
                                     .status = status,
                                     .sequence = request->sequence,
                                     .block = request->block,
                                     .block_bytes = request->block_bytes,
                                     .fragment_count = request->fragment_count,
                                     .fragment_bytes = request->fragment_bytes,
                                     .payload_bytes = (uint16_t)memnode_fragment_length_sized(
                                         request->block_bytes, 0, request->fragment_bytes),
                                     .payload = filler};
    reply(&answer, request->source);
}

/* In NVM: whether the block's tag holds it (checked once per RETRIEVE). */
static uint16_t retrieve_held(const struct memnode_message *request)
{
    if (!node.store.persistent)
        return MEMNODE_STATUS_OK;
    enum memnode_store_held held = memnode_store_check(
        &node.store.nvm, request->block * request->block_bytes / UNIT_BYTES, request->block_bytes);
    if (held == MEMNODE_HELD)
        return MEMNODE_STATUS_OK;
    node.corrupt++;
    printf("memnode: block %lu (%u bytes) %s: answered corrupt\n", request->block,
           request->block_bytes,
           held == MEMNODE_TORN ? "does not match its tag (a store cut by a crash?)"
                                : "has no tag");
    return MEMNODE_STATUS_CORRUPT;
}

static void answer_retrieve(const struct memnode_message *request)
{
    uint16_t refusal = transfer_refusal(request);
    if (refusal != MEMNODE_STATUS_OK) {
        node.refused++;
        refuse_retrieve(request, refusal);
        return;
    }
    struct client *client = client_of(request->source);
    if (!client->retrieved || client->last_retrieve != request->sequence) {
        client->retrieved = true;
        client->last_retrieve = request->sequence;
        client->retrieve_held = retrieve_held(request);
        node.retrieves++;
    }
    if (client->retrieve_held != MEMNODE_STATUS_OK) {
        refuse_retrieve(request, client->retrieve_held);
        return;
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
    uint8_t payload[MEMNODE_CAPACITY_BYTES];
    capacity_payload(payload);
    struct memnode_message answer = {.type = MEMNODE_PONG,
                                     .sequence = request->sequence,
                                     .payload_bytes = MEMNODE_CAPACITY_BYTES,
                                     .payload = payload};
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
           "\"nic\":\"%s\",\"link_changes\":%lu,\"persistent\":%s,\"generation\":%lu,"
           "\"corrupt\":%lu,\"restarted_answers\":%lu,\"store_refused\":%s,"
           "\"layouts_given\":%lu}\n",
           node.node_id, node.mac[0], node.mac[1], node.mac[2], node.mac[3], node.mac[4],
           node.mac[5], node.capacity_bytes, node.negotiations, node.stores, node.retrieves,
           node.fragments_in, node.fragments_out, node.duplicates, node.stale, node.refused,
           node.bad_frames, node.pings, net.dropped_not_mine, net_card_kind(), net.link_changes,
           node.store.persistent ? "true" : "false", node.store.generation, node.corrupt,
           node.restarted_answers, node.store.refused ? "true" : "false", node.layouts_given);
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

/* With --report-ms: the counters' line once the period passed (a one-sided
 * client's blocks never show here: the node's CPU does not see them). */
static uint64_t report_if_due(uint64_t due)
{
    if (node.report_us == 0)
        return 0;
    uint64_t now = net_now_us();
    if (now < due)
        return due;
    print_report();
    return now + node.report_us;
}

static void serve(void)
{
    uint64_t due = node.report_us ? net_now_us() + node.report_us : 0;
    for (;;) {
        const void *frame_in; /* in the receive buffer until the next receive */
        uint64_t now = net_now_us();
        uint64_t wait = !node.report_us ? NET_WAIT_FOREVER : due > now ? due - now : 0;
        long length = net_receive_in_place(&frame_in, wait);
        due = report_if_due(due);
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

/* "0.25" (or ".25") -> 250: a fraction in thousandths; false for anything else. */
static bool parse_fraction(const char *text, uint32_t *milli)
{
    if (text[0] == '0')
        text++;
    if (text[0] != '.' || text[1] == 0)
        return false;
    uint32_t value = 0, scale = 100;
    for (const char *digit = text + 1; *digit; digit++) {
        if (*digit < '0' || *digit > '9')
            return false;
        value += (uint32_t)(*digit - '0') * scale;
        scale /= 10;
    }
    *milli = value;
    return true;
}

/* remote_share=P: this process, the remote account, weighs P / (1 - P)
 * against local accounts at 1 on the node's fair scheduler (SYS_SHARE_WEIGHT);
 * without the option P is REMOTE_SHARE_DEFAULT, so local work keeps 80 % of
 * the core whenever it runs, with room for serving's slack beyond its weight.
 * remote_share=off takes serving out of that balance: it weighs
 * SHARE_WEIGHT_MAX and runs whenever a frame is there, as remote traffic that
 * no scheduler holds back. */
#define REMOTE_SHARE_DEFAULT "0.1"

static uint32_t remote_weight(const char *text)
{
    uint32_t milli = 0;
    if (strcmp(text, "off") == 0)
        return SHARE_WEIGHT_MAX;
    if (!parse_fraction(text, &milli) || milli == 0 || milli >= 1000)
        return 0;
    uint32_t weight = SHARE_WEIGHT_ONE * milli / (1000 - milli);
    return weight ? weight : 1;
}

static void weigh_remote_account(void)
{
    char text[16] = "";
    bool given = kernel_option("remote_share", text, sizeof text) > 0;
    if (!given)
        memcpy(text, REMOTE_SHARE_DEFAULT, sizeof REMOTE_SHARE_DEFAULT);
    uint32_t weight = remote_weight(text);
    if (weight == 0) {
        printf("memnode: remote_share=%s is neither off nor a fraction between 0 and 1: "
               "ignored\n",
               text);
        return;
    }
    long result = system_call_share_weight(weight);
    if (result != 0) {
        printf("memnode: remote_share=%s: %s\n", text, error_text(result));
        return;
    }
    node.share_weight = weight;
    printf("memnode: remote_share=%s%s: serving weighs %u against local work at %u\n", text,
           given ? "" : " (the default)", node.share_weight, SHARE_WEIGHT_ONE);
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
        else if (strcmp(argv[i], "--report-ms") == 0)
            node.report_us = strtoul(argv[i + 1], NULL, 0) * 1000;
        else
            return false;
    }
    return node.capacity_bytes > 0 && (argc % 2) == 0;
}

int main(int argc, char **argv)
{
    if (!parse_arguments(argc, argv)) {
        printf("usage: memnode CAPACITY_MB [--id N] [--exit-after REQUESTS] [--report-ms MS]\n");
        return 2;
    }
    if (node_store_attach(&node.store, node.node_id, node.capacity_bytes) != 0)
        return 1;
    node.memory = node.store.memory;
    weigh_remote_account();
    node.capacity_bytes = node.store.capacity_bytes;
    node.writers = calloc(node.capacity_bytes / UNIT_BYTES + 1, sizeof(struct unit_writer));
    if (node.writers == NULL) {
        printf("memnode: no memory for the store guard\n");
        return 1;
    }
    long result = net_open();
    if (result < 0) {
        printf("memnode: no usable network card: %s\n", error_text(result));
        return 1;
    }
    net_mac(node.mac);
    printf("memnode: node %u serving %lu MiB (%s) at %02x:%02x:%02x:%02x:%02x:%02x\n", node.node_id,
           node.store.refused ? 0 : node.capacity_bytes >> 20,
           node.store.refused      ? "refused: every NEGOTIATE answered status 3"
           : node.store.persistent ? "NVM"
                                   : "DRAM",
           node.mac[0], node.mac[1], node.mac[2], node.mac[3], node.mac[4], node.mac[5]);
    serve();
    print_report();
    return 0;
}
