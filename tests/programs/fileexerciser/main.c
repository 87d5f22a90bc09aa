/* fileexerciser: a data-integrity exerciser of the file library, after the
 * classic fsx. Seeded random operations of every kind the library offers
 * (read, write, pread, pwrite, readblock, writeblock, readbyte, writebyte,
 * ftruncate, fsync, close and reopen, fstat), from a byte to many blocks,
 * with holes, extensions and truncates, each checked against a shadow copy;
 * with --reader CORE a second process on CORE reads the same file through
 * its own FS instance and checks every byte it sees was in the file at that
 * offset during its read (docs/testing.md, "The file exerciser"). */
#include "exerciser.h"

int main(int argc, char **argv)
{
    struct exerciser_options options;
    if (!options_parse(argc, argv, &options))
        return 2;
    return options.writer_pid >= 0 ? reader_run(&options) : writer_run(&options);
}
