/* test_memnode_protocol.c: host tests of lib/memnode_protocol.c: frames encode
 * and decode, bad frames are refused, blocks reassemble over a simulated lossy,
 * duplicating, reordering channel, retransmission follows a fake clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <formica/memnode_protocol.h>

static const uint8_t client_mac[6] = {0x52, 0x54, 0x00, 0x4d, 0x4e, 0x00};
static const uint8_t node_mac[6] = {0x52, 0x54, 0x00, 0x4d, 0x4e, 0x01};

static struct memnode_message store_message(uint32_t sequence, uint64_t block, uint32_t block_bytes,
                                            uint16_t fragment, const uint8_t *payload)
{
    struct memnode_message message = {.type = MEMNODE_STORE,
                                      .sequence = sequence,
                                      .block = block,
                                      .block_bytes = block_bytes,
                                      .fragment = fragment,
                                      .fragment_count = memnode_fragment_count(block_bytes),
                                      .payload_bytes =
                                          (uint16_t)memnode_fragment_length(block_bytes, fragment),
                                      .payload = payload};
    memcpy(message.destination, node_mac, 6);
    memcpy(message.source, client_mac, 6);
    return message;
}

static void test_store_round_trip(void **state)
{
    (void)state;
    uint8_t payload[MEMNODE_FRAGMENT_BYTES], frame[MEMNODE_FRAME_MAX];
    for (unsigned i = 0; i < sizeof(payload); i++)
        payload[i] = (uint8_t)(i * 7);
    struct memnode_message sent = store_message(0xfffffff0u, 12345678901ull, 65536, 63, payload);
    sent.flags = MEMNODE_FLAG_ACK_REQUEST;
    long length = memnode_encode(&sent, frame, sizeof(frame));
    assert_int_equal(length,
                     MEMNODE_ETHERNET_HEADER + MEMNODE_HEADER_BYTES + MEMNODE_FRAGMENT_BYTES);
    assert_int_equal(frame[12], 0x88);
    assert_int_equal(frame[13], 0xb5);
    struct memnode_message got;
    assert_int_equal(memnode_decode(frame, (size_t)length, &got), MEMNODE_OK);
    assert_int_equal(got.type, MEMNODE_STORE);
    assert_int_equal(got.flags, MEMNODE_FLAG_ACK_REQUEST);
    assert_int_equal(got.sequence, 0xfffffff0u);
    assert_true(got.block == 12345678901ull);
    assert_int_equal(got.block_bytes, 65536);
    assert_int_equal(got.fragment, 63);
    assert_int_equal(got.fragment_count, 64);
    assert_memory_equal(got.payload, payload, sizeof(payload));
    assert_memory_equal(got.destination, node_mac, 6);
    assert_memory_equal(got.source, client_mac, 6);
}

static void test_capacity_round_trip(void **state)
{
    (void)state;
    struct memnode_capacity capacity = {.capacity_bytes = 3ull << 30,
                                        .node_id = 7,
                                        .min_block_bytes = 4096,
                                        .max_block_bytes = 1 << 20,
                                        .node_flags = MEMNODE_NODE_PERSISTENT,
                                        .generation = 9,
                                        .cluster = {0xc1, [15] = 0xcf}};
    uint8_t payload[MEMNODE_CAPACITY_BYTES], frame[MEMNODE_FRAME_MAX];
    memnode_capacity_encode(&capacity, payload);
    struct memnode_message reply = {.type = MEMNODE_NEGOTIATE_REPLY,
                                    .sequence = 1,
                                    .payload_bytes = MEMNODE_CAPACITY_BYTES,
                                    .payload = payload};
    long length = memnode_encode(&reply, frame, sizeof(frame));
    assert_true(length > 0);
    struct memnode_message got;
    assert_int_equal(memnode_decode(frame, (size_t)length, &got), MEMNODE_OK);
    struct memnode_capacity back;
    memnode_capacity_decode(got.payload, &back);
    assert_true(back.capacity_bytes == 3ull << 30);
    assert_int_equal(back.node_id, 7);
    assert_int_equal(back.max_block_bytes, 1 << 20);
    assert_int_equal(back.node_flags, MEMNODE_NODE_PERSISTENT);
    assert_int_equal(back.generation, 9);
    assert_memory_equal(back.cluster, capacity.cluster, sizeof capacity.cluster);
}

/* Encodes a valid STORE, lets `spoil` damage it, and returns decode's verdict. */
static int decode_spoiled(void (*spoil)(uint8_t *frame, size_t *length))
{
    uint8_t payload[MEMNODE_FRAGMENT_BYTES] = {0}, frame[MEMNODE_FRAME_MAX + 64];
    struct memnode_message sent = store_message(5, 1, 4096, 1, payload);
    size_t length = (size_t)memnode_encode(&sent, frame, sizeof(frame));
    spoil(frame, &length);
    struct memnode_message got;
    return memnode_decode(frame, length, &got);
}

