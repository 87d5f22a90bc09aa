/* request.c: the ICA system calls that are not on a request's path (the
 * others are inline in request.h), plus the few steps every
 * requester repeats (preparing a control ICA, attaching data, a whole
 * synchronous call). */
#include <formica/refusal_log.h>
#include <formica/request.h>
#include <formica/user.h>
#include <stdio.h>
#include <string.h>

long ica_allocate(uint32_t kind, uint64_t bytes)
{
    return syscall6(SYS_ICA_ALLOCATE, kind, (long)bytes, 0, 0, 0, 0);
}

long ica_free(uint64_t id)
{
    return syscall6(SYS_ICA_FREE, (long)id, 0, 0, 0, 0, 0);
}

long ica_lend_count(uint64_t id)
{
    return syscall6(SYS_ICA_LEND_COUNT, (long)id, 0, 0, 0, 0, 0);
}

long ica_lend_count_but_mappings(uint64_t id)
{
    return syscall6(SYS_ICA_LEND_COUNT, (long)id, ICA_LENDS_BUT_MAPPINGS, 0, 0, 0, 0);
}

long request_attach(uint64_t control, uint64_t data)
{
    struct ica_control *page = ica_control_of(control);
    if (page->data_count >= ICA_MAX_ATTACHED)
        return -E_TOO_BIG;
    page->data[page->data_count++] = data;
    return 0;
}

long request_lend(uint64_t control, uint64_t data)
{
    struct ica_control *page = ica_control_of(control);
    if (page->lent_count >= ICA_MAX_ATTACHED)
        return -E_TOO_BIG;
    page->lent[page->lent_count++] = data;
    return 0;
}

bool ica_held(uint64_t id)
{
    return syscall6(SYS_ICA_LEND_COUNT, (long)id, 0, 0, 0, 0, 0) >= 0;
}

long server_register(const char *name)
{
    return syscall6(SYS_SERVER_REGISTER, (long)name, 0, 0, 0, 0, 0);
}

long server_lookup(const char *name)
{
    return syscall6(SYS_SERVER_LOOKUP, (long)name, 0, 0, 0, 0, 0);
}

long server_wait_for(const char *name, uint64_t milliseconds)
{
    for (uint64_t waited = 0;; waited += 10) {
        long pid = server_lookup(name);
        if (pid != -E_NOT_FOUND || waited >= milliseconds)
            return pid;
        sleep_ms(10);
    }
}

long ica_stats(struct ica_stats *stats)
{
    return syscall6(SYS_ICA_STATS, (long)stats, 0, 0, 0, 0, 0);
}

long request_call(long server, uint64_t control)
{
    long error = ica_request(server, control, ICA_SYNC);
    return error != 0 ? error : ica_control_of(control)->result;
}

long request_operation(long server, uint64_t control, uint32_t operation)
{
    request_prepare(control, operation);
    return request_call(server, control);
}

long request_log_refusal(const char *server, const struct ica_control *page, long refused)
{
    if (refused == 0)
        return refused;
    refusal_log(server, page->sender_account, "%s: request %u from pid %u refused: %s\n", server,
                page->operation, page->sender,
                refused == -E_PERMISSION ? "the sender lacks the right" : "unknown operation");
    return refused;
}
