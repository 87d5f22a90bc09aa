/* pager_services.h: the m-kernel's part of remote paging: pager regions,
 * and mapping, unmapping and scanning the blocks of a waiting process for
 * the pager that serves it. */
#pragma once
#include <stdbool.h>
#include "intercore.h"

/* Its inter-core services (serve_*) are declared in formica/protocol/mkernel_services.h. */
