/* ica_window.h: the one page-table entry a control or block ICA occupies in
 * a process. The leaf tables of the ICA windows are remembered per process,
 * so the handover's move, lend and end of a lend are a load and a store,
 * inline; what is not remembered yet goes to ica.c's general walk. */
#pragma once
#include "atomic.h"
#include "cpu.h"
#include "ica.h"
#include "process.h"
#include "translation_stamp.h"
#include "x86.h"

#define ENTRY_PRESENT 1ull
#define ENTRY_WRITABLE 2ull
#define ENTRY_USER 4ull
#define ENTRY_LARGE 0x80ull
#define ENTRY_ADDRESS 0x000ffffffffff000ull

/* The entry of the control ICA of pool index `index` in `process`, once
 * the process has remembered its leaf table (the window's page index is the
 * pool index); NULL otherwise. Block ICAs alike in their window. */
static inline uint64_t *ica_control_leaf_entry(const struct process *process, uint32_t index)
{
    uint64_t *table = process->control_leaf[index / 512];
    return table != NULL ? &table[index % 512] : NULL;
}

static inline uint64_t *ica_block_leaf_entry(const struct process *process, uint32_t index)
{
    uint64_t *table = process->block_leaf[index / 512];
    return table != NULL ? &table[index % 512] : NULL;
}

/* A control ICA's one entry in `process` (NULL: not remembered yet, or its
 * address space is gone). */
static inline uint64_t *ica_control_entry(struct process *process, const struct ica *ica)
{
    if (ica->kind != ICA_KIND_CONTROL || process->root == 0)
        return NULL;
    return ica_control_leaf_entry(process, ica->index);
}

/* ica_control_entry for control and block ICAs (NULL for a data ICA, or a
 * table not looked up yet). */
static inline uint64_t *ica_window_entry(struct process *process, const struct ica *ica)
{
    if (ica->kind != ICA_KIND_BLOCK)
        return ica_control_entry(process, ica);
    if (process->root == 0)
        return NULL;
    return ica_block_leaf_entry(process, ica->index);
}

/* What a pasted ICA's entry holds: writable for its holder, read-only for
 * a borrower. */
static inline uint64_t ica_held_entry(const struct ica *ica)
{
    return ica->physical | ENTRY_PRESENT | ENTRY_USER | ENTRY_WRITABLE;
}

static inline uint64_t ica_lent_entry(const struct ica *ica)
{
    return ica->physical | ENTRY_PRESENT | ENTRY_USER;
}

/* The move of a one-entry ICA from `source` (its entry in the holder) to
 * `target` (its entry in `to`), which then holds it. The holder's TLB entry
 * is left for the caller. */
static inline void ica_move_entry(struct ica *ica, uint64_t *source, uint64_t *target,
                                  const struct process *to)
{
    *source = 0;
    *target = ica_held_entry(ica);
    atomic_store_release(&ica->owner, to->pid);
    atomic_store_release(&ica->state, ICA_HELD);
    this_cpu()->ica_handovers++;
}

/* Whether `process` holds `ica` itself (the general walks' test; a window
 * entry tells it by itself: writable). */
static inline bool ica_held_here(const struct ica *ica, const struct process *process)
{
    return atomic_load_acquire(&ica->owner) == process->pid;
}

/* A block ICA lent on may come back as a lend to a process that sees it
 * already: to its holder (its writable entry stays as it is, and the end of
 * that lend leaves it mapped), or to a borrower through another control ICA
 * it holds (its entry counts the lends past the first in bits the processor
 * ignores; only the end of the last one unmaps it; past 127 more at once
 * the count stays at its top, and an end may then unmap it early). A
 * present entry in an ICA's window slot is that ICA's. */
#define ENTRY_LEND_ONE (1ull << 52)
#define ENTRY_LEND_COUNT (0x7full << 52)

/* Writes the read-only entry of `lent` at `entry`, its window entry in the
 * receiver, or counts one more lend there. */
