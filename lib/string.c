/* string.c: plain implementations of the string.h functions for freestanding
 * builds (kernels and user programs). Clarity over speed, except memcpy and
 * memset, which use the string instructions eight bytes at a time (memcpy
 * in user programs AVX registers when it can), and memcmp, which compares
 * eight bytes a step. */
#include <stdbool.h>
#include <stdint.h>
#include <formica/small_copy.h>
#include <formica/syscalls.h>
#include <string.h>

#ifndef __code_model_kernel__
/* User programs only (the kernels keep to general registers): 256 bytes a
 * step through eight 32-byte AVX registers, as glibc's memcpy does, when the
 * kernel said at start-up that it saves AVX state (START_WIDE_VECTORS; it
 * does when CPUID offers XSAVE and AVX and noxsave is not given). CPUID and
 * XCR0 read in user mode are not enough: under a hypervisor that runs user
 * mode natively they show the host's settings, not this kernel's. A 4 KiB
 * copy is 16 steps of 18 instructions. */
#define WIDE_STEP 256u

extern uint64_t process_start_flags; /* lib/start.S */

static bool wide_copies(void)
{
    return (process_start_flags & START_WIDE_VECTORS) != 0;
}

/* Copies the whole WIDE_STEPs of `count` bytes; returns how many. */
static size_t copy_wide(unsigned char *to, const unsigned char *from, size_t count)
{
    size_t bytes = count & ~(size_t)(WIDE_STEP - 1);
    const unsigned char *from_end = from + bytes;
    unsigned char *to_end = to + bytes;
    long index = -(long)bytes; /* counts up to 0: one add and one jump a step */
    __asm__ volatile("1:\n\t"
                     "vmovdqu 0(%[from],%[index]), %%ymm0\n\t"
                     "vmovdqu 32(%[from],%[index]), %%ymm1\n\t"
                     "vmovdqu 64(%[from],%[index]), %%ymm2\n\t"
                     "vmovdqu 96(%[from],%[index]), %%ymm3\n\t"
                     "vmovdqu 128(%[from],%[index]), %%ymm4\n\t"
                     "vmovdqu 160(%[from],%[index]), %%ymm5\n\t"
                     "vmovdqu 192(%[from],%[index]), %%ymm6\n\t"
                     "vmovdqu 224(%[from],%[index]), %%ymm7\n\t"
                     "vmovdqu %%ymm0, 0(%[to],%[index])\n\t"
                     "vmovdqu %%ymm1, 32(%[to],%[index])\n\t"
                     "vmovdqu %%ymm2, 64(%[to],%[index])\n\t"
                     "vmovdqu %%ymm3, 96(%[to],%[index])\n\t"
                     "vmovdqu %%ymm4, 128(%[to],%[index])\n\t"
                     "vmovdqu %%ymm5, 160(%[to],%[index])\n\t"
                     "vmovdqu %%ymm6, 192(%[to],%[index])\n\t"
                     "vmovdqu %%ymm7, 224(%[to],%[index])\n\t"
                     "add $256, %[index]\n\t"
                     "jnz 1b\n\t"
                     "vzeroupper"
                     : [index] "+r"(index)
                     : [from] "r"(from_end), [to] "r"(to_end)
                     : "memory", "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6",
                       "xmm7");
    return bytes;
}
#endif

/* 8 to 16 bytes (a small write's) as two words that may overlap. Else eight
 * bytes per step, then the last 0-7: a string instruction's step is one
 * instruction to an emulator such as QEMU's TCG, so quadwords make a 4 KiB copy
 * 512 steps instead of 4096 (and cost nothing on hardware). In user programs
 * with AVX, whole 256-byte steps go through copy_wide first. */
void *memcpy(void *destination, const void *source, size_t count)
{
    void *result = destination;
    if (memcpy_in_two_words(count)) {
        memcpy_two_words(destination, source, count);
        return result;
    }
#ifndef __code_model_kernel__
    if (count >= WIDE_STEP && wide_copies()) {
        size_t done = copy_wide(destination, source, count);
        if (done == count)
            return result;
        destination = (unsigned char *)destination + done;
        source = (const unsigned char *)source + done;
        count -= done;
    }
#endif
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
