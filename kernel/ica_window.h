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

/* A control ICA's one entry, once the process has remembered its leaf table
 * (the window's page index is the ICA's pool index); NULL otherwise. */
static inline uint64_t *ica_control_entry(struct process *process, const struct ica *ica)
{
    if (ica->kind != ICA_KIND_CONTROL || process->root == 0)
        return NULL;
    uint64_t *table = process->control_leaf[ica->index / 512];
    return table != NULL ? &table[ica->index % 512] : NULL;
}

/* ica_control_entry for control and block ICAs (NULL for a data ICA, or a
 * table not looked up yet). */
static inline uint64_t *ica_window_entry(struct process *process, const struct ica *ica)
{
    if (ica->kind != ICA_KIND_BLOCK)
        return ica_control_entry(process, ica);
    if (process->root == 0)
        return NULL;
    uint64_t *table = process->block_leaf[ica->index / 512];
    return table != NULL ? &table[ica->index % 512] : NULL;
}

/* ica.c: ica_move when a leaf table is not remembered yet. */
bool ica_peel_then_paste(struct process *from, struct process *to, struct ica *ica);

/* Peel from `from` and paste into `to` in one step (a control ICA's one
 * entry moves); false, with the ICA peeled, when `to` lacks its tables.
 * When it moves the entry, `from`'s TLB entry is left for the caller: the
 * fast path switches to `to` at once (a CR3 write flushes every entry: no
 * PCID, no global user pages), and flushes it itself when it does not. */
static inline bool ica_move(struct process *from, struct process *to, struct ica *ica)
{
    uint64_t *source = ica_control_entry(from, ica), *target = ica_control_entry(to, ica);
    if (source == NULL || target == NULL)
        return ica_peel_then_paste(from, to, ica);
    *source = 0; /* not flushed here: the caller switches address spaces or flushes */
    *target = ica->physical | ENTRY_PRESENT | ENTRY_USER | ENTRY_WRITABLE;
    atomic_store_release(&ica->owner, to->pid);
    atomic_store_release(&ica->state, ICA_HELD);
    atomic_count(&kernel_shared->icas->handovers, 1);
    return true;
}

/* ica.c: ica_paste_lent through the general walk. */
bool ica_paste_lent_walking(struct process *process, struct ica *ica);

/* Maps a lent ICA read-only into `process`; the lender keeps it. */
static inline bool ica_paste_lent(struct process *process, struct ica *ica)
{
    uint64_t *entry = ica->pages == 1 ? ica_window_entry(process, ica) : NULL;
    if (entry == NULL)
        return ica_paste_lent_walking(process, ica);
    *entry = ica->physical | ENTRY_PRESENT | ENTRY_USER;
    return true;
}

/* ica.c: ica_unmap where the ICA is not one remembered window entry (a
 * data ICA's pages, a leaf table not looked up yet). */
void ica_unmap_walking(struct process *process, struct ica *ica);
/* The last lend of an ICA whose lender ended: the m-kernel frees it. */
void ica_free_orphan(uint64_t id);

/* Unmaps `ica` from `process`: flushed from this core's TLB when `process`
 * runs here, else its translation stamp bumped (translation_stamp.h).
 * Inline: a control or block ICA is one remembered entry. */
static inline void ica_unmap(struct process *process, struct ica *ica)
{
    uint64_t *entry = ica_window_entry(process, ica);
    if (entry == NULL) {
        ica_unmap_walking(process, ica);
        return;
    }
    *entry = 0;
    if (this_cpu()->current == process)
        invlpg(ica_virtual_address(ica));
    else
        translations_dropped(process);
}

/* Ends the lends of `control` to `holder` (who is about to pass it on or has
 * ended; NULL: its address space is gone): unmaps them and drops the lend
 * counts; an orphaned ICA whose last lend ends is handed to the m-kernel to
 * be freed. Inline: a readblock's result lends one block. */
static inline void ica_end_lends(struct process *holder, struct ica *control)
{
    for (uint32_t i = 0; i < control->lent_count; i++) {
        /* current: a lent ICA is not freed (ica_free refuses it, an ended
         * lender's is orphaned) until its last lend ends, here */
        struct ica *lent = ica_slot_of(control->lent[i]);
        if (lent == NULL)
            continue;
        if (holder != NULL)
            ica_unmap(holder, lent);
        if (atomic_sub_fetch(&lent->lend_count, 1) == 0 && lent->orphaned)
            ica_free_orphan(control->lent[i]);
    }
    control->lent_count = 0;
}
