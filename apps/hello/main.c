/* apps/hello: the smallest program. Prints
 * @json {"kind":"hello","pid":P,"core":C,"args":"..."} and exits 0; tests use
 * it to check where spawn placed a process and what arguments it received. */
#include <formica/json.h>
#include <formica/user.h>
#include <stdio.h>

static void print_arguments_joined(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (i > 1)
            putchar(' ');
        json_print_string_content(argv[i]);
    }
}

int main(int argc, char **argv)
{
    printf("@json {\"kind\":\"hello\",\"pid\":%ld,\"core\":%ld,\"args\":\"", process_id(),
           core_id());
    print_arguments_joined(argc, argv);
    printf("\"}\n");
    return 0;
}
