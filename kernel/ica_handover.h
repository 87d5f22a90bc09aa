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
    if (ica == NULL || ica->generation != (uint32_t)(id >> 32))
        return -E_INVALID;
    uint32_t state = atomic_load_acquire(&ica->state);
    if (state == ICA_FREE)
        return -E_INVALID;
    if (state != ICA_HELD || ica->owner != holder->pid)
        return -E_PERMISSION;
    *out = ica;
    return 0;
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
            long error = ica_held_by(sender, page->lent[0], ICA_KIND_DATA, &out->lent[0]);
            out->lent_count = error == 0 ? 1 : 0;
            return error;
        }
    }
    return ica_read_listed_attachments(sender, control, out);
}
/* Ends what was lent to `sender` with `control` (given back) and lends
 * what `with` lists (it goes with the control ICA). */
static inline void ica_change_lends(struct process *sender, struct ica *control,
                                    const struct attachments *with)
{
    if (control->lent_count > 0)
        ica_end_lends(sender, control);
    for (uint32_t i = 0; i < with->lent_count; i++) {
        atomic_add(&with->lent[i]->lend_count, 1);
        control->lent[i] = ica_id_of(with->lent[i]);
    }
    control->lent_count = with->lent_count;
}
/* Peels `control` and its attachments from `sender`: they travel to `destination`. */
void ica_depart(struct process *sender, struct ica *control, const struct attachments *with,
                uint32_t destination, uint32_t delivery);
/* Pastes a control ICA travelling to `receiver`, with its attachments, and
 * writes the routing into its page. False if it is not for `receiver`. */
bool ica_arrive(struct process *receiver, struct ica *control);
/* The kernel's stamp of who sends and how, copied into the page on arrival. */
static inline void ica_stamp_sender(struct ica *control, const struct process *sender,
                                    uint32_t delivery)
{
    control->sender = sender->pid;
    control->sender_rights = sender->rights;
    control->delivery = delivery;
}

/* Writes the kernel's routing of `control` into its page: the entries in
 * use, as the counts say (what lies past them means nothing). */
static inline void ica_write_routing(struct ica_control *page, const struct ica *control,
                                     const uint32_t *data_pages)
{
    page->return_depth = control->return_depth;
    for (uint32_t i = 0; i < control->return_depth && i < ICA_MAX_RETURNS; i++)
        page->returns[i] = control->returns[i];
    page->data_count = control->attached_count;
    for (uint32_t i = 0; i < control->attached_count; i++) {
        page->data[i] = control->attached[i];
        page->data_pages[i] = data_pages[i];
    }
    page->lent_count = control->lent_count;
    for (uint32_t i = 0; i < control->lent_count; i++)
        page->lent[i] = control->lent[i];
}

/* How the control ICA came, from whom, and its routing, written into its
 * page for the receiver. */
static inline void ica_write_arrival(const struct ica *control, const uint32_t *data_pages)
{
    struct ica_control *page = ica_control_page(control);
    page->arrival =
        control->delivery == ICA_AS_REQUEST ? ICA_ARRIVED_AS_REQUEST : ICA_ARRIVED_AS_RESULT;
    page->origin = control->origin;
    page->sender = control->sender;
    page->sender_rights = control->sender_rights;
    ica_write_routing(page, control, data_pages);
}

/* Both halves at once for a control ICA that carries no data ICA (the fast
 * path's common case): what was lent to the sender with it is given back,
 * what the sender lends goes with it (one-page ICAs, mapped read-only in
 * the receiver), and its one page-table entry moves from `sender` to
 * `receiver`. False when its tables were missing: it is then left
 * travelling to `receiver`, as after ica_depart. */
static inline bool ica_hand_over_without_data(struct process *sender, struct ica *control,
                                              const struct attachments *with,
                                              struct process *receiver, uint32_t delivery)
{
    bool lends = control->lent_count > 0 || with->lent_count > 0;
    if (lends)
        ica_change_lends(sender, control, with);
    control->attached_count = 0;
    ica_stamp_sender(control, sender, delivery);
    control->destination = receiver->pid;
    if (!ica_move(sender, receiver, control)) {
        atomic_store_release(&control->state, ICA_TRAVELLING);
        return false;
    }
    if (lends) /* a readblock's result lends its block */
        for (uint32_t i = 0; i < with->lent_count; i++)
            ica_paste_lent(receiver, with->lent[i]);
    ica_write_arrival(control, NULL);
    return true;
}
