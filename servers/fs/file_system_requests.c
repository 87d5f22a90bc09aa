/* file_system_requests.c: the requests about the whole file system rather
 * than one name or handle's data: FS_SYNC (the journal's commit, after the
 * handles of ended clients are closed) and FS_FSYNC (checked against the
 * requester's handle, then the same commit). */
#include "fs_server.h"
#include <formica/errors.h>

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
