/* syscall.c: system-call entry and the general calls. The table of handlers
 * and their typed arguments come from protocol/syscalls.messages; each
 * handler checks what it is given (ranges, cores, pids, every user pointer)
 * and returns a value or -E_* code: nothing a process passes can make the
 * kernel fault or panic. The ICA, device and pager calls live beside their
 * subsystems (ica_syscalls.c, device_syscalls.c, pager_syscalls.c). */
#include "syscall.h"
#include "atomic.h"
#include "clock.h"
#include "console.h"
#include "cpu.h"
#include "ica/ica_fastpath.h"
#include "ica/ica_syscalls.h"
#include "mkernel_client.h"
#include "pager_syscalls.h"
#include "process.h"
#include "scheduler.h"
#include "shared.h"
#include "user_memory.h"
#include "user_return.h"
#include "x86.h"
#include <formica/errors.h>
#include <formica/rights.h>
#include <formica/protocol/syscall_table.h>
#include <formica/syscalls.h>
#include <string.h>

#define SFMASK_BITS 0x44700 /* TF, IF, DF, NT, AC cleared on entry */

void syscall_entry(void);

static struct process *current(void)
{
    return this_cpu()->current;
}

static void exit_if_killed(void)
{
    if (current()->kill_requested)
        scheduler_exit_current(-1);
}

long sys_exit(int32_t code)
{
    scheduler_exit_current(code);
}

long sys_yield(void)
{
    scheduler_yield();
    return 0;
}

long sys_process_id(void)
{
    return current()->pid;
}

long sys_core_id(void)
{
    return this_cpu()->index;
}

static long validate_spawn(struct spawn_request *request)
{
    if (strnlen(request->program, NAME_BYTES) == NAME_BYTES ||
        strnlen(request->arguments, ARGUMENTS_BYTES) == ARGUMENTS_BYTES)
        return -E_TOO_BIG;
    if (request->program[0] == '\0' || request->priority >= PRIORITY_LEVELS)
        return -E_INVALID;
    if (request->core == CORE_ANY)
        request->core = this_cpu()->index;
    if (request->core >= kernel_shared->core_count || !kernel_shared->cpus[request->core].online)
        return -E_NO_SUCH_CORE;
    return 0;
}

long sys_spawn(uint64_t user_request)
{
    struct spawn_request request;
    long error = copy_from_user(&request, user_request, sizeof(request));
    if (error == 0)
        error = validate_spawn(&request);
    if (error != 0)
        return error;
    struct intercore_message message = {.type = MESSAGE_PROCESS_SPAWN,
                                        .process_spawn = {(uint64_t)&request, current()->pid}};
    struct intercore_message reply;
    mkernel_request(&message, &reply);
    return reply.process_spawn_reply.pid;
}

long sys_wait(uint32_t pid, uint64_t exit_code)
{
    uint64_t code_address = exit_code;
    struct process *child = process_find(pid);
    if (child == NULL)
        return -E_NOT_FOUND;
    if (child->parent != current()->pid)
        return -E_NOT_CHILD;
    if (code_address != 0 && !user_range_ok(current()->root, code_address, 4, true))
        return -E_FAULT;
    while (child->state != PROCESS_ZOMBIE) {
        scheduler_block(WAIT_CHILD, 0);
        exit_if_killed();
    }
    int32_t code = child->exit_code;
    struct intercore_message message = {.type = MESSAGE_PROCESS_COLLECT, .process_collect = {pid}};
    struct intercore_message reply;
    mkernel_request(&message, &reply);
    if (code_address != 0 && copy_to_user(code_address, &code, 4) != 0)
        return -E_FAULT; /* checked again: the memory may have changed during the wait */
    return pid;
}

/* True when `ancestor` is the parent, grandparent, ... of `process`. */
static bool descends_from(const struct process *process, uint32_t ancestor)
{
    for (uint32_t depth = 0; process != NULL && depth < PROCESS_SLOTS; depth++) {
        if (process->parent == ancestor)
            return true;
        process = process_find(process->parent);
    }
    return false;
}

