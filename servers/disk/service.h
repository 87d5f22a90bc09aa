/* service.h: DK's request front-end: serves DK_READ, DK_WRITE and DK_INFO
 * (formica/storage.h) on a driver that is up, as server "dk". */
#pragma once
#include "block_device.h"

/* Registers "dk" and answers requests forever. */
_Noreturn void disk_serve(struct block_device *device);
