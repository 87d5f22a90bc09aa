/* build/linux/include/formica/errors.h: Formica's error codes for the Linux
 * build of Bonnie (values as in lib/include/formica/errors.h; on Linux a
 * failing call returns -1 and error_text shows errno instead). */
#pragma once
#define E_NO_MEMORY 3
#define E_NO_SPACE 17
#define E_CORRUPT 18
#define E_IO 20
const char *error_text(long code);
