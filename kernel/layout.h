/* layout.h: the kernel half of every address space, shared by the m-kernel
 * and the p-kernel: where physical memory is mapped and where each kernel
 * image is linked. Usable from assembly and C. */
#pragma once

#define PAGE_SIZE 4096
#define LARGE_PAGE_SIZE 0x200000

/* All physical memory, mapped one-to-one from here (2 MiB pages). */
#define DIRECT_MAP_BASE 0xffff800000000000
/* The m-kernel image: linked here, loaded at physical 1 MiB. */
#define MKERNEL_VIRTUAL_BASE 0xffffffff80000000
/* The p-kernel image: linked here, placed in frames by the m-kernel. */
#define PKERNEL_VIRTUAL_BASE 0xffffffffc0000000
/* The framebuffer, mapped write-combining (wherever the loader found it),
 * in the GiB below the m-kernel image. */
#define FRAMEBUFFER_VIRTUAL_BASE 0xffffffff40000000
#define FRAMEBUFFER_WINDOW_BYTES (1ull << 30)

/* Where the m-kernel copies the AP start-up trampoline (below 1 MiB). */
#define TRAMPOLINE_PHYSICAL 0x8000

#define KERNEL_STACK_SIZE 16384

/* User space ends here: no process has anything mapped at or above it, and
 * the kernel returns to user mode only below it: a return address at or
 * above it (the last page below the canonical hole, the hole, the kernel
 * half) ends the process instead (kernel/user_return.c), since `sysret`
 * to a non-canonical address faults in ring 0 on Intel CPUs and `iretq` to
 * one faults after the `swapgs`. The unmapped last page keeps a `syscall`
 * at the end of user space from leaving a non-canonical RCX. */
#define USER_SPACE_END 0x00007ffffffff000

#ifndef __ASSEMBLER__
#include <stdint.h>

/* virt_to_phys tells the images apart by these bounds; each image has its
 * own GiB; the SIPI vector is the trampoline's page number below 1 MiB. */
_Static_assert(MKERNEL_VIRTUAL_BASE < PKERNEL_VIRTUAL_BASE, "virt_to_phys relies on the order");
_Static_assert(PKERNEL_VIRTUAL_BASE - MKERNEL_VIRTUAL_BASE == 1ull << 30, "a GiB per image");
_Static_assert(TRAMPOLINE_PHYSICAL % PAGE_SIZE == 0 && TRAMPOLINE_PHYSICAL < 0x100000,
               "the STARTUP IPI names a page below 1 MiB");
_Static_assert(KERNEL_STACK_SIZE % PAGE_SIZE == 0, "kernel stacks are whole pages");
static inline void *phys_to_virt(uint64_t physical)
{
    return (void *)(physical + DIRECT_MAP_BASE);
}
static inline uint64_t virt_to_phys(const void *virtual_address)
{
    uint64_t address = (uint64_t)virtual_address;
    if (address >= MKERNEL_VIRTUAL_BASE && address < PKERNEL_VIRTUAL_BASE)
        return address - MKERNEL_VIRTUAL_BASE;
    return address - DIRECT_MAP_BASE;
}
#endif
