/* memnode_protocol.h: the memory-node wire protocol (docs/memnode.md): Ethernet
 * frames of type 0x88b5 carrying NEGOTIATE, STORE and RETRIEVE with sequence
 * numbers, fragments of 1 KiB, reassembly bitmaps and retransmission timers. Pure.
 * The message types, the header's fields and what each type carries are
 * declared in protocol/memnode.messages (the generated header below). */
#pragma once
#include <formica/protocol/memnode.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MEMNODE_ETHERTYPE 0x88b5
#define MEMNODE_MAGIC 0x464d /* "FM" */
#define MEMNODE_VERSION 1
#define MEMNODE_ETHERNET_HEADER 14
#define MEMNODE_FRAGMENT_BYTES 1024        /* the default fragment (standard 1500-byte frames) */
#define MEMNODE_JUMBO_FRAGMENT_BYTES 8192  /* jumbo frames (MTU 9000) */
#define MEMNODE_LARGE_FRAGMENT_BYTES 32768 /* the largest: frames of MTU 32800 (shift 5) */
#define MEMNODE_FRAME_MAX                                                                          \
    (MEMNODE_ETHERNET_HEADER + MEMNODE_HEADER_BYTES + MEMNODE_JUMBO_FRAGMENT_BYTES)
#define MEMNODE_LARGE_FRAME_MAX                                                                    \
    (MEMNODE_ETHERNET_HEADER + MEMNODE_HEADER_BYTES + MEMNODE_LARGE_FRAGMENT_BYTES)
#define MEMNODE_MIN_BLOCK (4u << 10)
#define MEMNODE_MAX_BLOCK (1u << 20)
#define MEMNODE_MAX_FRAGMENTS (MEMNODE_MAX_BLOCK / MEMNODE_FRAGMENT_BYTES)
#define MEMNODE_BITMAP_BYTES (MEMNODE_MAX_FRAGMENTS / 8)
#define MEMNODE_WINDOW 64 /* fragments sent before an acknowledgement is asked for */

#define MEMNODE_FLAG_ACK_REQUEST 1u /* STORE: answer with a STORE_ACK now */
/* NEGOTIATE: the client takes fragments above 8 KiB; the NEGOTIATE_REPLY then
 * carries the flag too and the node's largest fragment in its fragment shift
 * (a node without the flag in its reply takes up to 8 KiB). */
#define MEMNODE_FLAG_LARGE_FRAGMENTS 2u
/* NEGOTIATE: the client would store and retrieve one-sided (ivshmem); a
 * persistent node's NEGOTIATE_REPLY then carries the flag and its store's
 * layout (struct memnode_layout) after the capacity (docs/memnode.md). */
#define MEMNODE_FLAG_LAYOUT 4u

/* Decoding and validation errors (negative). */
enum memnode_error {
    MEMNODE_OK = 0,
    MEMNODE_ERROR_SHORT = -1,      /* shorter than both headers */
    MEMNODE_ERROR_ETHERTYPE = -2,  /* not 0x88b5: not ours */
    MEMNODE_ERROR_MAGIC = -3,      /* bad magic or version */
    MEMNODE_ERROR_TYPE = -4,       /* unknown message type */
    MEMNODE_ERROR_LENGTH = -5,     /* payload length disagrees with the frame or the type */
    MEMNODE_ERROR_BLOCK_SIZE = -6, /* block size not a power of two in 4 KiB-1 MiB */
    MEMNODE_ERROR_FRAGMENT = -7,   /* fragment index or count out of range */
    MEMNODE_ERROR_SPACE = -8,      /* the output buffer is too small */
};

/* Statuses carried in replies (`status`). */
#define MEMNODE_STATUS_OK 0
#define MEMNODE_STATUS_OUT_OF_RANGE 1 /* block * block_bytes beyond the node's capacity */
#define MEMNODE_STATUS_BAD_BLOCK_SIZE 2
#define MEMNODE_STATUS_REFUSED                                                                     \
    3 /* the node serves nothing: its NVM is refused (foreign, corrupt) */
#define MEMNODE_STATUS_CORRUPT 4 /* RETRIEVE: the node's copy fails its tag: not held */
#define MEMNODE_STATUS_RESTARTED                                                                   \
    5 /* STORE, RETRIEVE: no NEGOTIATE from you since the node started */

struct memnode_message {
    uint8_t destination[6];
    uint8_t source[6];
    uint8_t type;
    uint8_t flags;
    uint16_t status;
    uint32_t sequence;
    uint64_t block;
    uint32_t block_bytes;
    uint16_t fragment;
    uint16_t fragment_count;
    uint16_t payload_bytes;
    uint16_t fragment_bytes; /* 1 KiB (0 when encoding means the same) up to 32 KiB */
    const uint8_t *payload;  /* decode: points into the frame */
};

