/* file_table.c: the per-process descriptor table of the file library:
 * descriptor number -> inode, offset, size, open flags. Formica processes
 * have one thread, so the table needs no lock. */
#include "file_internal.h"
#include <formica/errors.h>
#include <string.h>

struct file_descriptor file_descriptors[FILE_MAX_OPEN];

int file_descriptor_new(void)
{
    for (int fd = 0; fd < FILE_MAX_OPEN; fd++) {
        if (!file_descriptors[fd].used) {
            memset(&file_descriptors[fd], 0, sizeof file_descriptors[fd]);
            file_descriptors[fd].used = true;
            return fd;
        }
    }
    return -E_BUSY;
}

void file_descriptor_release(int fd)
{
    if (fd >= 0 && fd < FILE_MAX_OPEN)
        file_descriptors[fd].used = false;
}
