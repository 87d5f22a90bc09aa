/* nvme_options.h: the kernel options of DK's NVMe driver (docs/drivers.md):
 * nvme_irq=intx, nvme_queues=N, nvme_timeout_ms=MS. A bad value is logged
 * and the default used. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define NVME_DEFAULT_TIMEOUT_MS 5000

/* nvme_irq=intx: use the pin even when MSI-X is there. */
bool nvme_option_intx(void);
/* nvme_queues=N: I/O queue pairs to ask for, 1..most (default most). */
unsigned nvme_option_queue_pairs(unsigned most);
/* nvme_timeout_ms=MS: no completion for this long while commands are
 * outstanding resets the controller (default NVME_DEFAULT_TIMEOUT_MS). */
uint32_t nvme_option_timeout_ms(void);
