/* ipc_test.h: synchronous calls to tests/programs/ipcserver, the server of the ICA tests
 * and benchmark; its operations are declared in protocol/ipcserver.messages. */
#pragma once
#include <formica/protocol/ipc.h>
#include <formica/request.h>

static inline long ipc_call_echo(long server, uint64_t control, uint64_t value)
{
    request_prepare(control, IPC_ECHO);
    ipc_echo_of(ica_control_of(control))->value = value;
    return request_call(server, control);
}

static inline long ipc_call_lend(long server, uint64_t control, uint64_t value)
{
    request_prepare(control, IPC_LEND);
    ipc_lend_of(ica_control_of(control))->value = value;
    return request_call(server, control);
}
