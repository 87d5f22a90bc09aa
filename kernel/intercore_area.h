/* intercore_area.h: the memory of the inter-core area. A table of N×N entry
 * pointers; entry (i,j) is a ring that core i writes and core j reads. Rings
 * exist only for pairs that have talked (connected on demand, both
 * directions at once), and have fewer slots when there are many cores, so
 * 256 cores do not need 256² full rings. Pure logic, tested on the host. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ring.h"

/* Slots per entry: 16 up to 32 cores, 8 up to 128, 4 beyond (docs/intercore.md). */
#define INTERCORE_SLOTS_FEW_CORES 16
#define INTERCORE_SLOTS_MANY_CORES 8
#define INTERCORE_SLOTS_MOST_CORES 4
#define INTERCORE_MESSAGE_BYTES 64

/* Hands out `bytes` of zeroed, 64-byte aligned memory both kernels reach, or NULL. */
typedef void *(*intercore_allocate_fn)(void *context, size_t bytes);

struct intercore_area {
    uint32_t core_count;
    uint32_t slots;        /* per entry, a power of two */
    uint32_t entry_bytes;  /* one ring of `slots` messages, a multiple of 64 */
    uint32_t pairs;        /* connected entries (each direction counts) */
    uint64_t entry_memory; /* bytes of rings allocated so far */
    struct ring *entries[] __attribute__((aligned(64))); /* [from × core_count + to] */
};

uint32_t intercore_slots_for(uint32_t core_count);
/* Bytes of the area itself (header and table, no rings) for `core_count` cores. */
size_t intercore_area_bytes(uint32_t core_count);
/* Prepares the area (memory of intercore_area_bytes, any contents): no entry yet. */
void intercore_area_init(struct intercore_area *area, uint32_t core_count);
/* The ring core `from` writes and core `to` reads; NULL until the pair is connected. */
struct ring *intercore_entry(struct intercore_area *area, uint32_t from, uint32_t to);
/* Gives the pair both entries, (a,b) and (b,a), where they are missing; each is
 * initialised before it is published. Only one core may connect at a time (the
 * m-kernel's). 0, or -1 for a bad pair or when `allocate` fails. */
int intercore_area_connect(struct intercore_area *area, uint32_t a, uint32_t b,
                           intercore_allocate_fn allocate, void *context);
/* Bytes the area occupies now: header, table and the rings allocated. */
uint64_t intercore_area_memory(const struct intercore_area *area);