static void spoil_nothing(uint8_t *frame, size_t *length)
{
    (void)frame;
    (void)length;
}
static void spoil_short(uint8_t *frame, size_t *length)
{
    (void)frame;
    *length = 40;
}
static void spoil_truncated(uint8_t *frame, size_t *length)
{
    (void)frame;
    *length -= 1;
}
static void spoil_ethertype(uint8_t *frame, size_t *length)
{
    (void)length;
    frame[13] = 0;
}
static void spoil_magic(uint8_t *frame, size_t *length)
{
    (void)length;
    frame[14] ^= 1;
}
static void spoil_version(uint8_t *frame, size_t *length)
{
    (void)length;
    frame[16] = 9;
}
static void spoil_type(uint8_t *frame, size_t *length)
{
    (void)length;
    frame[17] = 42;
}
static void spoil_type_zero(uint8_t *frame, size_t *length)
{
    (void)length;
    frame[17] = 0;
}
static void spoil_fragment(uint8_t *frame, size_t *length)
{
    (void)length;
    frame[14 + 12] = 4;
}
static void spoil_count(uint8_t *frame, size_t *length)
{
    (void)length;
    frame[14 + 14] = 5;
}
static void spoil_block_size(uint8_t *frame, size_t *length)
{
    (void)length;
    frame[14 + 25] = 0x30;
}
static void spoil_payload(uint8_t *frame, size_t *length)
{
    (void)length;
    frame[14 + 28] = 0x10;
}
static void spoil_huge_payload(uint8_t *frame, size_t *length)
{
    (void)length;
    frame[14 + 29] = 0x40;
}
static void spoil_padding(uint8_t *frame, size_t *length)
{
    (void)frame;
    *length += 20;
}

static void test_bad_frames_are_refused(void **state)
{
    (void)state;
    assert_int_equal(decode_spoiled(spoil_nothing), MEMNODE_OK);
    assert_int_equal(decode_spoiled(spoil_padding), MEMNODE_OK); /* Ethernet padding is fine */
    assert_int_equal(decode_spoiled(spoil_short), MEMNODE_ERROR_SHORT);
    assert_int_equal(decode_spoiled(spoil_truncated), MEMNODE_ERROR_LENGTH);
    assert_int_equal(decode_spoiled(spoil_ethertype), MEMNODE_ERROR_ETHERTYPE);
    assert_int_equal(decode_spoiled(spoil_magic), MEMNODE_ERROR_MAGIC);
    assert_int_equal(decode_spoiled(spoil_version), MEMNODE_ERROR_MAGIC);
    assert_int_equal(decode_spoiled(spoil_type), MEMNODE_ERROR_TYPE);
    assert_int_equal(decode_spoiled(spoil_type_zero), MEMNODE_ERROR_TYPE);
    assert_int_equal(decode_spoiled(spoil_fragment), MEMNODE_ERROR_FRAGMENT);
    assert_int_equal(decode_spoiled(spoil_count), MEMNODE_ERROR_FRAGMENT);
    assert_int_equal(decode_spoiled(spoil_block_size), MEMNODE_ERROR_BLOCK_SIZE);
    assert_int_equal(decode_spoiled(spoil_payload), MEMNODE_ERROR_LENGTH);
    assert_int_equal(decode_spoiled(spoil_huge_payload), MEMNODE_ERROR_LENGTH);
    assert_string_equal(memnode_error_text(MEMNODE_ERROR_FRAGMENT), "fragment out of range");
}

static void test_encode_refuses(void **state)
{
    (void)state;
    uint8_t payload[MEMNODE_FRAGMENT_BYTES] = {0}, frame[MEMNODE_FRAME_MAX];
    struct memnode_message message = store_message(1, 0, 4096, 0, payload);
    assert_int_equal(memnode_encode(&message, frame, 100), MEMNODE_ERROR_SPACE);
    message.payload_bytes = MEMNODE_FRAGMENT_BYTES + 1;
    assert_int_equal(memnode_encode(&message, frame, sizeof(frame)), MEMNODE_ERROR_LENGTH);
    message.payload_bytes = 0;
    message.type = MEMNODE_TYPE_LAST + 1;
    assert_int_equal(memnode_encode(&message, frame, sizeof(frame)), MEMNODE_ERROR_TYPE);
    message.type = MEMNODE_STORE;
    message.fragment_bytes = 3000; /* not a power of two in 1-8 KiB */
    assert_int_equal(memnode_encode(&message, frame, sizeof(frame)), MEMNODE_ERROR_FRAGMENT);
}

