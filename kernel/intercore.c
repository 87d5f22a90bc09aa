/* intercore.c: messages between cores over the N×N area. A sender pushes
 * into its own row and IPIs the receiver only if that core has announced it
 * is halting (cpu->waiting); the receiver re-checks its inboxes after the
 * announcement, so no wake-up is lost and no needless IPI is sent. */
#include "intercore.h"
#include "atomic.h"
#include "cpu.h"
#include "lapic.h"
#include "panic.h"
#include "shared.h"
#include "trap.h"
#include "x86.h"

static const struct intercore_services *services;

/* Per-core state of an outstanding intercore_call (each core uses its own slot). */
struct pending_call {
    uint64_t next_sequence;
    uint64_t awaited_sequence;
    _Atomic bool answered;
    struct intercore_message reply;
};
static struct pending_call pending_calls[MAX_CORES];

/* IPIs a core that announced it is halting. Taking the announcement back
 * (exchange to 0) means one IPI per halt however many messages follow. */
static void send_ipi(struct cpu *target)
{
    lapic_send_ipi(target->apic_id, VECTOR_MESSAGE);
    this_cpu()->ipis_sent++;
}

/* True when it sent the IPI. */
static bool wake_if_waiting(uint32_t to)
{
    struct cpu *target = &kernel_shared->cpus[to];
    memory_fence();
    if (atomic_load_acquire(&target->waiting) && atomic_swap(&target->waiting, 0)) {
        send_ipi(target);
        return true;
    }
    return false;
}

/* Entry (this core, to). A pair's first message asks the m-kernel to connect it
 * (pairs with core 0 are connected at boot) and handles incoming messages until
 * the entry appears, so a core waiting here never blocks one that sends to it. */
static struct ring *outbox(uint32_t to)
{
    uint32_t self = this_cpu()->index;
    struct ring *entry = intercore_entry(kernel_shared->intercore, self, to);
    if (entry != NULL)
        return entry;
    if (self == MKERNEL_CORE || to == MKERNEL_CORE)
        panic("core %u: no inter-core entry to core %u", self, to);
    struct intercore_message connect = {.type = MESSAGE_INTERCORE_CONNECT,
                                        .intercore_connect = {to}};
    /* The m-kernel's core may be running a process: interrupt it. */
    intercore_send_urgent(MKERNEL_CORE, &connect);
    while ((entry = intercore_entry(kernel_shared->intercore, self, to)) == NULL)
        if (intercore_poll() == 0)
            cpu_relax();
    return entry;
}

/* Puts the message in entry (this core, to), draining our own inboxes while it is full. */
static void push_message(uint32_t to, struct intercore_message *message)
{
    struct cpu *cpu = this_cpu();
    if (to >= kernel_shared->core_count)
        panic("intercore_send to core %u of %u", to, kernel_shared->core_count);
    message->from = cpu->index;
    struct ring *entry = outbox(to);
    while (!ring_push(entry, message)) {
        wake_if_waiting(to);
        if (intercore_poll() == 0)
            cpu_relax();
    }
    atomic_store_fenced(&kernel_shared->cpus[to].inbox_hint, 1);
    cpu->messages_sent++;
}

void intercore_send(uint32_t to, struct intercore_message *message)
{
    push_message(to, message);
    wake_if_waiting(to);
}

void intercore_send_urgent(uint32_t to, struct intercore_message *message)
{
    push_message(to, message);
    if (!wake_if_waiting(to))
        send_ipi(&kernel_shared->cpus[to]);
}

void intercore_send_preempting(uint32_t to, struct intercore_message *message)
{
    push_message(to, message); /* its hint store is a full barrier: then read `polling` */
    struct cpu *target = &kernel_shared->cpus[to];
    if (!wake_if_waiting(to) && !atomic_load_acquire(&target->polling))
        send_ipi(target);
}

void intercore_reply(const struct intercore_message *request, struct intercore_message *reply)
{
    reply->type = request->type | MESSAGE_REPLY;
    reply->sequence = request->sequence;
    intercore_send(request->from, reply);
}

bool intercore_call_bounded(uint32_t to, struct intercore_message *message,
                            struct intercore_message *reply, uint64_t timeout_cycles)
{
    struct pending_call *call = &pending_calls[this_cpu()->index];
    message->sequence = ++call->next_sequence;
    call->awaited_sequence = message->sequence;
    call->answered = false;
    intercore_send_urgent(to, message); /* the caller's whole core waits: interrupt the target */
    uint64_t start = rdtsc();
    while (!call->answered) {
        if (timeout_cycles != 0 && rdtsc() - start > timeout_cycles) {
            call->awaited_sequence = 0;
            return false;
        }
        if (intercore_poll() == 0) {
            if (timeout_cycles == 0)
                intercore_wait(); /* the timer tick bounds a wait otherwise */
            else
                cpu_relax();
        }
    }
    *reply = call->reply;
    return true;
}

void intercore_call(uint32_t to, struct intercore_message *message, struct intercore_message *reply)
{
    intercore_call_bounded(to, message, reply, 0);
}

void intercore_install_services(const struct intercore_services *installed)
{
    services = installed;
}

static void serve(const struct intercore_message *message)
{
    struct intercore_message reply = {0};
    if (services == NULL || !services->serve(message, &reply))
        kprintf("core %u: no service for message type %u from core %u\n", this_cpu()->index,
                message->type, message->from);
    else if (!services->is_notification(message->type))
        intercore_reply(message, &reply);
}

static void dispatch(const struct intercore_message *message)
{
    struct cpu *cpu = this_cpu();
    cpu->messages_received++;
    if (message->type & MESSAGE_REPLY) {
        struct pending_call *call = &pending_calls[cpu->index];
        if (message->sequence == call->awaited_sequence && !call->answered) {
            call->reply = *message;
            call->answered = true;
        } else {
            kprintf("core %u: stray reply type 0x%x from core %u\n", cpu->index, message->type,
                    message->from);
        }
        return;
    }
    serve(message);
}

unsigned intercore_drain(void)
{
    struct cpu *cpu = this_cpu();
    unsigned handled = 0;
    atomic_store_fenced(&cpu->inbox_hint, 0);
    for (uint32_t from = 0; from < kernel_shared->core_count; from++) {
        if (from == cpu->index)
            continue;
        struct ring *entry = intercore_entry(kernel_shared->intercore, from, cpu->index);
        struct intercore_message message;
        while (entry != NULL && ring_pop(entry, &message)) {
            dispatch(&message);
            handled++;
        }
    }
    return handled;
}

static bool inbox_has_message(void)
{
    uint32_t self = this_cpu()->index;
    for (uint32_t from = 0; from < kernel_shared->core_count; from++) {
        struct ring *entry = intercore_entry(kernel_shared->intercore, from, self);
        if (entry != NULL && !ring_is_empty(entry))
            return true;
    }
    return false;
}

void intercore_wait(void)
{
    struct cpu *cpu = this_cpu();
    interrupts_disable();
    atomic_store_fenced(&cpu->waiting, 1);
    memory_fence();
    if (!inbox_has_message())
        __asm__ volatile("sti; hlt; cli" ::: "memory");
    atomic_store_release(&cpu->waiting, 0);
}

static void message_interrupt(struct trap_frame *frame)
{
    (void)frame;
    this_cpu()->ipis_received++;
    lapic_end_of_interrupt();
}

void intercore_install(void)
{
    trap_set_handler(VECTOR_MESSAGE, message_interrupt);
}
