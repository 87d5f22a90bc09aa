/* file_region.h: file regions on the kernel side every core runs (mmap,
 * docs/mmap.md): the page-fault hook that turns a fault in a region into an
 * FS_MAP_FAULT request and installs the blocks BLK lends with its answer
 * (SYS_FILE_REGION and _END are declared in the generated
 * formica/protocol/syscall_table.h). */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* True when `address` lies in one of the running process's file regions
 * and its page is now mapped (the access can be retried). False when it is
 * no region's, the access is not allowed there, or FS and BLK could not
 * serve it (logged). A page past the end of the file ends the process
 * (FILE_REGION_EXIT_PAST_END) and does not return. */
bool file_region_resolve_fault(uint64_t address, uint64_t error_code);
/* The same for a page a system call checks or copies (user_memory.c):
 * `write` for a copy into it, `present` when it is mapped (read-only); a
 * page past the end of the file is refused (false: the call gets -E_FAULT)
 * rather than ending the process. */
bool file_region_bring_in(uint64_t address, bool write, bool present);
