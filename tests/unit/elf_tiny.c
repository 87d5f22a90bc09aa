/* elf_tiny.c: source of the tiny static freestanding x86-64 executable that
 * the Makefile builds as the real ELF fixture of test_elf (never run). It has
 * code, read-only data, initialized data and a .bss, hence several segments. */
static const char message[] = "formica";
long counter = 42;
char zeroed[8192];

void _start(void)
{
    counter += message[0] + zeroed[100];
    for (;;)
        __asm__ volatile("hlt");
}
