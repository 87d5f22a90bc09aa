/* memory_report.c: the shell's `free` (SYS_MEMORY_REPORT): the machine's
 * memory, total, free and available to the shell, in a readable line (MiB
 * and KiB) and one @json {"kind":"memory","total":B,"free":B,"available":B}
 * line in bytes (docs/userland.md, "Memory"). */
#include "shell.h"
#include <formica/user.h>
#include <stdio.h>

static void print_amount(const char *name, uint64_t bytes)
{
    printf(" %s %lu MiB (%lu KiB)", name, (unsigned long)(bytes >> 20),
           (unsigned long)(bytes >> 10));
}

bool command_free(int word_count, char **words)
{
    (void)word_count, (void)words;
    struct memory_report report;
    long error = memory_report_get(&report);
    if (error != 0) {
        printf("free: %s\n", error_text(error));
        return false;
    }
    printf("memory:");
    print_amount("total", report.total);
    print_amount("free", report.free);
    print_amount("available", report.available);
    printf("\n");
    printf("@json {\"kind\":\"memory\",\"total\":%lu,\"free\":%lu,\"available\":%lu}\n",
           (unsigned long)report.total, (unsigned long)report.free,
           (unsigned long)report.available);
    return true;
}
