/* resent_requests.c: exactly once across an FS restart. A request that
 * changes names carries its client's request number (tag); its answer is
 * kept with the copy of the transaction taken before the answer
 * (kept_transaction.c). Sent again after a restart (FS_TAG_RESENT), it gets
 * the kept answer, is done if FS knows it was not, else -E_SERVER_ENDED. */
#include "fs_server.h"
#include <formica/errors.h>
#include <formica/refusal_log.h>
#include <formica/request.h>
#include <formica/storage.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

_Static_assert(KEPT_ANSWER_MESSAGE_BYTES == ICA_MESSAGE_BYTES, "a whole message is kept");

/* A request marked sent again: *answered with its kept answer or
 * -E_SERVER_ENDED, else its tag is plain again and it is to be done. */
static long answer_marked_resent(struct fs_server *server, struct ica_control *page, uint64_t tag,
                                 bool *answered)
{
    tag &= ~FS_TAG_RESENT;
    enum kept_answer_decision decision =
        server->kept == NULL ? KEPT_ANSWER_UNKNOWN
                             : kept_answers_decide(&server->kept->fs.answers, page->origin, tag,
                                                   page->operation, server->kept_complete);
    if (decision == KEPT_ANSWER_REPLAY) {
        const struct kept_answer *kept = kept_answers_find(&server->kept->fs.answers, page->origin);
        memcpy(page->message, kept->message, ICA_MESSAGE_BYTES);
        refusal_log("fs", page->sender_account,
                    "fs: request %lu of pid %u sent again: its kept answer given (%ld)\n",
                    (unsigned long)tag, page->origin, (long)kept->result);
        *answered = true;
        return kept->result;
    }
    if (decision == KEPT_ANSWER_UNKNOWN && page->operation != FS_OPEN) {
        refusal_log("fs", page->sender_account,
                    "fs: request %lu of pid %u sent again: whether it was done is not known\n",
                    (unsigned long)tag, page->origin);
        *answered = true;
        return -E_SERVER_ENDED;
    }
    memcpy(page->message, &tag, sizeof tag); /* done now: kept under its plain number */
    return 0;
}

/* The kept copy of the request's changes, with its answer unless it has no
 * tag (0), was answered from the kept answers or went on to BLK. */
static void keep(struct fs_server *server, const struct ica_control *page, long result,
                 bool replayed)
{
    uint64_t tag;
    memcpy(&tag, page->message, sizeof tag); /* as answered */
    if (tag == 0 || replayed || result == FS_FORWARDED) {
        kept_transaction_save(&server->kept->fs, server->journal, NULL);
        return;
    }
    struct kept_answer answer = {.client = page->origin,
                                 .operation = page->operation,
                                 .tag = tag & ~FS_TAG_RESENT,
                                 .result = result};
    memcpy(answer.message, page->message, ICA_MESSAGE_BYTES);
    kept_transaction_save(&server->kept->fs, server->journal, &answer);
}

long fs_answer_tagged(struct fs_server *server, uint64_t control)
{
    struct ica_control *page = ica_control_of(control);
    uint64_t tag;
    memcpy(&tag, page->message, sizeof tag);
    bool replayed = false;
    long result = 0;
    if (tag & FS_TAG_RESENT)
        result = answer_marked_resent(server, page, tag, &replayed);
    if (!replayed)
        result = fs_answer(server, control);
    if (server->kept != NULL)
        keep(server, page, result, replayed);
    return result;
}
