/* mkernel_client.h: how kernel code asks the m-kernel for a service (memory,
 * process creation, exit bookkeeping). On the m-kernel's core the service
 * runs directly; on a p-kernel core the request crosses the inter-core area. */
#pragma once
#include "intercore.h"

/* Synchronous: returns when the m-kernel has answered into `reply`. */
void mkernel_request(struct intercore_message *request, struct intercore_message *reply);
/* Asynchronous: no answer. */
void mkernel_notify(struct intercore_message *message);
