/* mapping_lend.c: installing and ending mapping lends (mapping_lend.h): the
 * leaf entry at the user address, the table entry that remembers it, and
 * the block's lend count. The region's tables exist from its creation
 * (mkernel/file_region_services.c), so this only writes entries. */
#include "mapping_lend.h"
#include "account_memory.h"
#include "atomic.h"
#include "layout.h"
#include "cpu.h"
#include "ica_window.h"
#include "intercore.h"
#include "translation_stamp.h"
#include "x86.h"
#include <formica/errors.h>

static uint64_t *leaf_entry_at(const struct process *process, uint64_t address)
{
    if (process->root == 0)
        return NULL;
    uint64_t *table = ica_leaf_table(process->root, address);
    return table != NULL ? &table[(address >> 12) & 511] : NULL;
}

bool mapping_lend_install(struct process *process, struct ica *block, uint64_t address,
                          bool writable)
{
    uint64_t *entry = leaf_entry_at(process, address);
    if (entry == NULL || (*entry & ENTRY_PRESENT) != 0 || mapping_lend_table() == NULL)
        return false;
    uint32_t flags = writable ? MAPPING_LEND_WRITABLE : 0;
    /* Counted before the entry is claimed (and uncounted after it is cleared,
     * end_one): a block never has more entries than its counts say, so a
     * revoke that reads a mapping count of 0 has nothing to look for. */
    atomic_add(&block->lend_count, 1); /* before the mapping count: a lender never sees more */
    atomic_add(&block->mapping_lend_count, 1);
    if (mapping_lend_claim(mapping_lend_table(), ica_id_of(block), process->pid, address, flags) ==
        NULL) {
        atomic_sub_fetch(&block->mapping_lend_count, 1);
        atomic_sub_fetch(&block->lend_count, 1);
        return false;
    }
    atomic_add(&process->mapping_lends, 1);
    *entry = block->physical | ENTRY_PRESENT | ENTRY_USER | ENTRY_NOT_A_FRAME | ENTRY_MAPPING_LEND |
             (writable ? ENTRY_WRITABLE : 0);
    return true; /* not present before: no translation to drop */
}

static void end_one(struct process *process, struct mapping_lend *lend);

/* Whether the lend at table slot `slot` is the process's own, outside
 * [keep, keep_end): then it ends. */
static bool end_if_own(struct process *process, uint32_t slot, uint64_t keep, uint64_t keep_end)
{
    struct mapping_lend *lend = &mapping_lend_table()[slot & (MAPPING_LENDS - 1)];
    if (atomic_load_acquire(&lend->pid) != process->pid ||
        (lend->address >= keep && lend->address < keep_end))
        return false;
    end_one(process, lend);
    return true;
}

/* Ends up to `count` of the process's own lends outside [keep, keep_end),
 * in table order from where the last look stopped (the pager evicts a
 * client's own blocks alike): its share of BLK's cache and its account's
 * memory stay bounded. A lend's entry is nearly always its block's home
 * slot (mapping_lend_home: every MAPPING_LEND_HOME_STRIDE-th), so the homes
 * are looked at first, every slot only when they gave too few. How many it
 * ended. */
static uint32_t end_own_lends(struct process *process, uint32_t count, uint64_t keep,
                              uint64_t keep_end)
{
    if (mapping_lend_table() == NULL)
        return 0;
    uint32_t ended = 0;
    for (uint32_t step = 0; step < MAPPING_LENDS / MAPPING_LEND_HOME_STRIDE && ended < count;
         step++)
        if (end_if_own(process, process->mapping_lend_cursor++ * MAPPING_LEND_HOME_STRIDE, keep,
                       keep_end))
            ended++;
    for (uint32_t slot = 0; slot < MAPPING_LENDS && ended < count; slot++)
        if (end_if_own(process, slot, keep, keep_end))
            ended++;
    return ended;
}

uint32_t mapping_lends_give_back(struct process *process, uint32_t count, uint64_t keep,
                                 uint64_t keep_end)
{
    if (atomic_load_acquire(&process->mapping_lends) == 0)
        return 0;
    return end_own_lends(process, count, keep, keep_end);
}

/* Takes `wanted` lends of the process's credit if it holds that many (true),
 * else drops what is left of it (a sum then counts it as room again);
 * `seen` gets the word left. */
static bool take_credit(struct process *process, uint32_t wanted, uint64_t *seen)
{
    uint64_t word = atomic_load_acquire(&process->mapping_lend_credit);
    for (;;) {
        uint32_t lends = account_credit_lends(word);
        uint64_t left = account_credit_word(word, lends >= wanted ? lends - wanted : 0);
        if (atomic_compare_swap(&process->mapping_lend_credit, &word, left)) {
            *seen = left;
            return lends >= wanted;
        }
    }
}

