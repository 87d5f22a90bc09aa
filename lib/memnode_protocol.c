/* memnode_protocol.c: encoding, decoding and validation of memory-node frames,
 * fragment bitmaps and reassembly, retransmission decisions and first-free
 * placement over nodes. No system calls: the host unit tests link it as is. */
#include <formica/memnode_protocol.h>
#include <string.h>

/* The header's fields are at MEMNODE_AT_* (protocol/memnode.messages). */
#define FRAGMENT_SHIFT_MAX 5 /* 32 KiB */

static void put16(uint8_t *at, uint16_t value)
{
    at[0] = (uint8_t)value;
    at[1] = (uint8_t)(value >> 8);
}

static void put32(uint8_t *at, uint32_t value)
{
    put16(at, (uint16_t)value);
    put16(at + 2, (uint16_t)(value >> 16));
}

static void put64(uint8_t *at, uint64_t value)
{
    put32(at, (uint32_t)value);
    put32(at + 4, (uint32_t)(value >> 32));
}

static uint16_t get16(const uint8_t *at)
{
    return (uint16_t)(at[0] | at[1] << 8);
}

static uint32_t get32(const uint8_t *at)
{
    return get16(at) | (uint32_t)get16(at + 2) << 16;
}

static uint64_t get64(const uint8_t *at)
{
    return get32(at) | (uint64_t)get32(at + 4) << 32;
}

bool memnode_block_size_valid(uint32_t block_bytes)
{
    return block_bytes >= MEMNODE_MIN_BLOCK && block_bytes <= MEMNODE_MAX_BLOCK &&
           (block_bytes & (block_bytes - 1)) == 0;
}

bool memnode_fragment_size_valid(uint32_t fragment_bytes)
{
    return fragment_bytes >= MEMNODE_FRAGMENT_BYTES &&
           fragment_bytes <= MEMNODE_LARGE_FRAGMENT_BYTES &&
           (fragment_bytes & (fragment_bytes - 1)) == 0;
}

uint32_t memnode_fragment_for_frame(uint32_t max_frame)
{
    uint32_t fragment = MEMNODE_LARGE_FRAGMENT_BYTES;
    while (fragment >= MEMNODE_FRAGMENT_BYTES &&
           MEMNODE_ETHERNET_HEADER + MEMNODE_HEADER_BYTES + fragment > max_frame)
        fragment /= 2;
    return fragment >= MEMNODE_FRAGMENT_BYTES ? fragment : 0;
}

uint32_t memnode_fragment_agreed(uint32_t client_largest, const struct memnode_message *reply)
{
    uint32_t node_largest = (reply->flags & MEMNODE_FLAG_LARGE_FRAGMENTS)
                                ? reply->fragment_bytes
                                : MEMNODE_JUMBO_FRAGMENT_BYTES;
    return node_largest < client_largest ? node_largest : client_largest;
}

uint16_t memnode_fragments(uint32_t block_bytes, uint32_t fragment_bytes)
{
    return (uint16_t)((block_bytes + fragment_bytes - 1) / fragment_bytes);
}

uint16_t memnode_fragment_count(uint32_t block_bytes)
{
    return memnode_fragments(block_bytes, MEMNODE_FRAGMENT_BYTES);
}

uint32_t memnode_fragment_offset_sized(uint16_t fragment, uint32_t fragment_bytes)
{
    return (uint32_t)fragment * fragment_bytes;
}

uint32_t memnode_fragment_length_sized(uint32_t block_bytes, uint16_t fragment,
                                       uint32_t fragment_bytes)
{
    uint32_t offset = memnode_fragment_offset_sized(fragment, fragment_bytes);
    if (offset >= block_bytes)
        return 0;
    uint32_t rest = block_bytes - offset;
    return rest < fragment_bytes ? rest : fragment_bytes;
}

uint32_t memnode_fragment_offset(uint16_t fragment)
{
    return memnode_fragment_offset_sized(fragment, MEMNODE_FRAGMENT_BYTES);
}

uint32_t memnode_fragment_length(uint32_t block_bytes, uint16_t fragment)
{
    return memnode_fragment_length_sized(block_bytes, fragment, MEMNODE_FRAGMENT_BYTES);
}

