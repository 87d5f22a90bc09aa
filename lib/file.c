/* file.c: open, close, read, write, pread, pwrite, lseek, ftruncate, fstat,
 * stat, fsync and sync as FS requests over the process's channel
 * (file_channel.c), naming the open file by the handle FS_OPEN gave.
 * Transfers are split into pieces of the data ICA. */
#include "file_internal.h"
#include "readbyte_buffer.h"
#include <formica/small_copy.h>
#include <formica/user.h>
#include <string.h>

static uint32_t fs_open_flags(int flags)
{
    uint32_t fs_flags = 0;
    if ((flags & O_ACCMODE) != O_WRONLY)
        fs_flags |= FS_OPEN_READ;
    if ((flags & O_ACCMODE) != O_RDONLY)
        fs_flags |= FS_OPEN_WRITE;
    if (flags & O_CREAT)
        fs_flags |= FS_OPEN_CREATE;
    if (flags & O_TRUNC)
        fs_flags |= FS_OPEN_TRUNCATE;
    if (flags & O_DIRECTORY)
        fs_flags |= FS_OPEN_DIRECTORY;
    return fs_flags;
}

/* FS_OPEN of `path`; fills the handle, inode, size and mode of `file`. */
static long open_request(const char *path, int flags, struct file_descriptor *file)
{
    long error = file_channel_begin(FS_OPEN, 0);
    if (error == 0)
        error = file_channel_set_paths(path, NULL);
    if (error != 0)
        return error;
    struct fs_open_message *message = fs_open_of(file_channel_page());
    message->flags = fs_open_flags(flags);
    long handle = file_channel_call(false);
    if (handle < 0)
        return handle;
    file->handle = (uint64_t)handle;
    file->inode = message->inode;
    file->size = message->size;
    file->mode = message->mode;
    return 0;
}

int open(const char *path, int flags)
{
    if (path == NULL || (flags & O_ACCMODE) == O_ACCMODE)
        return -E_INVALID;
    int fd = file_descriptor_new();
    if (fd < 0)
        return fd;
    struct file_descriptor *file = file_descriptor_get(fd);
    file->flags = (uint32_t)flags;
    long error = open_request(path, flags, file);
    if (error != 0) {
        file_descriptor_release(fd);
        return (int)error;
    }
    if (flags & O_TRUNC)
        readbyte_forget_inode(file->inode);
    return fd;
}

/* FS_CLOSE of the descriptor's handle. */
static long close_request(const struct file_descriptor *file)
{
    long error = file_channel_begin(FS_CLOSE, 0);
    if (error != 0)
        return error;
    fs_close_of(file_channel_page())->handle = file->handle;
    error = file_channel_call(false);
    return error < 0 ? error : 0;
}

long close(int fd)
{
    struct file_descriptor *file = file_descriptor_get(fd);
    if (file == NULL)
        return -E_INVALID;
    readbyte_forget_inode(file->inode);
    long error = close_request(file);
    file_descriptor_release(fd);
    return error;
}

/* One FS_READ of at most a data ICA; copies the bytes into `buffer`. */
static long read_piece(const struct file_descriptor *file, uint8_t *buffer, uint64_t length,
                       uint64_t offset)
{
    long error = file_channel_begin(FS_READ, length);
    if (error != 0)
        return error;
    *fs_read_of(file_channel_page()) = (struct fs_read_message){file->handle, offset, length};
    long bytes = file_channel_call(true);
    if (bytes <= 0)
        return bytes;
    if ((uint64_t)bytes > length)
        bytes = (long)length;
    const uint8_t *source = file_channel_result_data(file_channel_page(), (uint64_t)bytes);
    if (source == NULL)
        return -E_INVALID;
    memcpy(buffer, source, (size_t)bytes);
    return bytes;
}

