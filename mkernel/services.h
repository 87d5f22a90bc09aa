/* services.h: what the m-kernel does for the other cores (and for its own
 * system calls): memory for p-kernel stacks, process creation, heap growth,
 * exit bookkeeping and power-off. One handler per request type. */
#pragma once
#include <stdint.h>
#include "boot_information.h"
#include "intercore.h"
#include <formica/syscalls.h>

/* Sets up the process table and finds the boot image of programs. */
void services_init(const struct boot_module *initrd);
/* Registers the inter-core handlers for every service. */
void services_install(void);
/* Serves `request` on the m-kernel's core; fills `reply`. */
void services_handle(const struct intercore_message *request, struct intercore_message *reply);
/* Creates a process (used for init at boot); pid or -E_* code. */
long services_spawn(const struct spawn_request *request, uint32_t parent);
/* The boot image file `name`, or NULL (with *size untouched). */
const uint8_t *services_boot_file(const char *name, uint64_t *size);
