/* persistent_memory.c: the NFIT's persistent-memory ranges (lib/nfit.c, the
 * parser the pager uses too), checked against IA32_PAT and the MTRRs: a
 * mapping without PCD and PWT selects PAT entry 0, and the range is
 * write-back only when that entry and the MTRRs both say WB. Prints
 *   nvm: persistent memory 0x100000000 (64 MiB, NFIT range 0): mapped without PCD and PWT,
 *        PAT entry 0 WB, MTRR WB: write-back
 *   @json
 * {"kind":"nvm_range","index":0,"base":4294967296,"bytes":67108864,"pat":"WB","mtrr":"WB","write_back":true}
 */
#include "persistent_memory.h"
#include "acpi.h"
#include "console.h"
#include "layout.h"
#include "memory_type.h"
#include "paging.h"
#include "x86.h"
#include <formica/nfit.h>

#define MSR_MTRR_CAPABILITIES 0xfe
#define MSR_MTRR_DEFAULT_TYPE 0x2ff
#define MSR_MTRR_PHYSICAL_BASE 0x200 /* + 2n; the mask is + 2n + 1 */
#define MSR_PAT 0x277
#define CPUID_1_EDX_MTRR (1u << 12)
#define CPUID_1_EDX_PAT (1u << 16)
#define PAT_AT_RESET 0x0007040600070406ull /* entry 0 WB, the type a reset gives */

static struct {
    uint64_t base, bytes;
} ranges[PERSISTENT_RANGES_MAX];
static unsigned range_count;
static unsigned nfit_count; /* the first ranges are the NFIT's; then shared BARs */
static uint64_t pat_value;
static struct mtrr_state mtrr_values;
static bool types_read;

static struct mtrr_state read_mtrrs(uint32_t leaf1_edx)
{
    struct mtrr_state mtrrs = {.present = (leaf1_edx & CPUID_1_EDX_MTRR) != 0};
    uint32_t registers[4];
    cpuid(0x80000000u, 0, registers);
    if (registers[0] >= 0x80000008u) {
        cpuid(0x80000008u, 0, registers);
        mtrrs.physical_bits = registers[0] & 0xff;
    }
    if (!mtrrs.present)
        return mtrrs;
    mtrrs.capabilities = rdmsr(MSR_MTRR_CAPABILITIES);
    mtrrs.default_type = rdmsr(MSR_MTRR_DEFAULT_TYPE);
    uint32_t count = (uint32_t)(mtrrs.capabilities & 0xff);
    for (uint32_t i = 0; i < count && i < MTRR_VARIABLE_MAX; i++) {
        mtrrs.base[i] = rdmsr(MSR_MTRR_PHYSICAL_BASE + 2 * i);
        mtrrs.mask[i] = rdmsr(MSR_MTRR_PHYSICAL_BASE + 2 * i + 1);
    }
    return mtrrs;
}

static void report_range(unsigned index, enum memory_type pat, enum memory_type mtrr)
{
    bool write_back = pat == MEMORY_WB && mtrr == MEMORY_WB;
    kprintf("nvm: persistent memory 0x%lx (%lu MiB, NFIT range %u): mapped without PCD and PWT, "
            "PAT entry 0 %s, MTRR %s: %s\n",
            ranges[index].base, ranges[index].bytes >> 20, index, memory_type_name(pat),
            memory_type_name(mtrr),
            write_back ? "write-back" : "NOT write-back, every access to it is slower");
    kprintf("@json {\"kind\":\"nvm_range\",\"index\":%u,\"base\":%lu,\"bytes\":%lu,\"pat\":\"%s\","
            "\"mtrr\":\"%s\",\"write_back\":%s}\n",
            index, ranges[index].base, ranges[index].bytes, memory_type_name(pat),
            memory_type_name(mtrr), write_back ? "true" : "false");
}

/* The range in the kernel's direct map too (write-back, as drivers map it),
 * which covers RAM only: the m-kernel copies a page of a block ICA over
 * persistent memory (SYS_ICA_DEVICE_BLOCK), for a private mapping's copy on
 * write, through phys_to_virt like any frame. */
static void map_directly(uint64_t base, uint64_t bytes)
{
    for (uint64_t offset = 0; offset < bytes; offset += PAGE_SIZE) {
        uint64_t physical = base + offset;
        if (paging_translate(paging_kernel_root(), (uint64_t)phys_to_virt(physical)) != 0)
            continue; /* inside the direct map already */
        if (paging_map_kernel_page((uint64_t)phys_to_virt(physical), physical,
                                   PAGE_PRESENT | PAGE_WRITABLE | PAGE_GLOBAL) != 0) {
            kprintf("nvm: persistent memory 0x%lx: no room for the direct map past 0x%lx\n", base,
                    physical);
            return;
        }
    }
}

/* IA32_PAT and the MTRRs, once: every range's type comes from them. */
static void read_memory_types(void)
{
    if (types_read)
        return;
    uint32_t leaf1[4];
    cpuid(1, 0, leaf1);
    pat_value = (leaf1[3] & CPUID_1_EDX_PAT) ? rdmsr(MSR_PAT) : PAT_AT_RESET;
    mtrr_values = read_mtrrs(leaf1[3]);
    types_read = true;
}

void persistent_memory_init(void)
{
    const struct acpi_header *nfit = acpi_find_table("NFIT", 0);
    if (nfit == NULL)
        return;
    while (range_count < PERSISTENT_RANGES_MAX &&
           nfit_pmem_range(nfit, nfit->length, range_count, &ranges[range_count].base,
                           &ranges[range_count].bytes) == 0)
        range_count++;
    nfit_count = range_count;
    if (range_count == 0)
        return;
    read_memory_types();
    for (unsigned i = 0; i < range_count; i++)
        map_directly(ranges[i].base, ranges[i].bytes);
    for (unsigned i = 0; i < range_count; i++)
        report_range(i, pat_entry(pat_value, 0),
                     mtrr_range_type(&mtrr_values, ranges[i].base, ranges[i].bytes));
}

bool persistent_memory_add_shared(uint64_t base, uint64_t bytes, const char *what)
{
    if (range_count == PERSISTENT_RANGES_MAX || bytes == 0 || base + bytes < base) {
        kprintf("nvm: %s 0x%lx (%lu MiB): no room among %u persistent ranges: mapped uncached\n",
                what, base, bytes >> 20, PERSISTENT_RANGES_MAX);
        return false;
    }
    read_memory_types();
    ranges[range_count].base = base;
    ranges[range_count].bytes = bytes;
    range_count++;
    enum memory_type pat = pat_entry(pat_value, 0);
    enum memory_type mtrr = mtrr_range_type(&mtrr_values, base, bytes);
    bool write_back = pat == MEMORY_WB && mtrr == MEMORY_WB;
    kprintf("nvm: %s 0x%lx (%lu MiB): mapped without PCD and PWT like persistent memory, "
            "PAT entry 0 %s, MTRR %s: %s\n",
            what, base, bytes >> 20, memory_type_name(pat), memory_type_name(mtrr),
            write_back ? "write-back" : "NOT write-back (the firmware's MTRRs make it so)");
    return true;
}

bool persistent_memory_is_shared(uint64_t base)
{
    for (unsigned i = nfit_count; i < range_count; i++)
        if (base >= ranges[i].base && base < ranges[i].base + ranges[i].bytes)
            return true;
    return false;
}

bool persistent_memory_holds(uint64_t base, uint64_t end)
{
    for (unsigned i = 0; i < range_count; i++)
        if (base >= ranges[i].base && end <= ranges[i].base + ranges[i].bytes && base < end)
            return true;
    return false;
}
