/* ica_poll.h: a process about to wait for an ICA on a core with nothing else
 * to run polls for it first, for a bounded time, instead of halting and being
 * woken by a message and an IPI (docs/design.md, "Cheap cross-core requests"). */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "atomic.h"
#include "cpu.h"
#include "ica.h"
#include "ica_wait.h"
#include "intercore.h"
#include "process.h"
#include "run_queue.h"
#include "scheduler.h"
#include "x86.h"

/* How long a wait polls before it blocks, in microseconds, at least: less
 * than a halt, IPI and wake cost on hardware, and chosen by measurement
 * under icount, where every turn of the poll is counted
 * (docs/profiling.md). The kernel option ica_poll_us=N sets another; 0
 * turns the poll off (every wait announces itself and halts at once, as
 * without it). The bound adapts to what a halt and wake cost on the
 * machine at hand, as Linux's guest halt polling does, up to M
 * microseconds (the kernel option ica_poll_max_us=M; M at or below the
 * least keeps the bound fixed): a poll that gave up and was followed by a
 * halt shorter than M doubles the next bound, up to M; a longer halt
 * halves it, down to the least (ica_poll_adapt). Medians of alternating
 * boots made one process and two faster with it at every placement that
 * crosses cores (docs/profiling.md, "By the clock"). */
#define ICA_POLL_MICROSECONDS 5
#define ICA_POLL_MAX_MICROSECONDS 200

/* Polls `ready` while the caller has not announced its wait (a sender on
 * another core then sends no wake message), serving this core's inboxes as
 * messages come in (a cross-core result arrives as one). True as soon as
 * `ready` holds or the caller is being killed; false when the core has
 * something else to run or the bound passed: the caller then waits the
 * ordinary way. */
bool ica_poll_before_wait(bool (*ready)(void));

/* Polls, as ica_poll_before_wait, for the result `id` of the caller's own
 * synchronous request, which a sender on another core may hand over. */
static inline enum ica_polled_result ica_poll_for_result(uint64_t id, bool (*ready)(void));

/* A process on another core whose ica_waiting the caller cleared is owed a
 * wake: through its core's poll word when that core polls, else one
 * message, with an IPI only if its core halts or must preempt. */
static inline void ica_wake_across(struct process *target)
{
    if (ica_core_hand_wake(&kernel_shared->cpus[target->core], target->pid))
        return; /* its core polls: no message */
    struct intercore_message message = {.type = MESSAGE_PROCESS_WAKE,
                                        .process_wake = {target->pid}};
    if (scheduler_must_interrupt(target))
        intercore_send_preempting(target->core, &message);
    else
        intercore_send(target->core, &message);
}

/* The poll itself, inline: a server's receive polls once per request, and
 * its entry and exit are most of what a poll costs under icount (one turn
 * of `pause` a wait). The bound is read from the command line once per
 * core; a woken process is handed the core out of line. */
uint64_t ica_poll_read_bound(struct cpu *cpu);
/* The core halted `halted` TSC cycles after a poll that gave up: the next
 * poll's bound doubles (the wake came soon: a longer poll would have
 * caught it) or halves (ICA_POLL_MICROSECONDS). */
void ica_poll_adapt(struct cpu *cpu, uint64_t halted);
void ica_poll_wake_woken(struct cpu *cpu);
/* The process `pid` woken by a sender on another core through this core's
 * poll is handed the core (scheduler_hand_off). */
void ica_poll_hand_server(struct cpu *cpu, uint32_t pid);

/* Nothing else could run here now: no process ready, none handed the core. */
static inline bool ica_poll_core_idle(const struct cpu *cpu)
{
    return cpu->run_queue.ready_levels == 0 && cpu->handoff == NULL;
}

static inline uint64_t ica_poll_bound(struct cpu *cpu)
{
    return cpu->ica_poll_read ? cpu->ica_poll_cycles : ica_poll_read_bound(cpu);
}

/* The core may poll now: nothing else to run, and polls not turned off. */
static inline bool ica_may_poll(struct cpu *cpu)
{
    return ica_poll_core_idle(cpu) && ica_poll_bound(cpu) != 0;
}

