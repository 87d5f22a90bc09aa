/* file_table.c: the per-process descriptor table of the file library:
 * descriptor number -> inode, offset, size, open flags. Formica processes
 * have one thread, so the table needs no lock. */
#include "file_internal.h"
#include <formica/errors.h>
#include <string.h>

static struct file_descriptor table[FILE_MAX_OPEN];

struct file_descriptor *file_descriptor_get(int fd)
{
    if (fd < 0 || fd >= FILE_MAX_OPEN || !table[fd].used)
        return NULL;
    return &table[fd];
}

int file_descriptor_new(void)
{
    for (int fd = 0; fd < FILE_MAX_OPEN; fd++) {
        if (!table[fd].used) {
            memset(&table[fd], 0, sizeof table[fd]);
            table[fd].used = true;
            return fd;
        }
    }
    return -E_BUSY;
}

void file_descriptor_release(int fd)
{
    if (fd >= 0 && fd < FILE_MAX_OPEN)
        table[fd].used = false;
}

bool file_can_read(const struct file_descriptor *file)
{
    return (file->flags & O_ACCMODE) != O_WRONLY;
}

bool file_can_write(const struct file_descriptor *file)
{
    return (file->flags & O_ACCMODE) != O_RDONLY;
}