static void test_block_sizes(void **state)
{
    (void)state;
    assert_true(memnode_block_size_valid(4096));
    assert_true(memnode_block_size_valid(1 << 20));
    assert_false(memnode_block_size_valid(2048));
    assert_false(memnode_block_size_valid(2 << 20));
    assert_false(memnode_block_size_valid(12288));
    assert_int_equal(memnode_fragment_count(4096), 4);
    assert_int_equal(memnode_fragment_count(1 << 20), 1024);
    assert_int_equal(memnode_fragment_length(4096, 3), 1024);
    assert_int_equal(memnode_fragment_length(4096, 4), 0);
}

static void test_sequence_wraps(void **state)
{
    (void)state;
    assert_true(memnode_sequence_newer(2, 1));
    assert_false(memnode_sequence_newer(1, 2));
    assert_false(memnode_sequence_newer(5, 5));
    assert_true(memnode_sequence_newer(3, 0xfffffffeu));
    assert_false(memnode_sequence_newer(0xfffffffeu, 3));
}

static void test_reassembly_duplicates_and_stale(void **state)
{
    (void)state;
    uint8_t payload[MEMNODE_FRAGMENT_BYTES] = {0};
    struct memnode_reassembly assembly = {0};
    struct memnode_message fragment = store_message(10, 3, 4096, 2, payload);
    assert_int_equal(memnode_reassembly_accept(&assembly, &fragment), MEMNODE_ACCEPT_NEW);
    assert_int_equal(memnode_reassembly_accept(&assembly, &fragment), MEMNODE_ACCEPT_DUPLICATE);
    struct memnode_message old = store_message(9, 3, 4096, 0, payload);
    assert_int_equal(memnode_reassembly_accept(&assembly, &old), MEMNODE_ACCEPT_STALE);
    struct memnode_message other_block = store_message(10, 4, 4096, 0, payload);
    assert_int_equal(memnode_reassembly_accept(&assembly, &other_block), MEMNODE_ACCEPT_MISMATCH);
    assert_int_equal(assembly.received, 1);
    struct memnode_message newer = store_message(11, 4, 4096, 0, payload);
    assert_int_equal(memnode_reassembly_accept(&assembly, &newer), MEMNODE_ACCEPT_NEW);
    assert_int_equal(assembly.received, 1); /* restarted for sequence 11 */
    assert_int_equal(assembly.duplicates, 1);
    assert_int_equal(assembly.stale, 1);
    assert_false(memnode_reassembly_complete(&assembly));
}

/* A deterministic lossy channel: drops, duplicates and reorders frames. */
struct channel {
    uint64_t random;
    unsigned drop_percent, duplicate_percent;
    uint8_t frames[256][MEMNODE_FRAME_MAX];
    size_t lengths[256];
    unsigned count;
    unsigned dropped, duplicated;
};

static unsigned channel_random(struct channel *channel, unsigned below)
{
    channel->random = channel->random * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)((channel->random >> 33) % below);
}

static void channel_put(struct channel *channel, const uint8_t *frame, size_t length)
{
    if (channel_random(channel, 100) < channel->drop_percent) {
        channel->dropped++;
        return;
    }
    unsigned copies = channel_random(channel, 100) < channel->duplicate_percent ? 2 : 1;
    channel->duplicated += copies - 1;
    for (unsigned copy = 0; copy < copies && channel->count < 256; copy++) {
        memcpy(channel->frames[channel->count], frame, length);
        channel->lengths[channel->count++] = length;
    }
}

/* Takes a random queued frame (so frames arrive out of order); false when empty. */
static bool channel_take(struct channel *channel, uint8_t *frame, size_t *length)
{
    if (channel->count == 0)
        return false;
    unsigned pick = channel_random(channel, channel->count);
    memcpy(frame, channel->frames[pick], channel->lengths[pick]);
    *length = channel->lengths[pick];
    channel->count--;
    memcpy(channel->frames[pick], channel->frames[channel->count],
           channel->lengths[channel->count]);
    channel->lengths[pick] = channel->lengths[channel->count];
    return true;
}

struct receiver {
    struct memnode_reassembly assembly;
    uint8_t *block;
    unsigned acks;
};

