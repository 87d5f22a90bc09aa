/* flashbench: seed 000's workloads written anew for Formica: `flashbench
 * fio|stream|himeno malloc-swap|mmap|flmalloc|dram [-s DATA] [-l LOCAL]
 * [-n ROUNDS] [--io BYTES]`; prints one @json {"kind":"flash","system":
 * "formica" (or "linux": build/linux/build.sh), "workload":W,"method":M,
 * "seconds":T,...} line (docs/files.md, "flashbench"; build/bench/flash_bench.py
 * runs the matrix). */
#include "flashbench.h"
#include <formica/size.h>
#include <formica/user.h>
#include <stdio.h>
#include <string.h>

#define DEFAULT_DATA (16ull << 20)
#define DEFAULT_LOCAL (8ull << 20)

uint64_t flash_now_us(void)
{
    return clock_microseconds();
}

static int usage(void)
{
    printf("usage: flashbench fio|stream|himeno malloc-swap|mmap|flmalloc|dram [-s DATA] "
           "[-l LOCAL] [-n ROUNDS] [--io BYTES]\n");
    return 2;
}

static bool parse_flag(struct flash_options *options, const char *flag, const char *value)
{
    if (strcmp(flag, "-s") == 0)
        return size_parse(value, &options->bytes) && options->bytes > 0;
    if (strcmp(flag, "-l") == 0)
        return size_parse(value, &options->local_bytes) && options->local_bytes > 0;
    if (strcmp(flag, "-n") == 0)
        return size_parse(value, &options->rounds);
    if (strcmp(flag, "--io") == 0)
        return size_parse(value, &options->io_bytes);
    return false;
}

static void print_result(const struct flash_options *options, const struct flash_result *result)
{
    uint64_t us = result->microseconds;
    printf("@json {\"kind\":\"flash\",\"system\":\"%s\",\"workload\":\"%s\",\"method\":\"%s\","
           "\"seconds\":%lu.%06lu,\"bytes\":%lu,\"local_bytes\":%lu,\"rounds\":%lu,"
           "\"verified\":%s",
           flash_system, options->workload, flash_method_name(options->method),
           (unsigned long)(us / 1000000), (unsigned long)(us % 1000000),
           (unsigned long)options->bytes, (unsigned long)options->local_bytes,
           (unsigned long)result->rounds, result->verified ? "true" : "false");
    if (result->work_bytes != 0)
        printf(",\"mb_per_s\":%lu", (unsigned long)(us ? result->work_bytes / us : 0));
    if (result->flops != 0)
        printf(",\"mflops\":%lu,\"grid\":[%u,%u,%u],\"gosa_bits\":%u",
               (unsigned long)(us ? result->flops / us : 0), result->grid[0], result->grid[1],
               result->grid[2], result->gosa_bits);
    printf("}\n");
}

int main(int argc, char **argv)
{
    struct flash_options options = {.bytes = DEFAULT_DATA, .local_bytes = DEFAULT_LOCAL};
    if (argc < 3 || !flash_method_parse(argv[2], &options.method))
        return usage();
    options.workload = argv[1];
    for (int i = 3; i < argc; i += 2)
        if (i + 1 >= argc || !parse_flag(&options, argv[i], argv[i + 1]))
            return usage();
    struct flash_result result = {0};
    long error;
    if (strcmp(options.workload, "fio") == 0)
        error = flash_fio(&options, &result);
    else if (strcmp(options.workload, "stream") == 0)
        error = flash_stream(&options, &result);
    else if (strcmp(options.workload, "himeno") == 0)
        error = flash_himeno(&options, &result);
    else
        return usage();
    if (error != 0) {
        printf("flashbench: %s over %s did not run\n", options.workload,
               flash_method_name(options.method));
        return 1;
    }
    print_result(&options, &result);
    return result.verified ? 0 : 1;
}
