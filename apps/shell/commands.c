/* commands.c: the shell's command table and dispatcher, and the small
 * commands: run, start, halt, echo, help, sleep (kill, crash and wait are in admin.c). The system
 * reports (ps, cores, placement) are in reports.c. */
#include "shell.h"
#include <formica/device.h>
#include <formica/rights.h>
#include <formica/size.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct command {
    const char *name;
    command_handler handler;
    const char *usage;
    const char *summary;
};

static bool command_run(int word_count, char **words);
static bool command_halt(int word_count, char **words);
static bool command_start(int word_count, char **words);
static bool command_echo(int word_count, char **words);
static bool command_help(int word_count, char **words);
static bool command_sleep(int word_count, char **words);

static const struct command commands[] = {
    {"ps", command_ps, "ps", "list processes"},
    {"cores", command_cores, "cores", "list cores and the processes on each"},
    {"placement", command_placement, "placement", "show where servers and applications run"},
    {"stats", command_stats, "stats", "frames, ICAs and process slots in use (leak checks)"},
    {"servers", command_servers, "servers [NAME...]",
     "each server instance: its core, pid, registrations and requests taken"},
    {"free", command_free, "free",
     "the machine's memory: total, free and available to the shell (bytes in @json)"},
    {"pagerstat", command_pagerstat, "pagerstat",
     "the pager's live statistics per client and per memory node"},
    {"tier", command_tier, "tier [flush|detach|format]",
     "BLK's NVM tier: its counters; write every dirty line back; that, then detach it; drop "
     "every line"},
    {"run", command_run,
     "run [--driver] [--server] [--user UID[:GID]] [--memory SIZE] PROG [ARGS...] [@CORE]",
     "run PROG on CORE and wait for it (@memnode: the placement's memnode core; --driver: "
     "with device access; --server: may start server-priority processes; --user: as that "
     "user, not the shell's; --memory: its account's memory quota)"},
    {"start", command_start,
     "start [--driver] [--server] [--user UID[:GID]] [--memory SIZE] PROG [ARGS...] [@CORE]",
     "start PROG on CORE, do not wait"},
    {"wait", command_wait, "wait", "wait for the programs start began"},
    {"kill", command_kill, "kill NAME|PID", "end a process or server (init restarts a server)"},
    {"crash", command_crash, "crash NAME|PID", "make a process or server fault (administrator)"},
    {"sleep", command_sleep, "sleep MS", "sleep for MS milliseconds"},
    {"echo", command_echo, "echo [WORDS...]", "print the words"},
    {"ls", command_ls, "ls [-l] [PATH]", "list a directory (-l: with mode, owner and group)"},
    {"cat", command_cat, "cat PATH", "print a file"},
    {"stat", command_stat, "stat PATH", "show a file's inode, size and mode"},
    {"chmod", command_chmod, "chmod MODE PATH", "set permission bits (octal; the owner or uid 0)"},
    {"chown", command_chown, "chown UID[:GID] PATH", "give a file to another user (uid 0 only)"},
    {"cksum", command_cksum, "cksum PATH...", "POSIX cksum: CRC SIZE PATH"},
    {"cp", command_cp, "cp SRC DST", "copy a file"},
    {"rm", command_rm, "rm PATH", "remove a file"},
    {"mkdir", command_mkdir, "mkdir PATH", "make a directory"},
    {"rmdir", command_rmdir, "rmdir PATH", "remove an empty directory"},
    {"sync", command_sync, "sync", "write every dirty block to the disk"},
    {"help", command_help, "help", "list the commands"},
    {"halt", command_halt, "halt", "sync the disk and power off"},
};
#define COMMAND_COUNT (sizeof commands / sizeof commands[0])

int split_words(char *line, char **words, int max_words)
{
    int count = 0;
    char *cursor = line;
    for (;;) {
        while (*cursor == ' ' || *cursor == '\t')
            *cursor++ = '\0';
        if (*cursor == '\0' || count == max_words)
            return count;
        words[count++] = cursor;
        while (*cursor != '\0' && *cursor != ' ' && *cursor != '\t')
            cursor++;
    }
}