/* The node's side of one frame: reassemble, answer an ACK_REQUEST with the bitmap. */
static void receiver_take(struct receiver *receiver, const uint8_t *frame, size_t length,
                          struct channel *back)
{
    struct memnode_message message;
    assert_int_equal(memnode_decode(frame, length, &message), MEMNODE_OK);
    if (memnode_reassembly_accept(&receiver->assembly, &message) == MEMNODE_ACCEPT_NEW)
        memcpy(receiver->block + memnode_fragment_offset(message.fragment), message.payload,
               message.payload_bytes);
    if (!(message.flags & MEMNODE_FLAG_ACK_REQUEST))
        return;
    struct memnode_message ack = {.type = MEMNODE_STORE_ACK,
                                  .sequence = message.sequence,
                                  .block = message.block,
                                  .block_bytes = message.block_bytes,
                                  .fragment_count = message.fragment_count,
                                  .payload_bytes = (uint16_t)((message.fragment_count + 7) / 8),
                                  .payload = receiver->assembly.bitmap};
    uint8_t out[MEMNODE_FRAME_MAX];
    long out_length = memnode_encode(&ack, out, sizeof(out));
    assert_true(out_length > 0);
    channel_put(back, out, (size_t)out_length);
    receiver->acks++;
}

/* The client's side: send missing fragments a window at a time, retransmit on
 * the fake clock, stop at the retry limit. Returns 0 or -1 (gave up). */
static int simulate_store(uint32_t block_bytes, unsigned drop, unsigned duplicate,
                          unsigned retry_limit, bool node_dead, struct receiver *receiver,
                          unsigned *retransmissions)
{
    static struct channel forward, back;
    memset(&forward, 0, sizeof(forward));
    memset(&back, 0, sizeof(back));
    forward.random = 1, back.random = 2;
    forward.drop_percent = back.drop_percent = drop;
    forward.duplicate_percent = back.duplicate_percent = duplicate;
    uint8_t *data = malloc(block_bytes);
    for (uint32_t i = 0; i < block_bytes; i++)
        data[i] = (uint8_t)(i * 13 + i / 1024);
    uint16_t count = memnode_fragment_count(block_bytes);
    uint8_t acked[MEMNODE_BITMAP_BYTES] = {0};
    struct memnode_retry retry;
    uint64_t clock = 0;
    memnode_retry_start(&retry, clock, 100, retry_limit);
    bool send_window = true;
    int result = -1;
    *retransmissions = 0;
    for (;;) {
        if (memnode_bits_count(acked, count) == count) {
            result = 0;
            break;
        }
        if (send_window) {
            uint16_t window[MEMNODE_WINDOW];
            unsigned n = memnode_missing_fragments(acked, count, 0, window, MEMNODE_WINDOW);
            for (unsigned i = 0; i < n; i++) {
                struct memnode_message message = store_message(
                    77, 5, block_bytes, window[i], data + memnode_fragment_offset(window[i]));
                message.flags = i + 1 == n ? MEMNODE_FLAG_ACK_REQUEST : 0;
                uint8_t frame[MEMNODE_FRAME_MAX];
                channel_put(&forward, frame,
                            (size_t)memnode_encode(&message, frame, sizeof(frame)));
            }
            send_window = false;
        }
        uint8_t frame[MEMNODE_FRAME_MAX];
        size_t length;
        while (!node_dead && channel_take(&forward, frame, &length))
            receiver_take(receiver, frame, length, &back);
        bool progress = false;
        while (channel_take(&back, frame, &length)) {
            struct memnode_message ack;
            assert_int_equal(memnode_decode(frame, length, &ack), MEMNODE_OK);
            unsigned before = memnode_bits_count(acked, count);
            for (unsigned byte = 0; byte < ack.payload_bytes; byte++)
                acked[byte] |= ack.payload[byte];
            progress |= memnode_bits_count(acked, count) > before;
        }
        if (progress) {
            memnode_retry_progress(&retry, clock);
            send_window = true;
            continue;
        }
        clock += 10;
        enum memnode_retry_decision decision = memnode_retry_check(&retry, clock);
        if (decision == MEMNODE_RETRY_GIVE_UP)
            break;
        if (decision == MEMNODE_RETRY_RETRANSMIT) {
            (*retransmissions)++;
            send_window = true;
        }
    }
    if (result == 0)
        assert_memory_equal(receiver->block, data, block_bytes);
    free(data);
    return result;
}

static void run_lossy_store(uint32_t block_bytes, unsigned drop, unsigned duplicate)
{
    struct receiver receiver = {.block = calloc(1, block_bytes)};
    unsigned retransmissions;
    assert_int_equal(
        simulate_store(block_bytes, drop, duplicate, 50, false, &receiver, &retransmissions), 0);
    assert_true(memnode_reassembly_complete(&receiver.assembly));
    if (duplicate)
        assert_true(receiver.assembly.duplicates > 0);
    if (drop)
        assert_true(retransmissions > 0);
    free(receiver.block);
}

static void test_store_clean_channel(void **state)
{
    (void)state;
    run_lossy_store(4096, 0, 0);
    run_lossy_store(1 << 20, 0, 0);
}

