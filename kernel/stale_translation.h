/* stale_translation.h: telling a page fault that only a stale TLB entry caused (a page
 * since made writable or mapped) from one the pager or a file region must resolve. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* True when the running process's tables allow the faulting access at the user address
 * `address` (error code `error_code`, from user mode or from the kernel's copy to a checked
 * buffer): the fault came from a stale TLB entry, dropped now, and the access retries. */
bool stale_translation_fault(uint64_t address, uint64_t error_code);
