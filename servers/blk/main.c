/* servers/blk/main.c: placeholder for BLK (the file cache), program "blk" in
 * the boot image. init starts it on its placement core at server priority; it
 * announces itself and waits until later issues give it requests to serve. */
#include <formica/server_placeholder.h>

int main(void)
{
    run_server_placeholder("blk");
}
