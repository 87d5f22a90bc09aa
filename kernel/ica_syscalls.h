/* ica_syscalls.h: the ICA system calls (numbers 20-29 of formica/syscalls.h)
 * and the pieces of ICA delivery that message handlers need. */
#pragma once
#include "process.h"
#include "trap.h"

/* A synchronous request made by the kernel for the running process with a
 * control ICA that process holds (the pager's fault requests). */
long ica_call_for_current(uint32_t server_pid, uint64_t control_id);
/* Sends a travelling control ICA (with its attachments) back to `target`
 * as a result; when the target is gone the ICAs are discarded. */
void ica_deliver_result(uint32_t target, uint64_t control_id);
