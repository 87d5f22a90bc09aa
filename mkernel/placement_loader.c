/* placement_loader.c: reads and parses the placement file. A bad file is
 * rejected with each error's line number, and Formica falls back to the safe
 * default (everything on core 0) with a warning; it never refuses to boot. */
#include "placement_loader.h"
#include "console.h"
#include "fw_cfg.h"
#include "placement.h"
#include "services.h"
#include "shared.h"
#include <string.h>

#define MAX_REPORTED_ERRORS 8
#define PLACEMENT_FILE_BYTES 4096

static const char *read_placement_text(const char *choice, char *buffer, uint64_t *length)
{
    if (strcmp(choice, "file") == 0) {
        if (!fw_cfg_read_text("opt/formica/placement", buffer, PLACEMENT_FILE_BYTES))
            return NULL;
        *length = strlen(buffer);
        return buffer;
    }
    char path[64];
    strncpy(path, "placements/", sizeof(path));
    strncpy(path + 11, choice, sizeof(path) - 17);
    path[sizeof(path) - 6] = '\0';
    memcpy(path + strlen(path), ".conf", 6);
    return (const char *)services_boot_file(path, length);
}

static void use_default(const char *why, uint32_t warnings)
{
    placement_default(kernel_shared->core_count, &kernel_shared->placement);
    kernel_shared->placement.warnings = warnings;
    kprintf("placement: WARNING: %s; using the safe default (everything on core 0)\n", why);
}

void placement_load(void)
{
    static char buffer[PLACEMENT_FILE_BYTES];
    char choice[NAME_BYTES];
    struct placement_info *placement = &kernel_shared->placement;
    if (!command_line_option("placement", choice, sizeof(choice)) || choice[0] == '\0') {
        placement_default(kernel_shared->core_count, placement);
    } else {
        uint64_t length = 0;
        const char *text = read_placement_text(choice, buffer, &length);
        uint32_t sockets[MAX_CORES];
        for (uint32_t core = 0; core < kernel_shared->core_count; core++)
            sockets[core] = kernel_shared->cpus[core].socket;
        struct placement_error errors[MAX_REPORTED_ERRORS];
        int count = text == NULL ? -1
                                 : placement_parse(text, length, kernel_shared->core_count, sockets,
                                                   placement, errors, MAX_REPORTED_ERRORS);
        if (count < 0) {
            use_default("placement file not found", 1);
        } else if (count > 0) {
            for (int i = 0; i < count && i < MAX_REPORTED_ERRORS; i++)
                kprintf("placement: %s: line %u: %s\n", choice, errors[i].line, errors[i].message);
            use_default("the placement file was rejected", (uint32_t)count);
        } else {
            strncpy(placement->name, choice, NAME_BYTES - 1);
        }
    }
    char summary[160];
    placement_describe(placement, summary, sizeof(summary));
    kprintf("placement: %s: %s\n", placement->name, summary);
}
