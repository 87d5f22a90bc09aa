/* cases.h: fstest's groups of cases, each reporting through report.h. */
#pragma once
#include "fs_calls.h"

void run_file_cases(struct fs_link *link);
void run_readblock_cases(struct fs_link *link);
void run_error_cases(struct fs_link *link);
void run_small_write_cases(struct fs_link *link);
/* On an image FS could not mount: every request must fail. */
void run_unmounted_cases(struct fs_link *link);
