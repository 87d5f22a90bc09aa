/* where: the test server of server instances (where.h). `where ask` runs
 * the client; anything else (init's `--instance I/N`) the server. */
#include "where.h"
#include <string.h>

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "ask") == 0)
        return where_ask();
    return where_serve(argc, argv);
}