/* NEGOTIATE_REPLY and PONG payload. */
#define MEMNODE_NODE_PERSISTENT 1u /* `node_flags`: blocks are kept in NVM across restarts */
struct memnode_capacity {
    uint64_t capacity_bytes;
    uint32_t node_id;
    uint32_t min_block_bytes;
    uint32_t max_block_bytes;
    uint32_t node_flags; /* MEMNODE_NODE_* */
    uint64_t generation; /* starts of the node's store (1, 2, ...; a DRAM node: its boot's) */
    uint8_t cluster[16]; /* the cluster id its store belongs to (0 for DRAM) */
};
#define MEMNODE_CAPACITY_BYTES 48

/* After the capacity in a NEGOTIATE_REPLY with MEMNODE_FLAG_LAYOUT: where a
 * persistent node's store keeps its tags and data (lib/memnode_store.c). */
struct memnode_layout {
    uint64_t device_bytes; /* the NVDIMM's size */
    uint64_t tags_at;      /* byte offset of the first tag */
    uint64_t data_at;      /* byte offset of data unit 0 */
    uint64_t units;        /* data units (and tags) */
    uint32_t unit_bytes;   /* MEMNODE_STORE_UNIT */
    uint32_t tag_bytes;    /* sizeof(struct memnode_tag) */
};
#define MEMNODE_LAYOUT_BYTES 40

/* Frame <-> message. encode returns the frame length or a negative error. */
long memnode_encode(const struct memnode_message *message, uint8_t *frame, size_t capacity);
int memnode_decode(const uint8_t *frame, size_t length, struct memnode_message *message);
const char *memnode_error_text(int error);
bool memnode_block_size_valid(uint32_t block_bytes);
uint16_t memnode_fragment_count(uint32_t block_bytes);
/* The same for fragments of `fragment_bytes` (a power of two, 1-32 KiB). */
uint16_t memnode_fragments(uint32_t block_bytes, uint32_t fragment_bytes);
bool memnode_fragment_size_valid(uint32_t fragment_bytes);
/* The largest fragment whose frame fits in `max_frame` bytes (0: none). */
uint32_t memnode_fragment_for_frame(uint32_t max_frame);
/* The fragment a client whose largest is `client_largest` uses with the node
 * that sent `reply` (its NEGOTIATE_REPLY to a NEGOTIATE with LARGE_FRAGMENTS). */
uint32_t memnode_fragment_agreed(uint32_t client_largest, const struct memnode_message *reply);
void memnode_capacity_encode(const struct memnode_capacity *capacity, uint8_t *payload);
void memnode_capacity_decode(const uint8_t *payload, struct memnode_capacity *capacity);
void memnode_layout_encode(const struct memnode_layout *layout, uint8_t *payload);
void memnode_layout_decode(const uint8_t *payload, struct memnode_layout *layout);
/* The layout a NEGOTIATE_REPLY carries: true and filled when it has one. */
bool memnode_reply_layout(const struct memnode_message *reply, struct memnode_layout *layout);

/* Sequence numbers: 32-bit, compared modulo 2^32. */
bool memnode_sequence_newer(uint32_t candidate, uint32_t current);

/* Fragment bitmaps (MEMNODE_BITMAP_BYTES bytes). */
bool memnode_bit_test(const uint8_t *bitmap, unsigned index);
void memnode_bit_set(uint8_t *bitmap, unsigned index);
unsigned memnode_bits_count(const uint8_t *bitmap, unsigned count);
/* Up to `max` fragments below `count` not set in `bitmap`, from index `start` on. */
unsigned memnode_missing_fragments(const uint8_t *bitmap, unsigned count, unsigned start,
                                   uint16_t *out, unsigned max);

/* Reassembly of one block (one transfer, identified by its sequence number). */
struct memnode_reassembly {
    bool active;
    uint32_t sequence;
    uint64_t block;
    uint32_t block_bytes;
    uint16_t fragment_count;
    uint16_t received;
    uint32_t fragment_bytes;
    uint64_t duplicates;
    uint64_t stale;
    uint8_t bitmap[MEMNODE_BITMAP_BYTES];
};

enum memnode_accept {
    MEMNODE_ACCEPT_NEW = 0,       /* a fragment not seen before: copy it */
    MEMNODE_ACCEPT_DUPLICATE = 1, /* already held: ignore */
    MEMNODE_ACCEPT_STALE = 2,     /* an older sequence number: ignore */
    MEMNODE_ACCEPT_MISMATCH = 3,  /* same sequence, other block or size: ignore */
};

