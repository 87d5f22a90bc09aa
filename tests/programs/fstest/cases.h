/* cases.h: fstest's groups of cases, each reporting through report.h. */
#pragma once
#include "fs_calls.h"

void run_file_cases(struct fs_link *link);
void run_readblock_cases(struct fs_link *link);
/* Readblocks of two blocks at every place in a file that crosses BLK's
 * stripes (stripe_cases.c): raw and through the file library. */
void run_stripe_cases(struct fs_link *link);
void run_error_cases(struct fs_link *link);
void run_small_write_cases(struct fs_link *link);
/* The file library's readbyte buffer against the process's own writes
 * (readbyte_cases.c: through the library, not raw requests). */
void run_readbyte_cases(void);
/* FS's checks of handles, offsets and sizes (handle_cases.c). */
void run_handle_cases(struct fs_link *link);
/* Between processes: unlink while open, another's handle (sharing_cases.c). */
void run_sharing_cases(struct fs_link *link);
/* `fstest child ACTION [HANDLE]`, started by run_sharing_cases; the exit code. */
int run_child_case(struct fs_link *link, int argc, char **argv);
/* On an image FS could not mount: every request must fail. */
void run_unmounted_cases(struct fs_link *link);
