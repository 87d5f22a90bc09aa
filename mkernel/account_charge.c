/* account_charge.c: a server spends its client's memory, never its own
 * (docs/authority.md): a process holding RIGHT_RESERVED_NAME charges what it
 * allocates for a client (the pager's block tables) to the client's quota
 * account, within the account's limit, and gives it back when done. The
 * charge ends with the client too: it is part of the client's memory. */
#include "authority.h"
#include "intercore.h"
#include "process.h"
#include <formica/errors.h>
#include <formica/rights.h>

static long charge(uint32_t server_pid, uint32_t client_pid, int64_t bytes)
{
    const struct process *server = process_find(server_pid);
    struct process *client = process_find(client_pid);
    if (server == NULL || !(server->rights & RIGHT_RESERVED_NAME))
        return -E_PERMISSION;
    if (client == NULL || client->state == PROCESS_ZOMBIE || client->resources_released)
        return -E_NOT_FOUND;
    if (bytes >= 0) {
        if (!authority_memory_allows(client, (uint64_t)bytes))
            return -E_QUOTA;
        client->charged_bytes += (uint64_t)bytes;
        client->memory_bytes += (uint64_t)bytes;
        return (long)client->charged_bytes;
    }
    uint64_t back = (uint64_t)0 - (uint64_t)bytes; /* never more than was charged */
    if (back > client->charged_bytes)
        back = client->charged_bytes;
    client->charged_bytes -= back;
    client->memory_bytes -= back;
    return (long)client->charged_bytes;
}

void serve_account_charge(const struct intercore_message *message,
                          const struct intercore_account_charge_request *request,
                          struct intercore_account_charge_reply *reply)
{
    (void)message;
    reply->result = charge((uint32_t)request->server, (uint32_t)request->pid, request->bytes);
}
