/* regions.c: an ordinary program's attack on the published regions
 * (formica/published_region.h, docs/authority.md): `hostile regions PREFIX
 * COUNT BYTES [MARK]` starts COUNT children in its own account, each of
 * which registers the server name PREFIXi and maps a published region of
 * BYTES; each prints its result as one @json "hostile_region" line. The
 * kernel must stop the account at its share of the region slots and at its
 * memory limit (each mapping is charged), with -E_QUOTA. With MARK the
 * program then makes the file MARK and keeps its children (and their
 * regions) until it is killed, so other accounts and a restarted FS can be
 * tried meanwhile; without, it ends them and exits. */
#include "hostile.h"
#include <formica/file.h>
#include <formica/published_region.h>
#include <formica/request.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REGION_CHILDREN_MAX 16
#define HOLD_MS 600000 /* a holder sleeps until it is killed */

/* `hostile region NAME BYTES PARENT`: one child; its result is its line. */
int hold_region(const char *name, uint64_t bytes, long parent)
{
    long result = server_register(name);
    if (result == 0)
        result = system_call_published_region(name, bytes);
    bool mapped = result == (long)PUBLISHED_REGION_BASE;
    if (mapped) { /* instance 0 writes it: every page is there */
        volatile uint8_t *region = (volatile uint8_t *)result;
        region[0] = 1;
        region[bytes - 1] = 1;
        result = 0;
    }
    printf("@json {\"kind\":\"hostile_region\",\"name\":\"%s\",\"bytes\":%lu,\"pid\":%ld,"
           "\"result\":%ld}\n",
           name, (unsigned long)bytes, process_id(), result);
    fflush_console();
    notify(parent);
    if (mapped)
        sleep_ms(HOLD_MS);
    return 0;
}

static void make_mark(const char *mark)
{
    int fd = open(mark, O_CREAT | O_RDWR);
    if (fd >= 0)
        close(fd);
}

int take_regions(const char *prefix, uint32_t count, uint64_t bytes, const char *mark)
{
    static long children[REGION_CHILDREN_MAX];
    if (count > REGION_CHILDREN_MAX)
        count = REGION_CHILDREN_MAX;
    uint32_t started = 0;
    for (uint32_t i = 0; i < count; i++) {
        char arguments[96];
        snprintf(arguments, sizeof arguments, "region %s%u %lu %ld", prefix, i,
                 (unsigned long)bytes, process_id());
        long child = spawn("hostile", arguments, CORE_ANY, PRIORITY_APPLICATION);
        if (child < 0)
            break;
        children[started++] = child;
    }
    for (uint32_t told = 0; told < started;) /* each child tells once */
        told += (uint32_t)await_notification();
    if (mark != NULL) {
        make_mark(mark);
        sleep_ms(HOLD_MS);
    }
    for (uint32_t i = 0; i < started; i++) {
        kill_process(children[i]);
        wait_process(children[i], NULL);
    }
    return started == count ? 0 : 1;
}
