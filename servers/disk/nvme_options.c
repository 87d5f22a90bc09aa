/* nvme_options.c: nvme_irq, nvme_queues and nvme_timeout_ms from the kernel
 * command line (kernel_option), each checked against its range. */
#include "nvme_options.h"
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TIMEOUT_MS 600000u

/* The decimal value of option `name` in 1..most, or `fallback`. */
static unsigned long number_option(const char *name, unsigned long most, unsigned long fallback)
{
    char value[16];
    if (kernel_option(name, value, sizeof(value)) < 0)
        return fallback;
    char *end = NULL;
    unsigned long number = strtoul(value, &end, 10);
    if (end == value || *end != '\0' || number == 0 || number > most) {
        printf("dk: %s=%s is not 1..%lu: %lu\n", name, value, most, fallback);
        return fallback;
    }
    return number;
}

bool nvme_option_intx(void)
{
    char value[8];
    return kernel_option("nvme_irq", value, sizeof(value)) >= 0 && strcmp(value, "intx") == 0;
}

unsigned nvme_option_queue_pairs(unsigned most)
{
    return (unsigned)number_option("nvme_queues", most, most);
}

uint32_t nvme_option_timeout_ms(void)
{
    return (uint32_t)number_option("nvme_timeout_ms", MAX_TIMEOUT_MS, NVME_DEFAULT_TIMEOUT_MS);
}