long pread(int fd, void *buffer, size_t length, uint64_t offset)
{
    struct file_descriptor *file = file_descriptor_get(fd);
    if (file == NULL || !file_can_read(file))
        return -E_INVALID;
    if (file_is_directory(file->mode))
        return -E_IS_DIRECTORY;
    size_t done = 0;
    while (done < length) {
        uint64_t piece = length - done;
        if (piece > FILE_CHANNEL_PIECE_BYTES)
            piece = FILE_CHANNEL_PIECE_BYTES;
        long bytes = read_piece(file, (uint8_t *)buffer + done, piece, offset + done);
        if (bytes < 0)
            return done > 0 ? (long)done : bytes;
        done += (size_t)bytes;
        if ((uint64_t)bytes < piece)
            break;
    }
    return (long)done;
}

/* A few bytes go in the control ICA itself: FS has BLK write them in place
 * (FS_WRITE without a data ICA), or answers -E_NEEDS_DATA. */
static inline long write_inline(const struct file_descriptor *file, const uint8_t *data,
                                uint64_t length, uint64_t offset)
{
    if (file_channel_ready()) { /* the usual case, in one step */
        memcpy_small_inline(file_channel_page()->payload, data, (size_t)length);
        return file_channel_request3_ready(FS_WRITE, file->handle, offset, length);
    }
    long error = file_channel_begin(FS_WRITE, 0);
    if (error != 0)
        return error;
    struct ica_control *page = file_channel_page();
    memcpy(page->payload, data, (size_t)length);
    *fs_write_of(page) = (struct fs_write_message){file->handle, offset, length};
    return file_channel_call(false);
}

/* One FS_WRITE of at most a data ICA, the bytes in the data ICA (apart:
 * a small write's bytes usually go inline). */
static long write_with_data(const struct file_descriptor *file, const uint8_t *data,
                            uint64_t length, uint64_t offset)
{
    long error = file_channel_begin(FS_WRITE, length);
    if (error != 0)
        return error;
    memcpy(file_channel_data(), data, (size_t)length);
    *fs_write_of(file_channel_page()) = (struct fs_write_message){file->handle, offset, length};
    return file_channel_call(true);
}

/* One FS_WRITE of at most a data ICA: inline when it is small enough and FS
 * can write it in place, else with the data ICA. */
static inline long write_piece(const struct file_descriptor *file, const uint8_t *data,
                               uint64_t length, uint64_t offset)
{
    if (length <= FS_INLINE_WRITE_BYTES) {
        long bytes = write_inline(file, data, length, offset);
        if (bytes != -E_NEEDS_DATA)
            return bytes;
    }
    return write_with_data(file, data, length, offset);
}

/* What `bytes` written at `offset` change in the process: readbyte's
 * buffer and the file's size. */
static inline void note_written(struct file_descriptor *file, uint64_t offset, const void *data,
                                size_t bytes)
{
    readbyte_note_write(file->inode, offset, data, bytes);
    if (offset + bytes > file->size)
        file->size = offset + bytes;
}

/* file_write_at in pieces of a data ICA (apart: a small write is one
 * piece). Stops at the first short or failed piece. */
static long write_in_pieces(struct file_descriptor *file, const void *data, size_t length,
                            uint64_t offset)
{
    size_t done = 0;
    while (done < length) {
        uint64_t piece = length - done;
        if (piece > FILE_CHANNEL_PIECE_BYTES)
            piece = FILE_CHANNEL_PIECE_BYTES;
        long bytes = write_piece(file, (const uint8_t *)data + done, piece, offset + done);
        if (bytes < 0)
            return done > 0 ? (long)done : bytes;
        note_written(file, offset + done, (const uint8_t *)data + done, (size_t)bytes);
        done += (size_t)bytes;
        if ((uint64_t)bytes < piece)
            break;
    }
    return (long)done;
}

/* A small write (one piece that may go inline: the usual pwrite and
 * writebyte) without the loop of pieces: what its one turn does. */
long file_write_at(struct file_descriptor *file, const void *data, size_t length, uint64_t offset)
{
    if (length == 0 || length > FS_INLINE_WRITE_BYTES)
        return write_in_pieces(file, data, length, offset);
    long bytes = write_piece(file, data, length, offset);
    if (bytes < 0)
        return bytes;
    note_written(file, offset, data, (size_t)bytes);
    return bytes;
}

