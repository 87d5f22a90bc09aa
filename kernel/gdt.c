/* gdt.c: per-core segment set-up. Long mode needs only flat code and data
 * segments for rings 0 and 3 and a TSS that names the stacks used on entry
 * from user mode and for faults that must not trust the current stack. */
#include "cpu.h"
#include "pcid.h"
#include "fpu.h"
#include "x86.h"

#define DESCRIPTOR_PRESENT (1ull << 47)
#define DESCRIPTOR_CODE_OR_DATA (1ull << 44)
#define DESCRIPTOR_EXECUTABLE (1ull << 43)
#define DESCRIPTOR_WRITABLE (1ull << 41)
#define DESCRIPTOR_LONG (1ull << 53)
#define DESCRIPTOR_USER (3ull << 45)

static void gdt_set_tss(struct cpu *cpu)
{
    uint64_t base = (uint64_t)&cpu->tss;
    uint64_t limit = sizeof(struct tss) - 1;
    cpu->gdt[5] = (limit & 0xffff) | ((base & 0xffffff) << 16) | (0x89ull << 40) |
                  (((limit >> 16) & 0xf) << 48) | (((base >> 24) & 0xff) << 56);
    cpu->gdt[6] = base >> 32;
}

static void gdt_load(struct cpu *cpu)
{
    struct {
        uint16_t limit;
        uint64_t base;
    } __attribute__((packed)) pointer = {sizeof(cpu->gdt) - 1, (uint64_t)cpu->gdt};
    __asm__ volatile("lgdt %0\n\t"
                     "pushq %1\n\t"
                     "leaq 1f(%%rip), %%rax\n\t"
                     "pushq %%rax\n\t"
                     "lretq\n"
                     "1:\n\t"
                     "movw %w2, %%ax\n\t"
                     "movw %%ax, %%ds\n\t"
                     "movw %%ax, %%es\n\t"
                     "movw %%ax, %%ss\n\t"
                     "xorw %%ax, %%ax\n\t"
                     "movw %%ax, %%fs\n\t"
                     "movw %%ax, %%gs\n\t"
                     "ltr %w3"
                     :
                     : "m"(pointer), "i"(SEGMENT_KERNEL_CODE), "i"(SEGMENT_KERNEL_DATA),
                       "r"((uint16_t)SEGMENT_TSS)
                     : "rax", "memory");
}

uint32_t cpu_gs_moves; /* cpu.h */

void cpu_install(struct cpu *cpu)
{
    fpu_enable();
    const uint64_t code = DESCRIPTOR_PRESENT | DESCRIPTOR_CODE_OR_DATA | DESCRIPTOR_EXECUTABLE |
                          DESCRIPTOR_WRITABLE | DESCRIPTOR_LONG;
    const uint64_t data = DESCRIPTOR_PRESENT | DESCRIPTOR_CODE_OR_DATA | DESCRIPTOR_WRITABLE;
    cpu->self = cpu;
    cpu->gdt[0] = 0;
    cpu->gdt[1] = code;
    cpu->gdt[2] = data;
    cpu->gdt[3] = data | DESCRIPTOR_USER;
    cpu->gdt[4] = code | DESCRIPTOR_USER;
    cpu->tss.rsp[0] = cpu->kernel_stack_top;
    cpu->tss.ist[0] = cpu->fault_stack_top;
    cpu->tss.io_map_base = sizeof(struct tss);
    gdt_set_tss(cpu);
    gdt_load(cpu);
    wrmsr(MSR_GS_BASE, (uint64_t)cpu);
    wrmsr(MSR_KERNEL_GS_BASE, 0);
    cpu_gs_moves++;
}
