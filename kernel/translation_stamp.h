/* translation_stamp.h: when a core may resume a process without writing CR3. Removing a
 * translation from a process's tables (unmap, peel, clearing an accessed bit) bumps its stamp,
 * unless the remover is that process on its own core (it invalidates with invlpg); freeing an
 * address space or a kernel-wide change bumps the kernel's. A core that finds the root it last
 * loaded and both stamps unchanged holds no stale translation and skips the CR3 write (under
 * QEMU TCG a full soft-TLB flush; docs/pager.md, Session 23). */
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
