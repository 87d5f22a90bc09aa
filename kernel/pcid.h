/* pcid.h: turning PCID on for the calling core (pcid.c); the loads that use it are
 * translation_stamp.h's, their bookkeeping pcid_table.h's. */
#pragma once
#include "cpu.h"

/* Sets CR4.PCIDE on this core when the boot's decision uses PCID, and clears the core's
 * records; cpu->pcid_on says whether it did. Called with the kernel's root in CR3. */
void pcid_enable(struct cpu *cpu);
