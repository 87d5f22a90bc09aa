/* file_channel.c: a process's channel to FS: one control ICA reused for
 * every request (seed 003's model) and two data ICAs, allocated on first
 * use: one of a single block for the frequent small transfers (a handover
 * moves one page) and one of up to 1 MiB for the rest; plus reading the data
 * a result brings back. */
#include "file_internal.h"
#include <formica/request.h>
#include <formica/storage.h>
#include <formica/user.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define NO_ICA 0

long file_channel_fs_pid = -1;          /* file_internal.h */
uint64_t file_channel_control = NO_ICA; /* file_internal.h */
/* The two data ICAs; `current` is the one the current request uses. */
static struct channel_data {
    uint64_t id;
    uint64_t bytes;
} small, large, *current = &large;
/* Data ICAs a result brought that are not ours: freed at the next begin. */
static uint64_t foreign[ICA_MAX_ATTACHED];
uint32_t file_channel_foreign_count; /* file_internal.h */
static uint8_t *gather_buffer;       /* several lent blocks made contiguous */
/* What the current request's data ICA must hold (set by begin; read only
 * for a request that attaches one). */
static uint64_t data_bytes;
static uint64_t last_tag; /* the number of this process's last tagged request */

static long find_fs(void)
{
    if (file_channel_fs_pid < 0)
        file_channel_fs_pid = server_wait_for(SERVER_NAME_FS, SERVER_START_WAIT_MS);
    return file_channel_fs_pid;
}

static long ensure_control(void)
{
    if (file_channel_control != NO_ICA)
        return 0;
    long id = ica_allocate(ICA_KIND_CONTROL, 4096);
    if (id < 0)
        return id;
    file_channel_control = (uint64_t)id;
    return 0;
}

static uint64_t round_data_bytes(uint64_t bytes)
{
    uint64_t rounded = FILE_CHANNEL_MIN_DATA_BYTES;
    while (rounded < bytes && rounded < ICA_DATA_MAX_BYTES)
        rounded *= 2;
    return rounded;
}

/* A data ICA of at least `bytes` (capped at 1 MiB): the one-block ICA for a
 * block or less, else the large one, reallocated when it is too small. */
static long ensure_data(uint64_t bytes)
{
    current = bytes <= STORAGE_BLOCK_BYTES ? &small : &large;
    if (current->id != NO_ICA && current->bytes >= bytes)
        return 0;
    if (current->id != NO_ICA)
        ica_free(current->id);
    current->id = NO_ICA;
    uint64_t size = current == &small ? STORAGE_BLOCK_BYTES : round_data_bytes(bytes);
    long id = ica_allocate(ICA_KIND_DATA, size);
    if (id < 0)
        return id;
    current->id = (uint64_t)id;
    current->bytes = size;
    return 0;
}

static void release_foreign(void)
{
    for (uint32_t i = 0; i < file_channel_foreign_count; i++)
        ica_free(foreign[i]);
    file_channel_foreign_count = 0;
}

/* The control ICA, and a data ICA of `bytes` if any (apart: allocations
 * are rare, and the common begin then saves no registers). */
static long ensure_icas(uint64_t bytes)
{
    long error = ensure_control();
    if (error == 0 && bytes > 0)
        error = ensure_data(bytes);
    return error;
}

long file_channel_begin(uint32_t operation, uint64_t bytes)
{
    if (file_channel_foreign_count > 0)
        release_foreign();
    data_bytes = bytes;
    if (file_channel_control == NO_ICA || bytes > 0) {
        long error = ensure_icas(bytes);
        if (error != 0)
            return error;
    }
    request_prepare(file_channel_control, operation);
    if (fs_operation_is_tagged(operation)) {
        uint64_t tag = ++last_tag;
        memcpy(file_channel_page()->message, &tag, sizeof tag);
    }
    return 0;
}

uint8_t *file_channel_data(void)
{
    return ica_address(current->id);
}

long file_channel_set_paths(const char *path, const char *second_path)
{
    size_t first = strnlen(path, FILE_PATH_MAX);
    size_t second = second_path ? strnlen(second_path, FILE_PATH_MAX) : 0;
    if (first == 0 || (second_path && second == 0))
        return -E_INVALID;
    if (first >= FILE_PATH_MAX || second >= FILE_PATH_MAX || first + second + 2 > ICA_PAYLOAD_BYTES)
        return -E_NAME_TOO_LONG;
    uint8_t *payload = file_channel_page()->payload;
    memcpy(payload, path, first + 1);
    if (second_path)
        memcpy(payload + first + 1, second_path, second + 1);
    return 0;
}

