/* servers/pager/main.c: the remote pager (seed 004, Teramem), program
 * "pager". Serves PAGER_FAULT from the kernel and PAGER_INIT/CLEANUP/
 * PREFETCH/DROP/STATS from processes; results of backend requests arrive too. */
#include "pager.h"
#include <formica/request.h>
#include <formica/user.h>
#include <stdio.h>

static long serve_client_request(struct ica_control *page)
{
    struct client *client = client_find(page->origin);
    switch (page->operation) {
    case PAGER_INIT:
        return client_init(page->origin, page->argument);
    case PAGER_CLEANUP:
        return client_cleanup(page->origin);
    case PAGER_STATS:
        return client_stats(page->origin, page->argument);
    case PAGER_REPORT:
        return pager_report();
    case PAGER_PREFETCH:
        return client == NULL ? -E_NOT_FOUND
                              : prefetch_range(client, page->argument[0], page->argument[1]);
    case PAGER_DROP:
        return client == NULL ? -E_NOT_FOUND
                              : drop_range(client, page->argument[0], page->argument[1]);
    default:
        return -E_INVALID;
    }
}

/* From the kernel: [0] pid, [1] address, [2] error code. */
static long serve_fault(const struct ica_control *page)
{
    struct client *client = client_find((uint32_t)page->argument[0]);
    if (client == NULL)
        return -E_NOT_FOUND; /* no PAGER_INIT (or cleaned up): the process ends */
    long result = fault_serve(client, page->argument[1]);
    if (result < 0)
        printf("pager: fault of pid %u at 0x%lx: %s\n", client->pid, page->argument[1],
               error_text(result));
    return result;
}

static void serve(uint64_t control)
{
    struct ica_control *page = ica_control_of(control);
    page->result = page->operation == PAGER_FAULT ? serve_fault(page) : serve_client_request(page);
    long error = ica_return(control);
    if (error != 0)
        printf("pager: return failed: %s\n", error_text(error));
}

int main(void)
{
    long error = server_register(SERVER_NAME_PAGER);
    if (error != 0) {
        printf("pager: cannot register: %s\n", error_text(error));
        return 1;
    }
    printf("pager: serving on core %ld (pid %ld)\n", core_id(), process_id());
    for (;;) {
        bool busy = backends_busy(); /* stores in flight: look for requests without sleeping */
        long control = ica_receive(ICA_OR_RESULT | (busy ? ICA_NO_WAIT : 0));
        if (busy && control == -E_NOT_FOUND) {
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
