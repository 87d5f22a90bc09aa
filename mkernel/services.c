/* memory_service.c: handles MESSAGE_MEMORY_ALLOCATE and MESSAGE_MEMORY_FREE
 * from p-kernel cores. The frame allocator runs only on the m-kernel core,
 * so these requests are serialized by construction and need no lock. */
#include "memory_service.h"
#include "intercore.h"
#include "physical_memory.h"

#define LARGEST_REQUEST_FRAMES 4096 /* 16 MiB */

static void on_allocate(const struct intercore_message *request)
{
    struct intercore_message reply = {0};
    uint64_t frames = request->argument[0];
    if (frames > 0 && frames <= LARGEST_REQUEST_FRAMES)
        reply.argument[0] = physical_allocate(frames, 0);
    intercore_reply(request, &reply);
}

static void on_free(const struct intercore_message *request)
{
    struct intercore_message reply = {0};
    physical_free(request->argument[0], request->argument[1]);
    reply.argument[0] = 1;
    intercore_reply(request, &reply);
}

void memory_service_install(void)
{
    intercore_set_handler(MESSAGE_MEMORY_ALLOCATE, on_allocate);
    intercore_set_handler(MESSAGE_MEMORY_FREE, on_free);
}
