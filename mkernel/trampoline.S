/* trampoline.S: the first code an AP runs. The m-kernel copies it to
 * TRAMPOLINE_PHYSICAL and fills in the parameters at its end; the AP climbs
 * from real mode to long mode, takes a ticket for a boot stack, and jumps to
 * the p-kernel entry with (kernel_shared, ticket, kernel page-table root). */
#include "../kernel/layout.h"

#define AT(label) ((label) - trampoline_start + TRAMPOLINE_PHYSICAL)

.section .rodata
.align 16
.globl trampoline_start
trampoline_start:
.code16
    cli
    cld
    xorw %ax, %ax
    movw %ax, %ds
    lgdtl AT(trampoline_gdt_pointer)
    movl %cr0, %eax
    orl $1, %eax
    movl %eax, %cr0
    ljmpl $0x08, $AT(trampoline_protected)

.code32
trampoline_protected:
    movw $0x10, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    movl %cr4, %eax
    orl $0x20, %eax                 /* PAE */
    movl %eax, %cr4
    movl AT(trampoline_boot_root), %eax
    movl %eax, %cr3
    movl $0xc0000080, %ecx          /* EFER.LME */
    rdmsr
    orl $0x100, %eax
    wrmsr
    movl %cr0, %eax
    orl $0x80010000, %eax           /* PG, WP */
    movl %eax, %cr0
    ljmpl $0x18, $AT(trampoline_long)

.code64
trampoline_long:
    movw $0x10, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    movl $1, %eax
    lock xaddl %eax, AT(trampoline_ticket)
    movl %eax, %esi                  /* ticket */
    leaq 1(%rax), %rcx
    imulq AT(trampoline_stack_bytes), %rcx
    addq AT(trampoline_stacks), %rcx
    movq %rcx, %rsp
    movq AT(trampoline_shared), %rdi
    movq AT(trampoline_kernel_root), %rdx
    movq AT(trampoline_entry), %rax
    jmp *%rax

.align 16
trampoline_gdt:
    .quad 0
    .quad 0x00cf9a000000ffff        /* 0x08: 32-bit code */
    .quad 0x00cf92000000ffff        /* 0x10: data */
    .quad 0x00209a0000000000        /* 0x18: 64-bit code */
trampoline_gdt_pointer:
    .word trampoline_gdt_pointer - trampoline_gdt - 1
    .long AT(trampoline_gdt)

.align 8
.globl trampoline_parameters
trampoline_parameters:
trampoline_boot_root:   .long 0     /* page-table root with low memory identity-mapped */
trampoline_ticket:      .long 0     /* incremented by each AP that arrives */
trampoline_kernel_root: .quad 0
trampoline_entry:       .quad 0
trampoline_shared:      .quad 0
trampoline_stacks:      .quad 0
trampoline_stack_bytes: .quad 0
.globl trampoline_end
trampoline_end:
