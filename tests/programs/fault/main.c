/* tests/programs/fault KIND: misbehaves on purpose so tests can check that the kernel
 * ends a faulting process (null, privileged, divide) and refuses bad system
 * call arguments (badpointer, kernelpointer, hugememory) and an ordinary
 * program's try to crash a server or to make itself an administrator
 * (crash NAME, administrator). `exit N` exits N. */
#include <formica/device.h>
#include <formica/rights.h>
#include <formica/request.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNMAPPED_USER_ADDRESS 0x7ff000000000ul
#define KERNEL_ADDRESS 0xffffffff80100000ul
#define HUGE_MEMORY_BYTES (1ull << 40)

static int write_through_null(void)
{
    volatile int *pointer;
    /* An empty asm hides the value from the optimizer, which would otherwise
     * replace a store through a constant NULL with a trap instruction. */
    __asm__("" : "=r"(pointer) : "0"(0));
    *pointer = 1;
    return 1; /* reached only if the kernel did not stop us */
}

static int execute_privileged_instruction(void)
{
    __asm__ volatile("hlt");
    return 1;
}

static int divide_by_zero(void)
{
    uint64_t quotient = 1, remainder = 0, divisor = 0;
    __asm__ volatile("divq %2" : "+a"(quotient), "+d"(remainder) : "r"(divisor));
    printf("fault: divide returned %lu\n", quotient);
    return 1;
}

/* Prints the fault result line; exit code 0 when `result` is `expected`. */
static int report(const char *kind, long result, long expected)
{
    printf("@json {\"kind\":\"fault\",\"case\":\"%s\",\"result\":%ld}\n", kind, result);
    if (result == expected)
        return 0;
    printf("fault: %s: expected %ld (%s), got %ld\n", kind, expected, error_text(expected), result);
    return 1;
}

static int usage(void)
{
    printf("usage: fault null|privileged|divide|badpointer|kernelpointer|hugememory|"
           "crash NAME|administrator|exit N\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage();
    const char *kind = argv[1];
    if (strcmp(kind, "null") == 0)
        return write_through_null();
    if (strcmp(kind, "privileged") == 0)
        return execute_privileged_instruction();
    if (strcmp(kind, "divide") == 0)
        return divide_by_zero();
    if (strcmp(kind, "badpointer") == 0)
        return report(kind, console_write((void *)UNMAPPED_USER_ADDRESS, 16), -E_FAULT);
    if (strcmp(kind, "kernelpointer") == 0)
        return report(kind, console_write((void *)KERNEL_ADDRESS, 16), -E_FAULT);
    if (strcmp(kind, "hugememory") == 0)
        return report(kind, memory_grow(HUGE_MEMORY_BYTES), -E_QUOTA); /* the account's limit */
    if (strcmp(kind, "crash") == 0 && argc >= 3)
        return report(kind, crash_process(server_wait_for(argv[2], 30000)), -E_PERMISSION);
    if (strcmp(kind, "administrator") == 0)
        return report(
            kind, spawn_with_rights("hello", NULL, CORE_ANY, PRIORITY_APPLICATION, 0, RIGHT_ADMIN),
            -E_PERMISSION);
    if (strcmp(kind, "exit") == 0 && argc >= 3)
        return atoi(argv[2]);
    return usage();
}
