/* server_placeholder.h: the behaviour of a server that has no work yet: it
 * announces itself once and then waits for notifications forever. Used by
 * servers/fs, blk, disk and pager until their real request loops land. */
#pragma once

/* Prints "<name>: server placeholder on core N (pid P)", then loops on
 * await_notification(); never returns. */
__attribute__((noreturn)) void run_server_placeholder(const char *name);
