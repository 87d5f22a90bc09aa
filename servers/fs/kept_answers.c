/* kept_answers.c: FS's kept answers (kept_answers.h): one entry per client,
 * found by pid, the oldest dropped when all are taken; and the decision for
 * a request sent again after a restart. */
#include "kept_answers.h"
#include <string.h>

void kept_answers_init(struct kept_answers *answers)
{
    memset(answers, 0, sizeof *answers);
}

static struct kept_answer *slot_for(struct kept_answers *answers, uint32_t client)
{
    struct kept_answer *free_entry = NULL, *oldest = &answers->entries[0];
    for (uint32_t i = 0; i < KEPT_ANSWERS_MAX; i++) {
        struct kept_answer *entry = &answers->entries[i];
        if (entry->client == client)
            return entry;
        if (entry->client == 0 && free_entry == NULL)
            free_entry = entry;
        if (entry->client != 0 && entry->age < oldest->age)
            oldest = entry;
    }
    if (free_entry != NULL)
        return free_entry;
    answers->dropped++;
    return oldest;
}

void kept_answers_store(struct kept_answers *answers, const struct kept_answer *answer)
{
    struct kept_answer *entry = slot_for(answers, answer->client);
    *entry = *answer;
    entry->age = ++answers->stored;
}

const struct kept_answer *kept_answers_find(const struct kept_answers *answers, uint32_t client)
{
    for (uint32_t i = 0; i < KEPT_ANSWERS_MAX; i++)
        if (client != 0 && answers->entries[i].client == client)
            return &answers->entries[i];
    return NULL;
}

static bool contains(const uint32_t *sorted, uint32_t count, uint32_t pid)
{
    uint32_t low = 0, high = count;
    while (low < high) {
        uint32_t middle = low + (high - low) / 2;
        if (sorted[middle] == pid)
            return true;
        if (sorted[middle] < pid)
            low = middle + 1;
        else
            high = middle;
    }
    return false;
}

void kept_answers_forget_dead(struct kept_answers *answers, const uint32_t *alive, uint32_t count)
{
    for (uint32_t i = 0; i < KEPT_ANSWERS_MAX; i++) {
        struct kept_answer *entry = &answers->entries[i];
        if (entry->client != 0 && !contains(alive, count, entry->client))
            entry->client = 0;
    }
}

enum kept_answer_decision kept_answers_decide(const struct kept_answers *answers, uint32_t client,
                                              uint64_t tag, uint32_t operation, bool complete)
{
    const struct kept_answer *entry = kept_answers_find(answers, client);
    if (entry != NULL && entry->tag == tag && entry->operation == operation)
        return KEPT_ANSWER_REPLAY;
    if (!complete)
        return KEPT_ANSWER_UNKNOWN;
    /* The kept state is whole: the request was not done, unless its answer
     * was among those dropped for room. */
    if ((entry == NULL && answers->dropped > 0) || (entry != NULL && entry->tag > tag))
        return KEPT_ANSWER_UNKNOWN;
    return KEPT_ANSWER_EXECUTE;
}
