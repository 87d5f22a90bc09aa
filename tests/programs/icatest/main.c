/* icatest: tests of ICA communication, one subcommand per role (docs/ica.md).
 * `stress CLIENTS REQUESTS CORES` and `bad` are run from the shell; `client`
 * and the helper roles are copies of icatest that those two start. */
#include "icatest.h"
#include <stdio.h>
#include <string.h>

static int usage(void)
{
    printf("usage: icatest stress CLIENTS REQUESTS CORES | icatest bad | icatest lend | "
           "icatest route | icatest published\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage();
    if (strcmp(argv[1], "client") != 0)
        wait_for_boot_servers();
    if (strcmp(argv[1], "stress") == 0)
        return stress_main(argc - 2, argv + 2);
    if (strcmp(argv[1], "client") == 0)
        return client_main(argc - 2, argv + 2);
    if (strcmp(argv[1], "bad") == 0)
        return bad_main(argc - 2, argv + 2);
    if (strcmp(argv[1], "lend") == 0)
        return lend_main(argc - 2, argv + 2);
    if (strcmp(argv[1], "route") == 0)
        return route_main(argc - 2, argv + 2);
    if (strcmp(argv[1], "published") == 0)
        return published_main(argc - 2, argv + 2);
    int code = helper_main(argc - 1, argv + 1);
    return code == 2 ? usage() : code;
}
