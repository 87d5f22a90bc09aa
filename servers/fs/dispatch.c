/* dispatch.c: FS's request checks shared by the handlers (a refusal's log
 * line, the payload's path, the data ICA's size), FS_SYNC and FS_FSYNC, and
 * a forward to BLK that was refused. The handler of each operation is chosen
 * by fs_dispatch, generated from protocol/fs.messages (fs_server.h). */
#include "block_client.h"
#include "fs_server.h"
#include <formica/data_ica.h>
#include <formica/errors.h>
#include <formica/protocol/fs_dispatch.h>
#include <formica/refusal_log.h>
#include <formica/request.h>
#include <formica/storage.h>
#include <stdio.h>
#include <string.h>

long fs_refuse(const struct ica_control *page, const char *why)
{
    refusal_log("fs", page->sender_account, "fs: request %u from pid %u refused: %s\n",
                page->operation, page->sender, why);
    return -E_INVALID;
}

const char *fs_payload_path(const struct ica_control *page)
{
    const char *path = (const char *)page->payload;
    if (strnlen(path, ICA_PAYLOAD_BYTES) == ICA_PAYLOAD_BYTES) {
        fs_refuse(page, "path not NUL-terminated in the payload");
        return NULL;
    }
    return path;
}

bool fs_data_fits(const struct ica_control *page, uint64_t bytes)
{
    if (data_ica_holds(page, 0, bytes))
        return true;
    fs_refuse(page, "no data ICA, or one smaller than the length");
    return false;
}

long fs_sync(struct fs_server *server, uint64_t control, struct fs_sync_message *message)
{
    (void)control, (void)message;
    fs_close_dead_clients(server); /* their unlinked files are freed before the sync */
    return fs_journal_sync(server);
}

long fs_fsync(struct fs_server *server, uint64_t control, struct fs_fsync_message *message)
{
    long error = 0;
    if (fs_handle_of(server, ica_control_of(control), message->handle, 0, &error) == NULL)
        return error;
    return fs_journal_fsync(server);
}

long fs_not_forwarded(struct ica_control *page, uint32_t operation, long error)
{
    refusal_log("fs", page->sender_account, "fs: forward of request %u to blk failed: %s\n",
                operation, error_text(error));
    if (page->operation == BLK_PATCH)
        block_client_forget(blk_patch_of(page)->block);
    page->operation = operation;
    return error;
}
