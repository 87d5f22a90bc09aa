/* errors.h: error codes shared by the kernels, the servers and user
 * programs. A system call returns a value >= 0 on success and the negative
 * of one of these codes on failure. */
#pragma once

#define E_OK 0
#define E_INVALID 1      /* an argument is malformed or out of range */
#define E_FAULT 2        /* a pointer does not lie in the caller's mapped user memory */
#define E_NO_MEMORY 3    /* no physical memory (or address space) left */
#define E_NOT_FOUND 4    /* no such process, program, file or option */
#define E_NO_SUCH_CORE 5 /* the core does not exist or is not online */
#define E_BUSY 6         /* a bounded resource is exhausted (process table, ring) */
#define E_TOO_BIG 7      /* a size or length over its limit */
#define E_PERMISSION 8   /* the caller may not do this */
#define E_NOT_CHILD 9    /* wait on a process that is not the caller's child */
#define E_BAD_PROGRAM 10 /* the program file is not a loadable ELF64 executable */
#define E_INTERRUPTED 11 /* the wait ended for another reason (e.g. a kill) */
#define E_NO_SYSTEM_CALL 12
#define E_EXISTS 13        /* the name already exists */
#define E_NOT_DIRECTORY 14 /* a path component or target is not a directory */
#define E_IS_DIRECTORY 15  /* the operation needs a non-directory */
#define E_NOT_EMPTY 16     /* the directory still has entries */
#define E_NO_SPACE 17      /* no free block or inode left on the device */
#define E_CORRUPT 18       /* on-disk data is inconsistent (corrupt file system) */
#define E_NAME_TOO_LONG 19 /* a path component is longer than the file system allows */
#define E_IO 20            /* the device reported an error */
#define E_QUOTA 21         /* the caller's account is at its process or memory limit */
#define E_BAD_HANDLE 22    /* not an open handle of the caller (forged, closed, another's) */
#define E_SERVER_ENDED 23  /* the server ended before answering (it may be restarted: retry) */
#define E_NEEDS_DATA 24    /* answering needs a data ICA, and none came: send one */
#define E_READ_ONLY 25     /* the file system is mounted (or has gone) read-only */
#define E_STALE 26         /* asked as of a view older than a change to what it reads: ask again */
#define E_PAST_END 27      /* a mapped page lies past the end of its file (SIGBUS) */
#define E_ERROR_COUNT 28

/* A short English text for an error code (positive or negative). */
const char *error_text(long code);
