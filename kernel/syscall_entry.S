/* syscall_entry.S: the `syscall` instruction lands here. It switches to the
 * process's kernel stack, builds the same frame an interrupt builds (vector
 * 0x80 marks a system call), tries the ICA fast path for the calls it serves
 * (ica_fast_path_calls), else calls syscall_dispatch(frame), and returns
 * with sysretq, or ends the process when the return address is at or above
 * USER_SPACE_END (user_return.h). */
#include "cpu.h"
#include "layout.h"
#include "register_frame.inc"
#include "trap.h"

.section .text
.globl syscall_entry
syscall_entry:
    swapgs
    movq %rsp, %gs:CPU_USER_STACK_SCRATCH
    movq %gs:CPU_KERNEL_STACK_TOP, %rsp
    pushq $(SEGMENT_USER_DATA | 3)
    pushq %gs:CPU_USER_STACK_SCRATCH
    pushq %r11                       /* user rflags */
    pushq $(SEGMENT_USER_CODE | 3)
    pushq %rcx                       /* user rip */
    pushq $0                         /* error code */
    pushq $0x80                      /* vector: system call */
    PUSH_GENERAL_REGISTERS           /* the flags mask (SFMASK) cleared DF already */
    movq %rsp, %rdi
    incq %gs:CPU_SYSTEM_CALLS
    cmpq $63, %rax
    ja 1f
    btq %rax, ica_fast_path_calls(%rip)
    jnc 1f
    call ica_fast_path               /* returns only when it did not apply, or the */
    movq %rsp, %rdi                  /* caller was woken the ordinary way */
    testb %al, %al
    jz 1f
    call syscall_finish
    jmp syscall_exit
1:
    call syscall_dispatch
/* The way back to user mode with the frame at %rsp: also where the ICA fast
 * path resumes a process parked in a system call (ica_fastpath.c). */
.globl syscall_exit
syscall_exit:
    movq $USER_SPACE_END, %rax
    cmpq %rax, TRAP_FRAME_RIP_OFFSET(%rsp)
    jae user_return_refused_entry    /* sysret to such an address would fault in ring 0 */
    POP_GENERAL_REGISTERS
    addq $16, %rsp                   /* vector, error code */
    popq %rcx                        /* rip */
    addq $8, %rsp                    /* cs */
    popq %r11                        /* rflags */
    popq %rsp                        /* user stack; NMIs use their own (IST) stack */
    swapgs
    sysretq
