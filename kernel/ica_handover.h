/* ica_handover.h: the two halves of handing a control ICA (with what it
 * carries) from one process to another on this core, shared by the general
 * ICA calls (ica_syscalls.c) and their fast path (ica_fastpath.c). */
#pragma once
#include "ica.h"
#include "layout.h"
#include "process.h"
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
 * block ICA): 0 and *out, or -E_INVALID / -E_PERMISSION. */
long ica_held_by(const struct process *holder, uint64_t id, uint32_t kind, struct ica **out);
/* Reads and checks what `sender` attached to or lends with `control`. */
long ica_read_attachments(const struct process *sender, struct ica *control,
                          struct attachments *out);
/* Peels `control` and its attachments from `sender`: they travel to `destination`. */
void ica_depart(struct process *sender, struct ica *control, const struct attachments *with,
                uint32_t destination, uint32_t delivery);
/* Pastes a control ICA travelling to `receiver`, with its attachments, and
 * writes the routing into its page. False if it is not for `receiver`. */
bool ica_arrive(struct process *receiver, struct ica *control);
