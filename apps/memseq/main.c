/* memseq: seed 004 §5.2.1-5.2.3 in pager-backed memory: write a buffer larger
 * than the local limit, then read it sequentially (bandwidth, swap-in latency
 * per block) and with a stride (swap-in time per touched block); @json lines. */
#include <formica/json.h>
#include <formica/teramem.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct memseq_options {
    uint64_t size, stride;
    struct teramem_options teramem;
};

static uint64_t parse_size(const char *text)
{
    char *end;
    uint64_t value = strtoul(text, &end, 0);
    if (*end == 'K' || *end == 'k')
        value <<= 10;
    else if (*end == 'M' || *end == 'm')
        value <<= 20;
    return value;
}

static int parse_options(int argc, char **argv, struct memseq_options *o)
{
    *o = (struct memseq_options){.size = 16 << 20};
    o->teramem = (struct teramem_options){.local_limit_bytes = 4 << 20, .block_bytes = 64 << 10,
                                          .policy = PAGER_POLICY_FIFO,
                                          .backend = PAGER_BACKEND_DISK};
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *flag = argv[i], *value = argv[i + 1];
        if (strcmp(flag, "-s") == 0)
            o->size = parse_size(value);
        else if (strcmp(flag, "-l") == 0)
            o->teramem.local_limit_bytes = parse_size(value);
        else if (strcmp(flag, "-b") == 0)
            o->teramem.block_bytes = (uint32_t)parse_size(value);
        else if (strcmp(flag, "--stride") == 0)
            o->stride = parse_size(value);
        else if (strcmp(flag, "--backend") == 0)
            o->teramem.backend = strcmp(value, "nvm") == 0    ? PAGER_BACKEND_NVM
                                 : strcmp(value, "node") == 0 ? PAGER_BACKEND_NODE
                                                              : PAGER_BACKEND_DISK;
        else {
            printf("usage: memseq -s SIZE -l LIMIT -b BLOCK --backend node|nvm|disk "
                   "[--stride BYTES]\n");
            return 2;
        }
    }
    o->teramem.capacity_bytes = o->size;
    return 0;
}

static uint64_t tsc_per_us(void)
{
    struct clock_info clock;
    return clock_get(&clock) == 0 && clock.tsc_hz >= 1000000 ? clock.tsc_hz / 1000000 : 1;
}

static void fill(uint8_t *buffer, uint64_t size)
{
    for (uint64_t offset = 0; offset < size; offset += 4096)
        buffer[offset] = (uint8_t)(offset >> 12);
}

static void print_common(const char *mode, const struct memseq_options *o)
{
    printf("@json {\"kind\":\"memseq\",\"mode\":\"%s\",\"backend\":\"%s\",\"block_bytes\":%u,"
           "\"local_limit_bytes\":%lu,\"bytes\":%lu",
           mode, teramem_backend_name(o->teramem.backend), o->teramem.block_bytes,
           o->teramem.local_limit_bytes, o->size);
}

/* Touches one byte per page; the first touch of each block is its swap-in. */
static bool sequential(uint8_t *buffer, const struct memseq_options *o)
{
    struct teramem_stats before, after;
    teramem_stats(&before);
    uint64_t start = read_timestamp_counter(), sum = 0, errors = 0;
    for (uint64_t offset = 0; offset < o->size; offset += 4096) {
        sum += buffer[offset];
        errors += buffer[offset] != (uint8_t)(offset >> 12);
    }
    uint64_t us = (read_timestamp_counter() - start) / tsc_per_us();
    teramem_stats(&after);
    uint64_t swap_ins = after.swap_in_blocks - before.swap_in_blocks;
    print_common("sequential", o);
    printf(",\"elapsed_us\":%lu,\"mb_per_s\":%lu,\"swap_in_blocks\":%lu,"
           "\"swap_in_us\":%lu,\"verified\":%s,\"sum\":%lu}\n",
           us, us ? o->size / us : 0, swap_ins, swap_ins ? us / swap_ins : 0,
           errors == 0 ? "true" : "false", sum);
    return errors == 0;
}

static void stride(uint8_t *buffer, const struct memseq_options *o)
{
    struct teramem_stats before, after;
    teramem_stats(&before);
    uint64_t start = read_timestamp_counter(), sum = 0;
    for (uint64_t offset = 0; offset < o->size; offset += o->stride)
        sum += buffer[offset];
    uint64_t us = (read_timestamp_counter() - start) / tsc_per_us();
    teramem_stats(&after);
    print_common("stride", o);
    printf(",\"stride_bytes\":%lu,\"elapsed_us\":%lu,\"swap_in_blocks\":%lu,\"sum\":%lu}\n",
           o->stride, us, after.swap_in_blocks - before.swap_in_blocks, sum);
}

int main(int argc, char **argv)
{
    struct memseq_options o;
    if (parse_options(argc, argv, &o) != 0)
        return 2;
    if (teramem_init(&o.teramem) < 0)
        return 1;
    uint8_t *buffer = teramalloc(o.size);
    if (buffer == NULL)
        return 1;
    fill(buffer, o.size);
    teramem_drop(buffer, o.size); /* everything resident goes out first */
    bool ok = sequential(buffer, &o);
    if (o.stride != 0) {
        teramem_drop(buffer, o.size);
        stride(buffer, &o);
    }
    teramem_cleanup();
    return ok ? 0 : 1;
}
