/* console_input.c: the keyboards' bytes on their way to SYS_CONSOLE_READ
 * (console_input.h). Any core may put or take: the record's lock keeps the
 * ring whole; a full ring drops and counts what does not fit, with a line. */
#include "console_input.h"
#include "atomic.h"
#include "console.h"
#include "shared.h"

static struct console_input *record(void)
{
    return kernel_shared->console.input;
}

uint64_t console_input_put(const uint8_t *bytes, uint64_t length)
{
    struct console_input *input = record();
    if (input == NULL)
        return 0;
    uint64_t flags = spin_lock(&input->lock);
    uint64_t stored = 0;
    while (stored < length && input->head - input->tail < CONSOLE_INPUT_BYTES)
        input->bytes[input->head++ % CONSOLE_INPUT_BYTES] = bytes[stored++];
    bool first_drop = stored < length && input->dropped == 0;
    input->dropped += length - stored;
    spin_unlock(&input->lock, flags);
    if (first_drop)
        kprintf("console: input full (%u bytes nobody has read): typed bytes are dropped\n",
                CONSOLE_INPUT_BYTES);
    return stored;
}

uint64_t console_input_take(uint8_t *bytes, uint64_t length)
{
    struct console_input *input = record();
    if (input == NULL || input->head == input->tail)
        return 0;
    uint64_t flags = spin_lock(&input->lock);
    uint64_t taken = 0;
    while (taken < length && input->tail != input->head)
        bytes[taken++] = input->bytes[input->tail++ % CONSOLE_INPUT_BYTES];
    if (input->tail == input->head)
        input->dropped = 0; /* drained: the next overflow is said again */
    spin_unlock(&input->lock, flags);
    return taken;
}

void console_input_keyboard_ready(uint32_t keyboard)
{
    struct console_input *input = record();
    if (input != NULL)
        atomic_or(&input->keyboards_ready, keyboard);
}

void console_input_reader_waits(bool waiting)
{
    struct console_input *input = record();
    if (input != NULL)
        atomic_store_release(&input->reader_waiting, waiting ? 1 : 0);
}
