/* fileexerciser: a data-integrity exerciser of the file library, after the
 * classic fsx (docs/testing.md, "The file exerciser"): the writer, or with
 * --as-reader the reader a writer starts on another core. */
#include "exerciser.h"

int main(int argc, char **argv)
{
    struct exerciser_options options;
    if (!options_parse(argc, argv, &options))
        return 2;
    return options.writer_pid >= 0 ? reader_run(&options) : writer_run(&options);
}
