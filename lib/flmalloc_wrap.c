/* flmalloc_wrap.c: the static analogue of seed 000's LD_PRELOAD library: a
 * program linked with --wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free
 * (FLMALLOC=1, build/user.mk) has every call of those, the library's own
 * included, sent to flmalloc, flcalloc, flrealloc and flfree. */
#include <formica/flmalloc.h>
#include <stddef.h>

void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t count, size_t size);
void *__wrap_realloc(void *pointer, size_t size);
void __wrap_free(void *pointer);

void *__wrap_malloc(size_t size)
{
    return flmalloc(size);
}

void *__wrap_calloc(size_t count, size_t size)
{
    return flcalloc(count, size);
}

void *__wrap_realloc(void *pointer, size_t size)
{
    return flrealloc(pointer, size);
}

void __wrap_free(void *pointer)
{
    flfree(pointer);
}
