/* address_space.h: user address spaces, built and torn down only by the
 * m-kernel. Each has its own root table whose kernel half is shared with
 * every other address space; the user half holds the process's pages. */
#pragma once
#include <stdint.h>

/* A new address space with an empty user half: its root, or 0 when out of memory. */
uint64_t address_space_create(void);
/* Maps `pages` fresh zeroed frames from `virtual_address` (user, writable when
 * asked); 0, or -E_NO_MEMORY after undoing what it mapped. */
long address_space_map_new(uint64_t root, uint64_t virtual_address, uint64_t pages, int writable);
/* Frees every user frame and every table of the address space, and the root. */
void address_space_destroy(uint64_t root);
/* Copies bytes into the address space (through the direct map); 0 or -E_FAULT. */
long address_space_write(uint64_t root, uint64_t virtual_address, const void *bytes,
                         uint64_t length);
