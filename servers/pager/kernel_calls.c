/* kernel_calls.c: the pager's system calls (formica/pager.h, syscalls 40-45):
 * map, unmap and scan a block of a waiting client, and copy an ACPI table. */
#include "pager.h"
#include <formica/user.h>
#include <string.h>

long pager_map(uint32_t pid, uint64_t address, uint64_t bytes, uint64_t data_ica)
{
    return syscall6(SYS_PAGER_MAP, pid, (long)address, (long)bytes, (long)data_ica, 0, 0);
}

long pager_unmap(uint32_t pid, uint64_t address, uint64_t bytes, bool keep)
{
    return syscall6(SYS_PAGER_UNMAP, pid, (long)address, (long)bytes, keep ? 1 : 0, 0, 0);
}

long pager_scan(uint32_t pid, uint64_t address, uint64_t bytes, uint32_t flags)
{
    return syscall6(SYS_PAGER_SCAN, pid, (long)address, (long)bytes, flags, 0, 0);
}

long firmware_table(const char signature[4], void *buffer, uint64_t size)
{
    uint32_t packed;
    memcpy(&packed, signature, 4);
    return syscall6(SYS_FIRMWARE_TABLE, packed, (long)buffer, (long)size, 0, 0, 0);
}
