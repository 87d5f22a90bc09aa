/* tests/programs/devtest: checks the rules of the device system calls (30-37). `devtest
 * refused` (no driver flag) expects -E_PERMISSION everywhere; `devtest rules`
 * (run --driver) expects bad arguments and RAM to be refused; `devtest nvm`
 * (run --driver, an NVDIMM nobody uses) checks SYS_ICA_DEVICE_BLOCK's pages. */
#include <formica/device.h>
#include <formica/errors.h>
#include <formica/ica.h>
#include <formica/nfit.h>
#include <formica/request.h>
#include <formica/user.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int failures;

static void expect(const char *what, long result, long wanted)
{
    bool ok = result == wanted;
    printf("@json {\"kind\":\"devtest\",\"check\":\"%s\",\"result\":%ld,\"expected\":%ld,"
           "\"ok\":%s}\n",
           what, result, wanted, ok ? "true" : "false");
    if (!ok)
        failures++;
}

static void check_refused(void)
{
    struct dma_region region;
    expect("pci_read", pci_config_read(0, 0, 0, 0, 4), -E_PERMISSION);
    expect("pci_write", pci_config_write(0, 0, 0, 0x40, 4, 0), -E_PERMISSION);
    expect("device_map", device_map(0xfebf0000, 4096), -E_PERMISSION);
    expect("dma_allocate", dma_allocate(4096, &region), -E_PERMISSION);
    expect("irq_attach", irq_attach(11), -E_PERMISSION);
    expect("irq_wait", irq_wait(), -E_PERMISSION);
    expect("irq_wait_timeout", irq_wait_timeout(10), -E_PERMISSION);
    struct msi_message message;
    expect("irq_attach_msi", irq_attach_msi(0, 0, 0, &message), -E_PERMISSION);
    expect("spawn_driver",
           spawn_with_flags("hello", NULL, CORE_ANY, PRIORITY_APPLICATION, SPAWN_DRIVER),
           -E_PERMISSION);
    expect("console_input", console_input("x", 1), -E_PERMISSION); /* typing into the shell */
    expect("device_block", device_block_ica(0x100000000ull), -E_PERMISSION);
    expect("keyboard_ready", keyboard_ready(CONSOLE_KEYBOARD_USB), -E_PERMISSION);
}

static void check_pci_rules(void)
{
    expect("pci_bus_256", pci_config_read(256, 0, 0, 0, 4), -E_INVALID);
    expect("pci_device_32", pci_config_read(0, 32, 0, 0, 4), -E_INVALID);
    expect("pci_function_8", pci_config_read(0, 0, 8, 0, 4), -E_INVALID);
    expect("pci_offset_256", pci_config_read(0, 0, 0, 256, 1), -E_INVALID);
    expect("pci_width_3", pci_config_read(0, 0, 0, 0, 3), -E_INVALID);
    expect("pci_unaligned", pci_config_read(0, 0, 0, 2, 4), -E_INVALID);
    expect("pci_write_bad", pci_config_write(0, 0, 0, 1, 2, 0), -E_INVALID);
    long host_bridge = pci_config_read(0, 0, 0, 0, 2);
    expect("pci_host_bridge_vendor", host_bridge, 0x8086);
}

static void check_map_rules(void)
{
    expect("map_ram_1mib", device_map(0x100000, 4096), -E_INVALID);
    expect("map_ram_low", device_map(0x1000, 4096), -E_INVALID);
    expect("map_empty", device_map(0xfebf0000, 0), -E_INVALID);
    expect("map_too_big", device_map(0xe0000000, DEVICE_MAP_LIMIT + 1ull), -E_INVALID);
    expect("map_lapic", device_map(0xfee00000, 4096), -E_INVALID);
    expect("map_ioapic", device_map(0xfec00000, 4096), -E_INVALID);
    long vga = device_map(0xb8000, 4096);
    expect("map_vga_ok", vga > 0 ? 0 : vga, 0);
    expect("device_block_ram", device_block_ica(0x100000), -E_INVALID);
    expect("device_block_vga", device_block_ica(0xb8000), -E_INVALID); /* mapped, not NVM */
    expect("device_block_unaligned", device_block_ica(0x100000008ull), -E_INVALID);
}

