/* servers/fs/main.c: placeholder for FS (inodes, directories, ext2), program "fs" in
 * the boot image. init starts it on its placement core at server priority; it
 * announces itself and waits until later issues give it requests to serve. */
#include <formica/server_placeholder.h>

int main(void)
{
    run_server_placeholder("fs");
}