/* Sorts the data ICAs that came back: ours is kept, others are foreign. */
static void take_returned_data(const struct ica_control *page, bool sent_data)
{
    bool ours_back = false;
    for (uint32_t i = 0; i < page->data_count && i < ICA_MAX_ATTACHED; i++) {
        if (page->data[i] == current->id)
            ours_back = true;
        else
            foreign[file_channel_foreign_count++] = page->data[i];
    }
    if (sent_data && !ours_back)
        current->id = NO_ICA; /* kept by a server: a new one is allocated when needed */
}

/* A request as the caller filled it, to send again to a restarted FS. */
struct resend {
    uint32_t operation;
    bool attach;
    uint32_t attempts;
    uint8_t message[ICA_MESSAGE_BYTES];
};

/* FS operations that may be repeated with the same outcome: reads, writes
 * at a given offset, open (with create, an existing file is opened),
 * truncate to a size, sync. Unlink, mkdir, rmdir and rename may not be
 * repeated blindly (a second attempt would fail for the first one's
 * success): they are tagged, and sent again marked FS_TAG_RESENT, FS
 * answering from its kept answers or -E_SERVER_ENDED. */
static bool repeatable(uint32_t operation)
{
    return operation == FS_OPEN || operation == FS_READ || operation == FS_WRITE ||
           operation == FS_READBLOCK || operation == FS_STAT || operation == FS_TRUNCATE ||
           operation == FS_READDIR || operation == FS_SYNC || operation == FS_FSYNC;
}

/* After an attempt whose FS ended: the control ICA came back from it (or
 * never reached one); its message is restored. An operation that may not be
 * repeated is sent again only if it never reached FS. A data ICA that did
 * not come back is replaced for a read, but a write's bytes are gone. */
static long prepare_again(struct resend *resend)
{
    struct ica_control *page = file_channel_page();
    bool reached_fs = page->arrival == ICA_ARRIVED_AS_RESULT;
    release_foreign();
    if (reached_fs) {
        take_returned_data(page, resend->attach);
        release_foreign(); /* the failed attempt's: only the last result's are kept */
    }
    page->arrival = 0; /* its data ICAs are sorted: not again below */
    if (reached_fs && !repeatable(resend->operation) && !fs_operation_is_tagged(resend->operation))
        return -E_SERVER_ENDED;
    request_prepare(file_channel_control, resend->operation);
    __builtin_memcpy(page->message, resend->message, ICA_MESSAGE_BYTES);
    if (reached_fs && fs_operation_is_tagged(resend->operation)) {
        uint64_t tag;
        memcpy(&tag, resend->message, sizeof tag);
        tag |= FS_TAG_RESENT;
        memcpy(page->message, &tag, sizeof tag);
    }
    if (resend->attach && current->id == NO_ICA) {
        if (resend->operation == FS_WRITE)
            return -E_SERVER_ENDED;
        return ensure_data(data_bytes);
    }
    return 0;
}

/* What every attempt does last: the arrival cleared, the data ICA attached. */
static inline long attach_for_send(const struct resend *resend)
{
    file_channel_page()->arrival = 0; /* the kernel sets it when the ICA comes back */
    return resend->attach ? request_attach(file_channel_control, current->id) : 0;
}

/* Before each attempt (request_call_retrying's `prepare`). */
static long prepare_send(void *context)
{
    struct resend *resend = context;
    if (resend->attempts++ > 0) {
        long error = prepare_again(resend);
        if (error != 0)
            return error;
    }
    return attach_for_send(resend);
}

/* The first attempt, to the FS already known, made here without the
 * retrying call's indirection: true with its outcome; false when FS is not
 * known yet or ended before answering (resend->attempts says which), and
 * the retrying call goes on from there. */
static inline bool sent_once(struct resend *resend, long *result)
{
    if (file_channel_fs_pid < 0)
        return false;
    resend->attempts = 1;
    long error = attach_for_send(resend);
    if (error != 0) {
        *result = error;
        return true;
    }
    return request_call_answered(file_channel_fs_pid, file_channel_control, result);
}

/* The pid of FS's owner, instance 0 (< 0: not looked up yet). */
static long owner_pid = -1;

/* A read an FS replica answered -E_STALE (its view was older than a block
 * it read, which the owner freed meanwhile: docs/storage.md, "FS
 * replicas"): sent again, as it was, to the owner, which never answers so.
 * The data ICAs of the stale answer are sorted already. Apart and cold. */
static __attribute__((noinline, cold)) long ask_the_owner(struct resend *resend)
{
    struct ica_control *page = file_channel_page();
    page->arrival = 0;
    resend->attempts = 1; /* prepare_send restores the message (prepare_again) */
    long result = request_call_retrying_instance(SERVER_NAME_FS, 0, &owner_pid,
                                                 file_channel_control, prepare_send, resend);
    if (page->arrival == ICA_ARRIVED_AS_RESULT)
        take_returned_data(page, resend->attach);
    return result;
}

