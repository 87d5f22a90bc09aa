/* name_requests.c: FS_OPEN (which gives the requester a handle), FS_MKDIR,
 * FS_UNLINK, FS_RMDIR, FS_RENAME and FS_READDIR (by handle): paths from the
 * control ICA's payload, checked to end inside it, go to the ext2 library's
 * namespace operations. */
#include "fs_server.h"
#include <formica/errors.h>
#include <formica/storage.h>
#include <string.h>

/* The payload's path, with the library acting for the request's sender. */
static const char *sender_path(struct fs_server *server, uint64_t control)
{
    const struct ica_control *page = ica_control_of(control);
    fs_act_for_sender(server, page);
    return fs_payload_path(page);
}

static uint16_t permission_bits(uint64_t requested, uint16_t fallback)
{
    return requested == 0 ? fallback : (uint16_t)(requested & 07777);
}

/* What an open with these flags needs of the file's mode (EXT2_MAY_*). */
static uint32_t access_wanted(uint32_t flags)
{
    uint32_t want = flags & FS_OPEN_WRITE ? EXT2_MAY_WRITE : 0;
    if ((flags & FS_OPEN_READ) || !(flags & FS_OPEN_WRITE))
        want |= EXT2_MAY_READ; /* neither: read only */
    return want;
}

/* Opens the file `inode` according to the flags; *stat set. A file this
 * request just created is opened whatever its new mode says (POSIX). */
static long open_existing(struct fs_server *server, uint32_t flags, uint32_t inode,
                          struct ext2_stat *stat, bool created)
{
    int error = ext2_stat(&server->fs, inode, stat);
    if (error != 0)
        return error;
    bool directory = (stat->mode & EXT2_S_IFMT) == EXT2_S_IFDIR;
    if ((flags & FS_OPEN_DIRECTORY) && !directory)
        return -E_NOT_DIRECTORY;
    if ((flags & FS_OPEN_WRITE) && directory)
        return -E_IS_DIRECTORY;
    if (!created && (error = ext2_permit_mode(&server->fs, stat->mode, stat->uid, stat->gid,
                                              access_wanted(flags))) != 0)
        return error;
    if ((flags & FS_OPEN_TRUNCATE) && !directory && stat->size > 0) {
        error = ext2_truncate(&server->fs, inode, 0);
        stat->size = 0;
    }
    return error;
}

long fs_open(struct fs_server *server, uint64_t control, struct fs_open_message *message)
{
    const struct ica_control *page = ica_control_of(control);
    const char *path = fs_payload_path(page);
    if (path == NULL)
        return -E_INVALID;
    fs_act_for_sender(server, page);
    uint32_t flags = message->flags, inode = 0;
    long checked = fs_check_open(server, page, flags);
    if (checked != 0)
        return checked;
    int error = ext2_lookup(&server->fs, path, &inode);
    bool created = false;
    if (error == -E_NOT_FOUND && (flags & FS_OPEN_CREATE) && !(flags & FS_OPEN_DIRECTORY)) {
        error = ext2_create(&server->fs, path,
                            permission_bits(message->permissions, FS_DEFAULT_FILE_MODE), &inode);
        created = error == 0;
    }
    if (error != 0)
        return error;
    struct ext2_stat stat;
    error = (int)open_existing(server, flags, inode, &stat, created);
    uint64_t handle = 0;
    if (error == 0)
        error = (int)fs_handle_new(server, page, inode, flags, stat.mode, &handle);
    if (error != 0)
        return error;
    message->size = stat.size;
    message->mode = stat.mode;
    message->inode = inode;
    return (long)handle;
}

long fs_mkdir(struct fs_server *server, uint64_t control, struct fs_mkdir_message *message)
{
    const char *path = sender_path(server, control);
    if (path == NULL)
        return -E_INVALID;
    uint32_t inode = 0;
    int error =
        ext2_mkdir(&server->fs, path,
                   permission_bits(message->permissions, FS_DEFAULT_DIRECTORY_MODE), &inode);
    return error != 0 ? error : (long)inode;
}

