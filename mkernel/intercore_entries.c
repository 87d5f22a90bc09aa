/* intercore_entries.c: the m-kernel gives the inter-core area its rings. At
 * boot it connects core 0 with every core; any other pair is connected when
 * one of its cores first sends to the other (MESSAGE_INTERCORE_CONNECT).
 * Rings are carved from 64 KiB chunks of frames; only core 0 runs this. */
#include "intercore_entries.h"
#include "console.h"
#include "intercore.h"
#include "layout.h"
#include "panic.h"
#include "physical_memory.h"
#include "shared.h"

#define CHUNK_PAGES 16

struct ring_pool {
    uint8_t *next;
    size_t left;
};

static struct ring_pool pool;

/* intercore_allocate_fn over the pool: a new chunk when the current one is used up. */
static void *allocate_from_pool(void *context, size_t bytes)
{
    struct ring_pool *rings = context;
    if (rings->left < bytes) {
        uint64_t chunk = physical_allocate(CHUNK_PAGES, 0);
        if (chunk == 0)
            return NULL;
        rings->next = phys_to_virt(chunk);
        rings->left = CHUNK_PAGES * PAGE_SIZE; /* zeroed frames */
    }
    void *ring = rings->next;
    rings->next += bytes;
    rings->left -= bytes;
    return ring;
}

static void connect_pair(uint32_t a, uint32_t b)
{
    if (intercore_area_connect(kernel_shared->intercore, a, b, allocate_from_pool, &pool) != 0)
        panic("out of memory for the inter-core entries of cores %u and %u", a, b);
}

static void on_connect(const struct intercore_message *message)
{
    uint64_t to = message->argument[0];
    if (to >= kernel_shared->core_count || to == message->from) {
        kprintf("intercore: core %u asked to connect to core %lu of %u\n", message->from, to,
                kernel_shared->core_count);
        return;
    }
    connect_pair(message->from, (uint32_t)to);
}

void intercore_entries_connect_all(void)
{
    uint32_t cores = kernel_shared->core_count;
    for (uint32_t a = 1; a < cores; a++)
        for (uint32_t b = a + 1; b < cores; b++)
            connect_pair(a, b);
}

void intercore_entries_setup(void)
{
    struct intercore_area *area = kernel_shared->intercore;
    for (uint32_t core = 1; core < area->core_count; core++)
        connect_pair(0, core);
    intercore_set_handler(MESSAGE_INTERCORE_CONNECT, on_connect);
    kprintf("@json {\"kind\":\"intercore\",\"cores\":%u,\"slots\":%u,\"entry_bytes\":%u,"
            "\"table_bytes\":%lu,\"entries\":%u,\"bytes\":%lu}\n",
            area->core_count, area->slots, area->entry_bytes,
            intercore_area_bytes(area->core_count), area->pairs, intercore_area_memory(area));
}
