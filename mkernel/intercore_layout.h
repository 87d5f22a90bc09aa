/* intercore_layout.h: the m-kernel lays out the inter-core area
 * (kernel/intercore_area.h): its table at boot, the rings of core 0's pairs
 * then, any other pair's when one of its cores first sends. */
#pragma once

/* Allocates the area for the cores present, connects core 0 with every core
 * and prints the 'intercore' @json line. Before any core sends. */
void intercore_layout_setup(void);
/* Connects every pair now (the all-pairs self-test, which times messages, not
 * connections). */
void intercore_layout_connect_all(void);
