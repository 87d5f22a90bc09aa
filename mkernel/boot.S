/* boot.S: the m-kernel's first instructions. Holds the multiboot1 header
 * (with load addresses, so QEMU -kernel takes this ELF64 file) and the
 * multiboot2 header (GRUB, BIOS and UEFI). Entered in 32-bit protected mode,
 * it checks for long mode, maps the low 4 GiB both at 0 and in the kernel
 * half, enables paging and jumps to mkernel_main(magic, info) in C. */
#include "../kernel/layout.h"

#define PHYS(symbol) ((symbol) - MKERNEL_VIRTUAL_BASE)
#define MB1_MAGIC 0x1badb002
#define MB1_FLAGS 0x00010003 /* page-align modules, memory map, load addresses */
#define MB2_MAGIC 0xe85250d6
/* The screen mode asked of GRUB (UEFI GOP or VBE); it takes the nearest it has. */
#define FRAMEBUFFER_WIDTH 1024
#define FRAMEBUFFER_HEIGHT 768
#define FRAMEBUFFER_DEPTH 32

.section .multiboot, "a"
.align 4
multiboot1_header:
    .long MB1_MAGIC
    .long MB1_FLAGS
    .long -(MB1_MAGIC + MB1_FLAGS)
    .long multiboot1_header          /* header_addr */
    .long mkernel_physical_start     /* load_addr */
    .long mkernel_physical_load_end  /* load_end_addr */
    .long mkernel_physical_end       /* bss_end_addr */
    .long boot_entry                 /* entry_addr */

.align 8
multiboot2_header:
    .long MB2_MAGIC
    .long 0
    .long multiboot2_end - multiboot2_header
    .long -(MB2_MAGIC + (multiboot2_end - multiboot2_header))
    .align 8
    .short 6, 0                      /* module alignment */
    .long 8
    .align 8
    .short 5, 1                      /* framebuffer, optional (text mode will do) */
    .long 20
    .long FRAMEBUFFER_WIDTH, FRAMEBUFFER_HEIGHT, FRAMEBUFFER_DEPTH
    .align 8
    .short 0, 0                      /* end */
    .long 8
multiboot2_end:

.section .boot.text, "ax"
.code32
.globl boot_entry
boot_entry:
    cli
    cld
    movl %eax, %edi                  /* loader magic, first C argument */
    movl %ebx, %esi                  /* loader information, second argument */
    movl $PHYS(boot_stack_top), %esp
    movl $0x80000000, %eax
    cpuid
    cmpl $0x80000001, %eax
    jb no_long_mode
    movl $0x80000001, %eax
    cpuid
    testl $(1 << 29), %edx
    jz no_long_mode

    /* Zero .bss (which holds the stack, so nothing may be pushed yet). */
    movl %edi, %ebp
    movl $PHYS(mkernel_bss_start), %edi
    movl $PHYS(mkernel_bss_end), %ecx
    subl %edi, %ecx
    xorl %eax, %eax
    rep stosb
    movl %ebp, %edi

    /* Four page directories map 0..4 GiB with 2 MiB pages. */
    movl $PHYS(boot_directories), %ebx
    xorl %ecx, %ecx
1:  movl %ecx, %eax
    shll $21, %eax
    orl $0x83, %eax                  /* present, writable, large */
    movl %eax, (%ebx, %ecx, 8)
    movl %ecx, %eax
    shrl $11, %eax                   /* bits 32+ of the address: entry / 2048 */
    movl %eax, 4(%ebx, %ecx, 8)
    incl %ecx
    cmpl $2048, %ecx
    jne 1b
    /* Identity table: 4 entries, one per directory. */
    movl $PHYS(boot_identity_table), %edx
    xorl %ecx, %ecx
2:  movl %ecx, %eax
    shll $12, %eax
    addl $PHYS(boot_directories) + 3, %eax
    movl %eax, (%edx, %ecx, 8)
    incl %ecx
    cmpl $4, %ecx
    jne 2b
    /* Kernel-half table: -2 GiB and -1 GiB map physical 0 and 1 GiB. */
    movl $PHYS(boot_high_table), %edx
    movl $PHYS(boot_directories) + 3, %eax
    movl %eax, 510 * 8(%edx)
    addl $4096, %eax
    movl %eax, 511 * 8(%edx)
    /* Root: 0 → identity, 256 → direct map (same identity table), 511 → kernel. */
    movl $PHYS(boot_root_table), %edx
    movl $PHYS(boot_identity_table) + 3, %eax
    movl %eax, (%edx)
    movl %eax, 256 * 8(%edx)
    movl $PHYS(boot_high_table) + 3, %eax
    movl %eax, 511 * 8(%edx)

    movl %cr4, %eax
    orl $0x20, %eax                  /* PAE */
    movl %eax, %cr4
    movl %edx, %cr3
    movl $0xc0000080, %ecx
    rdmsr
    orl $0x100, %eax                 /* EFER.LME */
    wrmsr
    movl %cr0, %eax
    orl $0x80010000, %eax            /* PG, WP */
    movl %eax, %cr0
    lgdt boot_gdt_pointer
    ljmp $0x08, $boot_long_mode

no_long_mode:
    movl $no_long_mode_text, %esi
    movw $0x3f8, %dx
3:  lodsb
    testb %al, %al
    jz 4f
    outb %al, %dx
    jmp 3b
4:  movw $0xf4, %dx
    movl $0x11, %eax                 /* failure: QEMU exits 35 */
    outl %eax, %dx
5:  hlt
    jmp 5b

.code64
boot_long_mode:
    movw $0x10, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    xorw %ax, %ax
    movw %ax, %fs
    movw %ax, %gs
    movabsq $boot_stack_top, %rsp
    xorq %rbp, %rbp
    movabsq $mkernel_main, %rax
    call *%rax
6:  hlt
    jmp 6b

.section .boot.data, "a"
.align 8
boot_gdt:
    .quad 0
    .quad 0x00209a0000000000         /* 0x08: 64-bit code */
    .quad 0x0000920000000000         /* 0x10: data */
boot_gdt_pointer:
    .word boot_gdt_pointer - boot_gdt - 1
    .long boot_gdt
no_long_mode_text:
    .asciz "Formica needs an x86-64 (long mode) processor.\r\n"

.section .bss
.align 4096
.globl boot_identity_table
boot_root_table:      .skip 4096
boot_identity_table:  .skip 4096
boot_high_table:      .skip 4096
boot_directories:     .skip 4096 * 4
.align 16
boot_stack:           .skip KERNEL_STACK_SIZE
.globl boot_stack_top
boot_stack_top:
