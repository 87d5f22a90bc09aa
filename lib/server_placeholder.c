/* server_placeholder.c: run_server_placeholder(), the request loop of a
 * server that cannot do its work: every request is answered with the same
 * error at once. */
#include <formica/ica.h>
#include <formica/instance.h>
#include <formica/request.h>
#include <formica/server_placeholder.h>
#include <formica/user.h>
#include <stdio.h>

static __attribute__((noreturn)) void wait_forever(void)
{
    for (;;)
        await_notification();
}

void run_server_placeholder(const char *name, long refusal)
{
    run_server_instance_placeholder(name, 0, refusal);
}

void run_server_instance_placeholder(const char *name, uint32_t index, long refusal)
{
    long error = server_register_instance(name, index);
    if (error != 0) {
        printf("%s: not serving, and cannot take the name: %s\n", name, error_text(error));
        wait_forever();
    }
    printf("%s: not serving on core %ld (pid %ld): every request gets '%s'\n", name, core_id(),
           process_id(), error_text(refusal));
    long control = ica_receive(0);
    for (;;) {
        if (control < 0) {
            control = ica_receive(0);
            continue;
        }
        ica_control_of((uint64_t)control)->result = refusal;
        long next = ica_return_receive((uint64_t)control, 0, 0);
        control = next >= 0 ? next : ica_receive(0);
    }
}
