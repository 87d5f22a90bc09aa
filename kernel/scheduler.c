/* scheduler.c: the per-core scheduler (xv6's shape: a loop on the core's own
 * stack switches to a process and back). Only the owning core touches its
 * run queue and its processes' scheduling state; other cores ask it with
 * messages (adopt, wake, kill), so no lock is needed. */
#include "scheduler.h"
#include "scheduler_switch.h"
#include "atomic.h"
#include "console.h"
#include "cpu.h"
#include "intercore.h"
#include "lapic.h"
#include "mkernel_client.h"
#include "panic.h"
#include "run_queue.h"
#include "shared.h"
#include "x86.h"

void switch_context(uint64_t *save_rsp, uint64_t next_rsp);

static struct run_queue *my_queue(void)
{
    return &this_cpu()->run_queue;
}

static uint32_t slot_of(const struct process *process)
{
    return (uint32_t)(process - kernel_shared->processes);
}

/* How much less of the core a waiting account must have used than the
 * running one before it takes the core (1 ms); a returning account starts
 * at most half a time slice below the least-used competitor (scheduler_init). */
#define FAIR_MARGIN_MS 1

static uint64_t milliseconds_in_cycles(uint64_t milliseconds)
{
    return kernel_shared->tsc_hz / 1000 * milliseconds;
}

/* A process's cycles since its last charge go to an account's use of this
 * core: an application's to its own account, a server's to the account of
 * the request it took last (a server spends its client's share, sampled at
 * the points below), when that account has applications here. Servers'
 * work for each other and for init's account is charged to no one. */
static void charge_account(struct process *process)
{
    /* cpu_cycles may fall back a little: a poll's cycles are taken back as
     * the core's idle time (ica_poll_count_polled moves switched_in ahead),
     * and what was charged before stays charged. */
    if (process->cpu_cycles <= process->cycles_charged)
        return;
    uint64_t cycles = process->cpu_cycles - process->cycles_charged;
    process->cycles_charged = process->cpu_cycles;
    cycles = fair_queue_weighed(cycles, process->share_weight); /* SYS_SHARE_WEIGHT's */
    struct fair_queue *applications = &my_queue()->applications;
    if (process->priority == PRIORITY_APPLICATION)
        fair_queue_charge(applications, process->account, cycles);
    else if (process->serving_account != INIT_PID)
        fair_queue_charge_known(applications, process->serving_account, cycles);
}

/* charge_account of the running process, its cycles counted up to now. */
static void charge_running(struct cpu *cpu, struct process *process)
{
    uint64_t now = rdtsc();
    process->cpu_cycles += now - cpu->switched_in;
    cpu->switched_in = now;
    charge_account(process);
}

/* The account whose application has this core now (0: none). */
static uint32_t running_account(void)
{
    const struct process *running = this_cpu()->current;
    return running != NULL && running->priority == PRIORITY_APPLICATION ? running->account : 0;
}

static void make_ready(struct process *process)
{
    process->state = PROCESS_READY;
    process->wait_reason = WAIT_NONE;
    charge_account(process);
    if (!run_queue_push(my_queue(), slot_of(process), process->priority, process->account,
                        running_account()))
        panic("run queue of core %u overflowed", this_cpu()->index);
}

void scheduler_adopt(struct process *process)
{
    process->slice_left = TIME_SLICE_TICKS;
    make_ready(process);
}

void scheduler_wake(struct process *process)
{
    if (process->state != PROCESS_WAITING)
        return;
    if (is_sleeper(process->wait_reason, process->wake_tick))
        this_cpu()->sleepers--;
    make_ready(process);
}

static struct process *own_process(uint64_t pid)
{
    struct process *process = process_find((uint32_t)pid);
    if (process == NULL || process->core != this_cpu()->index)
        return NULL;
    return process;
}

void serve_process_adopt(const struct intercore_message *message,
                         const struct intercore_process_adopt_request *request)
{
    (void)message;
    struct process *process = own_process(request->pid);
    if (process != NULL && process->state == PROCESS_READY)
        scheduler_adopt(process);
}

void serve_process_wake(const struct intercore_message *message,
                        const struct intercore_process_wake_request *request)
{
    (void)message;
    struct process *process = own_process(request->pid);
    if (process != NULL)
        scheduler_wake(process);
}

void serve_process_kill(const struct intercore_message *message,
                        const struct intercore_process_kill_request *request)
{
    (void)message;
    struct process *process = own_process(request->pid);
    if (process == NULL || process->state == PROCESS_ZOMBIE)
        return;
    process->kill_requested = 1;
    scheduler_wake(process);
}

