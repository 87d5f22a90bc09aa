/* ica_init.h: the ICA wing's one set-up call, made by every core of both
 * kernels before its first process runs: it registers what the scheduler
 * tells ICA (scheduler_set_hooks), so the scheduler depends on nothing here. */
#pragma once

void ica_init(void);