static void test_store_with_loss_duplication_reordering(void **state)
{
    (void)state;
    run_lossy_store(4096, 20, 10);
    run_lossy_store(65536, 10, 10);
    run_lossy_store(1 << 20, 5, 5);
    run_lossy_store(1 << 20, 30, 30);
}

static void test_dead_node_hits_the_retry_limit(void **state)
{
    (void)state;
    struct receiver receiver = {.block = calloc(1, 65536)};
    unsigned retransmissions;
    assert_int_equal(simulate_store(65536, 0, 0, 4, true, &receiver, &retransmissions), -1);
    assert_int_equal(retransmissions, 4);
    assert_int_equal(receiver.acks, 0);
    free(receiver.block);
}

static void test_retry_fake_clock(void **state)
{
    (void)state;
    struct memnode_retry retry;
    memnode_retry_start(&retry, 1000, 50, 2);
    assert_int_equal(memnode_retry_check(&retry, 1049), MEMNODE_RETRY_WAIT);
    assert_int_equal(memnode_retry_check(&retry, 1050), MEMNODE_RETRY_RETRANSMIT);
    assert_int_equal(memnode_retry_check(&retry, 1060), MEMNODE_RETRY_WAIT);
    assert_int_equal(memnode_retry_check(&retry, 1100), MEMNODE_RETRY_RETRANSMIT);
    memnode_retry_progress(&retry, 1120); /* progress forgets the attempts */
    assert_int_equal(retry.attempts, 0);
    assert_int_equal(memnode_retry_check(&retry, 1169), MEMNODE_RETRY_WAIT);
    assert_int_equal(memnode_retry_check(&retry, 1170), MEMNODE_RETRY_RETRANSMIT);
    assert_int_equal(memnode_retry_check(&retry, 1220), MEMNODE_RETRY_RETRANSMIT);
    assert_int_equal(memnode_retry_check(&retry, 1270), MEMNODE_RETRY_GIVE_UP);
}

static void test_missing_fragments(void **state)
{
    (void)state;
    uint8_t bitmap[MEMNODE_BITMAP_BYTES] = {0};
    memnode_bit_set(bitmap, 0);
    memnode_bit_set(bitmap, 2);
    uint16_t out[4];
    assert_int_equal(memnode_missing_fragments(bitmap, 6, 0, out, 4), 4);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 3);
    assert_int_equal(out[3], 5);
    assert_int_equal(memnode_missing_fragments(bitmap, 6, 4, out, 4), 2);
    assert_int_equal(memnode_bits_count(bitmap, 6), 2);
}

static void test_first_free_placement(void **state)
{
    (void)state;
    const uint64_t blocks[3] = {3, 0, 5};
    uint8_t bitmap[1];
    assert_int_equal(memnode_placement_bitmap_bytes(blocks, 3), 1);
    struct memnode_placement placement;
    assert_int_equal(memnode_placement_init(&placement, blocks, 3, bitmap), MEMNODE_OK);
    assert_true(placement.total_blocks == 8);
    for (int64_t expected = 0; expected < 8; expected++)
        assert_true(memnode_placement_allocate(&placement) == expected);
    assert_true(memnode_placement_allocate(&placement) == -1); /* every node full */
    unsigned node;
    uint64_t block;
    assert_true(memnode_placement_locate(&placement, 2, &node, &block));
    assert_int_equal(node, 0);
    assert_true(block == 2);
    assert_true(memnode_placement_locate(&placement, 3, &node, &block));
    assert_int_equal(node, 2); /* node 1 has no capacity */
    assert_true(block == 0);
    assert_false(memnode_placement_locate(&placement, 8, &node, &block));
    memnode_placement_free(&placement, 6);
    memnode_placement_free(&placement, 1);
    memnode_placement_free(&placement, 1); /* twice: no effect */
    assert_true(placement.used_blocks == 6);
    assert_true(memnode_placement_allocate(&placement) == 1); /* first free again */
    assert_true(memnode_placement_allocate(&placement) == 6);
    assert_true(memnode_placement_allocate(&placement) == -1);
    assert_int_equal(memnode_placement_init(&placement, blocks, 0, bitmap), MEMNODE_ERROR_LENGTH);
}

/* A restarted client names its blocks by (node, block on that node) and marks them used
 * again: the slots it names are not handed out, marking one twice is refused. */
