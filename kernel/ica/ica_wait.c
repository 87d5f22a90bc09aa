/* ica_wait.c: the wait protocol's parts out of line (ica_wait.h): a core's
 * poll word taking a wake from another core, and the close of an ending
 * process's rendezvous words. Pure but for the wait turn and a log line. */
#include "ica_wait.h"
#include "atomic.h"
#include "console.h"

bool ica_core_hand_wake(struct cpu *cpu, uint32_t pid)
{
    uint32_t expected = 0;
    if (!atomic_load_acquire(&cpu->polling) ||
        !atomic_compare_swap(&cpu->poll_woken, &expected, pid))
        return false;
    /* the exchange is locked, a full barrier: a poll still on now takes
     * the wake after it, at a turn or at its end (ica_poll_serve_woken after
     * ica_core_poll_end) */
    if (atomic_load_acquire(&cpu->polling))
        return true;
    expected = pid;
    return !atomic_compare_swap(&cpu->poll_woken, &expected, 0); /* taken meanwhile: done */
}

/* polled_request closed once no sender claims it (logged when a claim was
 * waited out: what became of that sender's request). */
static void close_request_word(struct process *process)
{
    bool waited = false;
    for (;;) {
        uint64_t word = atomic_load_acquire(&process->polled_request);
        if (word == ICA_REQUEST_POLL_CLAIMED) {
            waited = true;
            ica_claim_wait_turn();
        } else if (atomic_compare_swap(&process->polled_request, &word, ICA_REQUEST_POLL_CLOSED)) {
            if (waited)
                kprintf("ica: pid %u ending waited out a paste from another core (%s)\n",
                        process->pid,
                        word != 0 && word < ICA_REQUEST_POLL_CLOSED
                            ? "pasted: the m-kernel answers it"
                            : "given back: the request went to the ring");
            return;
        }
    }
}

/* polled_result left 0 once no sender claims it. */
static void close_result_word(struct process *process)
{
    for (;;) {
        uint64_t word = atomic_load_acquire(&process->polled_result);
        if (word != ICA_RESULT_POLL_CLAIMED &&
            atomic_compare_swap(&process->polled_result, &word, 0))
            return;
        ica_claim_wait_turn();
    }
}

void ica_wait_close(struct process *process)
{
    close_request_word(process);
    close_result_word(process);
}