/* Sends the prepared request to FS and waits; an FS that ends meanwhile is
 * waited for and the request sent again when that is safe (repeatable). */
long file_channel_call(bool attach_data)
{
    find_fs(); /* < 0 while FS is (re)starting: the retry below waits for it */
    struct ica_control *page = file_channel_page();
    struct resend resend; /* every field set here: no zeroing of the message first */
    resend.operation = page->operation;
    resend.attach = attach_data;
    resend.attempts = 0;
    __builtin_memcpy(resend.message, page->message, ICA_MESSAGE_BYTES); /* inline: a few moves */
    long result;
    if (!sent_once(&resend, &result))
        result =
            request_call_retrying_after(SERVER_NAME_FS, &file_channel_fs_pid, file_channel_control,
                                        prepare_send, &resend, resend.attempts);
    if (page->arrival == ICA_ARRIVED_AS_RESULT)
        take_returned_data(page, attach_data);
    if (result == -E_STALE)
        result = ask_the_owner(&resend);
    return result;
}

/* A range message, the rest zero (file_internal.h). */
static void put_range(uint8_t *message, uint64_t handle, uint64_t where, uint64_t count)
{
    __builtin_memset(message, 0, ICA_MESSAGE_BYTES);
    fs_range_put(message, handle, where, count);
}

/* A range request, after a first attempt whose FS ended before
 * answering: the retrying call goes on from it (as file_channel_call's). */
static long request3_after_ended(uint32_t operation, uint64_t handle, uint64_t where,
                                 uint64_t count)
{
    struct resend resend = {.operation = operation, .attach = false, .attempts = 1};
    put_range(resend.message, handle, where, count);
    long result =
        request_call_retrying_after(SERVER_NAME_FS, &file_channel_fs_pid, file_channel_control,
                                    prepare_send, &resend, resend.attempts);
    struct ica_control *page = file_channel_page();
    if (page->arrival == ICA_ARRIVED_AS_RESULT)
        take_returned_data(page, false);
    return result;
}

long file_channel_request3_in_general(uint32_t operation, uint64_t handle, uint64_t where,
                                      uint64_t count)
{
    long error = file_channel_begin(operation, 0);
    if (error != 0)
        return error;
    put_range(file_channel_page()->message, handle, where, count);
    return file_channel_call(false);
}

long file_channel_request3_at_owner(uint32_t operation, uint64_t handle, uint64_t where,
                                    uint64_t count)
{
    struct resend resend = {.operation = operation, .attach = false};
    put_range(resend.message, handle, where, count);
    return ask_the_owner(&resend);
}

long file_channel_request3_outcome(uint32_t operation, uint64_t handle, uint64_t where,
                                   uint64_t count, long sent)
{
    if (request_server_ended(sent, file_channel_control))
        return request3_after_ended(operation, handle, where, count);
    const struct ica_control *page = file_channel_page();
    long result = sent != 0 ? sent : page->result;
    if (page->data_count > 0)
        take_returned_data(page, false); /* with none, it has nothing to sort */
    if (result == -E_STALE)
        return file_channel_request3_at_owner(operation, handle, where, count);
    return result;
}

/* Copies the lent blocks, one STORAGE_BLOCK_BYTES block per lent ICA, into
 * one buffer. */
static const uint8_t *gather_lent(const struct ica_control *page, uint64_t bytes)
{
    if (gather_buffer == NULL && (gather_buffer = malloc(ICA_DATA_MAX_BYTES)) == NULL)
        return NULL;
    for (uint32_t i = 0; i < page->lent_count && i * STORAGE_BLOCK_BYTES < bytes; i++) {
        uint64_t left = bytes - i * STORAGE_BLOCK_BYTES;
        uint64_t part = left < STORAGE_BLOCK_BYTES ? left : STORAGE_BLOCK_BYTES;
        memcpy(gather_buffer + i * STORAGE_BLOCK_BYTES, ica_address(page->lent[i]), part);
    }
    return gather_buffer;
}

/* Several lent blocks, or a returned data ICA (apart, so the common case
 * of one lent block saves no registers). */
static const uint8_t *result_data_otherwise(const struct ica_control *page, uint64_t bytes)
{
    if (page->lent_count > 1 && bytes <= STORAGE_BLOCK_BYTES)
        return ica_address(page->lent[0]);
    if (page->lent_count > 1)
        return gather_lent(page, bytes);
    if (page->data_count > 0)
        return ica_address(page->data[0]);
    return NULL;
}

const uint8_t *file_channel_result_data_otherwise(uint64_t bytes)
{
    return result_data_otherwise(file_channel_page(), bytes);
}
