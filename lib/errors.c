/* errors.c: error_text(), the English text of each E_* code. Freestanding
 * (no printf, no allocation) so that the kernels can link it too. */
#include <formica/errors.h>

static const char *const error_texts[E_ERROR_COUNT] = {
    [E_OK] = "success",
    [E_INVALID] = "invalid argument",
    [E_FAULT] = "bad address",
    [E_NO_MEMORY] = "out of memory",
    [E_NOT_FOUND] = "not found",
    [E_NO_SUCH_CORE] = "no such core",
    [E_BUSY] = "resource busy",
    [E_TOO_BIG] = "too big",
    [E_PERMISSION] = "permission denied",
    [E_NOT_CHILD] = "not a child process",
    [E_BAD_PROGRAM] = "not a loadable program",
    [E_INTERRUPTED] = "interrupted",
    [E_NO_SYSTEM_CALL] = "no such system call",
    [E_EXISTS] = "already exists",
    [E_NOT_DIRECTORY] = "not a directory",
    [E_IS_DIRECTORY] = "is a directory",
    [E_NOT_EMPTY] = "directory not empty",
    [E_NO_SPACE] = "no space left on device",
    [E_CORRUPT] = "corrupt file system",
    [E_NAME_TOO_LONG] = "name too long",
    [E_IO] = "input/output error",
    [E_QUOTA] = "quota exceeded",
    [E_BAD_HANDLE] = "bad handle",
    [E_SERVER_ENDED] = "server ended before answering",
    [E_NEEDS_DATA] = "a data ICA is needed",
    [E_READ_ONLY] = "read-only file system",
    [E_STALE] = "asked as of an older view: ask again",
    [E_PAST_END] = "past the end of the mapped file",
};

const char *error_text(long code)
{
    unsigned long magnitude = code < 0 ? 0ul - (unsigned long)code : (unsigned long)code;
    if (magnitude >= E_ERROR_COUNT || error_texts[magnitude] == 0)
        return "unknown error";
    return error_texts[magnitude];
}
