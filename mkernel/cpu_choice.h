/* cpu_choice.h: the boot's decision of which optional CPU features the
 * kernels use (cpu_features.h), printed once. */
#pragma once

/* Reads CPUID on the boot core, takes away what the command line turns off
 * (noxsave, nox2apic), keeps the outcome in kernel_shared->cpu and prints a
 * `cpu:` line and a `cpu` @json line. Runs before any core enables its FPU
 * state for processes or its local APIC. */
void cpu_choice_make(void);
