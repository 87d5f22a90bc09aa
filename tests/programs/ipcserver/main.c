/* ipcserver: a server for tests and benchmarks of ICA communication.
 * `ipcserver NAME` answers each request itself; `ipcserver NAME NEXT direct`
 * forwards every request to server NEXT, which answers the requester
 * directly; `ipcserver NAME NEXT via` forwards it so that the result comes
 * back through NAME, which then returns it (no direct return). */
#include <formica/protocol/ipc_dispatch.h>
#include <formica/request.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COPY_WINDOW_BYTES (1u << 20)

static uint8_t *copy_window;

static long grant_window(void)
{
    if (copy_window == NULL && (copy_window = malloc(COPY_WINDOW_BYTES)) == NULL)
        return -E_NO_MEMORY;
    memset(copy_window, 0, COPY_WINDOW_BYTES); /* every page mapped before the kernel copies */
    return syscall6(SYS_COPY_GRANT, (long)copy_window, COPY_WINDOW_BYTES, 0, 0, 0, 0);
}

static long touch_window(uint64_t bytes)
{
    long sum = 0;
    for (uint64_t offset = 0; copy_window != NULL && offset < bytes && offset < COPY_WINDOW_BYTES;
         offset += 4096)
        sum += copy_window[offset];
    return sum;
}

/* The page this server lends (allocated on first use, kept for good). */
static long lend_page = -1;

static long lend(uint64_t control)
{
    if (lend_page < 0 && (lend_page = ica_allocate(ICA_KIND_DATA, 4096)) < 0)
        return lend_page;
    uint8_t value = (uint8_t)ipc_lend_of(ica_control_of(control))->value;
    memset(ica_address((uint64_t)lend_page), value, 4096);
    return request_lend(control, (uint64_t)lend_page);
}

static long touch_attached(const struct ica_control *page)
{
    long sum = 0;
    for (uint32_t i = 0; i < page->data_count; i++) {
        const uint8_t *bytes = ica_address(page->data[i]);
        for (uint32_t offset = 0; offset < ICA_DATA_MAX_BYTES; offset += 4096) {
            sum += bytes[offset];
            if (bytes[offset] == 0xee) /* the client marks the last page */
                break;
        }
    }
    return sum;
}

long ipc_echo(void *context, uint64_t control, struct ipc_echo_message *message)
{
    (void)context, (void)control;
    return (long)message->value + 1;
}

long ipc_touch(void *context, uint64_t control, struct ipc_touch_message *message)
{
    (void)context, (void)message;
    return touch_attached(ica_control_of(control));
}

long ipc_exit(void *context, uint64_t control, struct ipc_exit_message *message)
{
    (void)context, (void)control, (void)message;
    return 0; /* answer() exits once the result is on its way */
}

long ipc_lend(void *context, uint64_t control, struct ipc_lend_message *message)
{
    (void)context, (void)message;
    return lend(control);
}

long ipc_grant(void *context, uint64_t control, struct ipc_grant_message *message)
{
    (void)context, (void)control, (void)message;
    return grant_window();
}

long ipc_touch_copy(void *context, uint64_t control, struct ipc_touch_copy_message *message)
{
    (void)context, (void)control;
    return touch_window(message->bytes);
}

/* Answers the request, returns it and receives the next one (one system
 * call); the page is gone once returned. */
static long answer(uint64_t control)
{
    struct ica_control *page = ica_control_of(control);
    uint32_t operation = page->operation;
    page->result = ipc_dispatch(NULL, control);
    if (operation == IPC_EXIT) {
        long error = ica_return(control);
        if (error != 0)
            printf("ipcserver: return failed: %s\n", error_text(error));
        exit(0);
    }
    long next = ica_return_receive(control, ICA_OR_RESULT, 0);
    if (next >= 0)
        return next;
    printf("ipcserver: return failed: %s\n", error_text(next));
    return ica_receive(ICA_OR_RESULT);
}

/* A forward was refused: its error goes back as the result. */
static long answer_refused(uint64_t control)
{
    long next = ica_return_receive(control, ICA_OR_RESULT, 0);
    return next >= 0 ? next : ica_receive(ICA_OR_RESULT);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: ipcserver NAME [NEXT direct|via]\n");
        return 2;
    }
    long error = server_register(argv[1]);
    if (error != 0) {
        printf("ipcserver: cannot register %s: %s\n", argv[1], error_text(error));
        return 1;
    }
    long next = -1;
    uint32_t forward_flags = 0;
    if (argc >= 4) {
        next = server_wait_for(argv[2], 5000);
        if (next < 0) {
            printf("ipcserver: no server %s: %s\n", argv[2], error_text(next));
            return 1;
        }
        forward_flags = strcmp(argv[3], "via") == 0 ? ICA_RETURN_VIA_ME : 0;
    }
    long control = ica_receive(ICA_OR_RESULT);
    for (;;) {
        if (control < 0) {
            printf("ipcserver: receive failed: %s\n", error_text(control));
            return 1;
        }
        struct ica_control *page = ica_control_of((uint64_t)control);
        if (page->arrival == ICA_ARRIVED_AS_RESULT || next < 0 || page->operation == IPC_EXIT) {
            control = answer((uint64_t)control);
            continue;
        }
        long following =
            ica_forward_receive(next, (uint64_t)control, forward_flags, ICA_OR_RESULT, 0);
        if (following >= 0) {
            control = following;
            continue;
        }
        page->result = following;
        control = answer_refused((uint64_t)control);
    }
}
