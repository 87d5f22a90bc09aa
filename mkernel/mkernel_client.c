/* mkernel_client.c (m-kernel): on the m-kernel's own core a service request
 * is a plain function call. */
#include "mkernel_client.h"
#include "cpu.h"
#include "services.h"

void mkernel_request(struct intercore_message *request, struct intercore_message *reply)
{
    *reply = (struct intercore_message){0};
    request->from = this_cpu()->index;
    services_handle(request, reply);
}

void mkernel_notify(struct intercore_message *message)
{
    struct intercore_message ignored;
    mkernel_request(message, &ignored);
}