static inline void ica_lend_entry_into(uint64_t *entry, const struct ica *lent)
{
    uint64_t seen = *entry;
    if ((seen & ENTRY_PRESENT) == 0)
        *entry = ica_lent_entry(lent);
    else if ((seen & ENTRY_WRITABLE) == 0 && (seen & ENTRY_LEND_COUNT) != ENTRY_LEND_COUNT)
        *entry = seen + ENTRY_LEND_ONE;
}

/* ica.c: ica_paste_lent through the general walk. */
bool ica_paste_lent_walking(struct process *process, struct ica *ica);

/* Maps a lent ICA read-only into `process`; the lender keeps it. */
static inline bool ica_paste_lent(struct process *process, struct ica *ica)
{
    uint64_t *entry = ica->pages == 1 ? ica_window_entry(process, ica) : NULL;
    if (entry == NULL)
        return ica_paste_lent_walking(process, ica);
    ica_lend_entry_into(entry, ica);
    return true;
}

/* ica.c: ica_unmap where the ICA is not one remembered window entry (a
 * data ICA's pages, a leaf table not looked up yet). */
void ica_unmap_walking(struct process *process, struct ica *ica);
/* The last lend of an ICA whose lender ended: the m-kernel frees it. */
void ica_free_orphan(uint64_t id);

/* Clears `ica`'s window `entry` in `process`: flushed from this core's TLB
 * when `process` runs here, else its translation stamp bumped
 * (translation_stamp.h). */
static inline __attribute__((always_inline)) void ica_clear_entry(struct process *process,
                                                                  struct ica *ica, uint64_t *entry)
{
    *entry = 0;
    if (this_cpu()->current == process)
        invlpg(ica_virtual_address(ica));
    else
        translations_dropped(process);
}

/* Unmaps `ica` from `process`. Inline: a control or block ICA is one
 * remembered entry. */
static inline void ica_unmap(struct process *process, struct ica *ica)
{
    uint64_t *entry = ica_window_entry(process, ica);
    if (entry == NULL)
        ica_unmap_walking(process, ica);
    else
        ica_clear_entry(process, ica, entry);
}

/* Ends one lend of `lent` to `holder`: unmapped, unless `holder` holds it
 * or its entry still counts another lend of it. */
static inline __attribute__((always_inline)) void ica_lend_end_in(struct process *holder,
                                                                  struct ica *lent)
{
    uint64_t *entry = ica_window_entry(holder, lent);
    if (entry == NULL) {
        if (!ica_held_here(lent, holder))
            ica_unmap_walking(holder, lent);
        return;
    }
    uint64_t seen = *entry;
    if ((seen & ENTRY_WRITABLE) != 0)
        return;
    if ((seen & ENTRY_LEND_COUNT) != 0)
        *entry = seen - ENTRY_LEND_ONE;
    else
        ica_clear_entry(holder, lent, entry);
}

/* Ends the lends of `control` to `holder` (who is about to pass it on or has
 * ended; NULL: its address space is gone): unmaps them (ica_lend_end_in)
 * and drops the lend counts; an orphaned ICA whose last lend ends is handed to the m-kernel to
 * be freed (then true: that message may have had this core serve others).
 * Inline: a readblock's result lends one block. */
static inline __attribute__((always_inline)) bool ica_end_lends(struct process *holder,
                                                                struct ica *control)
{
    bool called_out = false;
    for (uint32_t i = 0; i < control->lent_count; i++) {
        /* current: a lent ICA is not freed (ica_free refuses it, an ended
         * lender's is orphaned) until its last lend ends, here */
        struct ica *lent = ica_slot_of(control->lent[i]);
        if (lent == NULL)
            continue;
        if (holder != NULL)
            ica_lend_end_in(holder, lent);
        if (atomic_sub_fetch(&lent->lend_count, 1) == 0 && lent->orphaned) {
            ica_free_orphan(control->lent[i]);
            called_out = true;
        }
    }
    control->lent_count = 0;
    return called_out;
}
