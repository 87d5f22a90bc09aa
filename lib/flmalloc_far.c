/* flmalloc_far.c: libflmalloc's far memory, as seed 000 builds it: a file
 * DIRECTORY/PID.N on the slower tier, created, truncated to the length,
 * mapped MAP_SHARED read-write and unlinked at once, so nothing is left if
 * the program is killed; unmapped and closed when freed. Built with
 * FORMICA_NO_MMAP (user.mk, while lib/mmap.c is not in the tree) it refuses. */
#include "flmalloc_far.h"
#include <formica/file.h>
#include <formica/user.h>
#include <stdio.h>
#include <sys/mman.h>

#define FAR_FOLDER_MODE 01777 /* every user's far files, each removed by its owner */

static uint64_t files_made; /* N of the next PID.N */

/* The folder, made world-writable and sticky by whoever makes it first. */
static long make_folder(const char *directory)
{
    long made = mkdir(directory);
    if (made == 0)
        return chmod(directory, FAR_FOLDER_MODE);
    return made == -E_EXISTS ? 0 : made;
}

static long refuse(const char *what, const char *name, long error)
{
    printf("flmalloc: %s %s: %s\n", what, name, error_text(error));
    return error < 0 ? error : -error;
}

#ifdef FORMICA_NO_MMAP
static void *map_file(int fd, uint64_t length, long *error)
{
    (void)fd, (void)length;
    *error = -E_NO_SYSTEM_CALL;
    return NULL;
}
static void unmap_file(void *base, uint64_t length)
{
    (void)base, (void)length;
}
#else
static void *map_file(int fd, uint64_t length, long *error)
{
    void *base = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base != MAP_FAILED)
        return base;
    *error = mmap_error();
    return NULL;
}
static void unmap_file(void *base, uint64_t length)
{
    long error = munmap(base, length);
    if (error != 0)
        printf("flmalloc: munmap of %lu bytes at %p: %s\n", (unsigned long)length, base,
               error_text(error));
}
#endif

/* A new file `name` of `length` bytes, open read-write; its descriptor or an error. */
static long sized_file(const char *name, uint64_t length)
{
    int fd = open(name, O_RDWR | O_CREAT | O_TRUNC);
    if (fd < 0)
        return refuse("cannot create", name, fd);
    long error = ftruncate(fd, length);
    if (error < 0) {
        close(fd);
        unlink(name);
        return refuse("cannot size", name, error);
    }
    return fd;
}

long flmalloc_far_map(const char *directory, uint64_t length, struct flmalloc_far *far)
{
    long error = make_folder(directory);
    if (error < 0)
        return refuse("cannot make the folder", directory, error);
    char name[FILE_PATH_MAX];
    if (snprintf(name, sizeof name, "%s/%ld.%lu", directory, process_id(),
                 (unsigned long)files_made++) >= (int)sizeof name)
        return refuse("path too long:", directory, -E_NAME_TOO_LONG);
    long fd = sized_file(name, length);
    if (fd < 0)
        return fd;
    void *base = map_file((int)fd, length, &error);
    long unlinked = unlink(name);
    if (base == NULL) {
        close((int)fd);
        return refuse("cannot map", name, error);
    }
    if (unlinked < 0)
        printf("flmalloc: cannot unlink %s: %s\n", name, error_text(unlinked));
    *far = (struct flmalloc_far){.base = base, .length = length, .fd = (int)fd};
    return 0;
}

void flmalloc_far_unmap(struct flmalloc_far *far)
{
    unmap_file(far->base, far->length);
    close(far->fd);
    *far = (struct flmalloc_far){.fd = -1};
}
