/* syscall_instruction.h: the one way user space enters the kernel: the
 * `syscall` instruction, inline, so a request costs no extra call. The
 * generated typed stubs (formica/protocol/syscalls.h) all use it. */
#pragma once

/* The number in rax, arguments in rdi, rsi, rdx, r10, r8, r9; the `syscall` instruction
 * clobbers rcx and r11, the kernel restores every other register. */
static inline long syscall6(long number, long a, long b, long c, long d, long e, long f)
{
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    long result;
    __asm__ volatile("syscall"
                     : "=a"(result)
                     : "0"(number), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return result;
}

/* syscall6 for calls of at most three (five) arguments: r10, r8 and r9
 * (r9) are left as they are, so the caller may keep values in them across
 * the call (the kernel reads only a call's own arguments). */
static inline long syscall3(long number, long a, long b, long c)
{
    long result;
    __asm__ volatile("syscall"
                     : "=a"(result)
                     : "0"(number), "D"(a), "S"(b), "d"(c)
                     : "rcx", "r11", "memory");
    return result;
}
static inline long syscall5(long number, long a, long b, long c, long d, long e)
{
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    long result;
    __asm__ volatile("syscall"
                     : "=a"(result)
                     : "0"(number), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
                     : "rcx", "r11", "memory");
    return result;
}
