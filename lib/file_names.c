/* file_names.c: requests on names and directories: unlink, mkdir, rmdir,
 * rename, chmod, chown, and reading a directory entry by entry (opendir/readdir) with the
 * FS cursor kept as the descriptor's offset. */
#include "file_internal.h"
#include <formica/user.h>
#include <string.h>

/* One request whose only argument is the path(s) in the payload. */
static long path_request(uint32_t operation, const char *path, const char *second_path)
{
    if (path == NULL)
        return -E_INVALID;
    long error = file_channel_begin(operation, 0);
    if (error == 0)
        error = file_channel_set_paths(path, second_path);
    if (error != 0)
        return error;
    return file_channel_call(false);
}

long unlink(const char *path)
{
    long result = path_request(FS_UNLINK, path, NULL);
    readbyte_forget_all(); /* the inode number may be reused */
    return result < 0 ? result : 0;
}

long mkdir(const char *path)
{
    long result = path_request(FS_MKDIR, path, NULL);
    return result < 0 ? result : 0;
}

long rmdir(const char *path)
{
    long result = path_request(FS_RMDIR, path, NULL);
    return result < 0 ? result : 0;
}

long rename(const char *old_path, const char *new_path)
{
    if (new_path == NULL)
        return -E_INVALID;
    long result = path_request(FS_RENAME, old_path, new_path);
    readbyte_forget_all(); /* a replaced target's inode may be reused */
    return result < 0 ? result : 0;
}

long chmod(const char *path, uint32_t permissions)
{
    long error = path == NULL ? -E_INVALID : file_channel_begin(FS_CHMOD, 0);
    if (error == 0)
        error = file_channel_set_paths(path, NULL);
    if (error != 0)
        return error;
    fs_chmod_of(file_channel_page())->permissions = permissions;
    long result = file_channel_call(false);
    return result < 0 ? result : 0;
}

long chown(const char *path, uint32_t uid, uint32_t gid)
{
    long error = path == NULL ? -E_INVALID : file_channel_begin(FS_CHOWN, 0);
    if (error == 0)
        error = file_channel_set_paths(path, NULL);
    if (error != 0)
        return error;
    struct fs_chown_message *message = fs_chown_of(file_channel_page());
    message->uid = uid;
    message->gid = gid;
    long result = file_channel_call(false);
    return result < 0 ? result : 0;
}

int opendir(const char *path)
{
    return open(path, O_RDONLY | O_DIRECTORY);
}

long readdir(int fd, struct directory_entry *entry)
{
    struct file_descriptor *file = file_descriptor_get(fd);
    if (file == NULL || entry == NULL)
        return -E_INVALID;
    if (!file_is_directory(file->mode))
        return -E_NOT_DIRECTORY;
    long error = file_channel_begin(FS_READDIR, 0);
    if (error != 0)
        return error;
    struct ica_control *page = file_channel_page();
    struct fs_readdir_message *message = fs_readdir_of(page);
    *message = (struct fs_readdir_message){.handle = file->handle, .cursor = file->offset};
    long found = file_channel_call(false);
    if (found <= 0)
        return found;
    const struct fs_dirent *dirent = (const struct fs_dirent *)page->payload;
    entry->inode = dirent->inode;
    entry->type = dirent->type;
    memcpy(entry->name, dirent->name, FILE_NAME_MAX);
    entry->name[FILE_NAME_MAX] = '\0';
    file->offset = message->cursor;
    return 1;
}
