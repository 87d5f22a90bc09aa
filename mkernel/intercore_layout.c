/* intercore_layout.c: the m-kernel gives the inter-core area its memory.
 * The table at boot; rings for core 0's pairs at boot and for any other pair
 * on MESSAGE_INTERCORE_CONNECT, carved from 64 KiB chunks of frames. Only
 * the m-kernel's core runs this, so connections never race. */
#include "intercore_layout.h"
#include "console.h"
#include "intercore.h"
#include "layout.h"
#include "panic.h"
#include "physical_memory.h"
#include "shared.h"

#define CHUNK_PAGES 16

_Static_assert(sizeof(struct intercore_area) % 64 == 0, "the table starts on a cache line");

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

void serve_intercore_connect(const struct intercore_message *message,
                             const struct intercore_intercore_connect_request *request)
{
    if (request->core >= kernel_shared->core_count || request->core == message->from) {
        kprintf("intercore: core %u asked to connect to core %lu of %u; refused\n", message->from,
                request->core, kernel_shared->core_count);
        return;
    }
    connect_pair(message->from, (uint32_t)request->core);
}

static struct intercore_area *allocate_table(uint32_t count)
{
    uint64_t bytes = intercore_area_bytes(count);
    uint64_t table = physical_allocate((bytes + PAGE_SIZE - 1) / PAGE_SIZE, 0);
    if (table == 0)
        panic("out of memory for the %u x %u inter-core table (%lu bytes)", count, count, bytes);
    return phys_to_virt(table);
}

void intercore_layout_setup(void)
{
    uint32_t count = kernel_shared->core_count;
    struct intercore_area *area = allocate_table(count);
    intercore_area_init(area, count);
    kernel_shared->intercore = area;
    for (uint32_t core = FIRST_PKERNEL_CORE; core < count; core++)
        connect_pair(MKERNEL_CORE, core);
    kprintf("@json {\"kind\":\"intercore\",\"cores\":%u,\"slots\":%u,\"entry_bytes\":%u,"
            "\"table_bytes\":%lu,\"entries\":%u,\"bytes\":%lu}\n",
            area->core_count, area->slots, area->entry_bytes, intercore_area_bytes(count),
            area->pairs, intercore_area_memory(area));
}

void intercore_layout_connect_all(void)
{
    uint32_t cores = kernel_shared->core_count;
    for (uint32_t a = FIRST_PKERNEL_CORE; a < cores; a++)
        for (uint32_t b = a + 1; b < cores; b++)
            connect_pair(a, b);
}
