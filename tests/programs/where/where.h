/* where.h: the test server of server instances and its client, one program
 * (tests/integration/test_instances.py): init starts `where --instance I/N`
 * on each core of the placement's list; `where ask` is the client, `where
 * hammer MS` the client that keeps it busy while a test kills it. */
#pragma once
#include <formica/instance.h>
#include <stdint.h>

struct where_server {
    struct server_instance instance;
    uint32_t core;
    uint64_t starts; /* of its kept region: 1, then 2 after a restart, ... */
};

/* The server: registers its instance and answers WHERE_HERE until killed. */
int where_serve(int argc, char **argv);
/* The client: asks the nearest instance and every instance by index, and
 * prints one @json line per answer; returns 0 when every answer came. */
int where_ask(void);
/* The client under kills: asks the nearest instance again and again for
 * `milliseconds`; returns 0 when every request was answered rightly or
 * ended cleanly with its server (hammer.c). */
int where_hammer(uint64_t milliseconds);
