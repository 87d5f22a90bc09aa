/* values.c: the argument pools the fuzzer draws from: pointers of three
 * classes (writable, read-only, forbidden), sizes at and around every limit,
 * ICA ids real and forged, and pids of every kind of process. */
#include "fuzz.h"
#include <formica/ica.h>
#include <formica/pager.h>
#include <formica/syscalls.h>
#include <formica/user.h>
#include <string.h>

/* The scratch area and, right after it, a guard the kernel must never write:
 * every pointer the fuzzer passes into the area leaves room for the bytes
 * it allows. */
static struct {
    uint8_t area[FUZZ_SCRATCH_BYTES];
    uint8_t guard[FUZZ_GUARD_BYTES];
} scratch_memory __attribute__((aligned(4096)));
#define scratch_area scratch_memory.area
#define GUARD_BYTE 0xa5
static const char read_only_text[] = "read-only data of the fuzzer";

static uint64_t any_ica_id(struct fuzz *fuzz);

static long ica_lend_count(uint64_t id)
{
    return syscall6(SYS_ICA_LEND_COUNT, (long)id, 0, 0, 0, 0, 0);
}

uint8_t *scratch(void)
{
    return scratch_area;
}

uint64_t clamp_to_scratch(uint64_t address, uint64_t bytes)
{
    uint64_t room = (uint64_t)scratch_area + FUZZ_SCRATCH_BYTES - address;
    return bytes < room ? bytes : room;
}

void scratch_guard_set(void)
{
    memset(scratch_memory.guard, GUARD_BYTE, FUZZ_GUARD_BYTES);
}

bool scratch_guard_intact(void)
{
    for (uint32_t i = 0; i < FUZZ_GUARD_BYTES; i++)
        if (scratch_memory.guard[i] != GUARD_BYTE)
            return false;
    return true;
}

static uint64_t writable_pointer(struct fuzz *fuzz, uint64_t bytes)
{
    if (bytes >= FUZZ_SCRATCH_BYTES)
        return (uint64_t)scratch_area;
    return (uint64_t)scratch_area + random_below(fuzz, FUZZ_SCRATCH_BYTES - bytes + 1);
}

/* Mapped but never writable: the program's own code and read-only data. */
static uint64_t read_only_pointer(struct fuzz *fuzz)
{
    const uint64_t pool[] = {
        (uint64_t)&writable_pointer,
        (uint64_t)&random_next,
        (uint64_t)read_only_text,
        0x400000,
    };
    return pool[random_below(fuzz, sizeof pool / sizeof pool[0])];
}

/* Never mapped for the process: low memory, the kernel half, addresses that
 * are not canonical, the last page of user space, the top of the range. */
static uint64_t forbidden_pointer(struct fuzz *fuzz)
{
    const uint64_t pool[] = {
        0,
        1,
        0x3ff000,
        0x0000800000000000ull,
        0x00007ffffffff000ull,
        0xffff800000000000ull,
        0xffff800000100000ull,
        0xffffffff80000000ull,
        0xffffffff80100000ull,
        0xfffffffffffff000ull,
        0xffffffffffffffffull,
        0x0000100000000000ull,
        ICA_BLOCK_BASE + (uint64_t)(ICA_BLOCK_SLOTS - 1) * 4096,
    };
    return pool[random_below(fuzz, sizeof pool / sizeof pool[0])];
}

uint64_t pick_pointer(struct fuzz *fuzz, enum pointer_class class, uint64_t bytes)
{
    switch (class) {
    case POINTER_WRITABLE:
        return writable_pointer(fuzz, bytes);
    case POINTER_READ_ONLY:
        return read_only_pointer(fuzz);
    default:
        return forbidden_pointer(fuzz);
    }
}

enum pointer_class pick_class(struct fuzz *fuzz)
{
    return (enum pointer_class)random_below(fuzz, POINTER_CLASSES);
}

uint64_t pick_size(struct fuzz *fuzz)
{
    const uint64_t pool[] = {
        0,
        1,
        8,
        63,
        64,
        4095,
        4096,
        4097,
        1u << 16,
        1u << 20,
        (1u << 20) + 1,
        1ull << 32,
        1ull << 47,
        0x7fffffffffffffffull,
        ~0ull,
        ~0ull - 4095,
    };
    if (random_chance(fuzz, 20))
        return random_next(fuzz) >> random_below(fuzz, 64);
    return pool[random_below(fuzz, sizeof pool / sizeof pool[0])];
}

/* The library's own ICAs (file channels, readblock buffers) are the
 * process's too: freeing or handing one over would break the library under
 * the fuzzer, not the kernel. An id the process holds but the fuzzer did
 * not take is replaced by the same id of another generation (stale). */
static uint64_t not_the_library_s(struct fuzz *fuzz, uint64_t id)
{
    for (uint32_t i = 0; i < fuzz->held_count; i++)
        if (fuzz->held[i] == id)
            return id;
    long held = fuzz_result(fuzz, "ica_lend_count", ica_lend_count(id), id, 0, 0);
    return held >= 0 ? id ^ (1ull << 40) : id;
}

uint64_t pick_ica_id(struct fuzz *fuzz)
{
    return not_the_library_s(fuzz, any_ica_id(fuzz));
}

/* An ICA id: one held, a stale one, or forged (wrong generation, kind or index). */
static uint64_t any_ica_id(struct fuzz *fuzz)
{
    uint64_t held = fuzz->held_count > 0 ? fuzz->held[random_below(fuzz, fuzz->held_count)] : 0;
    switch (random_below(fuzz, 8)) {
    case 0:
    case 1:
        return held;
    case 2:
        return fuzz->freed_id;
    case 3:
        return held ^ (1ull << 32); /* another generation */
    case 4:
        return (held & ~0xff000000ull) | ((uint64_t)random_below(fuzz, 6) << 24);
    case 5:
        return ((uint64_t)random_below(fuzz, 4) << 24) | 0xffffff;
    case 6: /* someone else's: a low index of any pool */
        return ((uint64_t)random_below(fuzz, 3) << 32) | ((1 + random_below(fuzz, 3)) << 24) |
               random_below(fuzz, 16);
    default:
        return random_next(fuzz);
    }
}

long pick_pid(struct fuzz *fuzz)
{
    switch (random_below(fuzz, 7)) {
    case 0:
        return fuzz->self;
    case 1:
        return fuzz->parent;
    case 2:
        return fuzz->servers[random_below(fuzz, 4)];
    case 3:
        return fuzz->child_count > 0 ? fuzz->children[random_below(fuzz, fuzz->child_count)] : 0;
    case 4:
        return (long)random_below(fuzz, 3);
    case 5:
        return (long)random_below(fuzz, 320);
    default:
        return (long)(uint32_t)random_next(fuzz);
    }
}