/* What a poll waits for: `*word` to differ from `value` (a sender on
 * another core writes it), or `ready` to hold after this core served its
 * inboxes (a message may have brought it). */
struct ica_poll_watch {
    const _Atomic uint64_t *word;
    uint64_t value;
    bool (*ready)(void);
};

static inline void ica_poll_serve_woken(struct cpu *cpu)
{
    if (atomic_load_acquire(&cpu->poll_woken))
        ica_poll_wake_woken(cpu);
}

/* The poll's cycles count as the core's idle time, as a halt's would, not
 * as the polling process's (its cpu_cycles run from cpu->switched_in).
 * Returns `came`. */
static inline bool ica_poll_count_polled(struct cpu *cpu, uint64_t polled, bool came)
{
    cpu->switched_in += polled;
    cpu->idle_cycles += polled;
    return came;
}

static inline bool ica_poll_count_idle(struct cpu *cpu, uint64_t start, bool came)
{
    return ica_poll_count_polled(cpu, rdtsc() - start, came);
}

/* The poll's turns; false when the bound passed or the core has something
 * else to run. */
static inline __attribute__((always_inline)) bool ica_poll_turns(struct cpu *cpu,
                                                                 const struct ica_poll_watch *watch)
{
    struct process *process = cpu->current;
    uint64_t start = rdtsc();
    uint64_t bound = cpu->ica_poll_cycles; /* read by ica_may_poll */
    uint64_t polled = 0;                   /* at the last look at the clock */
    for (;;) {
        if (atomic_load_acquire(watch->word) != watch->value)
            break;
        if (atomic_load_acquire(&cpu->inbox_hint_or_woken)) {
            ica_poll_serve_woken(cpu);
            intercore_poll();
            if (process->kill_requested || watch->ready())
                return ica_poll_count_idle(cpu, start, true);
            if (!ica_poll_core_idle(cpu))
                return ica_poll_count_idle(cpu, start, false);
        }
        polled = rdtsc() - start;
        if (polled >= bound) {
            cpu->ica_poll_gave_up = 1; /* the next halt adapts the bound (ica_poll_adapt) */
            return ica_poll_count_polled(cpu, polled, false);
        }
        cpu_relax();
    }
    /* the word changed: idle until the turn's look at the clock (the
     * turn's pause after it counts as the caller's, a clock read less) */
    return ica_poll_count_polled(cpu, polled, true);
}

/* ica_poll_turns with the core's `polling` announced: a sender that saw it sent
 * no IPI, so the messages that came meanwhile are served before the caller
 * goes on, and a process they made ready that outranks the caller runs
 * first (as that IPI would have had it). */
static inline __attribute__((always_inline)) bool ica_poll_until(struct cpu *cpu,
                                                                 const struct ica_poll_watch *watch)
{
    ica_core_poll_begin(cpu);
    bool came = ica_poll_turns(cpu, watch);
    ica_core_poll_end(cpu);
    if (atomic_load_acquire(&cpu->inbox_hint_or_woken)) {
        ica_poll_serve_woken(cpu);
        if (intercore_poll() > 0)
            came = came || watch->ready();
    }
    if (came && run_queue_has_more_urgent(&cpu->run_queue, cpu->current->priority))
        scheduler_yield();
    return came;
}

/* ica_poll_before_wait for a server's receive: it also watches the count
 * of requests pushed into `server`'s rings (one load a turn). */
static inline __attribute__((always_inline)) bool
ica_poll_for_request(const struct server_entry *server, bool (*ready)(void))
{
    struct cpu *cpu = this_cpu();
    struct ica_poll_watch watch = {&server->pushed, server->taken, ready};
    return ica_may_poll(cpu) && ica_poll_until(cpu, &watch);
}

static inline __attribute__((always_inline)) enum ica_polled_result
ica_poll_for_result(uint64_t id, bool (*ready)(void))
{
    struct cpu *cpu = this_cpu();
    if (!ica_may_poll(cpu))
        return ICA_RESULT_NOT_HANDED;
    struct process *process = cpu->current;
    struct ica_poll_watch watch = {&process->polled_result, id, ready};
    ica_result_poll_arm(process, id);
    ica_poll_until(cpu, &watch);
    return ica_result_poll_end(process, id);
}