static void check_dma_rules(void)
{
    struct dma_region region;
    long result = dma_allocate(3 * 4096 + 1, &region);
    expect("dma_ok", result, 0);
    if (result == 0) {
        const uint8_t *bytes = (const uint8_t *)region.address;
        bool zero = true;
        for (uint64_t i = 0; i < region.bytes; i++)
            zero = zero && bytes[i] == 0;
        memset((void *)region.address, 0xa5, region.bytes);
        expect("dma_zeroed", zero ? 0 : 1, 0);
        expect("dma_rounded", (long)region.bytes, 4 * 4096);
        expect("dma_below_4g", region.physical != 0 && region.physical < (4ull << 30) ? 0 : 1, 0);
    }
    expect("dma_zero_bytes", dma_allocate(0, &region), -E_INVALID);
    expect("dma_over_limit", dma_allocate(DMA_LIMIT_BYTES, &region), -E_NO_MEMORY);
    expect("dma_bad_pointer", dma_allocate(4096, (struct dma_region *)0x10), -E_FAULT);
}

static void check_irq_rules(void)
{
    expect("irq_wait_unattached", irq_wait(), -E_INVALID);
    expect("irq_attach_200", irq_attach(200), -E_INVALID);
}

/* An MSI for the host bridge (00:00.0: present on pc and q35, never
 * programmed, so it never fires): then the line is owned, and a wait with a
 * timeout comes back with 0. A later run must get it again (it was freed). */
static void check_msi_rules(void)
{
    struct msi_message message;
    expect("msi_wait_timeout_unattached", irq_wait_timeout(10), -E_INVALID);
    expect("msi_bus_256", irq_attach_msi(256, 0, 0, &message), -E_INVALID);
    expect("msi_no_function", irq_attach_msi(255, 31, 7, &message), -E_INVALID);
    expect("msi_bad_pointer", irq_attach_msi(0, 0, 0, (struct msi_message *)0x10), -E_FAULT);
    long result = irq_attach_msi(0, 0, 0, &message);
    expect("msi_host_bridge", result, 0);
    if (result != 0)
        return;
    expect("msi_address", (message.address & 0xfff00fffu) == 0xfee00000u ? 0 : 1, 0);
    expect("msi_data_is_vector", message.data == message.vector && message.vector >= 0xc0 ? 0 : 1,
           0);
    expect("msi_second", irq_attach_msi(0, 0, 0, &message), -E_INVALID);
    expect("irq_after_msi", irq_attach(11), -E_INVALID);
    expect("msi_wait_times_out", irq_wait_timeout(30), 0);
}

/* Run on a core whose APIC id is 255 or more (x2APIC, 256 cores): an MSI's and
 * an IOAPIC entry's destination is 8 bits, so both are refused (-E_INVALID and
 * a console line), never sent to the wrong core or to all of them. */
static void check_high_apic_rules(void)
{
    struct msi_message message;
    expect("msi_high_apic", irq_attach_msi(0, 0, 0, &message), -E_INVALID);
    expect("irq_high_apic", irq_attach(11), -E_INVALID);
}

/* The keyboard calls' bounds; nothing is typed (0 bytes), no keyboard announced. */
static void check_console_rules(void)
{
    static char bytes[CONSOLE_INPUT_LIMIT + 1];
    expect("console_input_too_big", console_input(bytes, sizeof(bytes)), -E_TOO_BIG);
    expect("console_input_bad_pointer", console_input((const void *)0x10, 4), -E_FAULT);
    expect("console_input_nothing", console_input(bytes, 0), 0);
    expect("keyboard_ready_ps2", keyboard_ready(CONSOLE_KEYBOARD_PS2), -E_INVALID);
    expect("keyboard_ready_unknown", keyboard_ready(1u << 5), -E_INVALID);
}

