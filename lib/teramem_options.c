/* teramem_options.c: the command-line options every teramem program shares (-l, -b, -P,
 * --backend, --replicas, --key, --capacity) and the backend and policy names. Pure code
 * with no system calls, so the Linux build of sort and memseq (build/linux/) uses it too. */
#include <formica/size.h>
#include <formica/teramem.h>
#include <stdio.h>
#include <string.h>

static uint32_t backend_named(const char *name)
{
    for (uint32_t backend = PAGER_BACKEND_NODE; backend <= PAGER_BACKEND_VEMS; backend++)
        if (strcmp(name, teramem_backend_name(backend)) == 0)
            return backend;
    return 0;
}

int teramem_parse_option(struct teramem_options *options, const char *flag, const char *value)
{
    uint64_t size = 0;
    bool good;
    if (strcmp(flag, "-l") == 0)
        good = size_parse(value, &options->local_limit_bytes);
    else if (strcmp(flag, "-b") == 0 && (good = size_parse(value, &size)))
        options->block_bytes = (uint32_t)size;
    else if (strcmp(flag, "-b") == 0)
        good = false;
    else if (strcmp(flag, "--key") == 0)
        good = size_parse(value, &options->persistent_key);
    else if (strcmp(flag, "--replicas") == 0 && (good = size_parse(value, &size)))
        good = (options->replicas = (uint32_t)size) >= 1 && size <= PAGER_MAX_REPLICAS;
    else if (strcmp(flag, "--replicas") == 0)
        good = false;
    else if (strcmp(flag, "--capacity") == 0)
        good = size_parse(value, &options->capacity_bytes);
    else if (strcmp(flag, "-P") == 0) {
        good = strcmp(value, "lru") == 0 || strcmp(value, "fifo") == 0;
        options->policy = strcmp(value, "fifo") == 0 ? PAGER_POLICY_FIFO : PAGER_POLICY_LRU;
    } else if (strcmp(flag, "--backend") == 0)
        good = (options->backend = backend_named(value)) != 0;
    else
        return 0;
    if (!good)
        printf("teramem: bad value '%s' for %s\n", value, flag);
    return good ? 1 : -1;
}

const char *teramem_backend_name(uint32_t backend)
{
    switch (backend) {
    case PAGER_BACKEND_NODE:
        return "node";
    case PAGER_BACKEND_NVM:
        return "nvm";
    case PAGER_BACKEND_DISK:
        return "disk";
    case PAGER_BACKEND_BLOCK:
        return "block";
    case PAGER_BACKEND_VEMS:
        return "vems";
    default:
        return "unknown";
    }
}

const char *teramem_policy_name(uint32_t policy)
{
    return policy == PAGER_POLICY_FIFO ? "fifo" : policy == PAGER_POLICY_LRU ? "lru" : "unknown";
}
