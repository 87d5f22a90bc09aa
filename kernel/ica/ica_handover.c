/* ica_handover.c: one handover of a control ICA between two processes of
 * this core: the sender's checks and peel (depart), the receiver's paste and
 * the routing the kernel writes into the page (arrive). Nothing is copied:
 * page-table entries move. */
#include "ica_handover.h"
#include "atomic.h"
#include <formica/errors.h>

/* The data ICAs listed in `ids` (count of them), each listed once: handed
 * over, held by `holder` and not lent out at the moment; lent, held by it
 * or lent to it (ica_lendable_by). */
static long read_data_list(const struct process *holder, const uint64_t *ids, uint32_t count,
                           struct ica **data, bool handing_over)
{
    for (uint32_t i = 0; i < count; i++) {
        long error = handing_over ? ica_held_by(holder, ids[i], ICA_KIND_DATA, &data[i])
                                  : ica_lendable_by(holder, ids[i], &data[i]);
        if (error != 0)
            return error;
        if (handing_over && data[i]->lend_count > 0)
            return -E_BUSY;
        for (uint32_t j = 0; j < i; j++)
            if (data[j] == data[i])
                return -E_INVALID;
    }
    return 0;
}

static bool lent_to_holder(const struct ica *control, uint64_t id)
{
    for (uint32_t i = 0; i < control->lent_count; i++)
        if (control->lent[i] == id)
            return true;
    return false;
}

/* Entries that were lent to the sender with this control ICA (the page
 * shows them on arrival) are being given back, not lent again: skipped. */
long ica_read_listed_attachments(const struct process *sender, struct ica *control,
                                 struct attachments *out)
{
    const struct ica_control *page = ica_control_page(control);
    if (page->magic != ICA_CONTROL_MAGIC || page->data_count > ICA_MAX_ATTACHED ||
        page->lent_count > ICA_MAX_ATTACHED)
        return -E_INVALID;
    out->data_count = page->data_count;
    out->lent_count = 0;
    for (uint32_t i = 0; i < page->lent_count; i++)
        if (!lent_to_holder(control, page->lent[i]))
            out->lent_id[out->lent_count++] = page->lent[i];
    long error = read_data_list(sender, page->data, out->data_count, out->data, true);
    if (error == 0)
        error = read_data_list(sender, out->lent_id, out->lent_count, out->lent, false);
    for (uint32_t i = 0; error == 0 && i < out->lent_count; i++)
        for (uint32_t j = 0; j < out->data_count; j++)
            if (out->lent[i] == out->data[j])
                return -E_INVALID;
    return error;
}

void ica_depart_attached(struct process *sender, struct ica *control,
                         const struct attachments *with, uint32_t destination)
{
    for (uint32_t i = 0; i < with->data_count; i++) {
        struct ica *data = with->data[i];
        ica_peel(sender, data);
        data->state = ICA_TRAVELLING;
        data->destination = destination;
        control->attached[i] = ica_id_of(data);
    }
}

void ica_depart(struct process *sender, struct ica *control, const struct attachments *with,
                uint32_t destination, uint32_t delivery)
{
    ica_depart_begin(sender, control, with, destination, delivery);
    ica_peel(sender, control);
    control->destination = destination;
    atomic_store_release(&control->state, ICA_TRAVELLING);
}

/* Pastes the attachments travelling to `receiver` with `control`; the pages
 * of each one pasted go into data_pages. */
static void arrive_attachments(struct process *receiver, const struct ica *control,
                               uint32_t *data_pages)
{
    for (uint32_t i = 0; i < control->attached_count; i++) {
        struct ica *data = ica_lookup(control->attached[i]);
        data_pages[i] = 0;
        if (data != NULL && data->state == ICA_TRAVELLING && data->destination == receiver->pid &&
            ica_paste(receiver, data))
            data_pages[i] = data->pages;
    }
    for (uint32_t i = 0; i < control->lent_count; i++) {
        struct ica *lent = ica_lookup(control->lent[i]);
        if (lent != NULL)
            ica_paste_lent(receiver, lent);
    }
}

bool ica_arrive_generally(struct process *receiver, struct ica *control)
{
    uint32_t data_pages[ICA_MAX_ATTACHED]; /* read only up to attached_count */
    if (control->attached_count > 0 || control->lent_count > 0)
        arrive_attachments(receiver, control, data_pages);
    if (!ica_paste(receiver, control))
        return false;
    ica_write_arrival(control, data_pages);
    ica_note_client(receiver, control);
    return true;
}
