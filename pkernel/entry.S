/* entry.S: where the trampoline leaves an AP: in long mode, on a boot stack
 * from the m-kernel, with rdi = kernel_shared, rsi = ticket, rdx = the kernel
 * page-table root (the trampoline's own table also maps low memory). */
.section .text
.globl pkernel_entry
pkernel_entry:
    movq %rdx, %cr3
    xorq %rbp, %rbp
    call pkernel_main
1:  cli
    hlt
    jmp 1b

/* run_on_stack(top, function, argument): switches to a new stack for good. */
.globl run_on_stack
run_on_stack:
    movq %rdi, %rsp
    xorq %rbp, %rbp
    movq %rdx, %rdi
    call *%rsi
2:  cli
    hlt
    jmp 2b
