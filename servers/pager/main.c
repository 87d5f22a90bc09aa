/* servers/pager/main.c: placeholder for the remote pager, program "pager" in
 * the boot image. init starts it on its placement core at server priority; it
 * announces itself and waits until later issues give it requests to serve. */
#include <formica/server_placeholder.h>

int main(void)
{
    run_server_placeholder("pager");
}
