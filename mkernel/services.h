/* memory_service.h: the m-kernel's answers to memory requests that the
 * p-kernels send over the inter-core area (they own no allocator). */
#pragma once

void memory_service_install(void);
