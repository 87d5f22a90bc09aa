/* nvm_persist.c: the flush layer (formica/nvm_persist.h): CLWB, CLFLUSHOPT
 * or CLFLUSH over the lines of a range, SFENCE, and the ordered write
 * helpers, with an optional observer told of each step. User mode: the
 * flush instructions and CPUID are unprivileged. */
#include <formica/errors.h>
#include <formica/nvm_persist.h>
#include <string.h>

#define CPUID_1_EDX_CLFLUSH (1u << 19)
#define CPUID_7_EBX_CLFLUSHOPT (1u << 23)
#define CPUID_7_EBX_CLWB (1u << 24)
#define KIND_UNDECIDED (-1)

static int kind_in_use = KIND_UNDECIDED;
static const struct nvm_observer *observer;

enum nvm_flush_kind nvm_flush_kind_for(const struct nvm_cpuid *cpuid)
{
    uint32_t leaf7 = cpuid->max_leaf >= 7 ? cpuid->leaf7_ebx : 0;
    if (leaf7 & CPUID_7_EBX_CLWB)
        return NVM_FLUSH_CLWB;
    if (leaf7 & CPUID_7_EBX_CLFLUSHOPT)
        return NVM_FLUSH_CLFLUSHOPT;
    if (cpuid->max_leaf >= 1 && (cpuid->leaf1_edx & CPUID_1_EDX_CLFLUSH))
        return NVM_FLUSH_CLFLUSH;
    return NVM_FLUSH_NONE;
}

const char *nvm_flush_kind_name(enum nvm_flush_kind kind)
{
    static const char *const names[] = {
        [NVM_FLUSH_CLWB] = "clwb",
        [NVM_FLUSH_CLFLUSHOPT] = "clflushopt",
        [NVM_FLUSH_CLFLUSH] = "clflush",
        [NVM_FLUSH_NONE] = "none",
    };
    return (unsigned)kind <= NVM_FLUSH_NONE ? names[kind] : "unknown";
}

static void cpuid(uint32_t leaf, uint32_t subleaf, uint32_t registers[4])
{
    __asm__ volatile("cpuid"
                     : "=a"(registers[0]), "=b"(registers[1]), "=c"(registers[2]),
                       "=d"(registers[3])
                     : "a"(leaf), "c"(subleaf));
}

static struct nvm_cpuid this_cpu_cpuid(void)
{
    uint32_t registers[4];
    struct nvm_cpuid found = {0};
    cpuid(0, 0, registers);
    found.max_leaf = registers[0];
    if (found.max_leaf >= 1) {
        cpuid(1, 0, registers);
        found.leaf1_edx = registers[3];
    }
    if (found.max_leaf >= 7) {
        cpuid(7, 0, registers);
        found.leaf7_ebx = registers[1];
    }
    return found;
}

enum nvm_flush_kind nvm_flush_kind_in_use(void)
{
    if (kind_in_use == KIND_UNDECIDED) {
        struct nvm_cpuid found = this_cpu_cpuid();
        kind_in_use = (int)nvm_flush_kind_for(&found);
    }
    return (enum nvm_flush_kind)kind_in_use;
}

/* Whether this CPU can run `kind`'s instruction. */
static bool offered(enum nvm_flush_kind kind)
{
    struct nvm_cpuid found = this_cpu_cpuid();
    uint32_t leaf7 = found.max_leaf >= 7 ? found.leaf7_ebx : 0;
    switch (kind) {
    case NVM_FLUSH_CLWB:
        return leaf7 & CPUID_7_EBX_CLWB;
    case NVM_FLUSH_CLFLUSHOPT:
        return leaf7 & CPUID_7_EBX_CLFLUSHOPT;
    case NVM_FLUSH_CLFLUSH:
        return found.max_leaf >= 1 && (found.leaf1_edx & CPUID_1_EDX_CLFLUSH);
    case NVM_FLUSH_NONE:
        return true;
    }
    return false;
}

long nvm_flush_choose(enum nvm_flush_kind kind)
{
    if ((unsigned)kind > NVM_FLUSH_NONE || !offered(kind))
        return -E_INVALID;
    kind_in_use = (int)kind;
    return 0;
}

void nvm_observe(const struct nvm_observer *watcher)
{
    observer = watcher;
}

/* The compiler keeps every store before a flush before it ("memory"). */
static void write_back_lines(uintptr_t line, uintptr_t end, enum nvm_flush_kind kind)
{
    switch (kind) {
    case NVM_FLUSH_CLWB:
        for (; line < end; line += NVM_LINE_BYTES)
            __asm__ volatile("clwb (%0)" ::"r"(line) : "memory");
        break;
    case NVM_FLUSH_CLFLUSHOPT:
        for (; line < end; line += NVM_LINE_BYTES)
            __asm__ volatile("clflushopt (%0)" ::"r"(line) : "memory");
        break;
    case NVM_FLUSH_CLFLUSH:
        for (; line < end; line += NVM_LINE_BYTES)
            __asm__ volatile("clflush (%0)" ::"r"(line) : "memory");
        break;
    case NVM_FLUSH_NONE:
        break;
    }
}

void nvm_flush(const void *address, size_t bytes)
{
    if (bytes == 0)
        return;
    uintptr_t start = (uintptr_t)address & ~(uintptr_t)(NVM_LINE_BYTES - 1);
    write_back_lines(start, (uintptr_t)address + bytes, nvm_flush_kind_in_use());
    if (observer != NULL)
        observer->flushed(observer->context, address, bytes);
}

/* Issued after CLFLUSH too, which stores already order: one rule for every CPU. */
void nvm_fence(void)
{
    __asm__ volatile("sfence" ::: "memory");
    if (observer != NULL)
        observer->fenced(observer->context);
}

void nvm_persist(const void *address, size_t bytes)
{
    nvm_flush(address, bytes);
    nvm_fence();
}

void nvm_write(void *destination, const void *source, size_t bytes)
{
    memcpy(destination, source, bytes);
    if (observer != NULL)
        observer->wrote(observer->context, destination, bytes);
}

void nvm_note_write(const void *destination, size_t bytes)
{
    if (observer != NULL)
        observer->wrote(observer->context, destination, bytes);
}

void nvm_fill(void *destination, int byte, size_t bytes)
{
    memset(destination, byte, bytes);
    if (observer != NULL)
        observer->wrote(observer->context, destination, bytes);
}

void nvm_write_persist(void *destination, const void *source, size_t bytes)
{
    nvm_write(destination, source, bytes);
    nvm_persist(destination, bytes);
}

void nvm_store64_persist(uint64_t *word, uint64_t value)
{
    *(volatile uint64_t *)word = value;
    if (observer != NULL)
        observer->wrote(observer->context, word, sizeof *word);
    nvm_persist(word, sizeof *word);
}

void nvm_store32_persist(uint32_t *word, uint32_t value)
{
    *(volatile uint32_t *)word = value;
    if (observer != NULL)
        observer->wrote(observer->context, word, sizeof *word);
    nvm_persist(word, sizeof *word);
}
