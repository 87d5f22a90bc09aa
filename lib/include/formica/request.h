/* request.h: the request library shared by servers and applications: ICAs,
 * server registration, and the request/forward/return/receive/collect steps
 * of seed 003's inter-server communication (formica/ica.h has the format). */
#pragma once
#include <formica/errors.h>
#include <formica/ica.h>
#include <formica/syscall_instruction.h>
#include <formica/syscalls.h>
#include <stdbool.h>
#include <stdint.h>

/* A new ICA of `kind` (ICA_KIND_CONTROL or ICA_KIND_DATA) and `bytes`; its id. */
long ica_allocate(uint32_t kind, uint64_t bytes);
long ica_free(uint64_t id);
/* How many see the ICA `id` lent right now (asked by its holder or by a
 * borrower), or an error. */
long ica_lend_count(uint64_t id);
/* ica_lend_count without the mapping lends (ICA_LENDS_BUT_MAPPINGS): 0
 * when nobody but mappings sees the block, which its holder may revoke. */
long ica_lend_count_but_mappings(uint64_t id);
/* The control page of a control ICA the caller holds: ica_address of a
 * control id, without looking at the kind (every caller has a control id,
 * from ica_allocate or an arrival). */
static inline struct ica_control *ica_control_of(uint64_t id)
{
    return (struct ica_control *)(ICA_CONTROL_BASE + (uint64_t)ica_index(id) * 4096);
}
/* Clears the request fields of a control ICA (its typed message too) and sets
 * its operation; the caller then fills the message (formica/protocol/).
 * Inline: a handful of stores before every request. */
static inline void request_prepare(uint64_t control, uint32_t operation)
{
    struct ica_control *page = ica_control_of(control);
    page->magic = ICA_CONTROL_MAGIC;
    page->operation = operation;
    page->result = 0;
    page->data_count = 0;
    page->lent_count = 0;
    uint64_t *words = (uint64_t *)page->message; /* aligned(8): eight stores, no call */
    for (uint32_t i = 0; i < ICA_MESSAGE_BYTES / sizeof(uint64_t); i++)
        words[i] = 0;
}
/* Attaches a data ICA the caller holds to the control ICA (up to ICA_MAX_ATTACHED). */
long request_attach(uint64_t control, uint64_t data);
/* Lends a data ICA the caller holds, read-only, with the next handover. */
long request_lend(uint64_t control, uint64_t data);

/* The ICA system calls themselves, inline: a request's path makes no call
 * around the `syscall` instruction, and the kernel keeps every register but
 * rcx and r11, so the caller saves nothing across it. */
static inline long ica_request(long server, uint64_t control, uint32_t flags)
{
    return syscall3(SYS_ICA_REQUEST, server, (long)control, flags);
}
static inline long ica_forward(long server, uint64_t control, uint32_t flags)
{
    return syscall3(SYS_ICA_FORWARD, server, (long)control, flags);
}
static inline long ica_return(uint64_t control)
{
    return syscall3(SYS_ICA_RETURN, (long)control, 0, 0);
}
static inline long ica_receive(uint32_t flags)
{
    return syscall3(SYS_ICA_RECEIVE, flags, 0, 0);
}
/* ica_receive that gives -E_NOT_FOUND when nothing came within `milliseconds`. */
static inline long ica_receive_within(uint32_t flags, uint64_t milliseconds)
{
    return syscall3(SYS_ICA_RECEIVE, flags | ICA_TIMEOUT, (long)milliseconds, 0);
}
/* A server's return (forward) of `control` and its next receive (flags and
 * timeout as ica_receive's), in one system call: the next request's id, or
 * an error. -E_NOT_FOUND is ambiguous (the next stage or requester is gone,
 * or the receive timed out): ica_held(control) tells whether `control` went. */
static inline long ica_return_receive(uint64_t control, uint32_t flags, uint64_t timeout_ms)
{
    return syscall3(SYS_ICA_RETURN_RECEIVE, (long)control, flags, (long)timeout_ms);
}
static inline long ica_forward_receive(long server, uint64_t control, uint32_t forward_flags,
                                       uint32_t flags, uint64_t timeout_ms)
{
    return syscall5(SYS_ICA_FORWARD_RECEIVE, server, (long)control, forward_flags, flags,
                    (long)timeout_ms);
}
/* True while the caller holds ICA `id` (it has not sent it on). */
bool ica_held(uint64_t id);
static inline long ica_collect(uint32_t flags)
{
    return syscall3(SYS_ICA_COLLECT, flags, 0, 0);
}
/* Registers the caller under `name` as its only instance (instance 0);
 * several instances: formica/instance.h. */
