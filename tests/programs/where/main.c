/* where: the test server of server instances (where.h). `where ask` and
 * `where hammer MS` run a client; anything else (init's `--instance I/N`)
 * the server. */
#include "where.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "ask") == 0)
        return where_ask();
    if (argc >= 2 && strcmp(argv[1], "hammer") == 0) {
        char *end = NULL;
        unsigned long milliseconds = argc == 3 ? strtoul(argv[2], &end, 10) : 0;
        if (milliseconds == 0 || end == NULL || *end != '\0') {
            printf("where hammer: expected a duration in milliseconds (where hammer MS)\n");
            return 2;
        }
        return where_hammer(milliseconds);
    }
    return where_serve(argc, argv);
}