void scheduler_send_to_owner(uint32_t type, struct process *process)
{
    struct intercore_message message = {.type = type};
    if (type == MESSAGE_PROCESS_WAKE)
        message.process_wake.pid = process->pid;
    else if (type == MESSAGE_PROCESS_KILL)
        message.process_kill.pid = process->pid;
    else
        message.process_adopt.pid = process->pid;
    if (process->core != this_cpu()->index) {
        /* interrupt the owner core even when it is busy: the process may outrank what runs */
        intercore_send_urgent(process->core, &message);
        return;
    }
    message.from = this_cpu()->index;
    if (type == MESSAGE_PROCESS_WAKE)
        serve_process_wake(&message, &message.process_wake);
    else if (type == MESSAGE_PROCESS_KILL)
        serve_process_kill(&message, &message.process_kill);
    else
        serve_process_adopt(&message, &message.process_adopt);
}

bool scheduler_must_interrupt(const struct process *process)
{
    const struct process *running = kernel_shared->cpus[process->core].current; /* a hint */
    if (running == NULL)
        return false;
    if (process->priority != running->priority)
        return process->priority < running->priority;
    /* another account's application: its core weighs the accounts' use */
    return process->priority == PRIORITY_APPLICATION && process->account != running->account;
}

/* Wakes this core's sleepers whose tick has come. The slots are looked at
 * only from the earliest wake tick on (next_wake_tick: lowered by each new
 * sleeper, recomputed by the scan, so never later than a sleeper's tick):
 * a core with a sleeper far off scans nothing at its ticks and passes. */
static void wake_sleepers(void)
{
    struct cpu *cpu = this_cpu();
    if (cpu->sleepers == 0 || cpu->timer_ticks < cpu->next_wake_tick)
        return;
    uint64_t next = UINT64_MAX;
    for (uint32_t slot = 0; slot < PROCESS_SLOTS; slot++) {
        struct process *process = &kernel_shared->processes[slot];
        if (process->core != cpu->index || process->state != PROCESS_WAITING ||
            !is_sleeper(process->wait_reason, process->wake_tick))
            continue;
        if (process->wake_tick <= cpu->timer_ticks)
            scheduler_wake(process);
        else if (process->wake_tick < next)
            next = process->wake_tick;
    }
    cpu->next_wake_tick = next;
}

static void report_exit(struct process *process)
{
    struct intercore_message message = {.type = MESSAGE_PROCESS_EXITED,
                                        .process_exited = {process->pid}};
    mkernel_notify(&message);
}

static void run_process(struct process *process)
{
    struct cpu *cpu = this_cpu();
    switch_in(cpu, process);
    switch_context(&cpu->scheduler_rsp, process->saved_rsp);
    process = cpu->current; /* direct switches may have passed the core on */
    switch_out(cpu, process);
    profile_mark_running(0);
    cpu->current = NULL;
    if (process->state == PROCESS_READY) {
        make_ready(process);
    } else if (process->state == PROCESS_ZOMBIE) {
        charge_account(process);
        write_cr3(kernel_shared->kernel_root); /* its tables are about to be freed */
        translations_forget_loaded(this_cpu());
        report_exit(process);
    }
}

/* This image's hooks (scheduler_set_hooks): written once at boot, before
 * any process runs, then only read. */
static struct scheduler_hooks hooks;

void scheduler_set_hooks(struct scheduler_hooks set)
{
    if (set.before_halt != NULL)
        hooks.before_halt = set.before_halt;
    if (set.after_halt != NULL)
        hooks.after_halt = set.after_halt;
    if (set.on_exit != NULL)
        hooks.on_exit = set.on_exit;
    if (set.before_exit != NULL)
        hooks.before_exit = set.before_exit;
}

void scheduler_init(void)
{
    uint64_t credit_ms = (uint64_t)TIME_SLICE_TICKS * kernel_shared->tick_period_ms / 2;
    run_queue_init(my_queue(), milliseconds_in_cycles(credit_ms));
}

void scheduler_run(void)
{
    for (;;) {
        this_cpu()->tick_unserved = 0;
        intercore_poll();
        wake_sleepers();
        uint32_t slot = run_queue_pop(my_queue());
        if (slot == RUN_QUEUE_EMPTY) {
            if (hooks.before_halt != NULL)
                hooks.before_halt();
            uint64_t halted = rdtsc();
            intercore_wait();
            halted = rdtsc() - halted;
            this_cpu()->idle_cycles += halted;
            if (hooks.after_halt != NULL)
                hooks.after_halt(this_cpu(), halted);
            continue;
        }
        struct process *process = &kernel_shared->processes[slot];
        if (process->state == PROCESS_READY)
            run_process(process);
    }
}

static void switch_to_scheduler(void)
{
    struct cpu *cpu = this_cpu();
    switch_context(&cpu->current->saved_rsp, cpu->scheduler_rsp);
}

void scheduler_hand_off(struct process *process)
{
    struct cpu *cpu = this_cpu();
    if (process->state != PROCESS_WAITING || process->core != cpu->index)
        return;
    scheduler_hand_off_flush();
    cpu->handoff = process;
}

