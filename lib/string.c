/* string.c: plain implementations of the string.h functions for freestanding
 * builds (kernels and user programs). Clarity over speed, except memcpy and
 * memset, which use the string instructions eight bytes at a time, and
 * memcmp, which compares eight bytes a step. */
#include <string.h>
#include <stdint.h>

/* Eight bytes per step, then the last 0-7: a string instruction's step is one
 * instruction to an emulator such as QEMU's TCG, so quadwords make a 4 KiB copy
 * 512 steps instead of 4096 (and cost nothing on hardware). */
void *memcpy(void *destination, const void *source, size_t count)
{
    void *result = destination;
    size_t quadwords = count / 8, bytes = count % 8;
    __asm__ volatile("rep movsq" : "+D"(destination), "+S"(source), "+c"(quadwords) : : "memory");
    __asm__ volatile("rep movsb" : "+D"(destination), "+S"(source), "+c"(bytes) : : "memory");
    return result;
}

void *memmove(void *destination, const void *source, size_t count)
{
    unsigned char *to = destination;
    const unsigned char *from = source;
    if (to == from || count == 0)
        return destination;
    if (to < from || to >= from + count)
        return memcpy(destination, source, count);
    while (count-- > 0)
        to[count] = from[count];
    return destination;
}

void *memset(void *destination, int value, size_t count)
{
    void *result = destination;
    uint64_t pattern = 0x0101010101010101ull * (uint8_t)value;
    size_t quadwords = count / 8, bytes = count % 8;
    __asm__ volatile("rep stosq" : "+D"(destination), "+c"(quadwords) : "a"(pattern) : "memory");
    __asm__ volatile("rep stosb" : "+D"(destination), "+c"(bytes) : "a"(pattern) : "memory");
    return result;
}

/* Eight bytes a step (unaligned loads are fine on x86-64); at the first
 * word that differs, the byte-swapped words order as their first differing
 * bytes do. A 16-byte compare is a few instructions, not a hundred. */
int memcmp(const void *left, const void *right, size_t count)
{
    const unsigned char *a = left, *b = right;
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        uint64_t x, y;
        __builtin_memcpy(&x, a + i, 8);
        __builtin_memcpy(&y, b + i, 8);
        if (x != y)
            return __builtin_bswap64(x) < __builtin_bswap64(y) ? -1 : 1;
    }
    for (; i < count; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

size_t strlen(const char *text)
{
    size_t length = 0;
    while (text[length] != '\0')
        length++;
    return length;
}

size_t strnlen(const char *text, size_t limit)
{
    size_t length = 0;
    while (length < limit && text[length] != '\0')
        length++;
    return length;
}

int strcmp(const char *left, const char *right)
{
    while (*left != '\0' && *left == *right) {
        left++;
        right++;
    }
    return (unsigned char)*left - (unsigned char)*right;
}

int strncmp(const char *left, const char *right, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (left[i] != right[i] || left[i] == '\0')
            return (unsigned char)left[i] - (unsigned char)right[i];
    }
    return 0;
}

char *strchr(const char *text, int character)
{
    for (;; text++) {
        if (*text == (char)character)
            return (char *)text;
        if (*text == '\0')
            return NULL;
    }
}

char *strncpy(char *destination, const char *source, size_t count)
{
    size_t i = 0;
    for (; i < count && source[i] != '\0'; i++)
        destination[i] = source[i];
    for (; i < count; i++)
        destination[i] = '\0';
    return destination;
}
