/* ica_handover.h: the two halves of handing a control ICA (with what it
 * carries) from one process to another on this core, shared by the general
 * ICA calls (ica_syscalls.c) and their fast path (ica_fastpath.c). */
#pragma once
#include "atomic.h"
#include "ica.h"
#include "ica_window.h"
#include "layout.h"
#include "process.h"
#include <formica/errors.h>
#include <stdbool.h>
#include <stdint.h>

/* The data ICAs a control ICA carries (handed over) or lends (mapped
 * read-only in the receiver, kept by the sender), as read from its page. */
struct attachments {
    uint32_t data_count, lent_count;
    struct ica *data[ICA_MAX_ATTACHED];
    struct ica *lent[ICA_MAX_ATTACHED];
    uint64_t lent_id[ICA_MAX_ATTACHED]; /* the ids of lent[], as the page lists them */
};

static inline struct ica_control *ica_control_page(const struct ica *ica)
{
    return phys_to_virt(ica->physical);
}

/* The ICA `id` of `kind` held by `holder` (ICA_KIND_DATA also matches a
 * block ICA): 0 and *out, or -E_INVALID (no such ICA: malformed, free, or
 * of an earlier generation) / -E_PERMISSION (someone else's, or
 * travelling). Inline: every handover starts with it. */
static inline long ica_held_by(const struct process *holder, uint64_t id, uint32_t kind,
                               struct ica **out)
{
    uint32_t id_kind = ica_kind(id);
    if (id_kind != kind && !(kind == ICA_KIND_DATA && id_kind == ICA_KIND_BLOCK))
        return -E_INVALID;
    struct ica *ica = ica_slot_of(id);
    if (ica == NULL)
        return -E_INVALID;
    /* the usual case, a live ICA of this generation held: one comparison */
    uint64_t held = (id >> 32) | ((uint64_t)ICA_HELD << 32);
    uint64_t generation_and_state = atomic_load_acquire(&ica->generation_and_state);
    if (generation_and_state == held && ica->owner == holder->pid) {
        *out = ica;
        return 0;
    }
    if ((uint32_t)generation_and_state != (uint32_t)(id >> 32) ||
        (uint32_t)(generation_and_state >> 32) == ICA_FREE)
        return -E_INVALID;
    return -E_PERMISSION; /* someone else's, or travelling */
}

/* An ICA `sender` may lend: one it holds, or a block ICA lent to it, lent
 * on (FS lends BLK's cached blocks it borrows: docs/ica.md, "Lending").
 * Inline: a readblock's answer lends one. */
static inline long ica_lendable_by(const struct process *sender, uint64_t id, struct ica **out)
{
    long error = ica_held_by(sender, id, ICA_KIND_DATA, out);
    if (error != -E_PERMISSION)
        return error;
    return ica_borrowed_by(sender, id, out);
}

/* ica_read_attachments for a page that lists data or lends (the general
 * case: every entry checked, duplicates refused, given-back lends skipped). */
long ica_read_listed_attachments(const struct process *sender, struct ica *control,
                                 struct attachments *out);

/* Reads and checks what `sender` attached to or lends with `control`. The
 * common cases are inline: nothing listed (a request), and a server's
 * result lending one block (nothing attached, nothing lent to the sender
 * with the control ICA, so nothing to give back or check twice: one ICA
 * the sender holds). */
static inline long ica_read_attachments(const struct process *sender, struct ica *control,
                                        struct attachments *out)
{
    const struct ica_control *page = ica_control_page(control);
    if (page->magic == ICA_CONTROL_MAGIC && page->data_count == 0) {
        if (page->lent_count == 0) {
            out->data_count = 0;
            out->lent_count = 0;
            return 0;
        }
        if (page->lent_count == 1 && control->lent_count == 0) {
            out->data_count = 0;
            out->lent_id[0] = page->lent[0];
            long error = ica_lendable_by(sender, out->lent_id[0], &out->lent[0]);
            out->lent_count = error == 0 ? 1 : 0;
            return error;
        }
    }
    return ica_read_listed_attachments(sender, control, out);
}
/* Ends what was lent to `sender` with `control` (given back) and lends
 * what `with` lists (it goes with the control ICA). True when an orphan's
 * free went to the m-kernel (ica_end_lends). */
static inline __attribute__((always_inline)) bool
ica_change_lends(struct process *sender, struct ica *control, const struct attachments *with)
{
    bool called_out = control->lent_count > 0 && ica_end_lends(sender, control);
    for (uint32_t i = 0; i < with->lent_count; i++) {
        atomic_add(&with->lent[i]->lend_count, 1);
        control->lent[i] = with->lent_id[i];
    }
    control->lent_count = with->lent_count;
    return called_out;
}
/* The data ICAs handed over with `control` leave `sender` for
 * `destination` (peeled, travelling, listed in the control ICA). */