static uint32_t message_fragment_bytes(const struct memnode_message *message)
{
    return message->fragment_bytes ? message->fragment_bytes : MEMNODE_FRAGMENT_BYTES;
}

static uint8_t fragment_shift(uint32_t fragment_bytes)
{
    uint8_t shift = 0;
    while ((uint32_t)(MEMNODE_FRAGMENT_BYTES << shift) < fragment_bytes)
        shift++;
    return shift;
}

static uint16_t bitmap_bytes(uint16_t fragment_count)
{
    return (uint16_t)((fragment_count + 7) / 8);
}

long memnode_encode(const struct memnode_message *message, uint8_t *frame, size_t capacity)
{
    size_t length = MEMNODE_ETHERNET_HEADER + MEMNODE_HEADER_BYTES + message->payload_bytes;
    if (!memnode_fragment_size_valid(message_fragment_bytes(message)))
        return MEMNODE_ERROR_FRAGMENT;
    if (message->payload_bytes > message_fragment_bytes(message))
        return MEMNODE_ERROR_LENGTH;
    if (message->type == 0 || message->type > MEMNODE_TYPE_LAST)
        return MEMNODE_ERROR_TYPE;
    if (length > capacity)
        return MEMNODE_ERROR_SPACE;
    memcpy(frame, message->destination, 6);
    memcpy(frame + 6, message->source, 6);
    frame[12] = MEMNODE_ETHERTYPE >> 8;
    frame[13] = MEMNODE_ETHERTYPE & 0xff;
    uint8_t *header = frame + MEMNODE_ETHERNET_HEADER;
    memset(header, 0, MEMNODE_HEADER_BYTES);
    put16(header + MEMNODE_AT_MAGIC, MEMNODE_MAGIC);
    header[MEMNODE_AT_VERSION] = MEMNODE_VERSION;
    header[MEMNODE_AT_TYPE] = message->type;
    header[MEMNODE_AT_FLAGS] = message->flags;
    header[MEMNODE_AT_FRAGMENT_SHIFT] = fragment_shift(message_fragment_bytes(message));
    put16(header + MEMNODE_AT_STATUS, message->status);
    put32(header + MEMNODE_AT_SEQUENCE, message->sequence);
    put16(header + MEMNODE_AT_FRAGMENT, message->fragment);
    put16(header + MEMNODE_AT_FRAGMENT_COUNT, message->fragment_count);
    put64(header + MEMNODE_AT_BLOCK, message->block);
    put32(header + MEMNODE_AT_BLOCK_BYTES, message->block_bytes);
    put16(header + MEMNODE_AT_PAYLOAD_BYTES, message->payload_bytes);
    if (message->payload_bytes)
        memcpy(header + MEMNODE_HEADER_BYTES, message->payload, message->payload_bytes);
    return (long)length;
}

static void read_header(const uint8_t *frame, struct memnode_message *message)
{
    const uint8_t *header = frame + MEMNODE_ETHERNET_HEADER;
    memcpy(message->destination, frame, 6);
    memcpy(message->source, frame + 6, 6);
    message->type = header[MEMNODE_AT_TYPE];
    message->flags = header[MEMNODE_AT_FLAGS];
    message->fragment_bytes =
        header[MEMNODE_AT_FRAGMENT_SHIFT] <= FRAGMENT_SHIFT_MAX
            ? (uint16_t)(MEMNODE_FRAGMENT_BYTES << header[MEMNODE_AT_FRAGMENT_SHIFT])
            : 0;
    message->status = get16(header + MEMNODE_AT_STATUS);
    message->sequence = get32(header + MEMNODE_AT_SEQUENCE);
    message->fragment = get16(header + MEMNODE_AT_FRAGMENT);
    message->fragment_count = get16(header + MEMNODE_AT_FRAGMENT_COUNT);
    message->block = get64(header + MEMNODE_AT_BLOCK);
    message->block_bytes = get32(header + MEMNODE_AT_BLOCK_BYTES);
    message->payload_bytes = get16(header + MEMNODE_AT_PAYLOAD_BYTES);
    message->payload = header + MEMNODE_HEADER_BYTES;
}

