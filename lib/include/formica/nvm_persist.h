/* nvm_persist.h: the one flush layer for persistent memory mapped write-back
 * (docs/design.md, "The flush layer"). A store reaches the NVDIMM when the
 * cache evicts its line, in no order; a line written back (CLWB, else
 * CLFLUSHOPT, else CLFLUSH, as CPUID offers) and then a fence is durable.
 * The rule for every user: store a word that makes data reachable (a map
 * entry, a tag, a key, a magic) only after that data is flushed and fenced. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NVM_LINE_BYTES 64u

enum nvm_flush_kind {
    NVM_FLUSH_CLWB,       /* CPUID.7.0:EBX bit 24: written back, the line stays cached */
    NVM_FLUSH_CLFLUSHOPT, /* CPUID.7.0:EBX bit 23: written back and invalidated */
    NVM_FLUSH_CLFLUSH,    /* CPUID.1:EDX bit 19: the same, ordered with stores */
    NVM_FLUSH_NONE,       /* none offered: only the fence is issued */
};

/* The CPUID words the choice reads. */
struct nvm_cpuid {
    uint32_t max_leaf;  /* CPUID.0:EAX */
    uint32_t leaf1_edx; /* CPUID.1:EDX */
    uint32_t leaf7_ebx; /* CPUID.7.0:EBX (0 when max_leaf < 7) */
};

/* Pure: the best flush `cpuid` offers. */
enum nvm_flush_kind nvm_flush_kind_for(const struct nvm_cpuid *cpuid);
/* "clwb", "clflushopt", "clflush", "none". */
const char *nvm_flush_kind_name(enum nvm_flush_kind kind);
/* The flush in use: chosen from this CPU's CPUID at the first call. */
enum nvm_flush_kind nvm_flush_kind_in_use(void);
/* Uses `kind` from now on if this CPU offers it (a weaker one than the best
 * is allowed: tests and comparisons); 0, or -E_INVALID and nothing changes. */
long nvm_flush_choose(enum nvm_flush_kind kind);

/* Writes back every line of [address, address + bytes); not ordered until a fence. */
void nvm_flush(const void *address, size_t bytes);
/* SFENCE: every flush before it is durable before any later store is visible. */
void nvm_fence(void);
/* nvm_flush, then nvm_fence. */
void nvm_persist(const void *address, size_t bytes);
/* The stores themselves (memcpy, memset), told to an observer. */
void nvm_write(void *destination, const void *source, size_t bytes);
void nvm_fill(void *destination, int byte, size_t bytes);
/* Tells the observer of bytes stored without this layer (a copy made by
 * another module, as BLK's disk reads into its tier's lines); stores nothing. */
void nvm_note_write(const void *destination, size_t bytes);
/* nvm_write, then nvm_persist: the ordered "write then persist" step. */
void nvm_write_persist(void *destination, const void *source, size_t bytes);
/* One aligned store (atomic), then nvm_persist of it: a commit word. */
void nvm_store64_persist(uint64_t *word, uint64_t value);
void nvm_store32_persist(uint32_t *word, uint32_t value);

/* Who is told of every write, flush and fence made through this layer:
 * the order recorder (formica/nvm_order_record.h) in a guest, the crash
 * model in the host tests. One at a time; NULL for none. */
struct nvm_observer {
    void (*wrote)(void *context, const void *address, size_t bytes);
    void (*flushed)(void *context, const void *address, size_t bytes);
    void (*fenced)(void *context);
    void *context;
};
void nvm_observe(const struct nvm_observer *observer);
