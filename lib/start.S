/* start.S: the entry point of every user program. The kernel enters here with
 * rdi = argc, rsi = argv and a 16-byte aligned stack; _start calls
 * main(argc, argv) and hands its result to exit(), which never returns. */
    .text
    .globl _start
    .type _start, @function
_start:
    xorl %ebp, %ebp        /* marks the outermost frame for debuggers */
    call main              /* rdi, rsi already hold argc, argv */
    movl %eax, %edi
    call exit
    ud2                    /* exit does not return */
    .size _start, . - _start

    .section .note.GNU-stack, "", @progbits
