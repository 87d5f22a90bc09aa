/* kept_answers.h: the last answer FS gave each client to a request that
 * changes the file system, kept across an FS restart so that a request sent
 * again (FS_TAG_RESENT) gets the answer its first try got (exactly once).
 * Fixed size, no pointers: it lives in FS's kept region. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define KEPT_ANSWERS_MAX 256         /* clients remembered; the oldest is dropped */
#define KEPT_ANSWER_MESSAGE_BYTES 64 /* = ICA_MESSAGE_BYTES */

struct kept_answer {
    uint32_t client; /* the requester's pid; 0: a free entry */
    uint32_t operation;
    uint64_t tag; /* the client's request number (FS_TAG_RESENT cleared) */
    int64_t result;
    uint64_t age;                               /* when it was stored, in answers stored so far */
    uint8_t message[KEPT_ANSWER_MESSAGE_BYTES]; /* the message as answered */
};

struct kept_answers {
    uint64_t stored;  /* answers stored so far */
    uint32_t dropped; /* entries dropped for room: a client without one may have lost it */
    uint32_t reserved;
    struct kept_answer entries[KEPT_ANSWERS_MAX];
};

void kept_answers_init(struct kept_answers *answers);
/* Keeps `answer` as its client's last one (replacing the client's older one,
 * else a free entry, else the oldest entry, counted in `dropped`). */
void kept_answers_store(struct kept_answers *answers, const struct kept_answer *answer);
/* The client's kept answer, or NULL. */
const struct kept_answer *kept_answers_find(const struct kept_answers *answers, uint32_t client);
/* Forgets the answers of clients not in `alive` (sorted ascending). */
void kept_answers_forget_dead(struct kept_answers *answers, const uint32_t *alive, uint32_t count);

/* What to do with a request sent again after a restart. */
enum kept_answer_decision {
    KEPT_ANSWER_REPLAY,  /* its first try was answered: give that answer again */
    KEPT_ANSWER_EXECUTE, /* its first try changed nothing that was kept: do it */
    KEPT_ANSWER_UNKNOWN, /* cannot know whether its first try happened: -E_SERVER_ENDED */
};
/* For a resent request (client, tag, operation). `complete` says the kept
 * state holds every change FS made before it ended (ext3 with a valid kept
 * transaction); without it a request not found may have been done. */
enum kept_answer_decision kept_answers_decide(const struct kept_answers *answers, uint32_t client,
                                              uint64_t tag, uint32_t operation, bool complete);
