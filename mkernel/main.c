/* main.c: the m-kernel's boot sequence on the boot core: console, loader
 * information, command line, physical memory, page tables, ACPI and the
 * MADT, the APIC and clocks, the inter-core area, the p-kernel image, the
 * other cores; then the boot report and, for now, the end of the run. */
#include "acpi.h"
#include "boot_information.h"
#include "clock.h"
#include "clock_calibration.h"
#include "console.h"
#include "console_setup.h"
#include "ps2_keyboard.h"
#include "cpu_choice.h"
#include "cpu.h"
#include "fault_injection.h"
#include "fw_cfg.h"
#include "intercore.h"
#include "intercore_layout.h"
#include "lapic.h"
#include "lapic_boot.h"
#include "layout.h"
#include "madt.h"
#include "device_setup.h"
#include "persistent_memory.h"
#include "ivshmem_memory.h"
#include "paging.h"
#include "panic.h"
#include "physical_memory.h"
#include "pkernel_loader.h"
#include "placement_loader.h"
#include "crash.h"
#include "scheduler.h"
#include "selftest.h"
#include "selftest_driver.h"
#include "services.h"
#include "shared.h"
#include "shutdown.h"
#include "smp.h"
#include "syscall.h"
#include "topology.h"
#include "trap.h"
#include "x86.h"
#include "ica/ica_init.h"
#include <formica/errors.h>
#include <string.h>

#define DEFAULT_AP_TIMEOUT_MS 5000
#define DEFAULT_SELFTEST_ROUNDS 32
#define TICK_PERIOD_MS 10

extern char boot_stack_top[];

static struct kernel_shared shared_state;
/* The boot core's record until the core array exists: faults are reported from the start. */
static struct cpu early_boot_cpu;
static uint8_t early_fault_stack[4096] __attribute__((aligned(16)));
struct kernel_shared *kernel_shared = &shared_state;
static struct boot_information boot;
static struct madt_info madt;

static bool strstr_simple(const char *text, const char *word)
{
    size_t length = strlen(word);
    for (; *text != '\0'; text++)
        if (strncmp(text, word, length) == 0)
            return true;
    return false;
}

/* The command line: what the runner passed through QEMU fw_cfg when there is
 * such a file (every QEMU boot method), else the loader's (GRUB, bare metal). */
static void assemble_command_line(void)
{
    char *line = kernel_shared->command_line;
    if (!fw_cfg_read_text("opt/formica/cmdline", line, COMMAND_LINE_BYTES))
        strncpy(line, boot.command_line, COMMAND_LINE_BYTES - 1);
    if (strlen(line) == COMMAND_LINE_BYTES - 1)
        kprintf("command line: WARNING: longer than %u bytes; the rest is cut off\n",
                COMMAND_LINE_BYTES - 1);
    kprintf("command line: %s\n", line);
}

static void read_madt(void)
{
    const struct acpi_header *table = acpi_find_table("APIC", 0);
    if (table == NULL)
        panic("ACPI: no MADT (APIC table); cannot find the cores");
    char test[16];
    uint8_t copy[4096];
    const void *source = table;
    if (command_line_option("test_corrupt_madt", test, sizeof(test)) && table->length <= 4096) {
        memcpy(copy, table, table->length);
        copy[table->length - 1] ^= 0x5a; /* as a damaged firmware table would be */
        source = copy;
    }
    int error = madt_parse(source, table->length, &madt);
    if (error != MADT_OK)
        panic("ACPI: malformed MADT: %s", madt_error_text(error));
    if (madt.cores_ignored > 0)
        kprintf("madt: %u cores beyond the limit of %u ignored\n", madt.cores_ignored,
                MADT_MAX_CORES);
}

