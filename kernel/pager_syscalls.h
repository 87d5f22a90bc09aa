/* pager_syscalls.h: remote paging on the kernel side every core runs: the
 * page-fault hook that turns a fault in a pager region into a request to the
 * pager server (the pager's system calls are declared in the generated
 * formica/protocol/syscall_table.h). */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "process.h"
#include "trap.h"

/* True when `address` lies in the running process's pager region; the
 * pager then made the page present (and the access can be retried). False
 * when it is not a pager address or the pager could not serve it (logged). */
bool pager_resolve_fault(uint64_t address, uint64_t error_code);
