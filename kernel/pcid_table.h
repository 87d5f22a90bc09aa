/* pcid_table.h: a core's record, per PCID, of the root and the two translation stamps
 * (translation_stamp.h) that PCID's TLB entries were loaded under. A load whose record
 * still matches keeps the entries (CR3 bit 63, no flush); any other flushes that PCID's. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* Process slot s runs under PCID s + 1; PCID 0 is the kernel's own root (never recorded). */
#define PCID_KERNEL 0
#define PCID_PROCESS_SLOTS 256 /* PROCESS_SLOTS (translation_stamp.h checks) */
#define CR3_NO_FLUSH (1ull << 63)

struct pcid_loaded {
    uint64_t root;         /* 0: nothing of this PCID is cached on the core */
    uint64_t stamp;        /* the process's translation stamp at the last load */
    uint64_t kernel_stamp; /* kernel_shared's at the last load */
};

/* The CR3 value that loads `root` under `pcid` on a core whose record for it is *record,
 * and the record updated for it: bit 63 set when the record matches (the entries cached
 * under `pcid` are still right), clear when it does not (the load flushes them). */
static inline uint64_t pcid_load(struct pcid_loaded *record, uint32_t pcid, uint64_t root,
                                 uint64_t stamp, uint64_t kernel_stamp)
{
    bool keep =
        record->root == root && record->stamp == stamp && record->kernel_stamp == kernel_stamp;
    record->root = root;
    record->stamp = stamp;
    record->kernel_stamp = kernel_stamp;
    return root | pcid | (keep ? CR3_NO_FLUSH : 0);
}

/* Whether a CR3 value from pcid_load keeps the PCID's entries. */
static inline bool pcid_load_keeps(uint64_t cr3)
{
    return (cr3 & CR3_NO_FLUSH) != 0;
}
