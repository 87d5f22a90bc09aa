/* servers/pager/main.c: the remote pager (seed 004, Teramem), program
 * "pager". Serves PAGER_FAULT from the kernel and PAGER_INIT/CLEANUP/
 * PREFETCH/DROP/STATS from processes; results of backend requests arrive too. */
#include "kept_tables.h"
#include "pager.h"
#include <formica/protocol/pager_dispatch.h>
#include <formica/refusal_log.h>
#include <formica/request.h>
#include <formica/user.h>
#include <stdio.h>

#define BUSY_WAIT_MS 10 /* one timer tick: retransmission deadlines are checked then */

/* The handlers of protocol/pager.messages. A request is about the region of
 * the process that made it (origin), never a pid in the message, except a
 * PAGER_FAULT, which only the kernel sends. */
long pager_init(void *context, uint64_t control, struct pager_init_message *message)
{
    (void)context;
    const struct ica_control *page = ica_control_of(control);
    struct pager_requester who = {page->origin, page->sender_uid, page->sender_account};
    return client_init(&who, message);
}

long pager_cleanup(void *context, uint64_t control, struct pager_cleanup_message *message)
{
    (void)context, (void)message;
    return client_cleanup(ica_control_of(control)->origin);
}

long pager_stats(void *context, uint64_t control, struct pager_stats_message *message)
{
    (void)context;
    return client_stats(ica_control_of(control)->origin, message);
}

long pager_prefetch(void *context, uint64_t control, struct pager_prefetch_message *message)
{
    (void)context;
    struct client *client = client_find(ica_control_of(control)->origin);
    if (client == NULL)
        return -E_NOT_FOUND;
    return client->adopt_pending ? 0 : prefetch_range(client, message->address, message->bytes);
}

long pager_drop(void *context, uint64_t control, struct pager_drop_message *message)
{
    (void)context;
    struct client *client = client_find(ica_control_of(control)->origin);
    if (client == NULL)
        return -E_NOT_FOUND;
    return client->adopt_pending ? 0 : drop_range(client, message->address, message->bytes);
}

long pager_report(void *context, uint64_t control, struct pager_report_message *message)
{
    (void)context, (void)control, (void)message;
    return pager_print_report();
}

long pager_fault(void *context, uint64_t control, struct pager_fault_message *message)
{
    (void)context, (void)control;
    struct client *client = client_find((uint32_t)message->pid);
    if (client == NULL)
        return -E_NOT_FOUND; /* no PAGER_INIT (or cleaned up): the process ends */
    long result = client_adopt(client);
    if (result == 0)
        result = fault_serve(client, message->address);
    if (result < 0)
        refusal_log("pager", client->account, "pager: fault of pid %u at 0x%lx: %s\n", client->pid,
                    message->address, error_text(result));
    return result;
}

static void serve(uint64_t control)
{
    struct ica_control *page = ica_control_of(control);
    page->result = pager_dispatch(NULL, control);
    backends_send_submitted();
    clients_keep_counters(); /* the tables themselves are changed in place */
    long error = ica_return(control);
    if (error != 0)
        printf("pager: return failed: %s\n", error_text(error));
}

/* With transfers in flight: the next request or result, or -E_INTERRUPTED
 * when a frame came (-E_NOT_FOUND after BUSY_WAIT_MS, for retransmissions);
 * without the network's interrupt, a look that does not wait. */
static long receive_while_busy(void)
{
    if (!backends_may_sleep())
        return ica_receive(ICA_OR_RESULT | ICA_NO_WAIT);
    return ica_receive_within(ICA_OR_RESULT | ICA_OR_IRQ, BUSY_WAIT_MS);
}

int main(void)
{
    if (kept_tables_open())
        clients_restore();
    long error = server_register(SERVER_NAME_PAGER);
    if (error != 0) {
        printf("pager: cannot register: %s\n", error_text(error));
        return 1;
    }
    printf("pager: serving on core %ld (pid %ld)\n", core_id(), process_id());
    for (;;) {
        bool busy = backends_busy(); /* transfers in flight: requests or the network */
        long control = busy ? receive_while_busy() : ica_receive(ICA_OR_RESULT);
        if (busy && (control == -E_NOT_FOUND || control == -E_INTERRUPTED)) {
            backends_progress();
            continue;
        }
        if (control < 0) {
            printf("pager: receive failed: %s\n", error_text(control));
            return 1;
        }
        if (ica_control_of((uint64_t)control)->arrival == ICA_ARRIVED_AS_RESULT)
            backend_result_arrived((uint64_t)control);
        else
            serve((uint64_t)control);
    }
}
