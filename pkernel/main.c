/* main.c: the p-kernel on an application processor. It finds its core
 * record, sets up its segments, interrupts and APIC, then asks the m-kernel
 * (over the inter-core area) for the memory of its own stacks, moves onto
 * them, reports online and serves messages. It never allocates memory itself. */
#include "clock.h"
#include "atomic.h"
#include "console.h"
#include "cpu_features.h"
#include "cpu.h"
#include "fault_injection.h"
#include "intercore.h"
#include "lapic.h"
#include "page_attributes.h"
#include "layout.h"
#include "panic.h"
#include "selftest.h"
#include "crash.h"
#include "scheduler.h"
#include "shared.h"
#include "syscall.h"
#include "topology.h"
#include "trap.h"
#include "x86.h"
#include "ica/ica_init.h"
#include <formica/protocol/pkernel_services.h>

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
    for (uint32_t i = FIRST_PKERNEL_CORE; i < kernel_shared->core_count; i++)
        if (kernel_shared->cpus[i].apic_id == apic_id)
            return &kernel_shared->cpus[i];
    kprintf_unlocked("p-kernel: no core record for apic id %u\n", apic_id);
    halt_forever();
}

/* Every core runs what the boot core chose (kernel_shared->cpu): a core
 * whose own CPUID lacks one of those features cannot run this kernel. */
static void check_cpu_features(const struct cpu *cpu)
{
    uint32_t missing = cpu_features_missing_here(kernel_shared->cpu.used);
    for (int feature = 0; feature < CPU_FEATURE_COUNT; feature++)
        if (cpu_feature_has(missing, feature))
            panic("core %u lacks %s, which the boot core offers and the kernels use", cpu->index,
                  cpu_feature_name(feature));
}

/* Frames for this core's kernel and fault stacks, from the m-kernel. */
static uint64_t request_stack_memory(void)
{
    struct intercore_message request = {
        .type = MESSAGE_MEMORY_ALLOCATE,
        .memory_allocate = {(KERNEL_STACK_SIZE + FAULT_STACK_SIZE) / PAGE_SIZE},
    };
    struct intercore_message reply;
    intercore_call(MKERNEL_CORE, &request, &reply);
    if (reply.memory_allocate_reply.physical == 0)
        panic("the m-kernel has no memory for this core's stacks");
    return reply.memory_allocate_reply.physical;
}

/* A notification: clearing `online` tells the m-kernel this core has stopped. */
void serve_halt(const struct intercore_message *message,
                const struct intercore_halt_request *request)
{
    (void)message, (void)request;
    atomic_store_release(&this_cpu()->online, 0); /* the m-kernel watches this flag */
    halt_forever();
}

static const struct intercore_services pkernel_services = {intercore_serve,
                                                           intercore_is_notification};

static void pkernel_run(struct cpu *cpu)
{
    syscall_install();
    scheduler_init();
    /* the scheduler's idle and exit work that is not its own */
    scheduler_set_hooks((struct scheduler_hooks){.before_halt = selftest_run_pending,
                                                 .on_exit = crash_if_requested});
    ica_init();
    atomic_store_release(&cpu->online, 1);
    atomic_add(&kernel_shared->cores_online, 1);
    fault_injection_check();
    clock_start_tick(TICK_PERIOD_MS);
    scheduler_run();
}

void pkernel_main(struct kernel_shared *shared, uint32_t ticket)
{
    (void)ticket;
    kernel_shared = shared;
    page_attributes_program(); /* the framebuffer's write-combining, as on the boot core */
    struct cpu *cpu = find_own_record();
    cpu->role = ROLE_P;
    cpu->socket = topology_socket_of_this_core();
    cpu_install(cpu);
    idt_load();
    check_cpu_features(cpu);
    lapic_enable();
    intercore_install();
    intercore_install_services(&pkernel_services);
    uint64_t stacks = request_stack_memory();
    uint8_t *base = phys_to_virt(stacks);
    cpu->fault_stack_top = (uint64_t)(base + FAULT_STACK_SIZE);
    cpu->scheduler_stack_top = (uint64_t)(base + FAULT_STACK_SIZE + KERNEL_STACK_SIZE);
    cpu->kernel_stack_top = cpu->scheduler_stack_top;
    cpu->tss.ist[0] = cpu->fault_stack_top;
    cpu->tss.rsp[0] = cpu->kernel_stack_top;
    run_on_stack(cpu->kernel_stack_top, pkernel_run, cpu);
}
