/* syscall.S: the one system-call stub. Formica's ABI takes the number in rax
 * and arguments in rdi, rsi, rdx, r10, r8, r9; the `syscall` instruction
 * clobbers rcx and r11. long syscall6(number, a, b, c, d, e, f). */
    .text
    .globl syscall6
    .type syscall6, @function
syscall6:
    movq %rdi, %rax        /* number */
    movq %rsi, %rdi        /* a */
    movq %rdx, %rsi        /* b */
    movq %rcx, %rdx        /* c */
    movq %r8, %r10         /* d */
    movq %r9, %r8          /* e */
    movq 8(%rsp), %r9      /* f: the 7th C argument is on the stack */
    syscall
    ret
    .size syscall6, . - syscall6

    .section .note.GNU-stack, "", @progbits
