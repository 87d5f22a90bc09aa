/* ica.c: ICA lookup and the two halves of a handover. Peel clears the leaf
 * page-table entries of the ICA in the sender and flushes them from this
 * core's TLB; paste fills them in the receiver. The tables themselves are
 * built by the m-kernel (at process creation for the control window, on
 * first use for each 2 MiB of the data window); this file only writes
 * entries in tables that exist. */
#include "ica.h"
#include "ica_window.h"
#include "atomic.h"
#include "console.h"
#include "cpu.h"
#include "layout.h"
#include "mkernel_client.h"
#include "shared.h"
#include "translation_stamp.h"
#include "x86.h"
#include <formica/errors.h>

uint64_t *ica_leaf_table(uint64_t root, uint64_t address)
{
    uint64_t *table = phys_to_virt(root);
    for (int level = 3; level >= 1; level--) {
        uint64_t entry = table[(address >> (12 + 9 * level)) & 511];
        if (!(entry & ENTRY_PRESENT) || (entry & ENTRY_LARGE))
            return NULL;
        table = phys_to_virt(entry & ENTRY_ADDRESS);
    }
    return table;
}

_Static_assert(PROCESS_CONTROL_LEAVES * 512 == ICA_CONTROL_SLOTS,
               "one slot per control leaf table");
_Static_assert(ICA_CONTROL_BASE % (512 * 4096) == 0, "control leaves start at a table");
_Static_assert(PROCESS_BLOCK_LEAVES * 512 == ICA_BLOCK_SLOTS, "one slot per block leaf table");
_Static_assert(ICA_BLOCK_BASE % (512 * 4096) == 0, "block leaves start at a table");

/* Where the process remembers the leaf table covering `address`: a slot of
 * its own in the control and block windows, else a direct-mapped one whose
 * *tag must match. */
static inline uint64_t **leaf_slot(struct process *process, uint64_t address, uint64_t **tag)
{
    uint64_t table = address >> 21;
    *tag = NULL;
    if (address >= ICA_CONTROL_BASE && table - (ICA_CONTROL_BASE >> 21) < PROCESS_CONTROL_LEAVES)
        return &process->control_leaf[table - (ICA_CONTROL_BASE >> 21)];
    if (address >= ICA_BLOCK_BASE && table - (ICA_BLOCK_BASE >> 21) < PROCESS_BLOCK_LEAVES)
        return &process->block_leaf[table - (ICA_BLOCK_BASE >> 21)];
    uint32_t way = (uint32_t)(table % PROCESS_LEAF_CACHE);
    *tag = &process->leaf_region[way];
    return &process->leaf_table[way];
}

/* The leaf entry for `address` in the process's tables, or NULL when a
 * table is missing. Leaf tables found are remembered per process: ICA
 * windows' tables are only ever added while the address space lives. */
static inline uint64_t *leaf_entry(struct process *process, uint64_t address)
{
    if (process->root == 0)
        return NULL; /* its address space is gone */
    uint64_t *tag, **slot = leaf_slot(process, address, &tag);
    uint64_t region = (address >> 21) + 1;
    if (*slot == NULL || (tag != NULL && *tag != region)) {
        uint64_t *table = ica_leaf_table(process->root, address);
        if (table == NULL)
            return NULL;
        *slot = table;
        if (tag != NULL)
            *tag = region;
    }
    return &(*slot)[(address >> 12) & 511];
}

/* The leaf entry for `address`, looked up again only when `address` enters
 * a new leaf table (every 512 pages); *table_end tracks that. */
static uint64_t *next_leaf_entry(struct process *process, uint64_t address, uint64_t *previous,
                                 uint64_t *table_end)
{
    if (previous != NULL && address < *table_end)
        return previous + 1;
    *table_end = (address | (512 * PAGE_SIZE - 1)) + 1;
    return leaf_entry(process, address);
}

/* The pages of a data ICA, one leaf table at a time. */
static void unmap_many_pages(struct process *process, struct ica *ica, bool running)
{
    uint64_t address = ica_virtual_address(ica), table_end = 0;
    uint64_t *entry = NULL;
    for (uint32_t page = 0; page < ica->pages; page++, address += PAGE_SIZE) {
        entry = next_leaf_entry(process, address, entry, &table_end); /* NULL: walks again */
        if (entry != NULL)
            *entry = 0;
        if (running)
            invlpg(address);
    }
    if (!running)
        translations_dropped(process);
}

void ica_unmap_walking(struct process *process, struct ica *ica)
{
    bool running = this_cpu()->current == process;
    if (ica->pages != 1) {
        unmap_many_pages(process, ica, running);
        return;
    }
    uint64_t address = ica_virtual_address(ica);
    uint64_t *entry = leaf_entry(process, address);
    if (entry != NULL)
        *entry = 0;
    if (running)
        invlpg(address);
    else
        translations_dropped(process);
}

void ica_peel(struct process *process, struct ica *ica)
{
    ica_unmap(process, ica);
    atomic_store_release(&ica->owner, 0);
}

/* Asks the m-kernel for the page tables that cover the ICA in `process`. */
static bool prepare_tables(struct process *process, uint64_t address, uint64_t bytes)
{
    struct intercore_message request = {.type = MESSAGE_ICA_TABLES,
                                        .ica_tables = {process->pid, address, bytes}};
    struct intercore_message reply;
    mkernel_request(&request, &reply);
    return reply.ica_tables_reply.result == 0;
}

/* A data ICA's pages, or any ICA whose leaf table is still missing. */
static bool map_many_pages(struct process *process, struct ica *ica, uint64_t access)
{
    uint64_t address = ica_virtual_address(ica);
    uint64_t bytes = (uint64_t)ica->pages * PAGE_SIZE, table_end = 0;
    uint64_t *entry = next_leaf_entry(process, address, NULL, &table_end);
    bool last_missing = ica->pages > 1 && leaf_entry(process, address + bytes - PAGE_SIZE) == NULL;
    if (entry == NULL || last_missing) {
        if (!prepare_tables(process, address, bytes))
            return false;
        entry = next_leaf_entry(process, address, NULL, &table_end);
    }
    for (uint32_t page = 0; page < ica->pages; page++) {
        if (page > 0)
            entry = next_leaf_entry(process, address + page * PAGE_SIZE, entry, &table_end);
        *entry = (ica->physical + page * PAGE_SIZE) | ENTRY_PRESENT | ENTRY_USER | access;
    }
    return true;
}

/* Control and block ICAs: one entry, in tables made at process creation. */
static inline bool map_pages(struct process *process, struct ica *ica, uint64_t access)
{
    if (ica->pages == 1) {
        uint64_t *entry = ica_window_entry(process, ica);
        if (entry == NULL)
            entry = leaf_entry(process, ica_virtual_address(ica));
        if (entry != NULL) {
            *entry = ica->physical | ENTRY_PRESENT | ENTRY_USER | access;
            return true;
        }
    }
    return map_many_pages(process, ica, access);
}

bool ica_paste_lent_walking(struct process *process, struct ica *ica)
{
    if (ica_held_here(ica, process))
        return true;
    uint64_t *entry =
        ica->kind == ICA_KIND_BLOCK ? leaf_entry(process, ica_virtual_address(ica)) : NULL;
    if (entry == NULL) /* a data ICA, or no table yet: nothing mapped there */
        return map_pages(process, ica, 0);
    ica_lend_entry_into(entry, ica);
    return true;
}

/* The bits the processor sets in an entry it uses (accessed, dirty). */
#define ENTRY_USED_BITS 0x60ull

long ica_borrowed_by(const struct process *borrower, uint64_t id, struct ica **out)
{
    struct ica *ica = ica_lookup(id);
    if (ica == NULL || ica->kind != ICA_KIND_BLOCK || borrower->root == 0)
        return -E_PERMISSION;
    const uint64_t *entry = ica_block_leaf_entry(borrower, ica->index);
    if (entry == NULL || (*entry & ~(ENTRY_USED_BITS | ENTRY_LEND_COUNT)) != ica_lent_entry(ica))
        return -E_PERMISSION;
    *out = ica;
    return atomic_load_acquire(&ica->orphaned) ? -E_SERVER_ENDED : 0;
}

/* Apart, so ending a lend needs no room for the message. */
void ica_free_orphan(uint64_t id)
{
    struct intercore_message message = {.type = MESSAGE_ICA_FREE_ORPHAN, .ica_free_orphan = {id}};
    mkernel_notify(&message);
}

bool ica_paste(struct process *process, struct ica *ica)
{
    uint64_t *entry = ica_window_entry(process, ica);
    if (entry != NULL) /* the handover's hot path */
        *entry = ica_held_entry(ica);
    else if (!map_pages(process, ica, ENTRY_WRITABLE))
        return false;
    atomic_store_release(&ica->owner, process->pid);
    atomic_store_release(&ica->state, ICA_HELD);
    this_cpu()->ica_handovers++;
    return true;
}

struct server_entry *server_of_pid(uint32_t pid)
{
    struct ica_pools *pools = kernel_shared->icas;
    for (uint32_t i = 0; i < SERVER_SLOTS && pid != 0; i++)
        if (pools->servers[i].pid == pid)
            return &pools->servers[i];
    return NULL;
}

struct server_entry *server_of_process_looked_up(struct process *process)
{
    struct server_entry *server = server_of_pid(process->pid);
    if (server != NULL)
        process->server_seen = server;
    return server;
}
