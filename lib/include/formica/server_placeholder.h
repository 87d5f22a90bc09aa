/* server_placeholder.h: a server that cannot do its work (DK without a disk,
 * BLK without DK) still takes its name and answers every request with an
 * error, as FS does without a mounted disk: a client learns at once that it
 * will not be served, instead of waiting out server_wait_for's bound. */
#pragma once
#include <stdint.h>

/* Registers `name` and prints "<name>: not serving on core N (pid P):
 * every request gets '<refusal>'", then answers each request with
 * `refusal` (a -E_* code); never returns. If the name cannot be registered (another
 * process holds it), says so and waits for notifications forever. */
__attribute__((noreturn)) void run_server_placeholder(const char *name, long refusal);
/* run_server_placeholder as instance `index` of `name` (a BLK shard). */
__attribute__((noreturn)) void run_server_instance_placeholder(const char *name, uint32_t index,
                                                               long refusal);
