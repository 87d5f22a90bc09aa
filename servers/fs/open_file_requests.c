/* open_file_requests.c: FS's handles. A handle names one open file of one
 * process (the kernel-stamped origin of the request, never a payload field);
 * FS_CLOSE; the range checks of byte offsets; and POSIX unlink-while-open:
 * a file whose last name goes while handles remain keeps its inode until
 * the last close, which frees it. */
#include "ext2_public_map.h"
#include "block_map_cache.h"
#include "fs_server.h"
#include <formica/errors.h>
#include <formica/refusal_log.h>
#include <formica/log_limit.h>
#include <formica/storage.h>
#include <formica/user.h>
#include <stdio.h>

static bool last_name_gone(void *context, uint32_t inode, bool directory)
{
    struct fs_server *server = context;
    if (directory)
        return open_files_detach_directory(server->open_files, inode) > 0;
    return open_files_mark_inode(server->open_files, inode, OPEN_FILE_UNLINKED) > 0;
}

void fs_open_files_attach(struct fs_server *server, struct open_files *table, bool kept)
{
    if (!kept)
        open_files_init(table);
    server->open_files = table;
    server->fs.last_name_gone = last_name_gone;
    server->fs.last_name_context = server;
}

static long refuse_handle(const struct ica_control *page, uint64_t handle, const char *why)
{
    refusal_log("fs", page->sender_account, "fs: request %u from pid %u refused: handle 0x%lx %s\n",
                page->operation, page->origin, handle, why);
    return -E_BAD_HANDLE;
}

long fs_refuse_access(const struct ica_control *page, uint64_t handle, const struct open_file *file,
                      uint32_t access)
{
    if (file == NULL)
        return refuse_handle(page, handle, "is not an open handle of this process");
    if ((access & OPEN_FILE_READ) && !(file->flags & OPEN_FILE_READ))
        return refuse_handle(page, handle, "is not open for reading");
    return refuse_handle(page, handle, "is not open for writing");
}

/* Logs an open refused for want of room, at most LOG_LIMIT_PER_SECOND
 * lines a second per sender (a flood of opens costs no more than itself). */
static void refuse_open(const struct ica_control *page, long error, uint32_t in_use)
{
    static struct log_limit limit;
    uint64_t held_back = 0;
    if (!log_limit_allow(&limit, page->origin, clock_microseconds(), &held_back))
        return;
    if (held_back > 0)
        printf("fs: %lu more refused opens of pid %u not shown\n", (unsigned long)held_back,
               page->origin);
    const char *why =
        error == -E_QUOTA ? "its account's share of handles is full" : "no room for another handle";
    printf("fs: open from pid %u (account %u) refused: %s (%u in use)\n", page->origin,
           page->sender_account, why, in_use);
}

static uint32_t access_of(uint32_t open_flags)
{
    uint32_t access = 0;
    if (open_flags & FS_OPEN_READ)
        access |= OPEN_FILE_READ;
    if (open_flags & FS_OPEN_WRITE)
        access |= OPEN_FILE_WRITE;
    return access == 0 ? OPEN_FILE_READ : access;
}

long fs_check_open(struct fs_server *server, const struct ica_control *page, uint32_t flags)
{
    if (flags & ~FS_OPEN_KNOWN_FLAGS)
        return fs_refuse(page, "unknown open flags");
    if ((flags & FS_OPEN_TRUNCATE) && !(flags & FS_OPEN_WRITE))
        return fs_refuse(page, "truncate without write access");
    if (open_files_room(server->open_files, page->origin, page->sender_account) == 0)
        return 0;
    fs_close_dead_clients(server);
    long room = open_files_room(server->open_files, page->origin, page->sender_account);
    if (room < 0)
        refuse_open(page, room, server->open_files->in_use);
    return room;
}

long fs_handle_new(struct fs_server *server, const struct ica_control *page, uint32_t inode,
                   uint32_t open_flags, uint32_t mode, uint64_t *handle)
{
    uint32_t flags = access_of(open_flags);
    if ((mode & EXT2_S_IFMT) == EXT2_S_IFDIR)
        flags |= OPEN_FILE_DIRECTORY;
    return open_files_add(server->open_files, page->origin, page->sender_account, inode, flags,
                          handle);
}

long fs_refuse_range(struct fs_server *server, const struct ica_control *page, uint64_t offset,
                     uint64_t length)
{
    if (offset > UINT64_MAX - length)
        return fs_refuse(page, "offset + length overflows");
    if (offset + length > ext2_max_file_bytes(&server->fs)) {
        fs_refuse(page, "range past the largest file size");
        return -E_TOO_BIG;
    }
    return 0;
}

void fs_release_unlinked(void *context, uint32_t inode)
{
    struct fs_server *server = context;
    block_map_cache_clear(); /* its blocks are free now */
    int error = ext2_release_unlinked(&server->fs, inode);
    if (error != 0)
        printf("fs: freeing unlinked inode %u failed: %s\n", inode, error_text(error));
}

long fs_close(struct fs_server *server, uint64_t control, struct fs_close_message *message)
{
    long error = 0;
    struct open_file *file =
        fs_handle_of(server, ica_control_of(control), message->handle, 0, &error);
    if (file == NULL)
        return error;
    uint32_t inode = file->inode;
    if (open_files_close(server->open_files, file))
        fs_release_unlinked(server, inode);
    return 0;
}
