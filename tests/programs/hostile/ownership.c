/* ownership.c: attacks on another user's files. `hostile victim` (run as
 * one user) makes /victim.private (0600) and /victim.shared (0644);
 * `hostile owners` (run as another user) tries to read the private one,
 * write, truncate, remove, rename over, chmod and chown either, and to
 * open the pager's swap file: each refused with -E_PERMISSION, while
 * reading the shared file works. */
#include "hostile.h"
#include <formica/errors.h>
#include <formica/file.h>
#include <stdio.h>
#include <string.h>

#define PRIVATE_PATH "/victim.private"
#define SHARED_PATH "/victim.shared"
#define PRIVATE_TEXT "the victim's secret"
#define SHARED_TEXT "the victim's words"
#define SWAP_PATH "/swap" /* the pager's (servers/pager/backend_disk.c) */

static long write_file(const char *path, const char *text, uint32_t permissions)
{
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY);
    if (fd < 0)
        return fd;
    long written = write(fd, text, strlen(text));
    close(fd);
    if (written != (long)strlen(text))
        return written < 0 ? written : -E_IO;
    return chmod(path, permissions);
}

int make_victim_files(void)
{
    expect("victim_private_file", write_file(PRIVATE_PATH, PRIVATE_TEXT, 0600), 0);
    expect("victim_shared_file", write_file(SHARED_PATH, SHARED_TEXT, 0644), 0);
    return hostile_failures() == 0 ? 0 : 1;
}

/* The open's error, or 0 when it was let in (the descriptor closed). */
static long open_refusal(const char *path, int flags)
{
    int fd = open(path, flags);
    if (fd < 0)
        return fd;
    close(fd);
    return 0;
}

static long read_shared_file(void)
{
    char buffer[64] = "";
    int fd = open(SHARED_PATH, O_RDONLY);
    if (fd < 0)
        return fd;
    long got = read(fd, buffer, sizeof buffer - 1);
    close(fd);
    return got == (long)strlen(SHARED_TEXT) && strcmp(buffer, SHARED_TEXT) == 0 ? 0 : -E_IO;
}

/* The victim's files must read as it wrote them after every attempt. */
static long victim_files_intact(void)
{
    struct file_status status;
    long error = stat(PRIVATE_PATH, &status);
    if (error == 0 && status.size != strlen(PRIVATE_TEXT))
        error = -E_IO;
    return error == 0 ? read_shared_file() : error;
}

int attack_owners(void)
{
    expect("read_private_file", open_refusal(PRIVATE_PATH, O_RDONLY), -E_PERMISSION);
    expect("write_private_file", open_refusal(PRIVATE_PATH, O_WRONLY), -E_PERMISSION);
    expect("read_shared_file", read_shared_file(), 0);
    expect("write_shared_file", open_refusal(SHARED_PATH, O_RDWR), -E_PERMISSION);
    expect("truncate_shared_file", open_refusal(SHARED_PATH, O_WRONLY | O_TRUNC), -E_PERMISSION);
    expect("remove_from_sticky_root", unlink(SHARED_PATH), -E_PERMISSION);
    expect("rename_away_from_sticky_root", rename(PRIVATE_PATH, "/stolen"), -E_PERMISSION);
    int fd = open("/attacker.own", O_CREAT | O_WRONLY);
    if (fd >= 0)
        close(fd);
    expect("rename_over_anothers_file", rename("/attacker.own", SHARED_PATH), -E_PERMISSION);
    expect("remove_own_file", unlink("/attacker.own"), 0);
    expect("chmod_anothers_file", chmod(PRIVATE_PATH, 0666), -E_PERMISSION);
    expect("chown_anothers_file", chown(PRIVATE_PATH, 2001, 100), -E_PERMISSION);
    expect("read_pager_swap_file", open_refusal(SWAP_PATH, O_RDONLY), -E_PERMISSION);
    expect("write_pager_swap_file", open_refusal(SWAP_PATH, O_RDWR), -E_PERMISSION);
    expect("remove_pager_swap_file", unlink(SWAP_PATH), -E_PERMISSION);
    expect("victim_files_intact", victim_files_intact(), 0);
    printf("@json {\"kind\":\"hostile_done\",\"failures\":%d}\n", hostile_failures());
    return hostile_failures() == 0 ? 0 : 1;
}