bool run_command_line(char *line)
{
    char *words[SHELL_MAX_WORDS];
    int word_count = split_words(line, words, SHELL_MAX_WORDS);
    if (word_count == 0)
        return true;
    for (size_t i = 0; i < COMMAND_COUNT; i++)
        if (strcmp(words[0], commands[i].name) == 0)
            return commands[i].handler(word_count, words);
    printf("shell: unknown command '%s' (try help)\n", words[0]);
    return false;
}

/* "@memnode": the core the placement gives the memory-node role (its key
 * `memnode`, docs/placement.md); `core` (the shell's) is kept when the
 * placement names none. */
static void placement_memnode_core(uint32_t *core)
{
    struct placement_info placement;
    if (placement_get(&placement) >= 0 && placement.memnode_placed)
        *core = placement.memnode_core;
}

/* Parses "@CORE" or "@memnode"; false if it is neither. */
static bool parse_core(const char *word, uint32_t *core)
{
    if (strcmp(word, "@memnode") == 0) {
        placement_memnode_core(core);
        return true;
    }
    char *end;
    unsigned long value = strtoul(word + 1, &end, 10);
    if (end == word + 1 || *end != '\0' || value >= CORE_ANY)
        return false;
    *core = (uint32_t)value;
    return true;
}

/* Joins words[first..last) with spaces into `buffer`; false if too long. */
static bool join_words(char **words, int first, int last, char *buffer, size_t size)
{
    size_t used = 0;
    buffer[0] = '\0';
    for (int i = first; i < last; i++) {
        int written = snprintf(buffer + used, size - used, "%s%s", i > first ? " " : "", words[i]);
        if (written < 0 || (size_t)written >= size - used)
            return false;
        used += (size_t)written;
    }
    return true;
}

/* Drops words[1] (so words[1] is the program for the caller). */
static int drop_first(int word_count, char **words)
{
    for (int i = 1; i + 1 < word_count; i++)
        words[i] = words[i + 1];
    return word_count - 1;
}

/* "UID" or "UID:GID" (decimal, below 2^31; the group defaults to the user's
 * own) into the request's user; false for anything else. */
static bool parse_user(const char *word, struct spawn_request *request)
{
    char *end;
    unsigned long uid = strtoul(word, &end, 10);
    unsigned long gid = uid;
    if (end != word && *end == ':') {
        const char *group = end + 1;
        gid = strtoul(group, &end, 10);
        if (end == group)
            return false;
    }
    if (end == word || *end != '\0' || uid >= (1ul << 31) || gid >= (1ul << 31))
        return false;
    request->flags |= SPAWN_SET_USER;
    request->uid = (uint32_t)uid;
    request->gid = (uint32_t)gid;
    return true;
}

/* Takes the leading --driver, --server, --user UID[:GID] and --memory SIZE options out of
 * words[1..] into the request; -1 for an unknown option or a bad size. */
static int take_options(int word_count, char **words, struct spawn_request *request)
{
    while (word_count >= 2 && strncmp(words[1], "--", 2) == 0) {
        if (strcmp(words[1], "--driver") == 0) {
            /* a driver reaches the hardware anyway: the storage data path adds nothing */
            request->flags |= SPAWN_DRIVER;
            request->rights |= RIGHT_DISK | RIGHT_BLOCK;
        } else if (strcmp(words[1], "--server") == 0) {
            request->rights |= RIGHT_SERVER_PRIORITY;
        } else if (strcmp(words[1], "--user") == 0 && word_count >= 3) {
            if (!parse_user(words[2], request))
                return -1;
            word_count = drop_first(word_count, words);
        } else if (strcmp(words[1], "--memory") == 0 && word_count >= 3) {
            if (!size_parse(words[2], &request->memory_limit) || request->memory_limit == 0)
                return -1;
            word_count = drop_first(word_count, words);
        } else {
            return -1;
        }
        word_count = drop_first(word_count, words);
    }
    return word_count;
}

