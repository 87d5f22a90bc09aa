/* frame.c: bitmap frame allocator. First fit from a moving hint, which
 * keeps single-frame allocation cheap; contiguous runs (DMA buffers, stacks,
 * the inter-core area) search for a free run with the requested alignment. */
#include "frame.h"

static bool bit_is_set(const struct frame_allocator *allocator, uint64_t frame)
{
    return (allocator->bitmap[frame / 64] >> (frame % 64)) & 1;
}

static void bit_set(struct frame_allocator *allocator, uint64_t frame)
{
    if (!bit_is_set(allocator, frame)) {
        allocator->bitmap[frame / 64] |= 1ull << (frame % 64);
        allocator->free_count--;
    }
}

static void bit_clear(struct frame_allocator *allocator, uint64_t frame)
{
    if (bit_is_set(allocator, frame)) {
        allocator->bitmap[frame / 64] &= ~(1ull << (frame % 64));
        allocator->free_count++;
    }
}

uint64_t frame_bitmap_bytes(uint64_t frame_count)
{
    return (frame_count + 63) / 64 * 8;
}

void frame_allocator_init(struct frame_allocator *allocator, uint64_t *bitmap, uint64_t frame_count)
{
    allocator->bitmap = bitmap;
    allocator->frame_count = frame_count;
    allocator->free_count = 0;
    allocator->search_hint = 0;
    for (uint64_t i = 0; i < (frame_count + 63) / 64; i++)
        bitmap[i] = ~0ull;
}

void frame_release_range(struct frame_allocator *allocator, uint64_t base, uint64_t length)
{
    uint64_t first = base / FRAME_SIZE + (base % FRAME_SIZE != 0); /* rounds up without wrapping */
    uint64_t end = base + length < base ? UINT64_MAX : base + length;
    uint64_t last = end / FRAME_SIZE; /* exclusive */
    for (uint64_t frame = first; frame < last && frame < allocator->frame_count; frame++)
        bit_clear(allocator, frame);
}

void frame_reserve_range(struct frame_allocator *allocator, uint64_t base, uint64_t length)
{
    if (length == 0)
        return;
    uint64_t first = base / FRAME_SIZE;
    uint64_t end = base + length < base ? UINT64_MAX : base + length;
    uint64_t last = (end - 1) / FRAME_SIZE; /* inclusive */
    for (uint64_t frame = first; frame <= last && frame < allocator->frame_count; frame++)
        bit_set(allocator, frame);
}

bool frame_is_free(const struct frame_allocator *allocator, uint64_t physical)
{
    uint64_t frame = physical / FRAME_SIZE;
    return frame < allocator->frame_count && !bit_is_set(allocator, frame);
}

/* Length of the free run starting at `frame`, looking at no more than `wanted`. */
static uint64_t free_run(const struct frame_allocator *allocator, uint64_t frame, uint64_t wanted)
{
    uint64_t run = 0;
    while (run < wanted && frame + run < allocator->frame_count &&
           !bit_is_set(allocator, frame + run))
        run++;
    return run;
}

static uint64_t search(const struct frame_allocator *allocator, uint64_t start, uint64_t end,
                       uint64_t count, uint64_t align)
{
    uint64_t frame = (start + align - 1) & ~(align - 1);
    while (frame + count <= end) {
        if (allocator->bitmap[frame / 64] == ~0ull && align <= 64) {
            frame = ((frame / 64 + 1) * 64 + align - 1) & ~(align - 1);
            continue;
        }
        uint64_t run = free_run(allocator, frame, count);
        if (run == count)
            return frame;
        frame = (frame + run + 1 + align - 1) & ~(align - 1);
    }
    return FRAME_NONE;
}

uint64_t frame_allocate(struct frame_allocator *allocator, uint64_t count, uint64_t align_frames,
                        uint64_t limit)
{
    if (count == 0 || count > allocator->free_count)
        return FRAME_NONE;
    if (align_frames == 0 || (align_frames & (align_frames - 1)) != 0)
        return FRAME_NONE;
    uint64_t end = allocator->frame_count;
    if (limit != 0 && limit / FRAME_SIZE < end)
        end = limit / FRAME_SIZE;
    uint64_t hint = allocator->search_hint < end ? allocator->search_hint : 0;
    uint64_t frame = search(allocator, hint, end, count, align_frames);
    if (frame == FRAME_NONE && hint > 0)
        frame = search(allocator, 0, end, count, align_frames);
    if (frame == FRAME_NONE)
        return FRAME_NONE;
    for (uint64_t i = 0; i < count; i++)
        bit_set(allocator, frame + i);
    allocator->search_hint = frame + count;
    return frame * FRAME_SIZE;
}

bool frame_free(struct frame_allocator *allocator, uint64_t physical, uint64_t count)
{
    uint64_t first = physical / FRAME_SIZE;
    if (physical % FRAME_SIZE != 0 || count == 0 || first + count > allocator->frame_count ||
        first + count < first)
        return false;
    for (uint64_t i = 0; i < count; i++)
        if (!bit_is_set(allocator, first + i))
            return false;
    for (uint64_t i = 0; i < count; i++)
        bit_clear(allocator, first + i);
    if (first < allocator->search_hint)
        allocator->search_hint = first;
    return true;
}