/* Starts a transfer (clears the bitmap); 1 KiB fragments, or `fragment_bytes`. */
void memnode_reassembly_start(struct memnode_reassembly *state, uint32_t sequence, uint64_t block,
                              uint32_t block_bytes);
void memnode_reassembly_start_sized(struct memnode_reassembly *state, uint32_t sequence,
                                    uint64_t block, uint32_t block_bytes, uint32_t fragment_bytes);
/* Takes a fragment message: a newer sequence restarts the transfer. */
enum memnode_accept memnode_reassembly_accept(struct memnode_reassembly *state,
                                              const struct memnode_message *message);
bool memnode_reassembly_complete(const struct memnode_reassembly *state);
/* Byte offset of `fragment` in the block and its length. */
uint32_t memnode_fragment_offset(uint16_t fragment);
uint32_t memnode_fragment_length(uint32_t block_bytes, uint16_t fragment);
uint32_t memnode_fragment_offset_sized(uint16_t fragment, uint32_t fragment_bytes);
uint32_t memnode_fragment_length_sized(uint32_t block_bytes, uint16_t fragment,
                                       uint32_t fragment_bytes);

/* Retransmission: a deadline, attempts without progress, a limit. */
struct memnode_retry {
    uint64_t deadline;
    uint64_t timeout;
    unsigned attempts;
    unsigned limit;
};

enum memnode_retry_decision {
    MEMNODE_RETRY_WAIT = 0,       /* keep waiting */
    MEMNODE_RETRY_RETRANSMIT = 1, /* deadline passed: send again (the deadline is re-armed) */
    MEMNODE_RETRY_GIVE_UP = 2,    /* `limit` retransmissions without progress: the node is dead */
};

void memnode_retry_start(struct memnode_retry *retry, uint64_t now, uint64_t timeout,
                         unsigned limit);
/* Something new arrived: re-arm the deadline and forget past attempts. */
void memnode_retry_progress(struct memnode_retry *retry, uint64_t now);
enum memnode_retry_decision memnode_retry_check(struct memnode_retry *retry, uint64_t now);

/* First-free placement over several nodes: slot s is block s - first(node)
 * on the node whose range holds it. The caller gives the bitmap storage. */
#define MEMNODE_MAX_NODES 16
struct memnode_placement {
    unsigned node_count;
    uint64_t node_blocks[MEMNODE_MAX_NODES];
    uint64_t total_blocks;
    uint64_t used_blocks;
    uint64_t search_from; /* every slot below is in use */
    uint8_t *used;        /* total_blocks bits */
};

/* Bytes of bitmap needed for these node sizes. */
size_t memnode_placement_bitmap_bytes(const uint64_t *node_blocks, unsigned node_count);
int memnode_placement_init(struct memnode_placement *placement, const uint64_t *node_blocks,
                           unsigned node_count, uint8_t *bitmap);
/* The first free slot, or -1 when every node is full. */
int64_t memnode_placement_allocate(struct memnode_placement *placement);
/* The first free slot on node `node` only, or -1 when it is full. */
int64_t memnode_placement_allocate_on(struct memnode_placement *placement, unsigned node);
/* Free slots on node `node`. */
uint64_t memnode_placement_free_on(const struct memnode_placement *placement, unsigned node);
void memnode_placement_free(struct memnode_placement *placement, uint64_t slot);
/* Marks a known slot used (a restarted client taking its blocks back); false
 * when it is out of range or already used. */
bool memnode_placement_mark(struct memnode_placement *placement, uint64_t slot);
/* Several client machines sharing nodes (build/run --memnode-clients N): client J of N keeps
 * the J-th Nth of each node's blocks (J counted from 1), so no two clients place a block in
 * the same slot. The boot option memnode_part=J/N, parsed: false unless 1 <= J <= N <=
 * MEMNODE_PARTS_MAX. */
#define MEMNODE_PARTS_MAX 8
bool memnode_part_parse(const char *text, uint32_t *part, uint32_t *parts);
/* Marks every slot of node `node` outside part J of N used; the blocks left to this client. */
uint64_t memnode_placement_keep_part(struct memnode_placement *placement, unsigned node,
                                     uint32_t part, uint32_t parts);
/* The slot of block `block` on node `node`, or -1 when out of range. */
int64_t memnode_placement_slot(const struct memnode_placement *placement, unsigned node,
                               uint64_t block);
/* The node and its block number for `slot`; false when out of range. */
bool memnode_placement_locate(const struct memnode_placement *placement, uint64_t slot,
                              unsigned *node, uint64_t *block);