/* Block-carrying messages: a valid size and the matching fragment count. */
static int check_block_fields(const struct memnode_message *message)
{
    if (!memnode_block_size_valid(message->block_bytes))
        return MEMNODE_ERROR_BLOCK_SIZE;
    if (message->fragment_bytes == 0 ||
        message->fragment_count != memnode_fragments(message->block_bytes, message->fragment_bytes))
        return MEMNODE_ERROR_FRAGMENT;
    return MEMNODE_OK;
}

/* A capacity, and a NEGOTIATE_REPLY's layout after it when it says so. */
static uint16_t capacity_payload_bytes(const struct memnode_message *message)
{
    bool layout =
        message->type == MEMNODE_NEGOTIATE_REPLY && (message->flags & MEMNODE_FLAG_LAYOUT);
    return (uint16_t)(MEMNODE_CAPACITY_BYTES + (layout ? MEMNODE_LAYOUT_BYTES : 0));
}

/* The payload against what the type carries (protocol/memnode.messages). */
static int check_payload(const struct memnode_message *message)
{
    switch (memnode_type_carries(message->type)) {
    case MEMNODE_CARRIES_NONE:
        return message->payload_bytes == 0 ? MEMNODE_OK : MEMNODE_ERROR_LENGTH;
    case MEMNODE_CARRIES_CAPACITY:
        return message->payload_bytes == capacity_payload_bytes(message) ? MEMNODE_OK
                                                                         : MEMNODE_ERROR_LENGTH;
    case MEMNODE_CARRIES_BITMAP: {
        int result = check_block_fields(message);
        if (result == MEMNODE_OK && message->payload_bytes != bitmap_bytes(message->fragment_count))
            result = MEMNODE_ERROR_LENGTH;
        return result;
    }
    case MEMNODE_CARRIES_FRAGMENT: {
        int result = check_block_fields(message);
        if (result != MEMNODE_OK)
            return result;
        if (message->fragment >= message->fragment_count)
            return MEMNODE_ERROR_FRAGMENT;
        if (message->payload_bytes != memnode_fragment_length_sized(message->block_bytes,
                                                                    message->fragment,
                                                                    message->fragment_bytes))
            return MEMNODE_ERROR_LENGTH;
        return MEMNODE_OK;
    }
    }
    return MEMNODE_ERROR_TYPE; /* no kind: not a declared type */
}

int memnode_decode(const uint8_t *frame, size_t length, struct memnode_message *message)
{
    if (length < MEMNODE_ETHERNET_HEADER + MEMNODE_HEADER_BYTES)
        return MEMNODE_ERROR_SHORT;
    if ((frame[12] << 8 | frame[13]) != MEMNODE_ETHERTYPE)
        return MEMNODE_ERROR_ETHERTYPE;
    const uint8_t *header = frame + MEMNODE_ETHERNET_HEADER;
    if (get16(header + MEMNODE_AT_MAGIC) != MEMNODE_MAGIC ||
        header[MEMNODE_AT_VERSION] != MEMNODE_VERSION)
        return MEMNODE_ERROR_MAGIC;
    read_header(frame, message);
    if (message->type == 0 || message->type > MEMNODE_TYPE_LAST)
        return MEMNODE_ERROR_TYPE;
    if (message->fragment_bytes == 0)
        return MEMNODE_ERROR_FRAGMENT;
    if (message->payload_bytes > message->fragment_bytes ||
        MEMNODE_ETHERNET_HEADER + MEMNODE_HEADER_BYTES + (size_t)message->payload_bytes > length)
        return MEMNODE_ERROR_LENGTH;
    return check_payload(message);
}

