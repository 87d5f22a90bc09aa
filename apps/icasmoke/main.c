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
    long lender = spawn("ipcserver", "lender", 1, PRIORITY_SERVER);
    long lender_server = server_wait_for("lender", 5000);
    printf("lender pid %ld server %ld\n", lender, lender_server);
    for (int i = 1; i <= 3; i++) {
        long result = request_call(lender_server, (uint64_t)control, 4, (uint64_t)(0x40 + i));
        struct ica_control *page = ica_control_of((uint64_t)control);
        const uint8_t *bytes = page->lent_count ? ica_address(page->lent[0]) : 0;
        printf("lend %d -> %ld, lent %u, byte %x %x\n", i, result, page->lent_count,
               bytes ? bytes[0] : 0, bytes ? bytes[4095] : 0);
    }
    struct ica_stats stats;
    ica_stats(&stats);
    printf("control free %u data free %u handovers %lu ipis %lu\n", stats.control_free,
           stats.data_free, (unsigned long)stats.handovers, (unsigned long)stats.ipis);
    return 0;
}
