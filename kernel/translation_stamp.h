/* translation_stamp.h: when a core may resume a process without writing CR3, and, under
 * PCID, when a CR3 write may keep the process's TLB entries. Removing a translation from a
 * process's tables (unmap, peel, clearing an accessed bit, a write-protect) bumps its stamp,
 * unless the remover is that process on its own core (it invalidates with invlpg); freeing an
 * address space or a kernel-wide change bumps the kernel's. A core that finds the root it last
 * loaded and both stamps unchanged holds no stale translation and skips the CR3 write (under
 * QEMU TCG a full soft-TLB flush); with PCID, a core keeps a process's entries across other
 * processes' runs while its record of their load matches (pcid_table.h, docs/ica.md). */
#pragma once
#include "atomic.h"
#include "cpu.h"
#include "process.h"
#include "shared.h"
#include "x86.h"

static inline void translations_dropped(struct process *process)
{
    atomic_add(&process->translation_stamp, 1);
}

static inline void translations_dropped_everywhere(void)
{
    atomic_add(&kernel_shared->translation_stamp, 1);
}

_Static_assert(PROCESS_SLOTS == PCID_PROCESS_SLOTS, "one PCID per process slot");

/* The PCID of `process`: its slot + 1 (a slot is its record's page in the table). */
static inline uint32_t translations_pcid(const struct process *process)
{
    return (uint32_t)(((uintptr_t)process - (uintptr_t)kernel_shared->processes) /
                      PROCESS_RECORD_BYTES) +
           1;
}

/* Under PCID (pcid.c): `process`'s root tagged with its PCID, keeping the entries cached
 * under that PCID when the core's record of their load still matches (pcid_table.h). */
static inline void translations_load_tagged(struct cpu *cpu, struct process *process, uint64_t own,
                                            uint64_t everyone)
{
    uint32_t pcid = translations_pcid(process);
    uint64_t cr3 = pcid_load(&cpu->pcid_loaded[pcid - 1], pcid, process->root, own, everyone);
    write_cr3(cr3);
    cpu->cr3_kept += pcid_load_keeps(cr3);
}

/* `process`'s address space on this core: a CR3 write unless nothing
 * changed since it was loaded. Every switch pays for the check (about ten
 * instructions): a readblock's three hops each change address space. */
static inline void translations_load(struct cpu *cpu, struct process *process)
{
    uint64_t own = atomic_load_acquire(&process->translation_stamp);
    uint64_t everyone = atomic_load_acquire(&kernel_shared->translation_stamp);
    if (cpu->loaded_root == process->root && cpu->loaded_stamp == own &&
        cpu->loaded_kernel_stamp == everyone)
        return;
    if (cpu->pcid_on)
        translations_load_tagged(cpu, process, own, everyone);
    else
        write_cr3(process->root);
    cpu->cr3_writes++;
    cpu->loaded_root = process->root;
    cpu->loaded_stamp = own;
    cpu->loaded_kernel_stamp = everyone;
}

/* A CR3 write not through translations_load (the kernel's own root): the next load writes. */
static inline void translations_forget_loaded(struct cpu *cpu)
{
    cpu->loaded_root = 0;
}
