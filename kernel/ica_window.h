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

/* ica.c: ica_end_lends in general (several lends, a holder not running, a
 * table not remembered), and the m-kernel's freeing of an orphan's last lend. */
void ica_end_lends_walking(struct process *holder, struct ica *control);
void ica_free_orphan(uint64_t id);

/* Ends the lends of `control` to `holder` (who is about to pass it on or has
 * ended): unmaps them and drops the lend counts; an orphaned ICA whose last
 * lend ends is handed to the m-kernel to be freed. Inline for a readblock's
 * case: one block lent to the running process. A lent ICA cannot be freed
 * while lent (its lend count holds it), so its slot is still the one the id
 * names; ica_lookup checks it anyway, as the general path does. */
static inline void ica_end_lends(struct process *holder, struct ica *control)
{
    if (control->lent_count == 1 && holder != NULL && this_cpu()->current == holder) {
        struct ica *lent = ica_lookup(control->lent[0]);
        uint64_t *entry = lent != NULL && lent->pages == 1 ? ica_window_entry(holder, lent) : NULL;
        if (entry != NULL) {
            *entry = 0;
            invlpg(ica_virtual_address(lent));
            if (atomic_sub_fetch(&lent->lend_count, 1) == 0 && lent->orphaned)
                ica_free_orphan(control->lent[0]);
            control->lent_count = 0;
            return;
        }
    }
    ica_end_lends_walking(holder, control);
}
