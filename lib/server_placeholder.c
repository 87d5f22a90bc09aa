/* server_placeholder.c: run_server_placeholder(), the announce-then-wait loop
 * of the servers that do not handle requests yet. */
#include <formica/server_placeholder.h>
#include <formica/user.h>
#include <stdio.h>

void run_server_placeholder(const char *name)
{
    printf("%s: server placeholder on core %ld (pid %ld)\n", name, core_id(), process_id());
    for (;;)
        await_notification();
}