/* Grants up to MAPPING_LEND_CREDIT of the `spare` pages a sum found, unless
 * the m-kernel took the credit of `seen` back meanwhile (a check since). */
static void grant_credit(struct process *process, uint64_t seen, uint64_t spare)
{
    uint32_t lends = spare < MAPPING_LEND_CREDIT ? (uint32_t)spare : MAPPING_LEND_CREDIT;
    atomic_compare_swap(&process->mapping_lend_credit, &seen, account_credit_word(seen, lends));
}

/* Room for `wanted` lends at [address, +wanted pages): past the
 * per-process bound, and past what its account may still count, the
 * process's own lends outside that range end first. The account is summed
 * only when the process's credit is spent (then some is granted from the
 * room found). How many of the wanted may be installed: 0 when its account
 * is full and it held none to give back. */
static uint32_t make_room(struct process *process, uint32_t wanted, uint64_t address)
{
    uint64_t seen;
    bool credited = take_credit(process, wanted, &seen);
    uint64_t room = credited ? wanted : account_lend_room(process);
    uint32_t held = atomic_load_acquire(&process->mapping_lends);
    uint32_t end = mapping_lends_to_end(held, wanted, room);
    uint32_t ended =
        end > 0 ? end_own_lends(process, end, address, address + (uint64_t)wanted * PAGE_SIZE) : 0;
    uint32_t installable = mapping_lends_installable(wanted, room, ended);
    if (!credited && room != UINT64_MAX)
        grant_credit(process, seen, room + ended - installable);
    return installable;
}

long mapping_lends_from_answer(struct process *process, uint64_t control_id, uint64_t address,
                               uint64_t end, bool writable)
{
    struct ica *control = ica_lookup(control_id);
    if (control == NULL)
        return 0;
    uint32_t wanted = control->lent_count;
    uint32_t allowed = mapping_lend_table() != NULL ? make_room(process, wanted, address) : wanted;
    if (wanted > 0 && allowed == 0) {
        ica_end_lends(process, control);
        return -E_QUOTA;
    }
    long first = 0;
    for (uint32_t i = 0; i < allowed; i++) {
        struct ica *block = ica_lookup(control->lent[i]);
        uint64_t at = address + (uint64_t)i * PAGE_SIZE;
        if (block == NULL || block->kind != ICA_KIND_BLOCK || at >= end)
            continue;
        /* stores only into a block its holder lent itself (the answer's sender) */
        if (writable && (atomic_load_acquire(&block->owner) != control->sender ||
                         atomic_load_acquire(&block->state) != ICA_HELD))
            continue;
        if (mapping_lend_install(process, block, at, writable) && i == 0)
            first = 1;
    }
    ica_end_lends(process, control); /* the ones not installed end here too */
    return first;
}

/* Ends one lend: its entry cleared if it still shows the block, the count
 * taken back. */
static void end_one(struct process *process, struct mapping_lend *lend)
{
    uint64_t id = lend->block, address = lend->address;
    struct ica *block = ica_slot_of(id);
    uint64_t *entry = leaf_entry_at(process, address);
    if (entry != NULL && (*entry & ENTRY_MAPPING_LEND) != 0 && block != NULL &&
        (*entry & ENTRY_ADDRESS) == block->physical) {
        *entry = 0;
        if (this_cpu()->current == process)
            invlpg(address);
        else
            translations_dropped(process);
    }
    mapping_lend_clear(lend);
    atomic_sub_fetch(&process->mapping_lends, 1);
    if (block != NULL)
        atomic_sub_fetch(&block->mapping_lend_count, 1);
    if (block != NULL && atomic_sub_fetch(&block->lend_count, 1) == 0 && block->orphaned)
        ica_free_orphan(id);
}

void mapping_lends_end(struct process *process, uint64_t base, uint64_t bytes)
{
    struct mapping_lend *table = mapping_lend_table();
    if (table == NULL)
        return;
    for (uint32_t i = 0; i < MAPPING_LENDS && atomic_load_acquire(&process->mapping_lends) > 0; i++)
        if (mapping_lend_in_range(&table[i], process->pid, base, base + bytes))
            end_one(process, &table[i]);
}

uint64_t mapping_lend_frame_at(struct process *process, uint64_t address)
{
    uint64_t *entry = leaf_entry_at(process, address);
    if (entry == NULL ||
        (*entry & (ENTRY_PRESENT | ENTRY_MAPPING_LEND)) != (ENTRY_PRESENT | ENTRY_MAPPING_LEND))
        return 0;
    return *entry & ENTRY_ADDRESS;
}

/* The block ICA whose frame is `frame` (a mapping lend's: its lend keeps
 * it from being freed), or NULL. */
static struct ica *block_of_frame(uint64_t frame)
{
    struct ica_pools *pools = kernel_shared->icas;
    for (uint32_t i = 0; i < pools->block_reach && i < ICA_BLOCK_SLOTS; i++)
        if (pools->block[i].physical == frame && pools->block[i].state != ICA_FREE)
            return &pools->block[i];
    return NULL;
}