const char *memnode_error_text(int error)
{
    switch (error) {
    case MEMNODE_OK:
        return "ok";
    case MEMNODE_ERROR_SHORT:
        return "frame too short";
    case MEMNODE_ERROR_ETHERTYPE:
        return "not a memory-node frame";
    case MEMNODE_ERROR_MAGIC:
        return "bad magic or version";
    case MEMNODE_ERROR_TYPE:
        return "unknown message type";
    case MEMNODE_ERROR_LENGTH:
        return "bad payload length";
    case MEMNODE_ERROR_BLOCK_SIZE:
        return "bad block size";
    case MEMNODE_ERROR_FRAGMENT:
        return "fragment out of range";
    case MEMNODE_ERROR_SPACE:
        return "buffer too small";
    default:
        return "unknown error";
    }
}

void memnode_capacity_encode(const struct memnode_capacity *capacity, uint8_t *payload)
{
    put64(payload, capacity->capacity_bytes);
    put32(payload + 8, capacity->node_id);
    put32(payload + 12, capacity->min_block_bytes);
    put32(payload + 16, capacity->max_block_bytes);
    put32(payload + 20, capacity->node_flags);
    put64(payload + 24, capacity->generation);
    memcpy(payload + 32, capacity->cluster, sizeof capacity->cluster);
}

void memnode_capacity_decode(const uint8_t *payload, struct memnode_capacity *capacity)
{
    capacity->capacity_bytes = get64(payload);
    capacity->node_id = get32(payload + 8);
    capacity->min_block_bytes = get32(payload + 12);
    capacity->max_block_bytes = get32(payload + 16);
    capacity->node_flags = get32(payload + 20);
    capacity->generation = get64(payload + 24);
    memcpy(capacity->cluster, payload + 32, sizeof capacity->cluster);
}

void memnode_layout_encode(const struct memnode_layout *layout, uint8_t *payload)
{
    put64(payload, layout->device_bytes);
    put64(payload + 8, layout->tags_at);
    put64(payload + 16, layout->data_at);
    put64(payload + 24, layout->units);
    put32(payload + 32, layout->unit_bytes);
    put32(payload + 36, layout->tag_bytes);
}

void memnode_layout_decode(const uint8_t *payload, struct memnode_layout *layout)
{
    layout->device_bytes = get64(payload);
    layout->tags_at = get64(payload + 8);
    layout->data_at = get64(payload + 16);
    layout->units = get64(payload + 24);
    layout->unit_bytes = get32(payload + 32);
    layout->tag_bytes = get32(payload + 36);
}

bool memnode_reply_layout(const struct memnode_message *reply, struct memnode_layout *layout)
{
    if (reply->type != MEMNODE_NEGOTIATE_REPLY || !(reply->flags & MEMNODE_FLAG_LAYOUT) ||
        reply->payload_bytes < MEMNODE_CAPACITY_BYTES + MEMNODE_LAYOUT_BYTES)
        return false;
    memnode_layout_decode(reply->payload + MEMNODE_CAPACITY_BYTES, layout);
    return true;
}

bool memnode_sequence_newer(uint32_t candidate, uint32_t current)
{
    return (int32_t)(candidate - current) > 0;
}

bool memnode_bit_test(const uint8_t *bitmap, unsigned index)
{
    return (bitmap[index / 8] >> (index % 8)) & 1;
}

void memnode_bit_set(uint8_t *bitmap, unsigned index)
{
    bitmap[index / 8] |= (uint8_t)(1u << (index % 8));
}

unsigned memnode_bits_count(const uint8_t *bitmap, unsigned count)
{
    unsigned set = 0;
    for (unsigned index = 0; index < count; index++)
        set += memnode_bit_test(bitmap, index);
    return set;
}

unsigned memnode_missing_fragments(const uint8_t *bitmap, unsigned count, unsigned start,
                                   uint16_t *out, unsigned max)
{
    unsigned found = 0;
    for (unsigned index = start; index < count && found < max; index++)
        if (!memnode_bit_test(bitmap, index))
            out[found++] = (uint16_t)index;
    return found;
}

void memnode_reassembly_start(struct memnode_reassembly *state, uint32_t sequence, uint64_t block,
                              uint32_t block_bytes)
{
    memnode_reassembly_start_sized(state, sequence, block, block_bytes, MEMNODE_FRAGMENT_BYTES);
}

