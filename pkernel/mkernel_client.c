/* mkernel_client.c (p-kernel): every memory-management need of this core
 * goes to the m-kernel on core 0 over the inter-core area. */
#include "mkernel_client.h"

void mkernel_request(struct intercore_message *request, struct intercore_message *reply)
{
    intercore_call(0, request, reply);
}

void mkernel_notify(struct intercore_message *message)
{
    intercore_send(0, message);
}
