/* build/linux/file_linux.c: the file calls whose Formica signatures differ from libc's
 * (open without a mode, fstat into struct file_status, sync returning a value) and
 * error_text, for every static Linux program built against build/linux/include/formica/file.h
 * (Bonnie, fileio). */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <formica/file.h>

int linux_file_open(const char *path, int flags)
{
    return (open)(path, flags, 0644);
}

long linux_file_fstat(int fd, struct file_status *status)
{
    struct stat linux_status;
    if ((fstat)(fd, &linux_status) != 0)
        return -1;
    status->size = (uint64_t)linux_status.st_size;
    status->inode = (uint32_t)linux_status.st_ino;
    status->mode = linux_status.st_mode;
    return 0;
}

long linux_file_sync(void)
{
    (sync)();
    return 0;
}

const char *error_text(long code)
{
    return code == -1 ? strerror(errno) : "error";
}