void memnode_reassembly_start_sized(struct memnode_reassembly *state, uint32_t sequence,
                                    uint64_t block, uint32_t block_bytes, uint32_t fragment_bytes)
{
    state->active = true;
    state->sequence = sequence;
    state->block = block;
    state->block_bytes = block_bytes;
    state->fragment_bytes = fragment_bytes;
    state->fragment_count = memnode_fragments(block_bytes, fragment_bytes);
    state->received = 0;
    memset(state->bitmap, 0, sizeof(state->bitmap));
}

enum memnode_accept memnode_reassembly_accept(struct memnode_reassembly *state,
                                              const struct memnode_message *message)
{
    if (!state->active || memnode_sequence_newer(message->sequence, state->sequence))
        memnode_reassembly_start_sized(state, message->sequence, message->block,
                                       message->block_bytes, message_fragment_bytes(message));
    else if (message->sequence != state->sequence) {
        state->stale++;
        return MEMNODE_ACCEPT_STALE;
    }
    if (message->block != state->block || message->block_bytes != state->block_bytes ||
        message_fragment_bytes(message) != state->fragment_bytes ||
        message->fragment >= state->fragment_count)
        return MEMNODE_ACCEPT_MISMATCH;
    if (memnode_bit_test(state->bitmap, message->fragment)) {
        state->duplicates++;
        return MEMNODE_ACCEPT_DUPLICATE;
    }
    memnode_bit_set(state->bitmap, message->fragment);
    state->received++;
    return MEMNODE_ACCEPT_NEW;
}

bool memnode_reassembly_complete(const struct memnode_reassembly *state)
{
    return state->active && state->received == state->fragment_count;
}

void memnode_retry_start(struct memnode_retry *retry, uint64_t now, uint64_t timeout,
                         unsigned limit)
{
    retry->timeout = timeout;
    retry->deadline = now + timeout;
    retry->attempts = 0;
    retry->limit = limit;
}

void memnode_retry_progress(struct memnode_retry *retry, uint64_t now)
{
    retry->deadline = now + retry->timeout;
    retry->attempts = 0;
}

enum memnode_retry_decision memnode_retry_check(struct memnode_retry *retry, uint64_t now)
{
    if (now < retry->deadline)
        return MEMNODE_RETRY_WAIT;
    if (retry->attempts >= retry->limit)
        return MEMNODE_RETRY_GIVE_UP;
    retry->attempts++;
    retry->deadline = now + retry->timeout;
    return MEMNODE_RETRY_RETRANSMIT;
}

size_t memnode_placement_bitmap_bytes(const uint64_t *node_blocks, unsigned node_count)
{
    uint64_t total = 0;
    for (unsigned node = 0; node < node_count; node++)
        total += node_blocks[node];
    return (size_t)((total + 7) / 8);
}

int memnode_placement_init(struct memnode_placement *placement, const uint64_t *node_blocks,
                           unsigned node_count, uint8_t *bitmap)
{
    if (node_count == 0 || node_count > MEMNODE_MAX_NODES)
        return MEMNODE_ERROR_LENGTH;
    memset(placement, 0, sizeof(*placement));
    placement->node_count = node_count;
    for (unsigned node = 0; node < node_count; node++) {
        placement->node_blocks[node] = node_blocks[node];
        placement->total_blocks += node_blocks[node];
    }
    placement->used = bitmap;
    memset(bitmap, 0, memnode_placement_bitmap_bytes(node_blocks, node_count));
    return MEMNODE_OK;
}

int64_t memnode_placement_allocate(struct memnode_placement *placement)
{
    for (uint64_t slot = placement->search_from; slot < placement->total_blocks; slot++) {
        if (placement->used[slot / 8] == 0xff) {
            slot |= 7;
            continue;
        }
        if (!((placement->used[slot / 8] >> (slot % 8)) & 1)) {
            placement->used[slot / 8] |= (uint8_t)(1u << (slot % 8));
            placement->used_blocks++;
            placement->search_from = slot + 1;
            return (int64_t)slot;
        }
    }
    placement->search_from = placement->total_blocks;
    return -1;
}

