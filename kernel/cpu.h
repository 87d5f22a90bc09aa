/* cpu.h: the per-core record. Each core finds its own through the GS base
 * (offset 0 holds a pointer to itself); the array of all records lives in
 * memory shared by both kernels so a core can see whether another waits. */
#pragma once

#define SEGMENT_KERNEL_CODE 0x08
#define SEGMENT_KERNEL_DATA 0x10
#define SEGMENT_USER_DATA 0x18
#define SEGMENT_USER_CODE 0x20
#define SEGMENT_TSS 0x28
#define GDT_ENTRIES 7

/* Offsets in struct cpu used by the system-call entry (syscall_entry.S). */
#define CPU_KERNEL_STACK_TOP 8
#define CPU_USER_STACK_SCRATCH 16
#define CPU_SYSTEM_CALLS 0x100

#ifndef __ASSEMBLER__
#include <stdint.h>
#include "pcid_table.h"
#include "run_queue.h"

struct tss {
    uint32_t reserved0;
    uint64_t rsp[3];
    uint64_t reserved1;
    uint64_t ist[7];
    uint64_t reserved2;
    uint16_t reserved3;
    uint16_t io_map_base;
} __attribute__((packed));

enum kernel_role { ROLE_M = 0, ROLE_P = 1 };

struct process;

/* Written by the core itself, except where marked: the m-kernel fills the
 * identity at boot, and other cores write only `waiting` (to take the halt
 * announcement back). The counters are the core's own; others only read. */
struct cpu {
    struct cpu *self;            /* must stay first: %gs:0 */
    uint64_t kernel_stack_top;   /* of the running process (also TSS rsp0) */
    uint64_t user_stack_scratch; /* the user rsp during system-call entry */
    /* m-kernel, at boot. */
    uint32_t index; /* logical core number, MKERNEL_CORE = boot core */
    uint32_t apic_id;
    uint32_t role;   /* ROLE_M or ROLE_P */
    uint32_t socket; /* package, from CPUID topology */
    /* The core itself. */
    _Atomic uint32_t online;      /* set by the core once it runs its kernel */
    struct process *current;      /* running process, NULL in the scheduler */
    uint64_t scheduler_stack_top; /* the core's own stack: scheduler, idle */
    uint64_t scheduler_rsp;       /* saved while a process runs */
    uint32_t sleepers;            /* processes of this core waiting with a deadline */
    uint64_t next_wake_tick;      /* no sleeper of this core wakes before it (may be early) */
    /* Set by the core while it halts waiting for messages; a sender clears
     * it and IPIs. Its own cache line: every sender reads it. */
    _Atomic uint32_t waiting __attribute__((aligned(64)));
    /* Set by the core while it polls for an ICA in its kernel (ica_poll.c):
     * it sees a message at its next turn, so a wake needs no IPI. This and
     * poll_woken are written only through kernel/ica/ica_wait.h. */
    _Atomic uint32_t polling;
    union {
        struct {
            /* Set by a sender after each push into this core's inboxes; a
             * poll that finds it clear has nothing to read and skips the N
             * inboxes. */
            _Atomic uint32_t inbox_hint;
            /* A process of this core a sender on another core woke while
             * the core polled (ica_core_hand_wake): the poll makes it
             * ready, no message. */
            _Atomic uint32_t poll_woken;
        };
        /* Both in one load: a poll's turn looks at one word. */
        _Atomic uint64_t inbox_hint_or_woken __attribute__((aligned(8)));
    };
    uint64_t ipis_sent __attribute__((aligned(64)));
    uint64_t ipis_received;
    uint64_t messages_sent;
    uint64_t messages_received;
    uint64_t timer_ticks;
    uint64_t idle_cycles;       /* TSC cycles halted in the scheduler, waiting for work */
    uint64_t cr3_writes;        /* address-space switches (QEMU TCG flushes its TLB on each) */
    uint64_t device_interrupts; /* device IRQs taken on this core */
    uint64_t system_calls;
    uint64_t ica_handovers; /* ICA peel+paste pairs done on this core */
    /* The root in CR3 and the stamps it was loaded with (translation_stamp.h). */
    uint64_t loaded_root, loaded_stamp, loaded_kernel_stamp;
    uint32_t pcid_on;      /* CR4.PCIDE set on this core (pcid.c): loads tag and keep entries */
    uint64_t cr3_kept;     /* of cr3_writes, loads under PCID that kept the entries (bit 63) */
    uint64_t stale_faults; /* page faults only a stale TLB entry caused (stale_translation.c) */
    uint64_t switched_in;  /* TSC when the running process got the core */
    /* A process of this core woken for the running one, which is about to
     * block: it runs next without a scheduler pass (scheduler_hand_off). */
    struct process *handoff;
    /* A timer tick came while the kernel ran: the next block passes through
     * the scheduler loop (sleepers, inbox) instead of switching directly. */
    uint32_t tick_unserved;
    /* The ICA poll's bound (ica_poll.c): read from the command line once,
     * then adapted between its least and most by the halts that follow a
     * poll that gave up (ica_poll_adapt). */
    uint32_t ica_poll_read;    /* the bounds are read */
    uint32_t ica_poll_gave_up; /* a poll ended on its bound since the last halt */
    uint64_t ica_poll_cycles;  /* the next poll's bound */
    uint64_t ica_poll_least;
    uint64_t ica_poll_most;
    uint64_t fault_stack_top;
    uint64_t gdt[GDT_ENTRIES];
    struct tss tss;
    /* The core's ready processes (scheduler.c); only this core touches it. Here, not in
     * a static array of MAX_CORES, so its memory grows with the cores present. */
    struct run_queue run_queue;
    /* Per process slot, what its PCID's entries were loaded under (pcid_table.h). */
    struct pcid_loaded pcid_loaded[PCID_PROCESS_SLOTS];
} __attribute__((aligned(64)));

_Static_assert(__builtin_offsetof(struct cpu, kernel_stack_top) == CPU_KERNEL_STACK_TOP,
               "syscall_entry.S relies on this offset");
_Static_assert(__builtin_offsetof(struct cpu, user_stack_scratch) == CPU_USER_STACK_SCRATCH,
               "syscall_entry.S relies on this offset");
_Static_assert(__builtin_offsetof(struct cpu, system_calls) == CPU_SYSTEM_CALLS,
               "syscall_entry.S relies on this offset");

/* Bumped by every cpu_install (gdt.c; its value means nothing): this_cpu
 * reads it, so the compiler loads the record again after anything that may
 * move GS. */
extern uint32_t cpu_gs_moves;

/* Not volatile: the record of the core never changes under running kernel
 * code (a process's kernel stack only ever runs on its own core), so the
 * compiler may reuse the load until a call or a store that may change
 * cpu_gs_moves (cpu_install moves GS during the m-kernel's boot). */
static inline struct cpu *this_cpu(void)
{
    struct cpu *cpu;
    __asm__("movq %%gs:0, %0" : "=r"(cpu) : "m"(cpu_gs_moves));
    return cpu;
}

/* this_cpu for code that may run before cpu_install (it tests the GS base
 * first): volatile, so the load is never moved ahead of that test. */
static inline struct cpu *this_cpu_after_boot_test(void)
{
    struct cpu *cpu;
    __asm__ volatile("movq %%gs:0, %0" : "=r"(cpu));
    return cpu;
}

/* Builds the core's GDT and TSS, loads them, and points GS at the record. */
void cpu_install(struct cpu *cpu);
#endif