void ica_depart_attached(struct process *sender, struct ica *control,
                         const struct attachments *with, uint32_t destination);
/* Peels `control` and its attachments from `sender`: they travel to `destination`. */
void ica_depart(struct process *sender, struct ica *control, const struct attachments *with,
                uint32_t destination, uint32_t delivery);
/* The kernel's stamp of who sends and how, copied into the page on arrival. */
static inline void ica_stamp_sender(struct ica *control, const struct process *sender,
                                    uint32_t delivery)
{
    control->sender = sender->pid;
    control->sender_rights = sender->rights;
    control->sender_uid = sender->uid;
    control->sender_gid = sender->gid;
    control->sender_account = sender->account;
    control->delivery = delivery;
}

/* The steps every departure of a control ICA begins with (ica_depart and
 * the cross-core pass's own): lends changed, the data ICAs peeled and
 * recorded, the sender's stamp. */
static inline __attribute__((always_inline)) void
ica_depart_begin(struct process *sender, struct ica *control, const struct attachments *with,
                 uint32_t destination, uint32_t delivery)
{
    ica_change_lends(sender, control, with);
    if (with->data_count != 0)
        ica_depart_attached(sender, control, with, destination);
    control->attached_count = with->data_count;
    ica_stamp_sender(control, sender, delivery);
}

/* How the control ICA came, from whom, and its routing, written into its
 * page for the receiver: the entries in use, as the counts say (what lies
 * past them means nothing; returns past the depth are 0). */
static inline __attribute__((always_inline)) void ica_write_arrival(const struct ica *control,
                                                                    const uint32_t *data_pages)
{
    struct ica_control *page = ica_control_page(control);
    /* eight bytes a move (a constant-size copy here becomes rep movsl); the
     * addresses from the structures' starts, since the copy spans fields */
    const uint8_t *from = (const uint8_t *)control + __builtin_offsetof(struct ica, delivery);
    uint8_t *to = (uint8_t *)page + __builtin_offsetof(struct ica_control, arrival);
#pragma GCC unroll 9
    for (uint32_t at = 0; at < ICA_ARRIVAL_BYTES; at += sizeof(uint64_t)) {
        uint64_t word;
        __builtin_memcpy(&word, from + at, sizeof word);
        __builtin_memcpy(to + at, &word, sizeof word);
    }
    for (uint32_t i = 0; i < control->attached_count; i++) {
        page->data[i] = control->attached[i];
        page->data_pages[i] = data_pages[i];
    }
    page->lent_count = control->lent_count;
    for (uint32_t i = 0; i < control->lent_count; i++)
        page->lent[i] = control->lent[i];
}

/* A request arriving at a server: whose account the server now works for
 * (the scheduler charges the server's time on its core there). */
static inline __attribute__((always_inline)) void ica_note_client(struct process *receiver,
                                                                  const struct ica *control)
{
    if (control->delivery == ICA_AS_REQUEST)
        receiver->serving_account = control->sender_account;
}

/* ica_arrive for a control ICA that carries data ICAs, or whose entry (or a
 * lent ICA's) is not remembered in the receiver: the general paste. */
bool ica_arrive_generally(struct process *receiver, struct ica *control);

/* Pastes a control ICA travelling to `receiver`, with its attachments, and
 * writes the routing into its page. False if it is not for `receiver`.
 * Inline for the common arrival (nothing attached, one-page lends, entries
 * remembered): a load and a store an entry, as the same-core handover. */
static inline __attribute__((always_inline)) bool ica_arrive(struct process *receiver,
                                                             struct ica *control)
{
    if (atomic_load_acquire(&control->state) != ICA_TRAVELLING ||
        control->destination != receiver->pid)
        return false;
    uint64_t *entry = ica_control_entry(receiver, control);
    if (entry == NULL || control->attached_count != 0)
        return ica_arrive_generally(receiver, control);
    for (uint32_t i = 0; i < control->lent_count; i++) {
        struct ica *lent = ica_lookup(control->lent[i]);
        if (lent != NULL)
            ica_paste_lent(receiver, lent);
    }
    *entry = ica_held_entry(control);
    atomic_store_release(&control->owner, receiver->pid);
    atomic_store_release(&control->state, ICA_HELD);
    this_cpu()->ica_handovers++;
    ica_write_arrival(control, NULL);
    ica_note_client(receiver, control);
    return true;
}
