/* reincarnation.h: init as reincarnation server (MINIX 3's RS): it starts
 * the servers protocol/NAME.messages declares for boot (FS, BLK, DK, the pager),
 * learns at once when one ends (SYS_WAIT_ANY) and starts it again on the same
 * core, where it registers the same name. */
#pragma once
#include <formica/syscalls.h>
#include <stdbool.h>

/* Starts every server, one process per instance, on the cores `placement`
 * gives it (an optional server the placement does not name: none). */
void servers_start(const struct placement_info *placement);
/* Handles the end of child `pid` (exit code `code`): a server is restarted
 * on its core (its restart count goes up, shown by ps); returns false when
 * `pid` is none of the servers. */
bool servers_child_ended(long pid, int code);
/* Restarts the servers that have ended but were not waited for yet (when
 * the shell's end came first, before the sync at power-off). */
void servers_restart_ended(void);
/* How often `server`'s instances were restarted so far, together. */
uint32_t servers_restart_count(enum placement_server server);
