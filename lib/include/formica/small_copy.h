/* small_copy.h: memcpy's first case (8 to 16 bytes as two words that may
 * overlap), inline, for the copies of a small write: the library's, FS's and
 * BLK's copies of its bytes then make no call. lib/string.c's memcpy uses it. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* True when memcpy copies `count` bytes as two words (memcpy_two_words). */
static inline bool memcpy_in_two_words(size_t count)
{
    return count >= 8 && count <= 16;
}

/* Copies `count` bytes, 8 to 16, as two words that may overlap. */
static inline void memcpy_two_words(void *destination, const void *source, size_t count)
{
    uint64_t first, last;
    __builtin_memcpy(&first, source, 8);
    __builtin_memcpy(&last, (const unsigned char *)source + count - 8, 8);
    __builtin_memcpy(destination, &first, 8);
    __builtin_memcpy((unsigned char *)destination + count - 8, &last, 8);
}

/* memcpy, its 8-to-16-byte case inline (no call for a small write's bytes). */
static inline void memcpy_small_inline(void *destination, const void *source, size_t count)
{
    if (memcpy_in_two_words(count))
        memcpy_two_words(destination, source, count);
    else
        memcpy(destination, source, count);
}
