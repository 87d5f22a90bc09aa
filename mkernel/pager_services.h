/* pager_services.h: the m-kernel's part of remote paging: pager regions,
 * and mapping, unmapping and scanning the blocks of a waiting process for
 * the pager that serves it. */
#pragma once
#include <stdbool.h>
#include "intercore.h"

/* Serves the pager message types; true when `request` was one of them. */
bool pager_services_handle(const struct intercore_message *request,
                           struct intercore_message *reply);
