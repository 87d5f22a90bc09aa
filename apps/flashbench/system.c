/* system.c: flashbench on Formica (the static Linux build has
 * build/linux/flashbench_linux.c instead): files at the disk's root,
 * flmalloc's own far folder, and no bound per process beyond the pager's
 * limit: mapped files are bounded by BLK's cache, which the boot sizes
 * (kernel option blk_cache_kib, build/bench/flash_bench.py). */
#include "flashbench.h"

const char flash_system[] = "formica";
const char flash_file_directory[] = "";

const char *flash_far_directory(void)
{
    return NULL;
}

long flash_local_bound(const struct flash_options *options)
{
    (void)options;
    return 0;
}
