/* kernel_calls.c: the pager's system calls (formica/pager.h, syscalls 40-45):
 * map, unmap and scan a block of a waiting client, and copy an ACPI table. */
#include "pager.h"
#include <formica/user.h>
#include <string.h>

/* The kernel touches a client's blocks only while it waits for an ICA and
 * says -E_BUSY otherwise. A client on another core whose fault just reached
 * the pager may not be blocked yet (it is between sending the fault and its
 * wait), so a -E_BUSY is asked again, yielding, for up to this long: that
 * core's vCPU may not run for a while on a loaded host (100 ms was seen to
 * pass under TCG with a dozen QEMUs on two host cores, ending the client). */
#define CLIENT_SETTLE_US 2000000u

/* Whether to ask again: -E_BUSY within the settling time (started at the first). */
static bool settling(long result, uint64_t *deadline)
{
    if (result != -E_BUSY)
        return false;
    uint64_t now = clock_microseconds();
    if (*deadline == 0)
        *deadline = now + CLIENT_SETTLE_US;
    if (now >= *deadline)
        return false;
    yield();
    return true;
}

long pager_map(uint32_t pid, uint64_t address, uint64_t bytes, uint64_t data_ica)
{
    uint64_t deadline = 0;
    long result;
    do
        result = syscall6(SYS_PAGER_MAP, pid, (long)address, (long)bytes, (long)data_ica, 0, 0);
    while (settling(result, &deadline));
    return result;
}

long pager_unmap(uint32_t pid, uint64_t address, uint64_t bytes, bool keep)
{
    uint64_t deadline = 0;
    long result;
    do
        result = syscall6(SYS_PAGER_UNMAP, pid, (long)address, (long)bytes, keep ? 1 : 0, 0, 0);
    while (settling(result, &deadline));
    return result;
}

long pager_scan(uint32_t pid, uint64_t address, uint64_t bytes, uint32_t flags)
{
    uint64_t deadline = 0;
    long result;
    do
        result = syscall6(SYS_PAGER_SCAN, pid, (long)address, (long)bytes, flags, 0, 0);
    while (settling(result, &deadline));
    return result;
}
