/* intercore.h: the inter-core area of seed 003 §2.2.3. An N×N array of
 * rings: entry (i,j) is written only by core i and read only by core j, so
 * the path needs no lock; a core is sent an IPI only while it waits. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "intercore_area.h"
#include "cpu.h"
#include "ring.h"

/* Every message type, its typed request and reply, and struct intercore_message
 * are declared in protocol/intercore.messages (generated header below). The
 * area's table and rings are in intercore_area.h. */
#define INTERCORE_MESSAGE_WORDS 6
#include <formica/protocol/intercore.h>

_Static_assert(sizeof(struct intercore_message) == INTERCORE_MESSAGE_BYTES,
               "one message is one ring slot");

/* Sends to core `to`; while the entry is full, handles incoming messages
 * (so two cores sending to each other cannot deadlock). */
void intercore_send(uint32_t to, struct intercore_message *message);
/* Sends and interrupts core `to` whatever it is doing: for waking a process
 * that waits there (its core may be busy running another process). */
void intercore_send_urgent(uint32_t to, struct intercore_message *message);
/* Sends and interrupts core `to` unless it halts (then the halt's IPI) or
 * polls in its kernel (it finds the message at its next turn): for waking a
 * process that outranks what runs there. */
void intercore_send_preempting(uint32_t to, struct intercore_message *message);
/* Sends and waits for the reply with the same sequence number. */
void intercore_call(uint32_t to, struct intercore_message *message,
                    struct intercore_message *reply);
/* The same, giving up after `timeout_cycles` TSC cycles; false if no reply came. */
bool intercore_call_bounded(uint32_t to, struct intercore_message *message,
                            struct intercore_message *reply, uint64_t timeout_cycles);
/* Answers `request` with `reply` (type and sequence are set here). */
void intercore_reply(const struct intercore_message *request, struct intercore_message *reply);

/* A kernel's services (generated from protocol/intercore.messages into
 * formica/protocol/{mkernel,pkernel}_services.h): `serve` runs a message's
 * handler, answering into `reply`, and is false for a type this kernel does
 * not serve; `is_notification` says which types expect no reply. */
struct intercore_services {
    bool (*serve)(const struct intercore_message *message, struct intercore_message *reply);
    bool (*is_notification)(uint32_t type);
};
/* Installs the services this kernel image answers with (once per image). */
void intercore_install_services(const struct intercore_services *services);
/* Handles every message waiting in this core's inboxes; returns how many.
 * intercore_poll looks at the core's inbox hint first (inline) and drains
 * only when a sender has pushed since the last drain. */
unsigned intercore_drain(void);
static inline unsigned intercore_poll(void)
{
    /* A push made after the drain clears the hint sets it again: nothing is missed. */
    if (!atomic_load_acquire(&this_cpu()->inbox_hint))
        return 0;
    return intercore_drain();
}
/* Halts until an IPI or interrupt arrives, unless a message is already waiting. */
void intercore_wait(void);
/* Installs the IPI vector handler; each core calls it once. */
void intercore_install(void);
