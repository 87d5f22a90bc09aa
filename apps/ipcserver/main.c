/* ipcserver: a server for tests and benchmarks of ICA communication.
 * `ipcserver NAME` answers each request itself; `ipcserver NAME NEXT direct`
 * forwards every request to server NEXT, which answers the requester
 * directly; `ipcserver NAME NEXT via` forwards it so that the result comes
 * back through NAME, which then returns it (no direct return). */
#include <formica/request.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPERATION_ECHO 1  /* result = argument[0] + 1 */
#define OPERATION_TOUCH 2 /* result = sum of the first byte of every attached data page */
#define OPERATION_EXIT 3  /* the server answers, then exits */
#define OPERATION_LEND 4  /* lends a page holding argument[0] in every byte, read-only */
#define OPERATION_GRANT 5 /* grants a 1 MiB window for SYS_COPY_TO (the copying baseline) */
#define OPERATION_TOUCH_COPY                                                                       \
    6 /* result = sum of the first byte of each page of the window's                               \
         first argument[0] bytes */
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
    uint8_t value = (uint8_t)ica_control_of(control)->argument[0];
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

/* Answers the request, returns it and receives the next one (one system
 * call); the page is gone once returned. */
static long answer(uint64_t control)
{
    struct ica_control *page = ica_control_of(control);
    uint32_t operation = page->operation;
    if (page->operation == OPERATION_ECHO)
        page->result = (int64_t)page->argument[0] + 1;
    else if (page->operation == OPERATION_TOUCH)
        page->result = touch_attached(page);
    else if (page->operation == OPERATION_EXIT)
        page->result = 0;
    else if (page->operation == OPERATION_LEND)
        page->result = lend(control);
    else if (page->operation == OPERATION_GRANT)
        page->result = grant_window();
    else if (page->operation == OPERATION_TOUCH_COPY)
        page->result = touch_window(page->argument[0]);
    else
        page->result = -E_INVALID;
    if (operation == OPERATION_EXIT) {
        ica_return(control);
        exit(0);
    }
    long next = ica_return_receive(control, ICA_OR_RESULT);
    if (next >= 0)
        return next;
    printf("ipcserver: return failed: %s\n", error_text(next));
    return ica_receive(ICA_OR_RESULT);
}

/* A forward was refused: its error goes back as the result. */
static long answer_refused(uint64_t control)
{
    long next = ica_return_receive(control, ICA_OR_RESULT);
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
        if (page->arrival == ICA_ARRIVED_AS_RESULT || next < 0 ||
            page->operation == OPERATION_EXIT) {
            control = answer((uint64_t)control);
            continue;
        }
        long following = ica_forward_receive(next, (uint64_t)control, forward_flags, ICA_OR_RESULT);
        if (following >= 0) {
            control = following;
            continue;
        }
        page->result = following;
        control = answer_refused((uint64_t)control);
    }
}
