/* start.S: the entry point of every user program. The kernel enters here with
 * rdi = argc, rsi = argv, rdx = the start flags (formica/syscalls.h) and a
 * 16-byte aligned stack; _start keeps the flags in process_start_flags, calls
 * main(argc, argv) and hands its result to exit(), which never returns. */
    .text
    .globl _start
    .type _start, @function
_start:
    xorl %ebp, %ebp        /* marks the outermost frame for debuggers */
    movq %rdx, process_start_flags(%rip)
    call main              /* rdi, rsi already hold argc, argv */
    movl %eax, %edi
    call exit
    ud2                    /* exit does not return */
    .size _start, . - _start

    .bss
    .globl process_start_flags
    .type process_start_flags, @object
    .size process_start_flags, 8
    .balign 8
process_start_flags:
    .zero 8

    .section .note.GNU-stack, "", @progbits
