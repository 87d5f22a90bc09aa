/* main.c: the p-kernel on an application processor. It finds its core
 * record, sets up its segments, interrupts and APIC, then asks the m-kernel
 * (over the inter-core area) for the memory of its own stacks, moves onto
 * them, reports online and serves messages. It never allocates memory itself. */
#include "clock.h"
#include "console.h"
#include "cpu.h"
#include "fault_injection.h"
#include "intercore.h"
#include "lapic.h"
#include "layout.h"
#include "panic.h"
#include "selftest.h"
#include "scheduler.h"
#include "shared.h"
#include "syscall.h"
#include "topology.h"
#include "trap.h"
#include "x86.h"

#define FAULT_STACK_SIZE 4096
#define TICK_PERIOD_MS 10

struct kernel_shared *kernel_shared;

void run_on_stack(uint64_t top, void (*function)(struct cpu *), struct cpu *argument)
    __attribute__((noreturn));

static uint32_t initial_apic_id(void)
{
    uint32_t regs[4];
    cpuid(0, 0, regs);
    if (regs[0] >= 0xb) {
        cpuid(0xb, 0, regs);
        if (regs[1] != 0)
            return regs[3];
    }
    cpuid(1, 0, regs);
    return regs[1] >> 24;
}

static struct cpu *find_own_record(void)
{
    uint32_t apic_id = initial_apic_id();
    for (uint32_t i = 1; i < kernel_shared->core_count; i++)
        if (kernel_shared->cpus[i].apic_id == apic_id)
            return &kernel_shared->cpus[i];
    kprintf_unlocked("p-kernel: no core record for apic id %u\n", apic_id);
    halt_forever();
}

/* Frames for this core's kernel and fault stacks, from the m-kernel. */
static uint64_t request_stack_memory(void)
{
    struct intercore_message request = {.type = MESSAGE_MEMORY_ALLOCATE}, reply;
    request.argument[0] = (KERNEL_STACK_SIZE + FAULT_STACK_SIZE) / PAGE_SIZE;
    intercore_call(0, &request, &reply);
    if (reply.argument[0] == 0)
        panic("the m-kernel has no memory for this core's stacks");
    return reply.argument[0];
}

static void on_halt(const struct intercore_message *request)
{
    struct intercore_message reply = {0};
    __atomic_store_n(&this_cpu()->online, 0, __ATOMIC_RELEASE);
    if (request->sequence != 0) /* a call waits for the reply; shutdown watches `online` */
        intercore_reply(request, &reply);
    halt_forever();
}

static void pkernel_run(struct cpu *cpu)
{
    syscall_install();
    scheduler_init();
    __atomic_store_n(&cpu->online, 1, __ATOMIC_RELEASE);
    __atomic_fetch_add(&kernel_shared->cores_online, 1, __ATOMIC_ACQ_REL);
    fault_injection_check();
    clock_start_tick(TICK_PERIOD_MS);
    scheduler_run();
}

void pkernel_main(struct kernel_shared *shared, uint32_t ticket)
{
    (void)ticket;
    kernel_shared = shared;
    struct cpu *cpu = find_own_record();
    cpu->role = ROLE_P;
    cpu->socket = topology_socket_of_this_core();
    cpu_install(cpu);
    idt_load();
    lapic_enable();
    intercore_install();
    selftest_install();
    intercore_set_handler(MESSAGE_HALT, on_halt);
    uint64_t stacks = request_stack_memory();
    uint8_t *base = phys_to_virt(stacks);
    cpu->fault_stack_top = (uint64_t)(base + FAULT_STACK_SIZE);
    cpu->scheduler_stack_top = (uint64_t)(base + FAULT_STACK_SIZE + KERNEL_STACK_SIZE);
    cpu->kernel_stack_top = cpu->scheduler_stack_top;
    cpu->tss.ist[0] = cpu->fault_stack_top;
    cpu->tss.rsp[0] = cpu->kernel_stack_top;
    run_on_stack(cpu->kernel_stack_top, pkernel_run, cpu);
}
