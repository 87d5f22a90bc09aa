/* frame.h: the physical frame allocator, owned by the m-kernel alone (the
 * p-kernels ask it over the inter-core area, so it needs no lock). A bitmap,
 * one bit per 4 KiB frame, set = in use. Pure logic, tested on the host. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define FRAME_SIZE 4096ul
#define FRAME_NONE UINT64_MAX

struct frame_allocator {
    uint64_t *bitmap;
    uint64_t frame_count; /* frames the bitmap covers, from physical 0 */
    uint64_t free_count;
    uint64_t search_hint; /* frame index where the next search starts */
};

/* Bytes of bitmap needed to cover `frame_count` frames. */
uint64_t frame_bitmap_bytes(uint64_t frame_count);
/* Starts with every frame in use; then call frame_release_range for free RAM. */
void frame_allocator_init(struct frame_allocator *allocator, uint64_t *bitmap,
                          uint64_t frame_count);
/* Marks [base, base+length) free / in use; partial frames at the edges are
 * left in use by release and taken whole by reserve. Out-of-range parts are ignored. */
void frame_release_range(struct frame_allocator *allocator, uint64_t base, uint64_t length);
void frame_reserve_range(struct frame_allocator *allocator, uint64_t base, uint64_t length);
bool frame_is_free(const struct frame_allocator *allocator, uint64_t physical);
/* `count` contiguous frames aligned to `align_frames` (a power of two) lying
 * wholly below `limit` (0 = anywhere); returns the physical address or FRAME_NONE. */
uint64_t frame_allocate(struct frame_allocator *allocator, uint64_t count, uint64_t align_frames,
                        uint64_t limit);
/* Frees `count` frames at `physical`; false (and nothing freed) if any of
 * them is out of range or already free: a double free is refused, not hidden. */
bool frame_free(struct frame_allocator *allocator, uint64_t physical, uint64_t count);
