/* pager_syscalls.h: remote paging on the kernel side every core runs: the
 * system calls of formica/pager.h and the page-fault hook that turns a fault
 * in a pager region into a request to the pager server. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "process.h"
#include "trap.h"

long sys_pager_region(const struct trap_frame *frame);
long sys_pager_map(const struct trap_frame *frame);
long sys_pager_unmap(const struct trap_frame *frame);
long sys_pager_scan(const struct trap_frame *frame);
long sys_pager_release(const struct trap_frame *frame);
long sys_firmware_table(const struct trap_frame *frame);

/* True when `address` lies in the running process's pager region; the
 * pager then made the page present (and the access can be retried). False
 * when it is not a pager address or the pager could not serve it (logged). */
bool pager_resolve_fault(uint64_t address, uint64_t error_code);