long server_register(const char *name);
/* The pid of the server `name`; of several instances, the one nearest the
 * caller's core (the same one every time: docs/ica.md, "Server instances"). */
long server_lookup(const char *name);
/* server_lookup, retried for up to `milliseconds` while the server starts. */
long server_wait_for(const char *name, uint64_t milliseconds);
/* How long a client waits for a server init is starting (FS for BLK, BLK
 * for DK, programs for FS and the pager). A server that cannot do its work
 * still registers and refuses at once (server_placeholder.h), so the bound
 * only covers one that is still getting ready: a disk spinning up on a PC,
 * or an NVMe controller's set-up under a hypervisor that emulates the
 * kernel (tens of seconds). */
#define SERVER_START_WAIT_MS 120000
long ica_stats(struct ica_stats *stats);
/* A synchronous request of a prepared control ICA: send, wait; returns the
 * control's result (or the error of sending). */
long request_call(long server, uint64_t control);
/* Logs a request that a server's generated check (NAME_check) refused, as
 * "SERVER: request OP from pid P refused: why"; returns `refused`. */
long request_log_refusal(const char *server, const struct ica_control *page, long refused);
/* Prepares and calls an operation that takes no inputs; its result. */
long request_operation(long server, uint64_t control, uint32_t operation);

/* Surviving a server's restart (request_retry.c, docs/recovery.md). */
/* Attempts after the first. Each one follows an attempt whose server (or
 * the server it passed the request on to) ended before answering, or was
 * gone already: a request that itself kills its server costs 9 restarts,
 * far below init's limit (test_request_that_kills_its_server_is_bounded);
 * an operator's burst of kills (FS killed four times and BLK twice back to
 * back, test_back_to_back_restarts) stays below it. */
#define REQUEST_RETRIES 8
#define SERVER_RESTART_WAIT_MS 30000u /* how long a restart may take under load */
/* True when a synchronous request's outcome (the error of sending, else the
 * control's result) says the server ended before answering. */
static inline bool request_server_ended(long send_error, uint64_t control)
{
    return send_error == -E_NOT_FOUND ||
           (send_error == 0 && ica_control_of(control)->result == -E_SERVER_ENDED);
}
/* One synchronous call of `control` to `server` (< 0: not known): true with
 * *result (the error of sending, else the control's result) when the server
 * answered; false when it ended before answering. */
static inline bool request_call_answered(long server, uint64_t control, long *result)
{
    long error = server < 0 ? -E_NOT_FOUND : ica_request(server, control, ICA_SYNC);
    if (request_server_ended(error, control))
        return false;
    *result = error != 0 ? error : ica_control_of(control)->result;
    return true;
}
/* The server registered as `name` that is not `gone`: waits (at most
 * SERVER_RESTART_WAIT_MS) while init restarts it; -E_SERVER_ENDED if none. */
long server_reconnect(const char *name, long gone);
/* A synchronous request to *server that outlives its restart: prepare()
 * fills the control ICA before every attempt; when the server ended before
 * answering, *server becomes the restarted one and the request is sent
 * again, up to REQUEST_RETRIES times (when *server is still registered and
 * a server behind it ended, it is asked again itself). Only for operations that may be
 * repeated. Returns the result, or the error of sending (-E_SERVER_ENDED
 * when the retries ran out). */
long request_call_retrying(const char *name, long *server, uint64_t control,
                           long (*prepare)(void *context), void *context);
/* request_call_retrying after `attempts` already made by the caller (0 or
 * more; the last one, if any, to a *server that ended before answering,
 * sent with the control's `arrival` cleared, so the page tells whether it
 * came back and from whom): it reconnects first and counts those attempts
 * against REQUEST_RETRIES. */
long request_call_retrying_after(const char *name, long *server, uint64_t control,
                                 long (*prepare)(void *context), void *context, uint32_t attempts);
/* request_call_retrying for instance `index` of `name`
 * (server_lookup_instance, server_reconnect_instance): a BLK shard owns its
 * blocks, so a request to it must reach the same instance after its
 * restart. */
long request_call_retrying_instance(const char *name, uint32_t index, long *server,
                                    uint64_t control, long (*prepare)(void *context),
                                    void *context);