/* The first persistent-memory range of the NFIT: 0 or -E_*. */
static long first_nvm_range(uint64_t *base, uint64_t *bytes)
{
    static uint8_t table[8192];
    uint32_t signature;
    memcpy(&signature, "NFIT", 4);
    long length = system_call_firmware_table(signature, table, sizeof(table));
    if (length < 0)
        return length;
    return nfit_pmem_range_by_address(table, (size_t)length, 0, base, bytes);
}

/* SYS_ICA_DEVICE_BLOCK over an NVDIMM nobody else uses (the runner's
 * --append nvm=spare keeps the pager off it): only pages of the caller's
 * persistent-memory mappings are accepted; the block ICA shows the very page
 * (no copy), and freeing it (or exiting with one held) keeps the page. */
static void check_nvm_rules(void)
{
    uint64_t base = 0, bytes = 0;
    long found = first_nvm_range(&base, &bytes);
    expect("nvm_found", found, 0);
    if (found != 0 || bytes < 4 * 4096)
        return;
    expect("device_block_unmapped", device_block_ica(base + 4096), -E_INVALID);
    long mapped = device_map(base, 2 * 4096);
    expect("nvm_map_ok", mapped > 0 ? 0 : mapped, 0);
    if (mapped <= 0)
        return;
    volatile uint64_t *page = (volatile uint64_t *)((uint8_t *)mapped + 4096);
    expect("device_block_nvm_unaligned", device_block_ica(base + 4096 + 64), -E_INVALID);
    expect("device_block_past_mapping", device_block_ica(base + 2 * 4096), -E_INVALID);
    expect("device_block_past_nvm", device_block_ica(base + bytes), -E_INVALID);
    long id = device_block_ica(base + 4096);
    expect("device_block_ok", id > 0 ? 0 : id, 0);
    if (id <= 0)
        return;
    volatile uint64_t *through_ica = ica_address((uint64_t)id);
    through_ica[3] = 0x5eedf00d12345678ull;
    expect("device_block_same_page", page[3] == 0x5eedf00d12345678ull ? 0 : 1, 0);
    page[4] = 0xabcdull;
    expect("device_block_sees_mapping", through_ica[4] == 0xabcdull ? 0 : 1, 0);
    expect("device_block_free", ica_free((uint64_t)id), 0);
    expect("device_block_page_kept", page[3] == 0x5eedf00d12345678ull ? 0 : 1, 0);
    long failed = 0;
    for (uint32_t i = 0; i < ICA_BLOCKS_PER_PROCESS + 100 && failed == 0; i++) {
        long again = device_block_ica(base);
        failed = again > 0 ? ica_free((uint64_t)again) : again;
    }
    expect("device_block_recycled", failed, 0);
    long held = device_block_ica(base + 4096); /* exits holding it: the slot goes, not the page */
    expect("device_block_held_at_exit", held > 0 ? 0 : held, 0);
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "refused") == 0) {
        check_refused();
    } else if (argc == 2 && strcmp(argv[1], "rules") == 0) {
        check_pci_rules();
        check_map_rules();
        check_dma_rules();
        check_irq_rules();
        check_msi_rules();
        check_console_rules();
    } else if (argc == 2 && strcmp(argv[1], "high-apic") == 0) {
        check_high_apic_rules();
    } else if (argc == 2 && strcmp(argv[1], "nvm") == 0) {
        check_nvm_rules();
    } else {
        printf("usage: devtest refused|rules|high-apic|nvm\n");
        return 2;
    }
    printf("devtest: %d failure(s)\n", failures);
    return failures == 0 ? 0 : 1;
}
