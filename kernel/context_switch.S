/* context_switch.S: switching kernel stacks between a core's scheduler and
 * its processes. switch_context(save, next) pushes the callee-saved
 * registers, stores rsp in *save, loads next and pops them back: the C
 * caller sees an ordinary function return when its turn comes again. */

/* Pushes the callee-saved registers and stores the stack pointer in *%rdi. */
.macro SAVE_CALLEE_SAVED_TO_RDI
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
.endm

.section .text
.globl switch_context
switch_context:
    SAVE_CALLEE_SAVED_TO_RDI
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret

/* switch_to_system_call_exit(save, frame): saves as switch_context does,
 * then returns to user mode through syscall_exit with the system-call frame
 * at `frame` (the ICA fast path's target, parked inside a system call). */
.globl switch_to_system_call_exit
switch_to_system_call_exit:
    SAVE_CALLEE_SAVED_TO_RDI
    movq %rsi, %rsp
    jmp syscall_exit

/* First run of a process: its stack holds a switch frame returning here,
 * then a trap frame for user mode. */
.globl process_first_entry
process_first_entry:
    jmp trap_return