/* Starts words[1] with the following words as arguments on the core of a
 * trailing "@CORE" (default: the shell's); returns its pid or -1. Each
 * program gets an ordinary user's rights in a quota account of its own
 * (docs/authority.md); --server lets it start server-priority processes,
 * --driver gives it device access, --memory SIZE sets its account's memory. */
static long start_program(int word_count, char **words, const char *verb)
{
    struct spawn_request options = {.flags = SPAWN_NEW_ACCOUNT, .rights = RIGHTS_USER};
    word_count = take_options(word_count, words, &options);
    if (word_count < 2) {
        printf("usage: %s PROG [ARGS...] [@CORE]\n", verb);
        return -1;
    }
    const char *program = words[1];
    uint32_t core = (uint32_t)core_id();
    int argument_end = word_count;
    if (word_count > 2 && words[word_count - 1][0] == '@') {
        argument_end--;
        if (!parse_core(words[argument_end], &core)) {
            printf("%s: bad core '%s'\n", verb, words[argument_end]);
            return -1;
        }
    }
    char arguments[ARGUMENTS_BYTES];
    if (!join_words(words, 2, argument_end, arguments, sizeof arguments)) {
        printf("%s: arguments longer than %d bytes\n", verb, ARGUMENTS_BYTES - 1);
        return -1;
    }
    struct spawn_request request;
    long pid = spawn_request_fill(&request, program, arguments, core, PRIORITY_APPLICATION);
    request.flags = options.flags;
    request.rights = options.rights;
    request.memory_limit = options.memory_limit;
    request.uid = options.uid;
    request.gid = options.gid;
    if (pid == 0)
        pid = spawn_request_send(&request);
    if (pid < 0) {
        printf("%s: cannot start %s on core %u: %s\n", verb, program, core, error_text(pid));
        return -1;
    }
    return pid;
}

static bool command_run(int word_count, char **words)
{
    long pid = start_program(word_count, words, "run");
    if (pid < 0)
        return false;
    const char *program = words[1];
    int exit_code = -1;
    long waited = wait_process(pid, &exit_code);
    if (waited < 0) {
        printf("run: waiting for %s (pid %ld) failed: %s\n", program, pid, error_text(waited));
        return false;
    }
    printf("%s exited with code %d\n", program, exit_code);
    return exit_code == 0;
}

/* start: like run, without waiting; prints the new pid. */
static bool command_start(int word_count, char **words)
{
    long pid = start_program(word_count, words, "start");
    if (pid < 0)
        return false;
    printf("%s started as pid %ld\n", words[1], pid);
    printf("@json {\"kind\":\"started\",\"program\":\"%s\",\"pid\":%ld}\n", words[1], pid);
    return true;
}

static bool command_halt(int word_count, char **words)
{
    (void)word_count;
    (void)words;
    /* The shell ends; init then syncs the disk and powers off (apps/init). */
    exit(shell_status_so_far());
}

static bool command_echo(int word_count, char **words)
{
    for (int i = 1; i < word_count; i++)
        printf("%s%s", i > 1 ? " " : "", words[i]);
    putchar('\n');
    return true;
}

static bool command_help(int word_count, char **words)
{
    (void)word_count;
    (void)words;
    for (size_t i = 0; i < COMMAND_COUNT; i++)
        printf("  %-28s %s\n", commands[i].usage, commands[i].summary);
    return true;
}

static bool command_sleep(int word_count, char **words)
{
    char *end = NULL;
    unsigned long milliseconds = word_count == 2 ? strtoul(words[1], &end, 10) : 0;
    if (end == NULL || end == words[1] || *end != '\0') {
        printf("usage: sleep MS\n");
        return false;
    }
    long result = sleep_ms(milliseconds);
    if (result < 0)
        printf("sleep: %s\n", error_text(result));
    return result >= 0;
}
