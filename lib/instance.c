/* instance.c: the user side of server instances (formica/instance.h): the
 * --instance I/N argument, registration and lookup of one instance, and the
 * kept-region name of each (docs/design.md, "Server instances"). */
#include <formica/instance.h>
#include <formica/request.h>
#include <formica/user.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define INSTANCE_OPTION "--instance"

/* Decimal digits up to `stop` (or the end); false when there are none, or
 * when the number passes `limit`. */
static bool parse_decimal(const char **text, char stop, uint32_t limit, uint32_t *value)
{
    const char *cursor = *text;
    uint32_t result = 0;
    if (*cursor == stop || *cursor == '\0')
        return false;
    for (; *cursor != stop && *cursor != '\0'; cursor++) {
        if (*cursor < '0' || *cursor > '9')
            return false;
        result = result * 10 + (uint32_t)(*cursor - '0');
        if (result > limit)
            return false;
    }
    *value = result;
    *text = cursor;
    return true;
}

/* "I/N" with I < N <= SERVER_INSTANCES_MAX. */
static bool parse_index_of_count(const char *text, struct server_instance *out)
{
    struct server_instance parsed;
    if (!parse_decimal(&text, '/', SERVER_INSTANCES_MAX, &parsed.index) || *text != '/')
        return false;
    text++;
    if (!parse_decimal(&text, '\0', SERVER_INSTANCES_MAX, &parsed.count) || *text != '\0')
        return false;
    if (parsed.count == 0 || parsed.index >= parsed.count)
        return false;
    *out = parsed;
    return true;
}

/* The value of --instance in argv: "--instance=I/N" or "--instance" "I/N";
 * NULL when absent, "" when the option has no value. */
static const char *instance_value(int argc, char **argv)
{
    size_t option_length = strlen(INSTANCE_OPTION);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], INSTANCE_OPTION) == 0)
            return i + 1 < argc ? argv[i + 1] : "";
        if (strncmp(argv[i], INSTANCE_OPTION "=", option_length + 1) == 0)
            return argv[i] + option_length + 1;
    }
    return NULL;
}

int server_instance_parse(int argc, char **argv, struct server_instance *out)
{
    const char *value = instance_value(argc, argv);
    if (value == NULL) {
        *out = (struct server_instance){.index = 0, .count = 1};
        return 0;
    }
    if (!parse_index_of_count(value, out)) {
        printf("pid %ld: bad %s '%s' (expected I/N, I < N <= %u)\n", process_id(), INSTANCE_OPTION,
               value, SERVER_INSTANCES_MAX);
        return -E_INVALID;
    }
    return 0;
}

long server_instance_argument(struct server_instance instance, char *buffer, size_t size)
{
    int length = snprintf(buffer, size, INSTANCE_OPTION " %u/%u", instance.index, instance.count);
    return length < 0 || (size_t)length >= size ? -E_TOO_BIG : length;
}

long server_register_instance(const char *name, uint32_t index)
{
    return syscall6(SYS_SERVER_REGISTER, (long)name, index, 0, 0, 0, 0);
}

long server_lookup_instance(const char *name, uint32_t index)
{
    return syscall6(SYS_SERVER_LOOKUP_INSTANCE, (long)name, index, 0, 0, 0, 0);
}

long server_wait_for_instance(const char *name, uint32_t index, uint64_t milliseconds)
{
    for (uint64_t waited = 0;; waited += 10) {
        long pid = server_lookup_instance(name, index);
        if (pid != -E_NOT_FOUND || waited >= milliseconds)
            return pid;
        sleep_ms(10);
    }
}

long server_reconnect_instance(const char *name, uint32_t index, long gone)
{
    for (uint64_t waited = 0; waited < SERVER_RESTART_WAIT_MS; waited += 10) {
        long pid = server_lookup_instance(name, index);
        if (pid >= 0 && pid != gone)
            return pid;
        sleep_ms(10);
    }
    printf("pid %ld: instance %u of server '%s' did not come back within %u ms\n", process_id(),
           index, name, SERVER_RESTART_WAIT_MS);
    return -E_SERVER_ENDED;
}

long server_instance_counts(const char *name, struct server_instance_info *buffer, uint32_t count)
{
    return syscall6(SYS_SERVER_INSTANCE_COUNTS, (long)name, (long)buffer, count, 0, 0, 0);
}

long server_instance_kept_name(const char *name, uint32_t index, char *buffer, size_t size)
{
    int length = index == 0 ? snprintf(buffer, size, "%s", name)
                            : snprintf(buffer, size, "%s.%u", name, index);
    return length < 0 || (size_t)length >= size ? -E_TOO_BIG : 0;
}
