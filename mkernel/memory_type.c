/* memory_type.c: MTRR and PAT decoding (memory_type.h). */
#include "memory_type.h"

#define MTRR_VCNT_MASK 0xffu
#define MTRR_TYPE_MASK 0xffu
#define MTRR_ENABLED (1ull << 11)
#define MTRR_VALID (1ull << 11)
#define PAGE_MASK_LOW 0xfffull

static uint64_t physical_mask(const struct mtrr_state *mtrrs)
{
    uint32_t bits =
        mtrrs->physical_bits >= 32 && mtrrs->physical_bits <= 52 ? mtrrs->physical_bits : 36;
    return ((1ull << bits) - 1) & ~PAGE_MASK_LOW;
}

static uint32_t variable_count(const struct mtrr_state *mtrrs)
{
    uint32_t count = (uint32_t)(mtrrs->capabilities & MTRR_VCNT_MASK);
    return count < MTRR_VARIABLE_MAX ? count : MTRR_VARIABLE_MAX;
}

/* The type at one address: UC if any matching range says so, WT over WB,
 * the default where none matches. */
static enum memory_type type_at(const struct mtrr_state *mtrrs, uint64_t address)
{
    uint64_t physical = physical_mask(mtrrs);
    int found = -1;
    bool undefined = false;
    for (uint32_t i = 0; i < variable_count(mtrrs); i++) {
        if (!(mtrrs->mask[i] & MTRR_VALID))
            continue;
        uint64_t mask = mtrrs->mask[i] & physical;
        if ((address & mask) != (mtrrs->base[i] & mask))
            continue;
        int type = (int)(mtrrs->base[i] & MTRR_TYPE_MASK);
        if (type == MEMORY_UC)
            return MEMORY_UC;
        if (found < 0 || type == found)
            found = type;
        else if ((found == MEMORY_WT && type == MEMORY_WB) ||
                 (found == MEMORY_WB && type == MEMORY_WT))
            found = MEMORY_WT;
        else
            undefined = true;
    }
    if (undefined)
        return MEMORY_UNDEFINED;
    return found >= 0 ? (enum memory_type)found
                      : (enum memory_type)(mtrrs->default_type & MTRR_TYPE_MASK);
}

/* Where variable range i (a contiguous mask, as firmware writes them)
 * starts and ends. */
static void variable_bounds(const struct mtrr_state *mtrrs, uint32_t i, uint64_t *start,
                            uint64_t *end)
{
    uint64_t physical = physical_mask(mtrrs);
    uint64_t mask = mtrrs->mask[i] & physical;
    *start = mtrrs->base[i] & mask;
    *end = *start + ((~mask & physical) | PAGE_MASK_LOW) + 1;
}

enum memory_type mtrr_range_type(const struct mtrr_state *mtrrs, uint64_t base, uint64_t bytes)
{
    if (!mtrrs->present)
        return MEMORY_WB;
    if (!(mtrrs->default_type & MTRR_ENABLED))
        return MEMORY_UC;
    uint64_t end = base + bytes;
    enum memory_type type = type_at(mtrrs, base);
    /* The type changes only where a variable range starts or ends. */
    for (uint32_t i = 0; i < variable_count(mtrrs); i++) {
        if (!(mtrrs->mask[i] & MTRR_VALID))
            continue;
        uint64_t edges[2];
        variable_bounds(mtrrs, i, &edges[0], &edges[1]);
        for (int e = 0; e < 2; e++)
            if (edges[e] > base && edges[e] < end && type_at(mtrrs, edges[e]) != type)
                return MEMORY_MIXED;
    }
    return type;
}

enum memory_type pat_entry(uint64_t pat, unsigned index)
{
    return (enum memory_type)((pat >> (8 * (index & 7))) & 7);
}

const char *memory_type_name(enum memory_type type)
{
    switch (type) {
    case MEMORY_UC:
        return "UC";
    case MEMORY_WC:
        return "WC";
    case MEMORY_WT:
        return "WT";
    case MEMORY_WP:
        return "WP";
    case MEMORY_WB:
        return "WB";
    case MEMORY_UC_MINUS:
        return "UC-";
    case MEMORY_MIXED:
        return "mixed";
    case MEMORY_UNDEFINED:
        return "undefined";
    }
    return "?";
}
