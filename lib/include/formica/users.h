/* users.h: the user and group ids Formica's own processes run as. A
 * process's uid and gid are stamped by the kernel into each request it sends
 * (ica_control.sender_uid); FS checks owners and modes against them. */
#ifndef FORMICA_USERS_H
#define FORMICA_USERS_H

#define USER_ROOT 0 /* init: passes every ownership check */
#define GROUP_ROOT 0
/* Each server its own system user and group, so its private files (the
 * pager's swap file) are its own. */
#define USER_FS 10
#define USER_BLK 11
#define USER_DK 12
#define USER_PAGER 13
/* The console user: the shell and what it runs unless `run --user` says. */
#define USER_CONSOLE 1000
#define GROUP_USERS 100

#endif
