/* memreport: SYS_MEMORY_REPORT from a program, for test_memory_report.py.
 * `memreport grow BYTES` reports, grows its heap by BYTES (every page mapped)
 * and reports again; `memreport fault` passes bad buffers and expects
 * -E_FAULT for each. Each report is one @json {"kind":"memory_seen",...}. */
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool report(const char *when)
{
    struct memory_report seen;
    long error = memory_report_get(&seen);
    if (error != 0) {
        printf("memreport: %s: %s\n", when, error_text(error));
        return false;
    }
    printf("@json {\"kind\":\"memory_seen\",\"when\":\"%s\",\"total\":%lu,\"free\":%lu,"
           "\"available\":%lu}\n",
           when, (unsigned long)seen.total, (unsigned long)seen.free,
           (unsigned long)seen.available);
    return true;
}

static int grow(const char *amount)
{
    uint64_t bytes = strtoul(amount, NULL, 10);
    if (!report("before"))
        return 1;
    char *block = malloc(bytes);
    if (block == NULL) {
        printf("memreport: malloc(%lu) refused\n", (unsigned long)bytes);
        return 1;
    }
    memset(block, 0x5a, bytes);
    return report("after") ? 0 : 1;
}

/* One bad buffer: the call must answer -E_FAULT. */
static bool refused(const char *what, struct memory_report *buffer)
{
    long error = memory_report_get(buffer);
    printf("memreport: %s: %s\n", what, error == 0 ? "accepted" : error_text(error));
    return error == -E_FAULT;
}

static int faults(void)
{
    bool all = refused("null", NULL);
    all &= refused("kernel address", (struct memory_report *)0xffff800000000000ul);
    all &= refused("read-only text", (struct memory_report *)(uintptr_t)&faults);
    all &= refused("unmapped", (struct memory_report *)0x7ff0000000ul);
    printf("@json {\"kind\":\"memory_faults\",\"all_refused\":%s}\n", all ? "true" : "false");
    return all ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "grow") == 0)
        return grow(argv[2]);
    if (argc == 2 && strcmp(argv[1], "fault") == 0)
        return faults();
    printf("usage: memreport grow BYTES | memreport fault\n");
    return 2;
}
