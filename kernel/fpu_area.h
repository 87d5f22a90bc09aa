/* fpu_area.h: the FPU area a new process starts from, in the layout both
 * fxrstor and xrstor read (Intel SDM vol. 1, 10.5.1 and 13.4): the x87
 * control word, MXCSR and a zero XSAVE header, so the first xrstor finds
 * XSTATE_BV = 0 (every component in its initial state) and XCOMP_BV = 0
 * (the standard form). tests/unit/test_fpu_area.c checks it. */
#pragma once
#include "fpu.h"
#include <stdint.h>
#include <string.h>

#define FPU_AREA_CONTROL_WORD 0         /* x87 FCW, 2 bytes */
#define FPU_AREA_MXCSR 24               /* 4 bytes */
#define FPU_AREA_MXCSR_MASK 28          /* written by fxsave/xsave, never read back */
#define FPU_AREA_XSAVE_HEADER 512       /* 64 bytes: XSTATE_BV, XCOMP_BV, reserved */
#define FPU_INITIAL_CONTROL_WORD 0x037f /* as fninit: all exceptions masked */
#define FPU_INITIAL_MXCSR 0x1f80        /* as at reset: all exceptions masked */

static inline void fpu_area_prepare(uint8_t area[FPU_STATE_BYTES])
{
    uint16_t control_word = FPU_INITIAL_CONTROL_WORD;
    uint32_t mxcsr = FPU_INITIAL_MXCSR;
    memset(area, 0, FPU_STATE_BYTES);
    memcpy(area + FPU_AREA_CONTROL_WORD, &control_word, sizeof(control_word));
    memcpy(area + FPU_AREA_MXCSR, &mxcsr, sizeof(mxcsr));
}
