/* file_internal.h: what the file modules of lib/ share and programs do not
 * see: the process's FS channel (file_channel.c), its descriptor table
 * (file_table.c: descriptor -> FS handle) and readbyte's coherence hooks
 * (readbyte.c). */
#pragma once
#include <formica/file.h>
#include <formica/ica.h>
#include <formica/request.h>
#include <formica/storage.h>
#include <stdbool.h>

/* The one FS channel of a process: a control ICA reused for every request
 * and one data ICA, both allocated on first use. */
#define FILE_CHANNEL_MIN_DATA_BYTES (64u * 1024)

/* Prepares the control ICA for `operation` with room for `data_bytes` in the
 * data ICA (0: no data); returns 0 or an error. */
long file_channel_begin(uint32_t operation, uint64_t data_bytes);
/* The control ICA's id (0 before the first begin). */
extern uint64_t file_channel_control;
static inline struct ica_control *file_channel_page(void)
{
    return ica_control_of(file_channel_control);
}
/* The data ICA's bytes (valid after a begin that asked for data). */
uint8_t *file_channel_data(void);
/* Largest transfer of one request: the largest data ICA. */
#define FILE_CHANNEL_PIECE_BYTES ICA_DATA_MAX_BYTES
/* Copies `path` (and an optional second one after its NUL) into the payload. */
long file_channel_set_paths(const char *path, const char *second_path);
/* Sends the request to FS and waits; with `attach_data` the data ICA goes
 * along. Returns the result (>= 0) or an error. */
long file_channel_call(bool attach_data);
/* The channel's FS (< 0: not known yet) and the data ICAs a result brought
 * that are not ours (freed at the next begin): file_channel.c's, read here
 * by the inline requests below. */
extern long file_channel_fs_pid;
extern uint32_t file_channel_foreign_count;
/* The requests without a data ICA that the library makes per block or per
 * small write (FS_READBLOCK, a small FS_WRITE) are the ones protocol/fs.messages
 * declares `range`: a message of three words (struct fs_range_message: the
 * handle, where, how much), the rest of the message zero.
 *
 * Such a request, for an operation without a tag: file_channel_begin and
 * file_channel_call in general. Apart from the inline requests below. */
long file_channel_request3_in_general(uint32_t operation, uint64_t handle, uint64_t where,
                                      uint64_t count);
/* True when a request may take the one-step path below: the channel has
 * its control ICA, no foreign data ICAs to free, and its FS is known. */
static inline bool file_channel_ready(void)
{
    return file_channel_control != 0 && file_channel_fs_pid >= 0 && file_channel_foreign_count == 0;
}
/* file_channel_request3_in_general's request on a ready channel, sent in
 * one step (what file_channel_begin and file_channel_call do for it) with
 * the channel's control ICA, `control`: the error of sending. A payload is
 * the caller's, written before. */
static inline long file_channel_send3_ready(uint64_t control, uint32_t operation, uint64_t handle,
                                            uint64_t where, uint64_t count)
{
    request_prepare(control, operation);
    struct ica_control *page = ica_control_of(control);
    fs_range_put(page->message, handle, where, count);
    page->arrival = 0; /* the kernel sets it when the ICA comes back */
    return ica_request(file_channel_fs_pid, control, ICA_SYNC);
}
/* True when FS answered a request sent so (`sent` 0, its result not
 * -E_SERVER_ENDED) and the control ICA (`page`) came back without data
 * ICAs (0 as sent): its outcome is the control's result as it stands. */
static inline bool file_channel_answered_alone(const struct ica_control *page, long sent)
{
    return sent == 0 && page->result != -E_SERVER_ENDED && page->data_count == 0;
}
/* The outcome of a request sent so, in every case: after an FS that ended
 * before answering, the retrying call's; else the error of sending or the
 * result, the data ICAs that came back sorted. */
long file_channel_request3_outcome(uint32_t operation, uint64_t handle, uint64_t where,
                                   uint64_t count, long sent);
/* The request sent to FS's owner (instance 0), after an FS replica
 * answered it -E_STALE (docs/storage.md, "FS replicas"): the result. */
long file_channel_request3_at_owner(uint32_t operation, uint64_t handle, uint64_t where,
                                    uint64_t count);
/* The request on a ready channel: the result or an error. */
static inline long file_channel_request3_ready(uint32_t operation, uint64_t handle, uint64_t where,
                                               uint64_t count)
{
    uint64_t control = file_channel_control;
    long sent = file_channel_send3_ready(control, operation, handle, where, count);
    const struct ica_control *page = ica_control_of(control);
    if (!file_channel_answered_alone(page, sent))
        return file_channel_request3_outcome(operation, handle, where, count, sent);
    return page->result;
}
/* The request on any channel: in one step when it is ready. */
static inline long file_channel_request3(uint32_t operation, uint64_t handle, uint64_t where,
                                         uint64_t count)
{
    if (!file_channel_ready())
        return file_channel_request3_in_general(operation, handle, where, count);
    return file_channel_request3_ready(operation, handle, where, count);
}
/* file_channel_result_data when not exactly one block was lent. */
const uint8_t *file_channel_result_data_otherwise(uint64_t bytes);
/* After a call: where the `bytes` of the result are, contiguous (a lent
 * cached block, the returned data ICA, or a gathered copy of several);
 * `page` is the channel's control page. Inline: one lent block,
 * readblock's usual result, is one load. */
static inline const uint8_t *file_channel_result_data(const struct ica_control *page,
                                                      uint64_t bytes)
{
    if (page->lent_count == 1)
        return ica_address(page->lent[0]);
    return file_channel_result_data_otherwise(bytes);
}

/* The descriptor table. */
struct file_descriptor {
    bool used;
    uint64_t handle; /* FS's name of the open file (FS_OPEN's result) */
    uint32_t inode;  /* the file's identity (readbyte's buffer, fstat) */
    uint32_t flags;  /* O_* of open */
    uint32_t mode;
    uint64_t offset; /* the readdir cursor for directories */
    uint64_t size;   /* from open, fstat and the process's own writes */
};
/* The table itself (file_table.c); the few lookups every call makes are
 * inline. */
extern struct file_descriptor file_descriptors[FILE_MAX_OPEN];
/* The open descriptor `fd`, or NULL. */
static inline struct file_descriptor *file_descriptor_get(int fd)
{
    if (fd < 0 || fd >= FILE_MAX_OPEN || !file_descriptors[fd].used)
        return NULL;
    return &file_descriptors[fd];
}
/* A free descriptor number, marked used, or -E_BUSY. */
int file_descriptor_new(void);
void file_descriptor_release(int fd);
static inline bool file_can_read(const struct file_descriptor *file)
{
    return (file->flags & O_ACCMODE) != O_WRONLY;
}
static inline bool file_can_write(const struct file_descriptor *file)
{
    return (file->flags & O_ACCMODE) != O_RDONLY;
}

/* Writes at `offset` through FS, updating the size and the readbyte buffer. */
long file_write_at(struct file_descriptor *file, const void *data, size_t length, uint64_t offset);

/* readbyte's buffer: the process's own writes update it
 * (readbyte_note_write, readbyte_buffer.h), and these drop it. How many
 * blocks it holds now is readbyte.c's, read by the inline test. */
extern struct readbyte_counts readbyte_tally;
void readbyte_forget_inode(uint32_t inode);
void readbyte_forget_all(void);
