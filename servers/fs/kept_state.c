/* kept_state.c: opening FS's kept region (kept_state.h). */
#include "kept_state.h"
#include <formica/errors.h>
#include <formica/protocol/fs.h>
#include <stdio.h>

struct fs_kept_state *fs_kept_state_open(bool *restored)
{
    long error = 0;
    struct fs_kept_state *kept = kept_region_open(SERVER_NAME_FS, FS_KEPT_BYTES, FS_KEPT_MAGIC,
                                                  FS_KEPT_VERSION, restored, &error);
    if (kept == NULL)
        printf("fs: no kept region (%s): a restart would start from the disk alone\n",
               error_text(error));
    else if (*restored)
        printf("fs: restart %lu: kept state found valid\n", kept->header.starts - 1);
    return kept;
}