static void setup_cores(void)
{
    uint32_t boot_apic = lapic_id();
    if (madt_put_boot_core_first(&madt, boot_apic) != 0)
        panic("the boot core (apic id %u) is not in the MADT", boot_apic);
    char test[16];
    if (command_line_option("test_phantom_core", test, sizeof(test)) &&
        madt.core_count < MADT_MAX_CORES)
        madt.cores[madt.core_count++] = (struct madt_core){.apic_id = 0xf0, .processor_uid = 0xf0};
    uint32_t count = madt.core_count;
    uint64_t pages = (count * sizeof(struct cpu) + PAGE_SIZE - 1) / PAGE_SIZE;
    uint64_t records = physical_allocate(pages, 0);
    if (records == 0)
        panic("out of memory for %u core records", count);
    kernel_shared->cpus = phys_to_virt(records);
    kernel_shared->core_count = count;
    for (uint32_t i = 0; i < count; i++) {
        kernel_shared->cpus[i].index = i;
        kernel_shared->cpus[i].apic_id = madt.cores[i].apic_id;
        kernel_shared->cpus[i].role = i == MKERNEL_CORE ? ROLE_M : ROLE_P;
    }
}

static void setup_boot_core(void)
{
    struct cpu *cpu = &kernel_shared->cpus[MKERNEL_CORE];
    uint64_t fault_stack = physical_allocate(1, 0);
    if (fault_stack == 0)
        panic("out of memory for the boot core's fault stack");
    cpu->kernel_stack_top = (uint64_t)boot_stack_top;
    cpu->fault_stack_top = (uint64_t)phys_to_virt(fault_stack) + PAGE_SIZE;
    cpu_install(cpu);
    idt_load();
    cpu->online = 1;
    cpu->socket = topology_socket_of_this_core();
    cpu->scheduler_stack_top = (uint64_t)boot_stack_top;
    kernel_shared->cores_online = 1;
    syscall_install();
}

/* In xAPIC mode an APIC id fits 8 bits and 255 means "all cores": such cores
 * cannot be started or sent to, so they are left out, with a line saying so. */
static void drop_cores_needing_x2apic(void)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < madt.core_count; i++) {
        if (madt.cores[i].apic_id > 254) {
            kprintf("madt: core with apic id %u left out: it needs x2APIC, which is %s\n",
                    madt.cores[i].apic_id,
                    cpu_feature_has(kernel_shared->cpu.offered, CPU_FEATURE_X2APIC)
                        ? "turned off (nox2apic)"
                        : "not offered");
            continue;
        }
        madt.cores[kept++] = madt.cores[i];
    }
    madt.core_count = kept;
}

static void setup_interrupt_controllers(void)
{
    port_out8(0x21, 0xff); /* mask both legacy 8259 PICs: the APICs take over */
    port_out8(0xa1, 0xff);
    kernel_shared->lapic_mmio = phys_to_virt(madt.lapic_address);
    kernel_shared->x2apic = cpu_feature_has(kernel_shared->cpu.used, CPU_FEATURE_X2APIC);
    if (!kernel_shared->x2apic)
        drop_cores_needing_x2apic();
    lapic_enable();
}

static void setup_intercore_area(void)
{
    intercore_layout_setup();
    intercore_install();
    services_install();
}

static void start_other_cores(void)
{
    if (kernel_shared->core_count == 1)
        return;
    uint64_t entry = pkernel_load(&boot);
    if (entry == 0)
        panic("cannot start the other %u cores without a p-kernel image",
              kernel_shared->core_count - 1);
    smp_start_application_cores(entry, command_line_number("ap_timeout_ms", DEFAULT_AP_TIMEOUT_MS));
}

static void report_cores(void)
{
    uint32_t count = kernel_shared->core_count;
    kprintf("cores: %u online (%s, TSC %lu kHz from %s%s)\n", count,
            kernel_shared->x2apic ? "x2APIC" : "xAPIC", kernel_shared->tsc_hz / 1000,
            kernel_shared->tsc_source,
            cpu_feature_has(kernel_shared->cpu.used, CPU_FEATURE_INVARIANT_TSC) ? ", invariant"
                                                                                : "");
    kprintf("@json {\"kind\":\"cores\",\"online\":%u,\"m\":1,\"p\":%u}\n", count, count - 1);
}

