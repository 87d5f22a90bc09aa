/* trap.h: interrupts and exceptions common to both kernels: the frame the
 * entry stubs build, the IDT, handler registration for device and IPI
 * vectors, and the fault report. */
#pragma once

/* Where the entry stubs' assembly finds the return address and its code
 * segment in a frame (asserted below). */
#define TRAP_FRAME_RIP_OFFSET (17 * 8)
#define TRAP_FRAME_CS_OFFSET (18 * 8)

#ifndef __ASSEMBLER__
#include <stddef.h>
#include <stdint.h>

struct trap_frame {
    uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
    uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
    uint64_t vector, error_code;
    uint64_t rip, cs, rflags, rsp, ss;
};
_Static_assert(offsetof(struct trap_frame, rip) == TRAP_FRAME_RIP_OFFSET, "syscall_entry.S");
_Static_assert(offsetof(struct trap_frame, cs) == TRAP_FRAME_CS_OFFSET, "trap_entry.S");

#define VECTOR_PAGE_FAULT 14
#define VECTOR_SYSTEM_CALL 0x80 /* the frame of a `syscall` (syscall_entry.S) */
#define VECTOR_TIMER 0xef
#define VECTOR_MESSAGE 0xf0 /* "look at your inter-core inboxes" */
#define VECTOR_SPURIOUS 0xff

typedef void (*trap_handler)(struct trap_frame *frame);

/* Fills this image's IDT (once) and loads it on the calling core. */
void idt_load(void);
/* The handler of each vector (trap_handlers.c), NULL where none is set. */
#define TRAP_VECTORS 256
extern trap_handler trap_handlers[TRAP_VECTORS];
void trap_set_handler(uint8_t vector, trap_handler handler);
/* Prints core, vector, cause, error code and all registers. */
void trap_report(const struct trap_frame *frame);
const char *trap_name(uint64_t vector);
#endif