static uint64_t node_first_slot(const struct memnode_placement *placement, unsigned node)
{
    uint64_t first = 0;
    for (unsigned index = 0; index < node; index++)
        first += placement->node_blocks[index];
    return first;
}

static bool slot_used(const struct memnode_placement *placement, uint64_t slot)
{
    return (placement->used[slot / 8] >> (slot % 8)) & 1;
}

int64_t memnode_placement_allocate_on(struct memnode_placement *placement, unsigned node)
{
    if (node >= placement->node_count)
        return -1;
    uint64_t first = node_first_slot(placement, node), end = first + placement->node_blocks[node];
    for (uint64_t slot = first < placement->search_from ? placement->search_from : first;
         slot < end; slot++) {
        if (slot_used(placement, slot))
            continue;
        placement->used[slot / 8] |= (uint8_t)(1u << (slot % 8));
        placement->used_blocks++;
        if (slot == placement->search_from)
            placement->search_from = slot + 1;
        return (int64_t)slot;
    }
    return -1;
}

uint64_t memnode_placement_free_on(const struct memnode_placement *placement, unsigned node)
{
    if (node >= placement->node_count)
        return 0;
    uint64_t first = node_first_slot(placement, node), free_slots = 0;
    for (uint64_t slot = first; slot < first + placement->node_blocks[node]; slot++)
        free_slots += !slot_used(placement, slot);
    return free_slots;
}

void memnode_placement_free(struct memnode_placement *placement, uint64_t slot)
{
    if (slot >= placement->total_blocks || !((placement->used[slot / 8] >> (slot % 8)) & 1))
        return;
    placement->used[slot / 8] &= (uint8_t) ~(1u << (slot % 8));
    placement->used_blocks--;
    if (slot < placement->search_from)
        placement->search_from = slot;
}

bool memnode_placement_mark(struct memnode_placement *placement, uint64_t slot)
{
    if (slot >= placement->total_blocks || slot_used(placement, slot))
        return false;
    placement->used[slot / 8] |= (uint8_t)(1u << (slot % 8));
    placement->used_blocks++;
    while (placement->search_from < placement->total_blocks &&
           slot_used(placement, placement->search_from))
        placement->search_from++;
    return true;
}

static bool parse_number(const char **text, uint32_t *value)
{
    const char *at = *text;
    uint32_t number = 0;
    while (*at >= '0' && *at <= '9' && number < 1000)
        number = number * 10 + (uint32_t)(*at++ - '0');
    if (at == *text)
        return false;
    *text = at;
    *value = number;
    return true;
}

bool memnode_part_parse(const char *text, uint32_t *part, uint32_t *parts)
{
    uint32_t j, n;
    if (!parse_number(&text, &j) || *text++ != '/' || !parse_number(&text, &n) || *text != '\0')
        return false;
    if (j < 1 || j > n || n > MEMNODE_PARTS_MAX)
        return false;
    *part = j, *parts = n;
    return true;
}

uint64_t memnode_placement_keep_part(struct memnode_placement *placement, unsigned node,
                                     uint32_t part, uint32_t parts)
{
    if (node >= placement->node_count || part < 1 || part > parts)
        return 0;
    uint64_t blocks = placement->node_blocks[node];
    uint64_t first = blocks * (part - 1) / parts, end = blocks * part / parts;
    for (uint64_t block = 0; block < blocks; block++)
        if (block < first || block >= end)
            memnode_placement_mark(placement,
                                   (uint64_t)memnode_placement_slot(placement, node, block));
    return end - first;
}

int64_t memnode_placement_slot(const struct memnode_placement *placement, unsigned node,
                               uint64_t block)
{
    if (node >= placement->node_count || block >= placement->node_blocks[node])
        return -1;
    return (int64_t)(node_first_slot(placement, node) + block);
}

bool memnode_placement_locate(const struct memnode_placement *placement, uint64_t slot,
                              unsigned *node, uint64_t *block)
{
    for (unsigned index = 0; index < placement->node_count; index++) {
        if (slot < placement->node_blocks[index]) {
            *node = index;
            *block = slot;
            return true;
        }
        slot -= placement->node_blocks[index];
    }
    return false;
}
