/* file_region_services.h: the m-kernel's file regions (file_region_services.c). */
#pragma once
#include <stdbool.h>
#include "process.h"

/* Allocates the mapping lends' table at boot; false without the memory. */
bool file_region_services_init(void);
/* An ended process's regions: every mapping lend ended, before its address
 * space goes. */
void file_region_services_release(struct process *process);
