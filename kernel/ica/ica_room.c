/* ica_room.c: a sender whose server ring is full, or whose account holds
 * half of it, waits (ps: waiting for ring room) until the server has taken
 * entries from that ring, instead of failing with -E_BUSY; a flooding account thereby
 * blocks on its own share and the rest of the ring stays open to others. */
#include "ica_room.h"
#include "ica_wait.h"
#include "cpu.h"
#include "intercore.h"
#include "scheduler.h"
#include "shared.h"
#include <formica/errors.h>

#define ROOM_RECHECK_TICKS 5 /* a waiter looks again after this many ticks at the latest */

/* Entries of `ring` sent by `account` (read by the ring's producer core;
 * the server may take some meanwhile, so the count may be a little high). */
static uint32_t entries_of_account(const struct ring *ring, uint32_t account)
{
    uint32_t head = atomic_load_acquire(&ring->head);
    uint32_t mine = 0;
    for (uint32_t at = atomic_load_acquire(&ring->tail); at != head; at++) {
        const struct ica *control = ica_slot_of(*(const uint64_t *)ring_slot(ring, at));
        mine += control != NULL && control->sender_account == account;
    }
    return mine;
}

static bool room_for(const struct ring *ring, uint32_t account)
{
    uint32_t count = ring_count(ring);
    if (count >= ring->capacity)
        return false;
    return count < ICA_RING_SHARE || entries_of_account(ring, account) < ICA_RING_SHARE;
}

static bool server_gone(const struct server_entry *server, uint32_t server_pid)
{
    return atomic_load_acquire(&server->pid) != server_pid;
}

/* Blocks until a take from the ring (or the server's end, or a kill)
 * wakes the caller; the bit is set first (a locked operation, so a full
 * barrier), so a take or an end after the look below announces the room.
 * The server reads the bit without a fence after its take, so in a rare
 * interleaving it could miss it: the caller looks again after
 * ROOM_RECHECK_TICKS at the latest, so a missed wake costs time, never a
 * hang. `ps` shows the wait by room_of_server (process_describe). */
static void block_for_room(struct server_entry *server, uint32_t server_pid,
                           const struct ring *ring, uint64_t wake_tick)
{
    struct process *process = this_cpu()->current;
    uint32_t core = this_cpu()->index;
    __atomic_fetch_or(&server->room_wanted[core / 64], 1ull << (core % 64), __ATOMIC_SEQ_CST);
    if (room_for(ring, process->account) || server_gone(server, server_pid))
        return;
    uint64_t recheck = this_cpu()->timer_ticks + ROOM_RECHECK_TICKS;
    ica_room_wait_begin(process, server_pid);
    scheduler_block(WAIT_SLEEP, wake_tick != 0 && wake_tick < recheck ? wake_tick : recheck);
    ica_room_wait_end(process);
    if (process->kill_requested)
        scheduler_exit_current(PROCESS_EXIT_KILLED);
}

long ica_room_wait(struct server_entry *server, uint32_t server_pid, struct ring *ring, bool wait,
                   uint64_t wake_tick)
{
    uint32_t account = this_cpu()->current->account;
    for (;;) {
        if (server_gone(server, server_pid))
            return -E_NOT_FOUND;
        if (room_for(ring, account))
            return 0;
        if (!wait || (wake_tick != 0 && this_cpu()->timer_ticks >= wake_tick))
            return -E_BUSY;
        block_for_room(server, server_pid, ring, wake_tick);
    }
}

/* This core's processes waiting for room in `server_pid`'s ring look again. */
static void wake_room_waiters(uint32_t server_pid)
{
    uint32_t core = this_cpu()->index;
    for (uint32_t slot = 0; slot < PROCESS_SLOTS; slot++) {
        struct process *process = &kernel_shared->processes[slot];
        if (process->core == core && process->state == PROCESS_WAITING &&
            process->room_of_server == server_pid)
            scheduler_wake(process);
    }
}

void ica_room_announce(struct server_entry *server, uint32_t core, uint32_t server_pid)
{
    uint64_t bit = 1ull << (core % 64);
    if (!(__atomic_fetch_and(&server->room_wanted[core / 64], ~bit, __ATOMIC_SEQ_CST) & bit))
        return; /* another take announced it first */
    if (core == this_cpu()->index) {
        wake_room_waiters(server_pid);
        return;
    }
    struct intercore_message message = {.type = MESSAGE_ICA_ROOM, .ica_room = {server_pid}};
    intercore_send(core, &message);
}

void ica_room_announce_all(struct server_entry *server, uint32_t server_pid)
{
    for (uint32_t core = 0; core < kernel_shared->core_count; core++)
        ica_room_announce(server, core, server_pid);
}

void serve_ica_room(const struct intercore_message *message,
                    const struct intercore_ica_room_request *request)
{
    (void)message;
    wake_room_waiters((uint32_t)request->server);
}
