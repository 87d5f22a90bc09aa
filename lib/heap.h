/* heap.h: lib/malloc.c's allocator under names of its own, which a program
 * linked with --wrap=malloc,... (FLMALLOC=1) does not redirect: flmalloc's
 * local path allocates there while the program's malloc goes to flmalloc. */
#pragma once
#include <stddef.h>

void *heap_malloc(size_t size);
void heap_free(void *pointer);
