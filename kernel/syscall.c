/* syscall.c: the system calls. Each handler checks its arguments (ranges,
 * cores, pids, and every user pointer) and returns a value or -E_* code;
 * nothing a process passes can make the kernel fault or panic. */
#include "syscall.h"
#include "clock.h"
#include "console.h"
#include "cpu.h"
#include "device_syscalls.h"
#include "ica_syscalls.h"
#include "mkernel_client.h"
#include "pager_syscalls.h"
#include "process.h"
#include "scheduler.h"
#include "shared.h"
#include "user_memory.h"
#include "x86.h"
#include <formica/errors.h>
#include <formica/syscalls.h>
#include <string.h>

#define CONSOLE_WRITE_LIMIT (1u << 20)
#define SFMASK_BITS 0x44700 /* TF, IF, DF, NT, AC cleared on entry */

void syscall_entry(void);

typedef long (*syscall_handler)(const struct trap_frame *frame);

static struct process *current(void)
{
    return this_cpu()->current;
}

static void exit_if_killed(void)
{
    if (current()->kill_requested)
        scheduler_exit_current(-1);
}

static long sys_exit(const struct trap_frame *frame)
{
    scheduler_exit_current((int32_t)frame->rdi);
}

static long sys_console_write(const struct trap_frame *frame)
{
    uint64_t buffer = frame->rdi, length = frame->rsi;
    if (length > CONSOLE_WRITE_LIMIT)
        return -E_TOO_BIG;
    if (!user_range_ok(current()->root, buffer, length, false))
        return -E_FAULT;
    console_write_text((const char *)buffer, length);
    return (long)length;
}

static long sys_console_read(const struct trap_frame *frame)
{
    uint64_t buffer = frame->rdi, length = frame->rsi;
    if (length == 0)
        return 0;
    if (!user_range_ok(current()->root, buffer, length, true))
        return -E_FAULT;
    for (;;) {
        /* checked again after every wait: the memory may have changed meanwhile */
        if (!user_range_ok(current()->root, buffer, length, true))
            return -E_FAULT;
        uint64_t count = 0;
        int byte;
        while (count < length && (byte = console_read_byte()) >= 0)
            ((char *)buffer)[count++] = (char)byte;
        if (count > 0)
            return (long)count;
        scheduler_block(WAIT_SLEEP, this_cpu()->timer_ticks + 1);
        exit_if_killed();
    }
}

static long sys_yield(const struct trap_frame *frame)
{
    (void)frame;
    scheduler_yield();
    return 0;
}

static long sys_process_id(const struct trap_frame *frame)
{
    (void)frame;
    return current()->pid;
}

