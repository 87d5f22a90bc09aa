/* trap_entry.S: the 256 interrupt and exception entry stubs. Each pushes a
 * uniform frame (error code, vector, all general registers), switches GS when
 * coming from user mode, and calls trap_dispatch(frame) in C. */
.altmacro
.section .text

.macro TRAP_VECTOR number
    .align 16
trap_vector_\number:
    .if (\number == 8) || ((\number >= 10) && (\number <= 14)) || (\number == 17) || (\number == 21) || (\number == 29) || (\number == 30)
    .else
    pushq $0
    .endif
    pushq $\number
    jmp trap_common
.endm

.macro TRAP_ADDRESS number
    .quad trap_vector_\number
.endm

.set vector, 0
.rept 256
    TRAP_VECTOR %vector
    .set vector, vector + 1
.endr

trap_common:
    testb $3, 24(%rsp)
    jz 1f
    swapgs
1:
    pushq %rax
    pushq %rbx
    pushq %rcx
    pushq %rdx
    pushq %rsi
    pushq %rdi
    pushq %rbp
    pushq %r8
    pushq %r9
    pushq %r10
    pushq %r11
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    cld
    movq %rsp, %rdi
    call trap_dispatch
.globl trap_return
trap_return:
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %r11
    popq %r10
    popq %r9
    popq %r8
    popq %rbp
    popq %rdi
    popq %rsi
    popq %rdx
    popq %rcx
    popq %rbx
    popq %rax
    testb $3, 24(%rsp)
    jz 2f
    swapgs
2:
    addq $16, %rsp
    iretq

.section .rodata
.align 8
.globl trap_vector_table
trap_vector_table:
.set vector, 0
.rept 256
    TRAP_ADDRESS %vector
    .set vector, vector + 1
.endr