/* Ends every live descendant of `root`: killing a program ends what it started. */
static void kill_descendants(const struct process *root)
{
    for (uint32_t slot = 0; slot < PROCESS_SLOTS; slot++) {
        struct process *process = &kernel_shared->processes[slot];
        if (process->state == PROCESS_FREE || process->state == PROCESS_ZOMBIE ||
            process == current() || !descends_from(process, root->pid))
            continue;
        scheduler_send_to_owner(MESSAGE_PROCESS_KILL, process);
    }
}

/* A process may kill itself and its descendants; RIGHT_ADMIN any but init. */
long sys_kill(uint32_t pid)
{
    struct process *target = process_find(pid);
    if (target == NULL || target->state == PROCESS_ZOMBIE)
        return -E_NOT_FOUND;
    if (target->pid == INIT_PID)
        return -E_PERMISSION;
    bool own = target == current() || descends_from(target, current()->pid);
    if (!own && !(current()->rights & RIGHT_ADMIN))
        return -E_PERMISSION;
    kill_descendants(target);
    if (target == current())
        scheduler_exit_current(-1);
    scheduler_send_to_owner(MESSAGE_PROCESS_KILL, target);
    return 0;
}

long sys_process_list(uint64_t buffer, uint64_t max)
{
    if (max > PROCESS_SLOTS)
        max = PROCESS_SLOTS;
    if (!user_range_ok(current()->root, buffer, max * sizeof(struct process_info), true))
        return -E_FAULT;
    long count = 0;
    for (uint32_t slot = 0; slot < PROCESS_SLOTS && (uint64_t)count < max; slot++) {
        const struct process *process = &kernel_shared->processes[slot];
        if (process->state != PROCESS_FREE)
            process_describe(process, (struct process_info *)buffer + count++);
    }
    return count;
}

static void describe_core(uint32_t core, struct core_info *info)
{
    const struct cpu *cpu = &kernel_shared->cpus[core];
    memset(info, 0, sizeof(*info));
    info->id = core;
    info->apic_id = cpu->apic_id;
    info->kernel = cpu->role == ROLE_M ? KERNEL_M : KERNEL_P;
    info->socket = cpu->socket;
    info->online = cpu->online;
    info->ipis_sent = cpu->ipis_sent;
    info->ipis_received = cpu->ipis_received;
    info->messages_sent = cpu->messages_sent;
    info->messages_received = cpu->messages_received;
    info->idle_cycles = cpu->idle_cycles;
    info->cr3_writes = cpu->cr3_writes;
    info->cr3_kept = cpu->cr3_kept;
    info->stale_faults = cpu->stale_faults;
    info->device_interrupts = cpu->device_interrupts;
    info->system_calls = cpu->system_calls;
    for (uint32_t slot = 0; slot < PROCESS_SLOTS; slot++) {
        const struct process *process = &kernel_shared->processes[slot];
        if (process->state == PROCESS_FREE || process->state == PROCESS_ZOMBIE ||
            process->core != core)
            continue;
        if (info->process_count < sizeof(info->pids) / sizeof(info->pids[0]))
            info->pids[info->process_count] = process->pid;
        info->process_count++;
    }
}

long sys_core_list(uint64_t buffer, uint64_t max)
{
    if (max > kernel_shared->core_count)
        max = kernel_shared->core_count;
    if (!user_range_ok(current()->root, buffer, max * sizeof(struct core_info), true))
        return -E_FAULT;
    for (uint32_t core = 0; core < max; core++)
        describe_core(core, (struct core_info *)buffer + core);
    return (long)max;
}

long sys_memory_grow(uint64_t bytes)
{
    struct intercore_message message = {.type = MESSAGE_PROCESS_GROW,
                                        .process_grow = {current()->pid, bytes}};
    struct intercore_message reply;
    mkernel_request(&message, &reply);
    return reply.process_grow_reply.old_end;
}

long sys_notify(uint32_t pid)
{
    struct process *target = process_find(pid);
    if (target == NULL || target->state == PROCESS_ZOMBIE)
        return -E_NOT_FOUND;
    atomic_add(&target->notifications, 1);
    scheduler_send_to_owner(MESSAGE_PROCESS_WAKE, target);
    return 0;
}

long sys_await(void)
{
    struct process *process = current();
    for (;;) {
        uint64_t count = atomic_swap(&process->notifications, 0);
        if (count > 0)
            return (long)count;
        scheduler_block(WAIT_NOTIFICATION, 0);
        exit_if_killed();
    }
}

