/* process_copy.h: copying bytes from one process into another's granted
 * window through the kernel (SYS_COPY_TO): the baseline ICA handover is
 * measured against. */
#pragma once
#include <stdbool.h>
#include "intercore.h"

/* Its inter-core services (serve_*) are declared in formica/protocol/mkernel_services.h. */
