/* profile_pads.S: PROFILE_MARK_SLOTS one-byte `ret`s. profile_mark_running
 * calls the one at the pid's offset; the profiler's plugin sees a block
 * start there and so learns which process the core runs (docs/profiling.md). */
    .section .text.profile_pads, "ax"
    .global profile_pads
profile_pads:
    .rept 4096
    ret
    .endr