void scheduler_hand_off_flush(void)
{
    struct cpu *cpu = this_cpu();
    struct process *process = cpu->handoff;
    if (process == NULL)
        return;
    cpu->handoff = NULL;
    scheduler_wake(process);
}

/* The handed-off process, if it still waits and nothing more urgent is ready
 * (else it is woken the ordinary way and NULL is returned). */
static struct process *take_hand_off(struct cpu *cpu)
{
    struct process *next = cpu->handoff;
    if (next == NULL)
        return NULL;
    cpu->handoff = NULL;
    if (next->state != PROCESS_WAITING)
        return NULL;
    if (cpu->tick_unserved || run_queue_best_priority(my_queue()) < next->priority) {
        scheduler_wake(next);
        return NULL;
    }
    next->wait_reason = WAIT_NONE;
    return next;
}

/* L4's direct process switch: from the blocking process straight to `next`,
 * on this core, without a pass through the scheduler loop. */
static void switch_directly(struct cpu *cpu, struct process *from, struct process *next)
{
    switch_between(cpu, from, next);
    switch_context(&from->saved_rsp, next->saved_rsp);
}

void scheduler_yield(void)
{
    scheduler_hand_off_flush();
    this_cpu()->current->state = PROCESS_READY;
    switch_to_scheduler();
}

/* The next ready process of this core, for a process that blocks, when
 * the scheduler loop would run it at once: no tick waits to be served
 * (then the loop's pass looks at sleepers and inboxes first). NULL when the
 * loop must run (nothing ready, a tick, or a stale queue entry, which the
 * loop drops as it would). */
static struct process *take_ready(struct cpu *cpu)
{
    if (cpu->tick_unserved || cpu->run_queue.ready_levels == 0)
        return NULL;
    struct process *next = &kernel_shared->processes[run_queue_pop(my_queue())];
    return next->state == PROCESS_READY ? next : NULL;
}

void scheduler_block(uint32_t reason, uint64_t wake_tick)
{
    struct process *process = this_cpu()->current;
    mark_waiting(process, reason, wake_tick);
    struct process *next = take_hand_off(this_cpu());
    if (next == NULL)
        next = take_ready(this_cpu());
    if (next != NULL)
        switch_directly(this_cpu(), process, next);
    else
        switch_to_scheduler();
}

void scheduler_sleep(uint64_t milliseconds)
{
    uint64_t period = kernel_shared->tick_period_ms;
    uint64_t ticks = (milliseconds + period - 1) / period;
    uint64_t wake_tick = this_cpu()->timer_ticks + (ticks > 0 ? ticks : 1);
    while (this_cpu()->timer_ticks < wake_tick) {
        scheduler_block(WAIT_SLEEP, wake_tick);
        if (this_cpu()->current->kill_requested)
            scheduler_exit_current(-1);
    }
}

void scheduler_exit_current(int32_t code)
{
    struct process *process = this_cpu()->current;
    if (hooks.on_exit != NULL)
        hooks.on_exit(process, code); /* returns unless a crash was asked for */
    scheduler_hand_off_flush();
    /* the layers above let go of it: no sender on another core pastes
     * into it from now on, since its address space goes once it is a
     * zombie (docs/ica.md, "Across cores") */
    if (hooks.before_exit != NULL)
        hooks.before_exit(process);
    process->exit_code = code;
    process->state = PROCESS_ZOMBIE;
    struct process *parent = process_find(process->parent);
    if (parent != NULL)
        scheduler_send_to_owner(MESSAGE_PROCESS_WAKE, parent);
    switch_to_scheduler();
    panic("a process that exited was scheduled again");
}

/* Whether the running application (its cycles charged up to now) has used
 * more of this core than a ready application of another account by the
 * margin: then it gives the core up before its slice ends. */
static bool owes_another_account(struct process *process)
{
    if (process->priority != PRIORITY_APPLICATION)
        return false;
    return fair_queue_owes_another(&my_queue()->applications, process->account,
                                   milliseconds_in_cycles(FAIR_MARGIN_MS));
}

void scheduler_preempt_check(struct trap_frame *frame, int tick)
{
    struct cpu *cpu = this_cpu();
    struct process *process = cpu->current;
    if ((frame->cs & 3) == 0 || process == NULL) {
        if (tick)
            cpu->tick_unserved = 1;
        return;
    }
    intercore_poll();
    if (tick) {
        process->ticks++;
        if (process->slice_left > 0)
            process->slice_left--;
        wake_sleepers();
    }
    if (process->kill_requested)
        scheduler_exit_current(-1);
    charge_running(cpu, process);
    uint32_t best = run_queue_best_priority(my_queue());
    if (best < process->priority || (process->slice_left == 0 && best <= process->priority) ||
        (best == process->priority && owes_another_account(process))) {
        process->slice_left = TIME_SLICE_TICKS;
        scheduler_yield();
    } else if (process->slice_left == 0) {
        process->slice_left = TIME_SLICE_TICKS;
    }
}
