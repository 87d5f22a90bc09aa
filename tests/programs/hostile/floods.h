/* floods.h: hostile's floods of shared tables and server rings (issue 29):
 * each mode's arguments are in floods.c. */
#pragma once

/* `hostile icaflood CHILDREN HOLD_MS` and its children `icahold`. */
int hostile_ica_flood(int argc, char **argv);
int hostile_ica_hold(int argc, char **argv);
/* `hostile ringflood CHILDREN MS` and its children `ringchild`. */
int hostile_ring_flood(int argc, char **argv);
int hostile_ring_child(int argc, char **argv);
/* `hostile hog CHILDREN MS`: CHILDREN `spin MS` of its account on its core. */
int hostile_core_hog(int argc, char **argv);
