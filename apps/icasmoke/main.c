/* icasmoke: quick check of ICA requests: one server, then a two-stage chain. */
#include <formica/request.h>
#include <formica/user.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    long s2 = spawn("ipcserver", "s2", 1, PRIORITY_SERVER);
    long s1 = spawn("ipcserver", "s1 s2 direct", 1, PRIORITY_SERVER);
    printf("spawned %ld %ld\n", s1, s2);
    long server = server_wait_for("s1", 5000);
    long control = ica_allocate(ICA_KIND_CONTROL, 4096);
    printf("server %ld control %lx\n", server, control);
    for (int i = 0; i < 5; i++) {
        long result = request_call(server, (uint64_t)control, 1, (uint64_t)i * 10);
        printf("request %d -> %ld (origin %u depth %u)\n", i, result,
               ica_control_of((uint64_t)control)->origin,
               ica_control_of((uint64_t)control)->return_depth);
    }
    return 0;
}
