/* intercore_entries.h: the m-kernel's side of the inter-core area's rings:
 * the pairs with core 0 at boot, any other pair on demand. */
#pragma once

/* After intercore_area_init: connects core 0 with every core and starts
 * answering MESSAGE_INTERCORE_CONNECT. */
void intercore_entries_setup(void);
/* Connects every pair now (the all-pairs self-test, which times messages, not
 * connections). */
void intercore_entries_connect_all(void);
