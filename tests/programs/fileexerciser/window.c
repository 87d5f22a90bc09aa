/* window.c: what a read that ran during some of the writer's operations may
 * return: each byte one the file held there at one of the window's times
 * (a stale one matches none but by chance), a count short only at an end. */
#include "exerciser.h"

/* The byte at `offset` and whether it is inside the file, followed through
 * one operation. */
struct byte_state {
    uint8_t value;
    bool inside;
    uint64_t size;
};

static void byte_follow(struct byte_state *state, uint64_t offset,
                        const struct operation *operation)
{
    switch (operation->kind) {
    case OPERATION_WRITE:
    case OPERATION_PWRITE:
    case OPERATION_WRITEBLOCK:
    case OPERATION_WRITEBYTE:
        if (offset >= operation->offset && offset - operation->offset < operation->length)
            state->value = written_byte(operation->number, offset);
        if (operation->offset + operation->length > state->size)
            state->size = operation->offset + operation->length;
        break;
    case OPERATION_TRUNCATE:
        state->size = operation->length;
        if (offset >= state->size)
            state->value = 0;
        break;
    case OPERATION_REOPEN:
        if (operation->flags & REOPEN_TRUNCATE) {
            state->size = 0;
            state->value = 0;
        }
        break;
    }
    state->inside = offset < state->size;
}

/* The state shows `value`: the file's byte inside it; as a lent page shows
 * it, also the 0 a truncate left past the end. A lent block (readblock's
 * data, what readbyte copies) is BLK's cache page itself, which shows the
 * file's changes as they happen (docs/files.md), while the read's count
 * may be from before a truncate. */
static bool state_shows(const struct byte_state *state, uint8_t value, bool as_page)
{
    return state->value == value && (state->inside || (as_page && value == 0));
}

static bool allows(const struct window *window, uint64_t offset, uint8_t value, bool as_page)
{
    const struct model *before = window->before;
    struct byte_state state = {
        .value = offset < before->max_file_bytes ? before->bytes[offset] : 0,
        .inside = offset < before->size,
        .size = before->size,
    };
    if (state_shows(&state, value, as_page))
        return true;
    for (uint32_t i = 0; i < window->count; i++) {
        byte_follow(&state, offset, &window->operations[i]);
        if (state_shows(&state, value, as_page))
            return true;
    }
    return false;
}

bool window_allows_byte(const struct window *window, uint64_t offset, uint8_t value)
{
    return allows(window, offset, value, false);
}

bool window_allows_page_byte(const struct window *window, uint64_t offset, uint8_t value)
{
    return allows(window, offset, value, true);
}

/* The file's size after each of the window's times, in turn: false when
 * `accept` takes none. */
static bool some_size(const struct window *window, bool (*accept)(uint64_t size, uint64_t limit),
                      uint64_t limit)
{
    struct byte_state state = {.size = window->before->size};
    if (accept(state.size, limit))
        return true;
    for (uint32_t i = 0; i < window->count; i++) {
        byte_follow(&state, 0, &window->operations[i]);
        if (accept(state.size, limit))
            return true;
    }
    return false;
}

static bool at_most_limit(uint64_t size, uint64_t limit)
{
    return size <= limit;
}

static bool equal_to_limit(uint64_t size, uint64_t limit)
{
    return size == limit;
}

bool window_allows_count(const struct window *window, uint64_t offset, uint64_t length,
                         uint64_t got)
{
    if (got > length)
        return false;
    return got == length || some_size(window, at_most_limit, offset + got);
}

bool window_allows_size(const struct window *window, uint64_t size)
{
    return some_size(window, equal_to_limit, size);
}

uint64_t window_first_wrong_byte(const struct window *window, uint64_t offset, const uint8_t *data,
                                 uint64_t length, bool as_page)
{
    for (uint64_t i = 0; i < length; i++)
        if (!allows(window, offset + i, data[i], as_page))
            return offset + i;
    return UINT64_MAX;
}
