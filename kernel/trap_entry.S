/* trap_entry.S: the 256 interrupt and exception entry stubs. Each pushes a
 * uniform frame (error code, vector, all general registers), switches GS when
 * coming from user mode, and calls trap_dispatch(frame) in C. trap_return
 * goes back with iretq, to user mode only below USER_SPACE_END
 * (user_return.h). */
#include "layout.h"
#include "register_frame.inc"
#include "trap.h"
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
    testb $3, TRAP_FRAME_CS_OFFSET(%rsp)
    jz 2f                            /* back into the kernel */
    movq $USER_SPACE_END, %rax       /* rax is restored from the frame below */
    cmpq %rax, TRAP_FRAME_RIP_OFFSET(%rsp)
    jae user_return_refused_entry
    POP_GENERAL_REGISTERS
    swapgs
    addq $16, %rsp
    iretq
2:
    POP_GENERAL_REGISTERS
    addq $16, %rsp
    iretq

/* Both return paths come here, still on the kernel's GS, with the frame at
 * %rsp aligned as for trap_dispatch, when the frame would return to user
 * mode at or above USER_SPACE_END: the process ends (user_return.c). */
.globl user_return_refused_entry
user_return_refused_entry:
    movq %rsp, %rdi
    call user_return_refused
    ud2

.section .rodata
.align 8
.globl trap_vector_table
trap_vector_table:
.set vector, 0
.rept 256
    TRAP_ADDRESS %vector
    .set vector, vector + 1
.endr
