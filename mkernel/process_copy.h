/* process_copy.h: copying bytes from one process into another's granted
 * window through the kernel (SYS_COPY_TO): the baseline ICA handover is
 * measured against. */
#pragma once
#include <stdbool.h>
#include "intercore.h"

bool process_copy_handle(const struct intercore_message *request, struct intercore_message *reply);
