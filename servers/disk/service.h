/* service.h: DK's request front-end: serves DK_READ, DK_WRITE, DK_INFO and DK_FLUSH
 * (formica/storage.h) on a driver that is up, as server "dk". */
#pragma once
#include "disk_drivers.h"

/* Registers "dk" and answers requests forever. */
_Noreturn void disk_serve(struct block_device *device);
