/* fpu.h: the FPU, SSE and AVX registers of user processes (the kernels
 * never use them). Each core enables what it has at start-up; a process
 * switch saves and restores them: xsave64/xrstor64 of x87, SSE and AVX when
 * the boot chose XSAVE (cpu_features.h), else fxsave/fxrstor of x87 and SSE.
 * fxsave without REX.W keeps all 16 XMM registers and stores the x87 last-
 * instruction pointer as selector:offset; KVM's instruction emulator, which
 * some hypervisors run kernel code in, refuses the REX.W form. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* The XSAVE area of x87, SSE and AVX (832 bytes in the standard format),
 * rounded up; its first 512 bytes are fxsave's area. */
#define FPU_STATE_BYTES 1024
#define FPU_STATE_ALIGN 64
#define FPU_XSAVE_FEATURES 0x7u /* XCR0: x87, SSE, AVX */

/* True once fpu_enable found XSAVE and AVX (this kernel's cores agree). */
extern bool fpu_uses_xsave;

/* CR0/CR4 for user FPU, SSE and, when the core has them, XSAVE and AVX. */
void fpu_enable(void);

static inline void fpu_save(uint8_t *area)
{
    if (fpu_uses_xsave)
        __asm__ volatile("xsave64 %0"
                         : "=m"(*(uint8_t(*)[FPU_STATE_BYTES])area)
                         : "a"(FPU_XSAVE_FEATURES), "d"(0));
    else
        __asm__ volatile("fxsave %0" : "=m"(*(uint8_t(*)[FPU_STATE_BYTES])area));
}

static inline void fpu_restore(const uint8_t *area)
{
    if (fpu_uses_xsave)
        __asm__ volatile("xrstor64 %0"
                         :
                         : "m"(*(const uint8_t(*)[FPU_STATE_BYTES])area), "a"(FPU_XSAVE_FEATURES),
                           "d"(0));
    else
        __asm__ volatile("fxrstor %0" : : "m"(*(const uint8_t(*)[FPU_STATE_BYTES])area));
}

/* fpu_save into `save_to`, then fpu_restore from `restore_from`: one test and
 * one feature mask for a direct switch between two processes. */
static inline void fpu_switch(uint8_t *save_to, const uint8_t *restore_from)
{
    if (fpu_uses_xsave)
        __asm__ volatile("xsave64 %0\n\txrstor64 %1"
                         : "=m"(*(uint8_t(*)[FPU_STATE_BYTES])save_to)
                         : "m"(*(const uint8_t(*)[FPU_STATE_BYTES])restore_from),
                           "a"(FPU_XSAVE_FEATURES), "d"(0));
    else
        __asm__ volatile("fxsave %0\n\tfxrstor %1"
                         : "=m"(*(uint8_t(*)[FPU_STATE_BYTES])save_to)
                         : "m"(*(const uint8_t(*)[FPU_STATE_BYTES])restore_from));
}
