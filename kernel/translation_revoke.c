/* translation_revoke.c: SYS_ICA_REVOKE, the lender's way to end or
 * write-protect the mapping lends of a block it holds (BLK before it writes
 * a block back or FS frees it, docs/mmap.md), and the message each mapper's
 * core gets for it. A process runs on one core only, so a shoot-down is one
 * message per mapping, and the call returns once every core has answered:
 * after it no core reaches the page through a mapping. */
#include "cpu.h"
#include "ica/mapping_lend.h"
#include "intercore.h"
#include <formica/errors.h>
#include <formica/protocol/syscall_table.h>

long sys_ica_revoke(uint64_t block, uint32_t write_only)
{
    if (write_only > 1)
        return -E_INVALID;
    return mapping_lends_revoke(this_cpu()->current, block, write_only == 1);
}

void serve_translations_revoked(const struct intercore_message *message,
                                const struct intercore_translations_revoked_request *request,
                                struct intercore_translations_revoked_reply *reply)
{
    (void)message;
    reply->result = mapping_lend_revoke_here(request->pid, request->block, request->address,
                                             request->write_only == 1);
}