long sys_sleep(uint64_t milliseconds)
{
    scheduler_sleep(milliseconds);
    return 0;
}

long sys_kernel_option(uint64_t user_name, uint64_t buffer, uint64_t size)
{
    char name[64];
    const char *value;
    unsigned length;
    long error = copy_string_from_user(name, user_name, sizeof(name));
    if (error < 0)
        return error;
    if (size == 0)
        return -E_INVALID;
    if (!command_line_find(name, &value, &length))
        return -E_NOT_FOUND;
    if ((uint64_t)length + 1 > size)
        return -E_TOO_BIG;
    if (!user_range_ok(current()->root, buffer, (uint64_t)length + 1, true))
        return -E_FAULT;
    memcpy((void *)buffer, value, length);
    ((char *)buffer)[length] = '\0';
    return length;
}

long sys_placement(uint64_t info)
{
    return copy_to_user(info, &kernel_shared->placement, sizeof(struct placement_info));
}

long sys_power_off(uint64_t status)
{
    if (!(current()->rights & RIGHT_POWER_OFF))
        return -E_PERMISSION;
    struct intercore_message message = {.type = MESSAGE_POWER_OFF, .power_off = {status}};
    struct intercore_message reply;
    mkernel_request(&message, &reply);
    return 0;
}

long sys_clock(uint64_t buffer)
{
    struct clock_info info = {
        .tsc_hz = kernel_shared->tsc_hz,
        .ticks = this_cpu()->timer_ticks,
        .tick_period_us = kernel_shared->tick_period_ms * 1000ull,
    };
    return copy_to_user(buffer, &info, sizeof(info));
}

long sys_copy_grant(uint64_t address, uint64_t bytes)
{
    if (bytes != 0 && !user_range_ok(current()->root, address, bytes, true))
        return -E_FAULT;
    current()->copy_window = address;
    current()->copy_window_bytes = bytes;
    return 0;
}

long sys_copy_to(uint32_t pid, uint64_t offset, uint64_t source, uint64_t bytes)
{
    struct intercore_message message = {
        .type = MESSAGE_COPY_TO,
        .copy_to = {current()->pid, pid, offset, source, bytes},
    };
    struct intercore_message reply;
    mkernel_request(&message, &reply);
    return reply.copy_to_reply.result;
}

const uint64_t ica_fast_path_calls = ICA_FAST_PATH_CALLS;

void syscall_finish(void)
{
    struct cpu *cpu = this_cpu();
    if (cpu->handoff != NULL)
        scheduler_hand_off_flush(); /* a hand-off the caller did not block for */
    exit_if_killed();
}

void syscall_dispatch(struct trap_frame *frame)
{
    uint64_t number = frame->rax;
    long result = -E_NO_SYSTEM_CALL;
    if (number < SYS_COUNT && syscall_handlers[number] != NULL)
        result = syscall_handlers[number](frame);
    frame->rax = (uint64_t)result;
    syscall_finish();
}

/* Flags a user program may set; sysret and iretq give it no others. */
#define USER_RFLAGS_KEPT 0x240dd5 /* CF PF AF ZF SF TF DF OF AC ID */
#define RFLAGS_RESERVED_ONE 0x2
#define RFLAGS_IF 0x200

bool syscall_entry_fault(struct trap_frame *frame)
{
    if (frame->vector != VECTOR_PAGE_FAULT || frame->rip != (uint64_t)syscall_entry)
        return false;
    frame->rip = frame->rcx;
    if (!user_return_allowed(frame->rip))
        user_return_refused(frame); /* the call is not served: the process ends here */
    frame->rflags = (frame->r11 & USER_RFLAGS_KEPT) | RFLAGS_RESERVED_ONE | RFLAGS_IF;
    frame->vector = VECTOR_SYSTEM_CALL;
    this_cpu()->system_calls++;
    syscall_dispatch(frame);
    return true;
}

void syscall_install(void)
{
    wrmsr(MSR_EFER, rdmsr(MSR_EFER) | 1); /* SCE */
    wrmsr(MSR_STAR, ((uint64_t)SEGMENT_KERNEL_DATA << 48) | ((uint64_t)SEGMENT_KERNEL_CODE << 32));
    wrmsr(MSR_LSTAR, (uint64_t)syscall_entry);
    wrmsr(MSR_SFMASK, SFMASK_BITS);
}