/* Connects every pair, then runs the test with core_count² zeroed counters. */
static bool run_intercore_selftest(uint32_t rounds)
{
    intercore_layout_connect_all();
    uint32_t cores = kernel_shared->core_count;
    uint64_t pages = ((uint64_t)cores * cores * sizeof(uint32_t) + PAGE_SIZE - 1) / PAGE_SIZE;
    uint64_t counters = physical_allocate(pages, 0);
    if (counters == 0) {
        kprintf("selftest: no memory for the %u-core counters\n", cores);
        return false;
    }
    memset(phys_to_virt(counters), 0, pages * PAGE_SIZE);
    bool ok = selftest_intercore(rounds, phys_to_virt(counters));
    physical_free(counters, pages);
    return ok;
}

/* selftest=intercore or selftest=intercore:ROUNDS (ROUNDS >= 1). */
static void run_boot_selftests(void)
{
    char value[32];
    if (!command_line_option("selftest", value, sizeof(value)))
        return;
    uint32_t rounds = DEFAULT_SELFTEST_ROUNDS;
    if (strncmp(value, "intercore:", 10) == 0)
        rounds = (uint32_t)command_line_parse_number(value + 10, 0);
    else if (strcmp(value, "intercore") != 0)
        rounds = 0;
    if (rounds == 0) {
        kprintf("selftest: '%s' is not intercore or intercore:ROUNDS with ROUNDS >= 1\n", value);
        shutdown_machine(1);
    }
    if (!run_intercore_selftest(rounds))
        shutdown_machine(1);
}

static const struct boot_module *find_initrd(void)
{
    for (uint32_t i = 0; i < boot.module_count; i++)
        if (strstr_simple(boot.modules[i].name, "initrd"))
            return &boot.modules[i];
    return NULL;
}

/* Starts init (pid 1) on this core; false when the boot image has none. */
static bool start_init(void)
{
    struct spawn_request request = {.program = "init", .core = 0, .priority = PRIORITY_APPLICATION};
    long pid = services_spawn(&request, 0);
    if (pid < 0) {
        kprintf("init: cannot start: %s\n", error_text(pid));
        return false;
    }
    return true;
}

static void power_off_through_acpi(void)
{
    acpi_power_off();
}

void mkernel_main(uint32_t magic, uint64_t info_physical)
{
    kernel_shared->magic = KERNEL_SHARED_MAGIC;
    early_boot_cpu.kernel_stack_top = (uint64_t)boot_stack_top;
    early_boot_cpu.fault_stack_top = (uint64_t)(early_fault_stack + sizeof(early_fault_stack));
    cpu_install(&early_boot_cpu);
    idt_load();
    console_init_serial();
    kprintf("\nFormica m-kernel starting\n");
    if (!boot_information_read(magic, info_physical, &boot))
        halt_forever();
    console_init_screen(&boot);
    kprintf("boot: %s from %s, %u memory regions, %u modules\n", boot.protocol,
            boot.loader_name[0] ? boot.loader_name : "an unnamed loader", boot.region_count,
            boot.module_count);
    assemble_command_line();
    cpu_choice_make();
    physical_memory_init(&boot);
    paging_init(physical_usable_end());
    console_map_framebuffer(&boot);
    console_report();
    if (!acpi_init(boot.rsdp_physical))
        panic("ACPI: no usable RSDP/RSDT; cannot find the cores");
    machine_power_off_hook = power_off_through_acpi;
    read_madt();
    setup_interrupt_controllers();
    device_setup(&madt);
    persistent_memory_init();
    ivshmem_memory_init();
    setup_cores();
    setup_boot_core();
    ps2_keyboard_start();
    clock_calibrate();
    kernel_shared->profile_marks = command_line_option("profile", NULL, 0);
    setup_intercore_area();
    fault_injection_check();
    services_init(find_initrd());
    kernel_shared->tick_period_ms = TICK_PERIOD_MS; /* the schedulers' fair credit uses it */
    scheduler_init();
    /* the scheduler's idle and exit work that is not its own */
    scheduler_set_hooks((struct scheduler_hooks){.before_halt = selftest_run_pending,
                                                 .on_exit = crash_if_requested});
    ica_init();
    start_other_cores();
    clock_start_tick(TICK_PERIOD_MS);
    report_cores();
    run_boot_selftests();
    placement_load();
    if (!start_init()) {
        kprintf("formica: no init program in the boot image (module 'initrd' with bin/init): "
                "nothing to run\n");
        shutdown_machine(1);
    }
    scheduler_run();
}
