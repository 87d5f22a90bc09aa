/* backend.c: picks a backend by kind and routes the results of asynchronous
 * backend requests (they come back to the pager's main loop or to wait_one). */
#include "pager.h"
#include "backend_internal.h"
#include <formica/request.h>
#include <stdio.h>

const struct backend *backend_of_kind(uint32_t kind)
{
    switch (kind) {
    case PAGER_BACKEND_NODE:
        return &backend_node;
    case PAGER_BACKEND_NVM:
        return &backend_nvm;
    case PAGER_BACKEND_DISK:
        return &backend_disk;
    case PAGER_BACKEND_BLOCK:
        return &backend_block;
    default:
        return NULL;
    }
}

void backend_result_arrived(uint64_t control)
{
    if (disk_take_result(control))
        return;
    printf("pager: unexpected result (control %lx)\n", control);
    ica_free(control);
}

bool backends_busy(void)
{
    return node_backend_busy();
}

void backends_progress(void)
{
    node_backend_progress();
}

void backends_send_submitted(void)
{
    node_backend_send_submitted();
}

bool backends_may_sleep(void)
{
    return node_backend_may_sleep();
}
