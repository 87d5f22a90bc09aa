/* servers/disk/main.c: placeholder for DK (virtio-blk and AHCI disk drivers), program "dk" in
 * the boot image. init starts it on its placement core at server priority; it
 * announces itself and waits until later issues give it requests to serve. */
#include <formica/server_placeholder.h>

int main(void)
{
    run_server_placeholder("dk");
}
