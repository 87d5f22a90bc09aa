/* ica_handover.h: the two halves of handing a control ICA (with what it
 * carries) from one process to another on this core, shared by the general
 * ICA calls (ica_syscalls.c) and their fast path (ica_fastpath.c). */
#pragma once
#include "ica.h"
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
 * block ICA): 0 and *out, or -E_INVALID / -E_PERMISSION. Inline: every
 * handover starts with it. */
static inline long ica_held_by(const struct process *holder, uint64_t id, uint32_t kind,
                               struct ica **out)
{
    struct ica *ica = ica_lookup(id);
    if (ica == NULL ||
        (ica->kind != kind && !(kind == ICA_KIND_DATA && ica->kind == ICA_KIND_BLOCK)))
        return -E_INVALID;
    if (ica->state != ICA_HELD || ica->owner != holder->pid)
        return -E_PERMISSION;
    *out = ica;
    return 0;
}

/* ica_read_attachments for a page that lists data or lends. */
long ica_read_listed_attachments(const struct process *sender, struct ica *control,
                                 struct attachments *out);

/* Reads and checks what `sender` attached to or lends with `control`. The
 * common request (nothing listed) is inline. */
static inline long ica_read_attachments(const struct process *sender, struct ica *control,
                                        struct attachments *out)
{
    const struct ica_control *page = ica_control_page(control);
    if (page->magic == ICA_CONTROL_MAGIC && page->data_count == 0 && page->lent_count == 0) {
        out->data_count = 0;
        out->lent_count = 0;
        return 0;
    }
    return ica_read_listed_attachments(sender, control, out);
}
/* Peels `control` and its attachments from `sender`: they travel to `destination`. */
void ica_depart(struct process *sender, struct ica *control, const struct attachments *with,
                uint32_t destination, uint32_t delivery);
/* Pastes a control ICA travelling to `receiver`, with its attachments, and
 * writes the routing into its page. False if it is not for `receiver`. */
bool ica_arrive(struct process *receiver, struct ica *control);
