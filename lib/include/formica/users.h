/* users.h: the user and group ids of init and the console user. A
 * process's uid and gid are stamped by the kernel into each request it sends
 * (ica_control.sender_uid); FS checks owners and modes against them. Each
 * server's own (USER_FS, USER_PAGER, ...) is declared by the `user` line of
 * its protocol/NAME.messages, in the generated formica/protocol/servers.h. */
#ifndef FORMICA_USERS_H
#define FORMICA_USERS_H

#define USER_ROOT 0 /* init: passes every ownership check */
#define GROUP_ROOT 0
#include <formica/protocol/servers.h>
/* The console user: the shell and what it runs unless `run --user` says. */
#define USER_CONSOLE 1000
#define GROUP_USERS 100

#endif
