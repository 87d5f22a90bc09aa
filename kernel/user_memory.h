/* user_memory.h: checked access to the calling process's memory. Every
 * pointer a system call receives is verified against the process's page
 * tables (present, user, and writable when written) before it is touched. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True when [address, address+length) is mapped for user access in the
 * page tables at `root` (writable too when `write`). Length 0 is fine. */
bool user_range_ok(uint64_t root, uint64_t address, uint64_t length, bool write);
/* True when the tables at `root` map the page of `address` for user access (writable too
 * when `write`). */
bool user_page_ok(uint64_t root, uint64_t address, bool write);
/* Copy between kernel and the current process; 0 or -E_FAULT. */
long copy_from_user(void *destination, uint64_t source, size_t length);
long copy_to_user(uint64_t destination, const void *source, size_t length);
/* Copies a NUL-terminated string of at most size-1 characters; length or -E_FAULT / -E_TOO_BIG. */
long copy_string_from_user(char *destination, uint64_t source, size_t size);
