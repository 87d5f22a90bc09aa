/* serve.c: the where server. Each instance registers "where" with its
 * index, opens its own kept region (NAME.i: the m-kernel's check lets it
 * use its own name with its instance's suffix) to count its starts, and
 * answers each WHERE_HERE with its index, instance count, core and starts. */
#include "where.h"
#include <formica/kept_region.h>
#include <formica/protocol/where_dispatch.h>
#include <formica/request.h>
#include <formica/user.h>
#include <stdio.h>

#define WHERE_KEPT_MAGIC 0x3145524548573a57ull /* "W:WHERE1" */
#define WHERE_KEPT_VERSION 1

long where_here(struct where_server *server, uint64_t control, struct where_here_message *message)
{
    (void)control;
    message->instance = server->instance.index;
    message->count = server->instance.count;
    message->core = server->core;
    message->starts = (uint32_t)server->starts;
    return server->instance.index;
}

/* Names no instance of where may map (mkernel/authority.c). */
static const char *const foreign_names[] = {"fs",      "where.0",   "where.01", "where.64",
                                            "where.x", "where.1.1", "wher"};

long where_kept_probe(struct where_server *server, uint64_t control,
                      struct where_kept_probe_message *message)
{
    (void)control;
    message->refused = 0;
    for (size_t i = 0; i < sizeof foreign_names / sizeof foreign_names[0]; i++) {
        long answer = syscall6(SYS_KEPT_REGION, (long)foreign_names[i], 4096, 0, 0, 0, 0);
        message->refused += answer == -E_PERMISSION;
    }
    char own[KEPT_NAME_BYTES];
    server_instance_kept_name(SERVER_NAME_WHERE, server->instance.index, own, sizeof own);
    message->own = (int32_t)syscall6(SYS_KEPT_REGION, (long)own, 4096, 0, 0, 0, 0);
    return 0;
}

/* Opens this instance's kept region; returns its start count (0: none). */
static uint64_t count_start(const struct server_instance *instance)
{
    char name[KEPT_NAME_BYTES];
    long error = server_instance_kept_name(SERVER_NAME_WHERE, instance->index, name, sizeof name);
    bool restored = false;
    struct kept_header *header =
        error != 0
            ? NULL
            : kept_region_open(name, 4096, WHERE_KEPT_MAGIC, WHERE_KEPT_VERSION, &restored, &error);
    if (header == NULL) {
        printf("where %u/%u: no kept region '%s': %s\n", instance->index, instance->count, name,
               error_text(error));
        return 0;
    }
    return header->starts;
}

int where_serve(int argc, char **argv)
{
    struct where_server server = {.core = (uint32_t)core_id()};
    if (server_instance_parse(argc, argv, &server.instance) != 0)
        return 2;
    server.starts = count_start(&server.instance);
    long error = server_register_instance(SERVER_NAME_WHERE, server.instance.index);
    if (error != 0) {
        printf("where %u/%u: cannot register: %s\n", server.instance.index, server.instance.count,
               error_text(error));
        return 1;
    }
    long control = ica_receive(0);
    for (;;) {
        if (control < 0) {
            printf("where: receive failed: %s\n", error_text(control));
            return 1;
        }
        ica_control_of((uint64_t)control)->result = where_dispatch(&server, (uint64_t)control);
        control = ica_return_receive((uint64_t)control, 0, 0);
    }
}