long fs_unlink(struct fs_server *server, uint64_t control, struct fs_unlink_message *message)
{
    (void)message;
    const char *path = sender_path(server, control);
    return path == NULL ? -E_INVALID : ext2_unlink(&server->fs, path);
}

long fs_rmdir(struct fs_server *server, uint64_t control, struct fs_rmdir_message *message)
{
    (void)message;
    const char *path = sender_path(server, control);
    return path == NULL ? -E_INVALID : ext2_rmdir(&server->fs, path);
}

long fs_rename(struct fs_server *server, uint64_t control, struct fs_rename_message *message)
{
    (void)message;
    const struct ica_control *page = ica_control_of(control);
    const char *old_path = fs_payload_path(page);
    if (old_path == NULL)
        return -E_INVALID;
    size_t first = strlen(old_path) + 1;
    const char *new_path = old_path + first;
    if (first >= ICA_PAYLOAD_BYTES ||
        strnlen(new_path, ICA_PAYLOAD_BYTES - first) == ICA_PAYLOAD_BYTES - first)
        return fs_refuse(page, "second path not NUL-terminated in the payload");
    fs_act_for_sender(server, page);
    return ext2_rename(&server->fs, old_path, new_path);
}

static uint32_t entry_type(struct fs_server *server, const struct ext2_dirent *entry)
{
    uint16_t mode = entry->file_type == EXT2_FT_DIR        ? EXT2_S_IFDIR
                    : entry->file_type == EXT2_FT_REG_FILE ? EXT2_S_IFREG
                                                           : 0;
    struct ext2_stat stat;
    if (entry->file_type == EXT2_FT_UNKNOWN && ext2_stat(&server->fs, entry->inode, &stat) == 0)
        mode = stat.mode;
    if ((mode & EXT2_S_IFMT) == EXT2_S_IFDIR)
        return 2;
    return (mode & EXT2_S_IFMT) == EXT2_S_IFREG ? 1 : 0;
}

long fs_readdir(struct fs_server *server, uint64_t control, struct fs_readdir_message *message)
{
    struct ica_control *page = ica_control_of(control);
    long error = 0;
    struct open_file *directory = fs_handle_of(server, page, message->handle, 0, &error);
    if (directory == NULL)
        return error;
    if (!(directory->flags & OPEN_FILE_DIRECTORY)) {
        fs_refuse(page, "readdir of a handle that names no directory");
        return -E_NOT_DIRECTORY;
    }
    if (directory->flags & OPEN_FILE_REMOVED)
        return 0; /* removed while open: no entries (its inode may be reused) */
    uint64_t cursor = message->cursor;
    struct ext2_dirent entry;
    int found = ext2_readdir(&server->fs, directory->inode, &cursor, &entry);
    if (found <= 0)
        return found;
    struct fs_dirent *out = (struct fs_dirent *)page->payload;
    out->inode = entry.inode;
    out->type = entry_type(server, &entry);
    memcpy(out->name, entry.name, sizeof(out->name));
    message->cursor = cursor;
    return 1;
}

long fs_chmod(struct fs_server *server, uint64_t control, struct fs_chmod_message *message)
{
    const char *path = sender_path(server, control);
    uint32_t inode = 0;
    if (path == NULL || message->permissions > 07777)
        return -E_INVALID;
    int error = ext2_lookup(&server->fs, path, &inode);
    return error != 0 ? error
                      : ext2_change_mode(&server->fs, inode, (uint16_t)message->permissions);
}

long fs_chown(struct fs_server *server, uint64_t control, struct fs_chown_message *message)
{
    const char *path = sender_path(server, control);
    uint32_t inode = 0;
    if (path == NULL)
        return -E_INVALID;
    int error = ext2_lookup(&server->fs, path, &inode);
    return error != 0 ? error : ext2_change_owner(&server->fs, inode, message->uid, message->gid);
}