static void test_placement_marks_known_slots(void **state)
{
    (void)state;
    const uint64_t blocks[3] = {3, 0, 5};
    uint8_t bitmap[1];
    struct memnode_placement placement;
    assert_int_equal(memnode_placement_init(&placement, blocks, 3, bitmap), MEMNODE_OK);
    assert_true(memnode_placement_slot(&placement, 0, 2) == 2);
    assert_true(memnode_placement_slot(&placement, 2, 0) == 3);
    assert_true(memnode_placement_slot(&placement, 2, 4) == 7);
    assert_true(memnode_placement_slot(&placement, 2, 5) == -1); /* past the node's end */
    assert_true(memnode_placement_slot(&placement, 1, 0) == -1); /* no capacity */
    assert_true(memnode_placement_slot(&placement, 3, 0) == -1); /* no such node */
    assert_true(memnode_placement_mark(&placement, 0));
    assert_true(memnode_placement_mark(&placement, 4));
    assert_false(memnode_placement_mark(&placement, 4)); /* used already */
    assert_false(memnode_placement_mark(&placement, 8)); /* out of range */
    assert_true(placement.used_blocks == 2);
    assert_true(memnode_placement_allocate(&placement) == 1); /* the marked ones are skipped */
    assert_true(memnode_placement_allocate_on(&placement, 2) == 3);
    assert_true(memnode_placement_allocate_on(&placement, 2) == 5);
    assert_true(memnode_placement_free_on(&placement, 2) == 2);
    assert_true(memnode_placement_mark(&placement, 2)); /* search_from moves past it */
    assert_true(memnode_placement_allocate(&placement) == 6);
}

/* Fragment `fragment` of a 64 KiB block cut in `fragment_bytes` pieces. */
static struct memnode_message fragment_of_64k(uint8_t type, uint16_t fragment,
                                              uint16_t fragment_bytes, const uint8_t *payload)
{
    return (struct memnode_message){.type = type,
                                    .sequence = 9,
                                    .block = 3,
                                    .block_bytes = 65536,
                                    .fragment = fragment,
                                    .fragment_count = (uint16_t)(65536 / fragment_bytes),
                                    .fragment_bytes = fragment_bytes,
                                    .payload_bytes = fragment_bytes,
                                    .payload = payload};
}

/* Encodes `message` into `frame` and decodes it again into *got: the length. */
static long encode_then_decode(const struct memnode_message *message, uint8_t *frame, size_t size,
                               struct memnode_message *got)
{
    long length = memnode_encode(message, frame, size);
    assert_true(length > 0);
    assert_int_equal(memnode_decode(frame, (size_t)length, got), MEMNODE_OK);
    return length;
}

/* Jumbo fragments: 8 KiB per frame, the size carried in the header. */
static void test_jumbo_fragments(void **state)
{
    (void)state;
    static uint8_t payload[MEMNODE_JUMBO_FRAGMENT_BYTES], frame[MEMNODE_FRAME_MAX];
    for (unsigned i = 0; i < sizeof(payload); i++)
        payload[i] = (uint8_t)(i * 7);
    assert_int_equal(memnode_fragments(65536, 8192), 8);
    assert_int_equal(memnode_fragments(4096, 4096), 1);
    assert_int_equal(memnode_fragment_length_sized(65536, 7, 8192), 8192);
    assert_int_equal(memnode_fragment_offset_sized(3, 8192), 24576);
    assert_true(memnode_fragment_size_valid(8192));
    assert_true(memnode_fragment_size_valid(32768));
    assert_false(memnode_fragment_size_valid(65536));
    assert_false(memnode_fragment_size_valid(12288));
    assert_false(memnode_fragment_size_valid(512));
    struct memnode_message message = fragment_of_64k(MEMNODE_STORE, 7, 8192, payload), got;
    long length = encode_then_decode(&message, frame, sizeof(frame), &got);
    assert_int_equal(length, MEMNODE_FRAME_MAX);
    assert_int_equal(got.fragment_bytes, 8192);
    assert_int_equal(got.fragment_count, 8);
    assert_memory_equal(got.payload, payload, sizeof(payload));
    /* a fragment count that does not match the carried fragment size */
    message.fragment_count = 64;
    message.fragment = 0;
    length = memnode_encode(&message, frame, sizeof(frame));
    assert_int_equal(memnode_decode(frame, (size_t)length, &got), MEMNODE_ERROR_FRAGMENT);
    /* reassembly with 8 KiB fragments */
    struct memnode_reassembly assembly;
    memnode_reassembly_start_sized(&assembly, 9, 3, 65536, 8192);
    message.fragment_count = 8;
    for (uint16_t f = 0; f < 8; f++) {
        message.fragment = f;
        assert_int_equal(memnode_reassembly_accept(&assembly, &message), MEMNODE_ACCEPT_NEW);
    }
    assert_true(memnode_reassembly_complete(&assembly));
    message.fragment_bytes = 1024; /* same transfer, other fragment size: not ours */
    message.fragment = 0;
    assert_int_equal(memnode_reassembly_accept(&assembly, &message), MEMNODE_ACCEPT_MISMATCH);
}

/* 32 KiB fragments (shift 5): two frames for a 64 KiB block; a shift above
 * 5 is refused. */