static long sys_core_id(const struct trap_frame *frame)
{
    (void)frame;
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

static long sys_spawn(const struct trap_frame *frame)
{
    struct spawn_request request;
    long error = copy_from_user(&request, frame->rdi, sizeof(request));
    if (error == 0)
        error = validate_spawn(&request);
    if (error != 0)
        return error;
    struct intercore_message message = {.type = MESSAGE_PROCESS_SPAWN}, reply;
    message.argument[0] = (uint64_t)&request;
    message.argument[1] = current()->pid;
    mkernel_request(&message, &reply);
    return (long)reply.argument[0];
}

static long sys_wait(const struct trap_frame *frame)
{
    uint32_t pid = (uint32_t)frame->rdi;
    uint64_t code_address = frame->rsi;
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
    struct intercore_message message = {.type = MESSAGE_PROCESS_COLLECT}, reply;
    message.argument[0] = pid;
    mkernel_request(&message, &reply);
    if (code_address != 0 && copy_to_user(code_address, &code, 4) != 0)
        return -E_FAULT; /* checked again: the memory may have changed during the wait */
    return pid;
}

static long sys_kill(const struct trap_frame *frame)
{
    struct process *target = process_find((uint32_t)frame->rdi);
    if (target == NULL || target->state == PROCESS_ZOMBIE)
        return -E_NOT_FOUND;
    if (target->pid == 1)
        return -E_PERMISSION;
    if (target == current())
        scheduler_exit_current(-1);
    scheduler_send_to_owner(MESSAGE_PROCESS_KILL, target);
    return 0;
}

static long sys_process_list(const struct trap_frame *frame)
{
    uint64_t buffer = frame->rdi, max = frame->rsi;
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

static long sys_core_list(const struct trap_frame *frame)
{
    uint64_t buffer = frame->rdi, max = frame->rsi;
    if (max > kernel_shared->core_count)
        max = kernel_shared->core_count;
    if (!user_range_ok(current()->root, buffer, max * sizeof(struct core_info), true))
        return -E_FAULT;
    for (uint32_t core = 0; core < max; core++)
        describe_core(core, (struct core_info *)buffer + core);
    return (long)max;
}

static long sys_memory_grow(const struct trap_frame *frame)
{
    struct intercore_message message = {.type = MESSAGE_PROCESS_GROW}, reply;
    message.argument[0] = current()->pid;
    message.argument[1] = frame->rdi;
    mkernel_request(&message, &reply);
    return (long)reply.argument[0];
}

static long sys_notify(const struct trap_frame *frame)
{
    struct process *target = process_find((uint32_t)frame->rdi);
    if (target == NULL || target->state == PROCESS_ZOMBIE)
        return -E_NOT_FOUND;
    __atomic_fetch_add(&target->notifications, 1, __ATOMIC_ACQ_REL);
    scheduler_send_to_owner(MESSAGE_PROCESS_WAKE, target);
    return 0;
}

static long sys_await(const struct trap_frame *frame)
{
    (void)frame;
    struct process *process = current();
    for (;;) {
        uint64_t count = __atomic_exchange_n(&process->notifications, 0, __ATOMIC_ACQ_REL);
        if (count > 0)
            return (long)count;
        scheduler_block(WAIT_NOTIFICATION, 0);
        exit_if_killed();
    }
}

static long sys_sleep(const struct trap_frame *frame)
{
    uint64_t period = kernel_shared->tick_period_ms;
    uint64_t ticks = (frame->rdi + period - 1) / period;
    uint64_t wake_tick = this_cpu()->timer_ticks + (ticks > 0 ? ticks : 1);
    while (this_cpu()->timer_ticks < wake_tick) {
        scheduler_block(WAIT_SLEEP, wake_tick);
        exit_if_killed();
    }
    return 0;
}

static long sys_kernel_option(const struct trap_frame *frame)
{
    char name[64];
    const char *value;
    unsigned length;
    long error = copy_string_from_user(name, frame->rdi, sizeof(name));
    if (error < 0)
        return error;
    if (frame->rdx == 0)
        return -E_INVALID;
    if (!command_line_find(name, &value, &length))
        return -E_NOT_FOUND;
    if ((uint64_t)length + 1 > frame->rdx)
        return -E_TOO_BIG;
    if (!user_range_ok(current()->root, frame->rsi, (uint64_t)length + 1, true))
        return -E_FAULT;
    memcpy((void *)frame->rsi, value, length);
    ((char *)frame->rsi)[length] = '\0';
    return length;
}

static long sys_placement(const struct trap_frame *frame)
{
    return copy_to_user(frame->rdi, &kernel_shared->placement, sizeof(struct placement_info));
}

static long sys_power_off(const struct trap_frame *frame)
{
    struct intercore_message message = {.type = MESSAGE_POWER_OFF}, reply;
    message.argument[0] = frame->rdi;
    mkernel_request(&message, &reply);
    return 0;
}

static long sys_clock(const struct trap_frame *frame)
{
    struct clock_info info = {
        .tsc_hz = kernel_shared->tsc_hz,
        .ticks = this_cpu()->timer_ticks,
        .tick_period_us = kernel_shared->tick_period_ms * 1000ull,
    };
    return copy_to_user(frame->rdi, &info, sizeof(info));
}

static long sys_copy_grant(const struct trap_frame *frame)
{
    if (frame->rsi != 0 && !user_range_ok(current()->root, frame->rdi, frame->rsi, true))
        return -E_FAULT;
    current()->copy_window = frame->rdi;
    current()->copy_window_bytes = frame->rsi;
    return 0;
}

static long sys_copy_to(const struct trap_frame *frame)
{
    struct intercore_message message = {.type = MESSAGE_COPY_TO}, reply;
    message.argument[0] = current()->pid;
    message.argument[1] = frame->rdi;
    message.argument[2] = frame->rsi;
    message.argument[3] = frame->rdx;
    message.argument[4] = frame->r10;
    mkernel_request(&message, &reply);
    return (long)reply.argument[0];
}

static const syscall_handler handlers[SYS_COUNT] = {
    [SYS_EXIT] = sys_exit,
    [SYS_CONSOLE_WRITE] = sys_console_write,
    [SYS_CONSOLE_READ] = sys_console_read,
    [SYS_YIELD] = sys_yield,
    [SYS_PROCESS_ID] = sys_process_id,
    [SYS_CORE_ID] = sys_core_id,
    [SYS_SPAWN] = sys_spawn,
    [SYS_WAIT] = sys_wait,
    [SYS_KILL] = sys_kill,
    [SYS_PROCESS_LIST] = sys_process_list,
    [SYS_CORE_LIST] = sys_core_list,
    [SYS_MEMORY_GROW] = sys_memory_grow,
    [SYS_NOTIFY] = sys_notify,
    [SYS_AWAIT] = sys_await,
    [SYS_SLEEP] = sys_sleep,
    [SYS_KERNEL_OPTION] = sys_kernel_option,
    [SYS_PLACEMENT] = sys_placement,
    [SYS_POWER_OFF] = sys_power_off,
    [SYS_CLOCK] = sys_clock,
    [SYS_PCI_CONFIG_READ] = sys_pci_config_read,
    [SYS_PCI_CONFIG_WRITE] = sys_pci_config_write,
    [SYS_DEVICE_MAP] = sys_device_map,
    [SYS_DMA_ALLOCATE] = sys_dma_allocate,
    [SYS_IRQ_ATTACH] = sys_irq_attach,
    [SYS_IRQ_WAIT] = sys_irq_wait,
    [SYS_ICA_ALLOCATE] = sys_ica_allocate,
    [SYS_ICA_FREE] = sys_ica_free,
    [SYS_ICA_REQUEST] = sys_ica_request,
    [SYS_ICA_FORWARD] = sys_ica_forward,
    [SYS_ICA_RETURN] = sys_ica_return,
    [SYS_ICA_RECEIVE] = sys_ica_receive,
    [SYS_ICA_COLLECT] = sys_ica_collect,
    [SYS_SERVER_REGISTER] = sys_server_register,
    [SYS_SERVER_LOOKUP] = sys_server_lookup,
    [SYS_ICA_STATS] = sys_ica_stats,
    [SYS_PAGER_REGION] = sys_pager_region,
    [SYS_PAGER_MAP] = sys_pager_map,
    [SYS_PAGER_UNMAP] = sys_pager_unmap,
    [SYS_PAGER_SCAN] = sys_pager_scan,
    [SYS_PAGER_RELEASE] = sys_pager_release,
    [SYS_FIRMWARE_TABLE] = sys_firmware_table,
    [SYS_COPY_GRANT] = sys_copy_grant,
    [SYS_COPY_TO] = sys_copy_to,
    [SYS_ICA_LEND_COUNT] = sys_ica_lend_count,
    [SYS_ICA_RETURN_RECEIVE] = sys_ica_return_receive,
    [SYS_ICA_FORWARD_RECEIVE] = sys_ica_forward_receive,
};

void syscall_dispatch(struct trap_frame *frame)
{
    uint64_t number = frame->rax;
    long result = -E_NO_SYSTEM_CALL;
    if (number < SYS_COUNT && handlers[number] != NULL)
        result = handlers[number](frame);
    frame->rax = (uint64_t)result;
    scheduler_hand_off_flush(); /* a hand-off the caller did not block for */
    exit_if_killed();
}

void syscall_install(void)
{
    wrmsr(MSR_EFER, rdmsr(MSR_EFER) | 1); /* SCE */
    wrmsr(MSR_STAR, ((uint64_t)SEGMENT_KERNEL_DATA << 48) | ((uint64_t)SEGMENT_KERNEL_CODE << 32));
    wrmsr(MSR_LSTAR, (uint64_t)syscall_entry);
    wrmsr(MSR_SFMASK, SFMASK_BITS);
}
