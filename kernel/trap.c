/* trap.c: what happens after an entry stub. Exceptions in the kernel end in
 * a full report and a panic; interrupt vectors go to the handler registered
 * for them (timer, inter-core message IPI, devices; kernel/trap_handlers.c). */
#include "trap.h"
#include "console.h"
#include "cpu.h"
#include "file_region.h"
#include "lapic.h"
#include "pager_syscalls.h"
#include "port_io_emulation.h"
#include "panic.h"
#include "process.h"
#include "scheduler.h"
#include "stale_translation.h"
#include "syscall.h"
#include "x86.h"
#include <format.h>
#include <stdbool.h>

static const char *const exception_names[32] = {
    "divide error",
    "debug",
    "NMI",
    "breakpoint",
    "overflow",
    "bound range exceeded",
    "invalid opcode",
    "device not available",
    "double fault",
    "coprocessor segment overrun",
    "invalid TSS",
    "segment not present",
    "stack-segment fault",
    "general protection fault",
    "page fault",
    "reserved",
    "x87 floating-point error",
    "alignment check",
    "machine check",
    "SIMD floating-point error",
    "virtualization exception",
    "control protection",
};

const char *trap_name(uint64_t vector)
{
    if (vector < 32)
        return exception_names[vector] != 0 ? exception_names[vector] : "reserved exception";
    if (vector == VECTOR_TIMER)
        return "timer";
    if (vector == VECTOR_MESSAGE)
        return "message IPI";
    return "interrupt";
}

void trap_report(const struct trap_frame *frame)
{
    struct cpu *cpu = this_cpu();
    kprintf_unlocked("\n*** %s (vector %lu) on core %u (apic %u, %s-kernel), error code 0x%lx\n",
                     trap_name(frame->vector), frame->vector, cpu->index, cpu->apic_id,
                     cpu->role == ROLE_M ? "m" : "p", frame->error_code);
    if (frame->vector == VECTOR_PAGE_FAULT)
        kprintf_unlocked("    faulting address cr2=%016lx (%s, %s, %s)\n", read_cr2(),
                         (frame->error_code & 1) ? "protection" : "not present",
                         (frame->error_code & 2) ? "write" : "read",
                         (frame->error_code & 4) ? "user" : "kernel");
    kprintf_unlocked("    rip=%016lx cs=%04lx rflags=%016lx rsp=%016lx ss=%04lx\n", frame->rip,
                     frame->cs, frame->rflags, frame->rsp, frame->ss);
    kprintf_unlocked("    rax=%016lx rbx=%016lx rcx=%016lx rdx=%016lx\n", frame->rax, frame->rbx,
                     frame->rcx, frame->rdx);
    kprintf_unlocked("    rsi=%016lx rdi=%016lx rbp=%016lx r8 =%016lx\n", frame->rsi, frame->rdi,
                     frame->rbp, frame->r8);
    kprintf_unlocked("    r9 =%016lx r10=%016lx r11=%016lx r12=%016lx\n", frame->r9, frame->r10,
                     frame->r11, frame->r12);
    kprintf_unlocked("    r13=%016lx r14=%016lx r15=%016lx cr3=%016lx\n", frame->r13, frame->r14,
                     frame->r15, read_cr3());
}

/* A fault in user mode ends that process, never the kernel. */
static void end_faulting_process(struct trap_frame *frame)
{
    struct cpu *cpu = this_cpu();
    struct process *process = cpu->current;
    char address[40] = "";
    if (frame->vector == VECTOR_PAGE_FAULT)
        format_string(address, sizeof(address), ", address 0x%lx", read_cr2());
    kprintf("core %u: process '%s' (pid %u) killed by %s (vector %lu, error 0x%lx) at rip "
            "0x%lx%s\n",
            cpu->index, process->name, process->pid, trap_name(frame->vector), frame->vector,
            frame->error_code, frame->rip, address);
    scheduler_exit_current(PROCESS_EXIT_FAULT_BASE + (int32_t)frame->vector);
}

void trap_dispatch(struct trap_frame *frame)
{
    uint64_t vector = frame->vector;
    bool from_user = (frame->cs & 3) != 0 && this_cpu()->current != NULL;
    if (vector == VECTOR_PAGE_FAULT && stale_translation_fault(read_cr2(), frame->error_code))
        return;
    if (vector == VECTOR_PAGE_FAULT && from_user &&
        (pager_resolve_fault(read_cr2(), frame->error_code) ||
         file_region_resolve_fault(read_cr2(), frame->error_code)))
        return;
    if (vector < 32 && from_user) {
        if (syscall_entry_fault(frame) || port_io_emulate(frame))
            return;
        end_faulting_process(frame);
    }
    if (trap_handlers[vector] != 0) {
        trap_handlers[vector](frame);
        if (from_user)
            scheduler_preempt_check(frame, vector == VECTOR_TIMER);
        return;
    }
    if (vector < 32) {
        panic_begin();
        trap_report(frame);
        panic("unhandled %s in the kernel at rip %016lx", trap_name(vector), frame->rip);
    }
    if (vector != VECTOR_SPURIOUS) {
        kprintf("core %u: unexpected interrupt vector %lu\n", this_cpu()->index, vector);
        lapic_end_of_interrupt();
    }
}