long pwrite(int fd, const void *buffer, size_t length, uint64_t offset)
{
    struct file_descriptor *file = file_descriptor_get(fd);
    if (file == NULL || !file_can_write(file))
        return -E_INVALID;
    return file_write_at(file, buffer, length, offset);
}

long read(int fd, void *buffer, size_t length)
{
    struct file_descriptor *file = file_descriptor_get(fd);
    if (file == NULL)
        return -E_INVALID;
    long bytes = pread(fd, buffer, length, file->offset);
    if (bytes > 0)
        file->offset += (uint64_t)bytes;
    return bytes;
}

long write(int fd, const void *buffer, size_t length)
{
    struct file_descriptor *file = file_descriptor_get(fd);
    if (file == NULL || !file_can_write(file))
        return -E_INVALID;
    if (file->flags & O_APPEND) {
        struct file_status status;
        long error = fstat(fd, &status);
        if (error != 0)
            return error;
        file->offset = status.size;
    }
    long bytes = file_write_at(file, buffer, length, file->offset);
    if (bytes > 0)
        file->offset += (uint64_t)bytes;
    return bytes;
}

long lseek(int fd, int64_t offset, int whence)
{
    struct file_descriptor *file = file_descriptor_get(fd);
    if (file == NULL)
        return -E_INVALID;
    int64_t base = 0;
    if (whence == SEEK_CUR)
        base = (int64_t)file->offset;
    else if (whence == SEEK_END) {
        struct file_status status;
        long error = fstat(fd, &status);
        if (error != 0)
            return error;
        base = (int64_t)status.size;
    } else if (whence != SEEK_SET)
        return -E_INVALID;
    if (base + offset < 0)
        return -E_INVALID;
    file->offset = (uint64_t)(base + offset);
    return (long)file->offset;
}

long ftruncate(int fd, uint64_t size)
{
    struct file_descriptor *file = file_descriptor_get(fd);
    if (file == NULL || !file_can_write(file))
        return -E_INVALID;
    long error = file_channel_begin(FS_TRUNCATE, 0);
    if (error != 0)
        return error;
    *fs_truncate_of(file_channel_page()) = (struct fs_truncate_message){file->handle, size};
    error = file_channel_call(false);
    readbyte_forget_inode(file->inode);
    if (error >= 0)
        file->size = size;
    return error < 0 ? error : 0;
}

/* FS_STAT by path (or by handle when path is NULL). */
static long stat_request(const char *path, uint64_t handle, struct file_status *status)
{
    long error = file_channel_begin(FS_STAT, 0);
    if (error == 0 && path != NULL)
        error = file_channel_set_paths(path, NULL);
    if (error != 0)
        return error;
    struct ica_control *page = file_channel_page();
    struct fs_stat_message *message = fs_stat_of(page);
    if (path == NULL) {
        page->payload[0] = '\0';
        message->handle = handle;
    }
    error = file_channel_call(false);
    if (error < 0)
        return error;
    status->size = message->size;
    status->mode = message->mode;
    status->links = message->links;
    status->blocks = message->blocks;
    status->inode = (uint32_t)message->inode;
    status->uid = message->uid;
    status->gid = message->gid;
    return 0;
}

long fstat(int fd, struct file_status *status)
{
    struct file_descriptor *file = file_descriptor_get(fd);
    if (file == NULL || status == NULL)
        return -E_INVALID;
    long error = stat_request(NULL, file->handle, status);
    if (error == 0)
        file->size = status->size;
    return error;
}

long stat(const char *path, struct file_status *status)
{
    if (path == NULL || status == NULL)
        return -E_INVALID;
    return stat_request(path, 0, status);
}

long sync(void)
{
    long error = file_channel_begin(FS_SYNC, 0);
    if (error != 0)
        return error;
    error = file_channel_call(false);
    return error < 0 ? error : 0;
}

long fsync(int fd)
{
    struct file_descriptor *file = file_descriptor_get(fd);
    if (file == NULL)
        return -E_INVALID;
    readbyte_forget_inode(file->inode);
    long error = file_channel_begin(FS_FSYNC, 0);
    if (error != 0)
        return error;
    fs_fsync_of(file_channel_page())->handle = file->handle;
    error = file_channel_call(false);
    return error < 0 ? error : 0;
}
