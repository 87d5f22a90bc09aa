/* idt.c: builds the interrupt descriptor table of this kernel image from the
 * stub addresses in trap_entry.S. Double faults and NMIs run on the core's
 * fault stack (IST 1), so a broken kernel stack still gives a report. */
#include "cpu.h"
#include "atomic.h"
#include "trap.h"
#include <stdbool.h>

struct idt_entry {
    uint16_t offset_low;
    uint16_t selector;
    uint8_t ist;
    uint8_t type;
    uint16_t offset_middle;
    uint32_t offset_high;
    uint32_t reserved;
} __attribute__((packed));

extern const uint64_t trap_vector_table[256];
static struct idt_entry idt[256];
static _Atomic uint32_t idt_state; /* 0 empty, 1 being built, 2 ready */

static void idt_build(void)
{
    for (int vector = 0; vector < 256; vector++) {
        uint64_t address = trap_vector_table[vector];
        idt[vector] = (struct idt_entry){
            .offset_low = address & 0xffff,
            .selector = SEGMENT_KERNEL_CODE,
            .ist = (vector == 2 || vector == 8) ? 1 : 0,
            .type = 0x8e, /* present, ring 0, interrupt gate */
            .offset_middle = (address >> 16) & 0xffff,
            .offset_high = address >> 32,
        };
    }
    idt[3].type = 0xee; /* int3 allowed from user mode */
}

void idt_load(void)
{
    uint32_t empty = 0;
    if (atomic_compare_swap(&idt_state, &empty, 1)) {
        idt_build();
        atomic_store_release(&idt_state, 2);
    }
    while (atomic_load_acquire(&idt_state) != 2)
        __asm__ volatile("pause");
    struct {
        uint16_t limit;
        uint64_t base;
    } __attribute__((packed)) pointer = {sizeof(idt) - 1, (uint64_t)idt};
    __asm__ volatile("lidt %0" : : "m"(pointer));
}
