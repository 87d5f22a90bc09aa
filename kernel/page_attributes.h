/* page_attributes.h: the page attribute table (PAT). Entry 1, which a page
 * with PWT set and PCD clear selects, becomes write-combining, the type a
 * framebuffer wants (stores are merged into bursts, never read back); the
 * other seven keep their power-on types. Every core programs the same table. */
#pragma once
#include <stdbool.h>

/* The m-kernel, once: true when CPUID offers the PAT (then every core uses it). */
bool page_attributes_offered(void);
/* Each core, before it touches a write-combining page: programs its PAT when
 * kernel_shared->write_combining says the kernels use it. */
void page_attributes_program(void);
