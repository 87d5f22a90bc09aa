/* admin.c: the shell's administrator commands for servers and the programs
 * it started: `kill NAME|PID` (a killed server is restarted by init; a
 * server still restarting is waited for, up to 30 s),
 * `crash NAME|PID` (the process executes a faulting instruction: SYS_CRASH,
 * which only the console shell may use), and `wait` (for every program
 * `start` began). NAME.I names instance I of a server with several (fs.1).
 * docs/recovery.md. */
#include "shell.h"
#include <formica/instance.h>
#include <formica/protocol/boot_servers.h>
#include <formica/request.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_number(const char *word)
{
    char *end;
    strtol(word, &end, 10);
    return end != word && *end == '\0';
}

/* The last server pid killed or crashed: a server still restarting from
 * it is waited for (up to SERVER_RESTART_WAIT_MS), so `kill fs; kill fs`
 * hits the new FS. */
static long last_target = -1;

static bool restarted_by_init(const char *name)
{
    for (int server = 0; server < PLACEMENT_SERVERS; server++)
        if (strcmp(name, boot_servers[server].name) == 0)
            return boot_servers[server].restart_limit > 0;
    return false;
}

/* "NAME.I": true with the name and the index apart. */
static bool instance_named(const char *word, char *name, size_t size, uint32_t *index)
{
    const char *dot = strchr(word, '.');
    if (dot == NULL || dot == word || (size_t)(dot - word) >= size || !is_number(dot + 1))
        return false;
    memcpy(name, word, (size_t)(dot - word));
    name[dot - word] = '\0';
    *index = (uint32_t)strtoul(dot + 1, NULL, 10);
    return true;
}

/* The pid of instance `index` of `name`; one that is restarting (from
 * the last target) is waited for, as for a lone server. */
static long instance_target(const char *name, uint32_t index)
{
    long pid = server_lookup_instance(name, index);
    if ((pid < 0 || pid == last_target) && restarted_by_init(name))
        pid = server_reconnect_instance(name, index, last_target);
    return pid;
}

/* A pid, or the pid of the server registered under the name (NAME.I: its
 * instance I); < 0 if none. */
static long target_of(const char *word)
{
    char name[32];
    uint32_t index;
    if (instance_named(word, name, sizeof name, &index))
        return instance_target(name, index);
    if (!is_number(word)) {
        long pid = server_lookup(word);
        if ((pid < 0 || pid == last_target) && restarted_by_init(word))
            pid = server_reconnect(word, last_target);
        return pid;
    }
    long pid = strtol(word, NULL, 10);
    return pid > 0 ? pid : -E_INVALID;
}

static bool act_on(int word_count, char **words, long (*action)(long), const char *verb)
{
    if (word_count != 2) {
        printf("usage: %s NAME|PID\n", verb);
        return false;
    }
    long pid = target_of(words[1]);
    long error = pid < 0 ? pid : action(pid);
    if (error != 0 && pid > 0 && is_number(words[1]))
        printf("%s: pid %ld: %s\n", verb, pid, error_text(error));
    else if (error != 0)
        printf("%s: %s: %s\n", verb, words[1], error_text(error));
    if (error != 0)
        return false;
    last_target = pid;
    printf("%s: %s (pid %ld)\n", verb, words[1], pid);
    printf("@json {\"kind\":\"%s\",\"target\":\"%s\",\"pid\":%ld}\n", verb, words[1], pid);
    return true;
}

bool command_kill(int word_count, char **words)
{
    return act_on(word_count, words, kill_process, "kill");
}

bool command_crash(int word_count, char **words)
{
    return act_on(word_count, words, crash_process, "crash");
}

/* Waits for every child still running (the ones `start` began); succeeds
 * when each exited with code 0. */
bool command_wait(int word_count, char **words)
{
    (void)words;
    if (word_count != 1) {
        printf("usage: wait\n");
        return false;
    }
    bool all_succeeded = true;
    for (;;) {
        int code = -1;
        long pid = wait_any(&code);
        if (pid == -E_NOT_FOUND)
            return all_succeeded;
        if (pid < 0) {
            printf("wait: %s\n", error_text(pid));
            return false;
        }
        printf("pid %ld exited with code %d\n", pid, code);
        printf("@json {\"kind\":\"waited\",\"pid\":%ld,\"exit_code\":%d}\n", pid, code);
        all_succeeded = all_succeeded && code == 0;
    }
}
