/* smp.c: AP start-up. All APs get INIT, then (10 ms later) two SIPIs, in
 * parallel, so 64 cores start about as fast as one. Each AP's first stack is
 * a page from the m-kernel; everything else it asks for itself. */
#include "smp.h"
#include "atomic.h"
#include "clock_calibration.h"
#include "console.h"
#include "intercore.h"
#include "lapic_boot.h"
#include "layout.h"
#include "paging.h"
#include "panic.h"
#include "physical_memory.h"
#include "shared.h"
#include "x86.h"
#include <string.h>

#define AP_BOOT_STACK_BYTES 4096

struct trampoline_parameters {
    uint32_t boot_root;
    uint32_t ticket;
    uint64_t kernel_root;
    uint64_t entry;
    uint64_t shared;
    uint64_t stacks;
    uint64_t stack_bytes;
} __attribute__((packed));

extern const char trampoline_start[], trampoline_end[], trampoline_parameters[];
extern uint64_t boot_identity_table[]; /* boot.S: identity map of the low 4 GiB */

/* A root table below 4 GiB: the kernel half plus the low identity map. */
static uint64_t build_boot_root(void)
{
    uint64_t root = physical_allocate(1, 4ull << 30);
    if (root == 0)
        panic("out of memory for the AP start-up page table");
    uint64_t *entries = phys_to_virt(root);
    const uint64_t *kernel = phys_to_virt(paging_kernel_root());
    for (int i = 256; i < 512; i++)
        entries[i] = kernel[i];
    entries[0] = virt_to_phys(boot_identity_table) | PAGE_PRESENT | PAGE_WRITABLE;
    return root;
}

static struct trampoline_parameters *install_trampoline(uint64_t entry, uint64_t boot_root,
                                                        uint32_t application_cores)
{
    size_t bytes = trampoline_end - trampoline_start;
    uint8_t *target = phys_to_virt(TRAMPOLINE_PHYSICAL);
    memcpy(target, trampoline_start, bytes);
    struct trampoline_parameters *parameters =
        (void *)(target + (trampoline_parameters - trampoline_start));
    uint64_t pages = (uint64_t)application_cores * AP_BOOT_STACK_BYTES / PAGE_SIZE;
    uint64_t stacks = physical_allocate(pages, 0);
    if (stacks == 0)
        panic("out of memory for %u AP boot stacks", application_cores);
    parameters->boot_root = (uint32_t)boot_root;
    parameters->ticket = 0;
    parameters->kernel_root = paging_kernel_root();
    parameters->entry = entry;
    parameters->shared = (uint64_t)kernel_shared;
    parameters->stacks = (uint64_t)phys_to_virt(stacks);
    parameters->stack_bytes = AP_BOOT_STACK_BYTES;
    return parameters;
}

static uint32_t cores_online(void)
{
    return atomic_load_acquire(&kernel_shared->cores_online);
}

static void wait_serving_requests(uint64_t cycles, uint32_t target)
{
    uint64_t start = rdtsc();
    while (rdtsc() - start < cycles && cores_online() < target)
        if (intercore_poll() == 0)
            cpu_relax();
}

static void report_missing_cores(void)
{
    for (uint32_t i = FIRST_PKERNEL_CORE; i < kernel_shared->core_count; i++) {
        struct cpu *cpu = &kernel_shared->cpus[i];
        if (!cpu->online)
            kprintf("smp: core %u (apic id %u) did not answer INIT-SIPI-SIPI\n", i, cpu->apic_id);
    }
}

void smp_start_application_cores(uint64_t pkernel_entry, uint64_t timeout_ms)
{
    uint32_t count = kernel_shared->core_count;
    if (count == 1)
        return;
    uint64_t boot_root = build_boot_root();
    install_trampoline(pkernel_entry, boot_root, count - 1);
    uint64_t per_ms = kernel_shared->tsc_hz / 1000;
    for (uint32_t i = FIRST_PKERNEL_CORE; i < count; i++)
        lapic_send_init(kernel_shared->cpus[i].apic_id);
    clock_delay_us(10000);
    for (int attempt = 0; attempt < 2 && cores_online() < count; attempt++) {
        for (uint32_t i = FIRST_PKERNEL_CORE; i < count; i++)
            if (!kernel_shared->cpus[i].online)
                lapic_send_startup(kernel_shared->cpus[i].apic_id, TRAMPOLINE_PHYSICAL >> 12);
        wait_serving_requests(per_ms / 5, count);
    }
    wait_serving_requests(per_ms * timeout_ms, count);
    if (cores_online() < count) {
        report_missing_cores();
        panic("%u of %u cores came online within %lu ms", cores_online(), count, timeout_ms);
    }
    physical_free(boot_root, 1);
}
