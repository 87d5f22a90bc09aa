/* request_checks.c: the checks of a request's format that several handlers
 * share: a refusal's log line (fs_refuse), the path in the payload, the data
 * ICA's size. Each handler's own refusals stand beside what they refuse;
 * the handler of each operation is chosen by fs_dispatch, generated from
 * protocol/fs.messages (fs_server.h). */
#include "fs_server.h"
#include <formica/data_ica.h>
#include <formica/errors.h>
#include <formica/refusal_log.h>
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
