/* mkernel_client.c (p-kernel): every memory-management need of this core
 * goes to the m-kernel (core MKERNEL_CORE) over the inter-core area. */
#include "mkernel_client.h"
#include "shared.h"

void mkernel_request(struct intercore_message *request, struct intercore_message *reply)
{
    intercore_call(MKERNEL_CORE, request, reply);
}

void mkernel_notify(struct intercore_message *message)
{
    intercore_send(MKERNEL_CORE, message);
}
