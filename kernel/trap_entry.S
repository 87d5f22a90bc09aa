/* trap_entry.S: the 256 interrupt and exception entry stubs. Each pushes a
 * uniform frame (error code, vector, all general registers), switches GS when
 * coming from user mode, and calls trap_dispatch(frame) in C. */
#include "register_frame.inc"
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
    PUSH_GENERAL_REGISTERS
    cld
    movq %rsp, %rdi
    call trap_dispatch
.globl trap_return
trap_return:
    POP_GENERAL_REGISTERS
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
