/* ica_syscalls.h: the ICA system calls (numbers 20-29 of formica/syscalls.h)
 * and the pieces of ICA delivery that message handlers need. */
#pragma once
#include "process.h"
#include "trap.h"

long sys_ica_allocate(const struct trap_frame *frame);
long sys_ica_free(const struct trap_frame *frame);
long sys_ica_request(const struct trap_frame *frame);
long sys_ica_forward(const struct trap_frame *frame);
long sys_ica_return(const struct trap_frame *frame);
long sys_ica_receive(const struct trap_frame *frame);
long sys_ica_collect(const struct trap_frame *frame);
long sys_server_register(const struct trap_frame *frame);
long sys_server_lookup(const struct trap_frame *frame);
long sys_ica_stats(const struct trap_frame *frame);
long sys_ica_lend_count(const struct trap_frame *frame);
long sys_ica_return_receive(const struct trap_frame *frame);
long sys_ica_forward_receive(const struct trap_frame *frame);

/* A synchronous request made by the kernel for the running process with a
 * control ICA that process holds (the pager's fault requests). */
long ica_call_for_current(uint32_t server_pid, uint64_t control_id);
/* Registers the inter-core handler for results arriving from other cores. */
void ica_install(void);
/* Sends a travelling control ICA (with its attachments) back to `target`
 * as a result; when the target is gone the ICAs are discarded. */
void ica_deliver_result(uint32_t target, uint64_t control_id);