void mapping_lend_end_at(struct process *process, uint64_t address)
{
    uint64_t lent = mapping_lend_frame_at(process, address);
    struct ica *block = lent != 0 ? block_of_frame(lent) : NULL;
    struct mapping_lend *lend =
        block != NULL && mapping_lend_table() != NULL
            ? mapping_lend_find(mapping_lend_table(), ica_id_of(block), process->pid, address)
            : NULL;
    if (lend != NULL)
        end_one(process, lend);
}

void mapping_lend_swap_for_frame(struct process *process, uint64_t address, uint64_t frame,
                                 bool writable)
{
    mapping_lend_end_at(process, address);
    uint64_t *entry = leaf_entry_at(process, address);
    if (entry == NULL)
        return;
    *entry = frame | ENTRY_PRESENT | ENTRY_USER | (writable ? ENTRY_WRITABLE : 0);
    if (this_cpu()->current == process)
        invlpg(address);
    else
        translations_dropped(process);
}

/* On the mapper's core: `lend` (its entry of `process`) ended, or made
 * read-only, its translation flushed. */
static void revoke_entry(struct process *process, struct mapping_lend *lend, bool write_only)
{
    if (!write_only) {
        end_one(process, lend);
        return;
    }
    uint64_t address = lend->address;
    uint64_t *entry = leaf_entry_at(process, address);
    if (entry != NULL && (*entry & ENTRY_MAPPING_LEND) != 0)
        *entry &= ~ENTRY_WRITABLE;
    lend->flags &= ~MAPPING_LEND_WRITABLE;
    if (this_cpu()->current == process)
        invlpg(address);
    else
        translations_dropped(process);
}

long mapping_lend_revoke_here(uint32_t pid, uint64_t block, uint64_t address, bool write_only)
{
    struct process *process = process_find(pid);
    struct mapping_lend *lend =
        process != NULL && process->core == this_cpu()->index && mapping_lend_table() != NULL
            ? mapping_lend_find(mapping_lend_table(), block, pid, address)
            : NULL;
    if (lend == NULL)
        return 0;
    revoke_entry(process, lend, write_only);
    return 1;
}

/* One entry of the block's run: revoked in place on this core, else by its
 * mapper's core (waited for); how many (0 or 1). */
static long revoke_one(uint64_t id, struct mapping_lend *lend, uint32_t pid, bool write_only)
{
    struct process *mapper = process_find(pid);
    if (mapper == NULL)
        return 0;
    if (mapper->core == this_cpu()->index) {
        if (atomic_load_acquire(&lend->pid) != pid || lend->block != id)
            return 0;
        revoke_entry(mapper, lend, write_only);
        return 1;
    }
    struct intercore_message message = {
        .type = MESSAGE_TRANSLATIONS_REVOKED,
        .translations_revoked = {pid, write_only ? 1 : 0, id, lend->address},
    };
    struct intercore_message reply;
    intercore_call(mapper->core, &message, &reply); /* answered once its core is done */
    return reply.translations_revoked_reply.result;
}

long mapping_lends_revoke(struct process *holder, uint64_t id, bool write_only)
{
    struct ica *block = ica_lookup(id);
    if (block == NULL || block->kind != ICA_KIND_BLOCK || block->state != ICA_HELD ||
        block->owner != holder->pid)
        return -E_PERMISSION;
    struct mapping_lend *table = mapping_lend_table();
    /* A lend is counted before its entry is claimed and uncounted after it
     * is cleared, so the block never has more entries than its count: none
     * is looked for when the count is 0 (as for every block BLK writes back
     * that no mapping sees), a revocation that ends lends stops at the entry
     * whose end brought the count to 0, and a write-only one once it has
     * seen as many entries as were counted. One counted after the count is
     * read may be missed, as a claim in progress is (docs/mmap.md,
     * "Revocation"). */
    uint32_t counted = atomic_load_acquire(&block->mapping_lend_count);
    if (counted == 0)
        return 0;
    long revoked = 0;
    uint32_t seen = 0;
    for (uint32_t probe = 0; table != NULL && probe < MAPPING_LEND_PROBES; probe++) {
        struct mapping_lend *lend = mapping_lend_probe(table, id, probe);
        uint32_t pid = atomic_load_acquire(&lend->pid);
        if (pid == 0 || pid == MAPPING_LEND_CLAIMING || lend->block != id)
            continue;
        seen++;
        if (!write_only || (lend->flags & MAPPING_LEND_WRITABLE))
            revoked += revoke_one(id, lend, pid, write_only);
        if (write_only ? seen >= counted : atomic_load_acquire(&block->mapping_lend_count) == 0)
            break;
    }
    return revoked;
}
