/* pager_report.c: the shell's `pagerstat` command: asks the pager for its
 * live statistics (PAGER_REPORT), which it prints itself: one @json
 * "pagerstat" line per client process and one "pagernode" per memory node. */
#include "shell.h"
#include <formica/pager.h>
#include <formica/request.h>
#include <formica/user.h>
#include <stdio.h>

bool command_pagerstat(int word_count, char **words)
{
    (void)word_count;
    (void)words;
    long pager = server_lookup(SERVER_NAME_PAGER);
    long control = pager < 0 ? pager : ica_allocate(ICA_KIND_CONTROL, 4096);
    if (control < 0) {
        printf("pagerstat: no pager: %s\n", error_text(control));
        return false;
    }
    long clients = request_operation(pager, (uint64_t)control, PAGER_REPORT);
    ica_free((uint64_t)control);
    if (clients < 0) {
        printf("pagerstat: %s\n", error_text(clients));
        return false;
    }
    printf("pagerstat: %ld client(s)\n", clients);
    return true;
}