static void test_large_fragments(void **state)
{
    (void)state;
    static uint8_t payload[MEMNODE_LARGE_FRAGMENT_BYTES], frame[MEMNODE_LARGE_FRAME_MAX];
    for (unsigned i = 0; i < sizeof(payload); i++)
        payload[i] = (uint8_t)(i * 13);
    struct memnode_message message = fragment_of_64k(MEMNODE_RETRIEVE_DATA, 1, 32768, payload), got;
    assert_int_equal(memnode_encode(&message, frame, MEMNODE_FRAME_MAX), MEMNODE_ERROR_SPACE);
    long length = encode_then_decode(&message, frame, sizeof(frame), &got);
    assert_int_equal(length, MEMNODE_LARGE_FRAME_MAX);
    assert_int_equal(frame[MEMNODE_ETHERNET_HEADER + 5], 5); /* the fragment shift */
    assert_int_equal(got.fragment_bytes, 32768);
    assert_memory_equal(got.payload, payload, sizeof(payload));
    frame[MEMNODE_ETHERNET_HEADER + 5] = 6; /* 64 KiB fragments: not defined */
    assert_int_equal(memnode_decode(frame, (size_t)length, &got), MEMNODE_ERROR_FRAGMENT);
    /* the largest fragment a frame size carries */
    assert_int_equal(memnode_fragment_for_frame(1514), 1024);
    assert_int_equal(memnode_fragment_for_frame(9014), 8192);
    assert_int_equal(memnode_fragment_for_frame(32814), 32768);
    assert_int_equal(memnode_fragment_for_frame(32813), 16384);
    assert_int_equal(memnode_fragment_for_frame(65535), 32768);
    assert_int_equal(memnode_fragment_for_frame(1000), 0);
}

/* NEGOTIATE with LARGE_FRAGMENTS: a node that answers with the flag gives
 * its largest fragment; one without it (an older node) takes 8 KiB. */
static void test_fragment_negotiation(void **state)
{
    (void)state;
    uint8_t capacity[MEMNODE_CAPACITY_BYTES] = {0}, frame[MEMNODE_FRAME_MAX];
    struct memnode_message reply = {.type = MEMNODE_NEGOTIATE_REPLY,
                                    .flags = MEMNODE_FLAG_LARGE_FRAGMENTS,
                                    .fragment_bytes = 32768,
                                    .payload_bytes = MEMNODE_CAPACITY_BYTES,
                                    .payload = capacity},
                           got;
    long length = memnode_encode(&reply, frame, sizeof(frame));
    assert_int_equal(memnode_decode(frame, (size_t)length, &got), MEMNODE_OK);
    assert_int_equal(memnode_fragment_agreed(32768, &got), 32768);
    assert_int_equal(memnode_fragment_agreed(8192, &got), 8192); /* the client's own limit */
    reply.fragment_bytes = 16384;
    length = memnode_encode(&reply, frame, sizeof(frame));
    assert_int_equal(memnode_decode(frame, (size_t)length, &got), MEMNODE_OK);
    assert_int_equal(memnode_fragment_agreed(32768, &got), 16384);
    reply.flags = 0; /* an older node: shift 0 in its reply, 8 KiB fragments taken */
    reply.fragment_bytes = 0;
    length = memnode_encode(&reply, frame, sizeof(frame));
    assert_int_equal(memnode_decode(frame, (size_t)length, &got), MEMNODE_OK);
    assert_int_equal(memnode_fragment_agreed(32768, &got), 8192);
    assert_int_equal(memnode_fragment_agreed(4096, &got), 4096);
}

static void test_ping_pong(void **state)
{
    (void)state;
    uint8_t frame[MEMNODE_FRAME_MAX];
    struct memnode_message ping = {.type = MEMNODE_PING, .sequence = 77}, got;
    long length = memnode_encode(&ping, frame, sizeof(frame));
    assert_int_equal(memnode_decode(frame, (size_t)length, &got), MEMNODE_OK);
    assert_int_equal(got.type, MEMNODE_PING);
    assert_int_equal(got.sequence, 77);
    uint8_t capacity[MEMNODE_CAPACITY_BYTES] = {0};
    struct memnode_message pong = {.type = MEMNODE_PONG, .payload_bytes = 1, .payload = capacity};
    length = memnode_encode(&pong, frame, sizeof(frame));
    assert_int_equal(memnode_decode(frame, (size_t)length, &got), MEMNODE_ERROR_LENGTH);
    pong.payload_bytes = MEMNODE_CAPACITY_BYTES; /* a PONG carries the node's capacity */
    length = memnode_encode(&pong, frame, sizeof(frame));
    assert_int_equal(memnode_decode(frame, (size_t)length, &got), MEMNODE_OK);
}

