/* backend_internal.h: what the backends share with backend.c: each claims
 * the asynchronous results that belong to it. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* True when `control` was one of the disk backend's stores (now completed). */
bool disk_take_result(uint64_t control);

/* The memory-node backend: stores still in flight, moving them on, the report. */
bool node_backend_busy(void);
void node_backend_progress(void);
void node_backend_send_submitted(void);
bool node_backend_may_sleep(void);
void backend_node_report(void);
