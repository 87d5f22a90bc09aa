/* shell.h: the pieces of the Formica shell (apps/shell): the command table
 * and dispatcher (commands.c), the system reports (reports.c) and the
 * command-list and prompt drivers (main.c). */
#pragma once
#include <stdbool.h>

#define SHELL_MAX_WORDS 32

/* A command handler gets the words of its line (words[0] is the command
 * name) and returns true when the command succeeded. */
typedef bool (*command_handler)(int word_count, char **words);

/* Splits `line` in place at spaces and tabs; returns the number of words. */
int split_words(char *line, char **words, int max_words);
/* Runs one command line; true when it succeeded (an empty line does). */
bool run_command_line(char *line);
/* 0 if every command so far succeeded, else 1 (what `halt` powers off with). */
int shell_status_so_far(void);

/* reports.c */
bool command_ps(int word_count, char **words);
bool command_cores(int word_count, char **words);
bool command_placement(int word_count, char **words);
bool command_stats(int word_count, char **words);
/* memory_report.c: free (SYS_MEMORY_REPORT). */
bool command_free(int word_count, char **words);
/* servers_report.c */
bool command_servers(int word_count, char **words);

/* admin.c */
bool command_kill(int word_count, char **words);
bool command_crash(int word_count, char **words);
bool command_wait(int word_count, char **words);

/* pager_report.c */
bool command_pagerstat(int word_count, char **words);
/* tier_report.c: tier [flush|detach|format] (BLK's NVM tier). */
bool command_tier(int word_count, char **words);

/* files.c */
bool command_ls(int word_count, char **words);
bool command_cat(int word_count, char **words);
bool command_stat(int word_count, char **words);
bool command_chmod(int word_count, char **words);
bool command_chown(int word_count, char **words);
bool command_cksum(int word_count, char **words);
bool command_cp(int word_count, char **words);
bool command_rm(int word_count, char **words);
bool command_mkdir(int word_count, char **words);
bool command_rmdir(int word_count, char **words);
bool command_sync(int word_count, char **words);