/* Replicas: a slot on one given node, and the free count per node. */
static void test_placement_on_a_node(void **state)
{
    (void)state;
    const uint64_t blocks[3] = {3, 0, 5};
    uint8_t bitmap[1];
    struct memnode_placement placement;
    assert_int_equal(memnode_placement_init(&placement, blocks, 3, bitmap), MEMNODE_OK);
    assert_true(memnode_placement_allocate_on(&placement, 2) == 3);
    assert_true(memnode_placement_allocate_on(&placement, 2) == 4);
    assert_true(memnode_placement_allocate_on(&placement, 1) == -1); /* no capacity */
    assert_true(memnode_placement_allocate_on(&placement, 9) == -1); /* no such node */
    assert_true(memnode_placement_free_on(&placement, 2) == 3);
    assert_true(memnode_placement_free_on(&placement, 0) == 3);
    assert_true(memnode_placement_allocate(&placement) == 0); /* first-free is unchanged */
    for (int i = 0; i < 2; i++)
        assert_true(memnode_placement_allocate_on(&placement, 0) >= 1);
    assert_true(memnode_placement_allocate_on(&placement, 0) == -1); /* node 0 full */
    assert_true(memnode_placement_allocate(&placement) == 5);
    memnode_placement_free(&placement, 3);
    assert_true(memnode_placement_allocate_on(&placement, 2) == 3);
}

static void test_client_parts(void **state)
{
    (void)state;
    uint32_t part = 0, parts = 0;
    assert_true(memnode_part_parse("2/4", &part, &parts) && part == 2 && parts == 4);
    assert_true(memnode_part_parse("1/1", &part, &parts) && part == 1 && parts == 1);
    const char *bad[] = {"", "0/2", "3/2", "1/9", "1/", "/2", "1-2", "1/2x", "x/2", "12"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_false(memnode_part_parse(bad[i], &part, &parts));
    /* two clients over nodes of 10 and 7 blocks: each keeps its half, no slot in both */
    const uint64_t blocks[2] = {10, 7};
    uint8_t first_bitmap[3], second_bitmap[3];
    struct memnode_placement first, second;
    assert_int_equal(memnode_placement_init(&first, blocks, 2, first_bitmap), MEMNODE_OK);
    assert_int_equal(memnode_placement_init(&second, blocks, 2, second_bitmap), MEMNODE_OK);
    assert_true(memnode_placement_keep_part(&first, 0, 1, 2) == 5);
    assert_true(memnode_placement_keep_part(&first, 1, 1, 2) == 3);
    assert_true(memnode_placement_keep_part(&second, 0, 2, 2) == 5);
    assert_true(memnode_placement_keep_part(&second, 1, 2, 2) == 4);
    uint8_t owner[17] = {0};
    for (int64_t slot; (slot = memnode_placement_allocate(&first)) >= 0;)
        owner[slot] |= 1;
    for (int64_t slot; (slot = memnode_placement_allocate(&second)) >= 0;)
        owner[slot] |= 2;
    for (int slot = 0; slot < 17; slot++)
        assert_true(owner[slot] == 1 || owner[slot] == 2); /* every slot one client's */
    assert_true(owner[0] == 1 && owner[4] == 1 && owner[5] == 2 && owner[9] == 2);
    assert_true(owner[10] == 1 && owner[12] == 1 && owner[13] == 2 && owner[16] == 2);
    assert_true(memnode_placement_keep_part(&first, 2, 1, 2) == 0); /* no such node */
    assert_true(memnode_placement_keep_part(&first, 0, 3, 2) == 0); /* no such part */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_client_parts),
        cmocka_unit_test(test_store_round_trip),
        cmocka_unit_test(test_capacity_round_trip),
        cmocka_unit_test(test_bad_frames_are_refused),
        cmocka_unit_test(test_encode_refuses),
        cmocka_unit_test(test_block_sizes),
        cmocka_unit_test(test_sequence_wraps),
        cmocka_unit_test(test_reassembly_duplicates_and_stale),
        cmocka_unit_test(test_missing_fragments),
        cmocka_unit_test(test_retry_fake_clock),
        cmocka_unit_test(test_store_clean_channel),
        cmocka_unit_test(test_store_with_loss_duplication_reordering),
        cmocka_unit_test(test_dead_node_hits_the_retry_limit),
        cmocka_unit_test(test_first_free_placement),
        cmocka_unit_test(test_placement_marks_known_slots),
        cmocka_unit_test(test_jumbo_fragments),
        cmocka_unit_test(test_large_fragments),
        cmocka_unit_test(test_fragment_negotiation),
        cmocka_unit_test(test_ping_pong),
        cmocka_unit_test(test_placement_on_a_node),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
