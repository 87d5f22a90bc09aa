/* files.c: the shell's file commands over the file library (formica/file.h):
 * ls, cat, stat, cksum (POSIX cksum, as the host prints it), cp, rm, mkdir,
 * rmdir, sync. Each reports an error with error_text and then fails. */
#include "shell.h"
#include <formica/cksum.h>
#include <formica/file.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COPY_PIECE (64u * 1024)

static bool fail(const char *command, const char *path, long error)
{
    printf("%s: %s: %s\n", command, path, error_text(error));
    return false;
}

static bool usage(const char *text)
{
    printf("usage: %s\n", text);
    return false;
}

/* "rwxr-x---" and the set-id and sticky bits, as ls -l shows them. */
static void mode_text(uint32_t mode, char text[10])
{
    static const char letters[] = "rwxrwxrwx";
    for (int bit = 0; bit < 9; bit++)
        text[bit] = (mode & (0400u >> bit)) ? letters[bit] : '-';
    if (mode & 01000u)
        text[8] = (mode & 1u) ? 't' : 'T';
    text[9] = '\0';
}

/* Prints one directory entry with its size (stat of DIR/NAME); `long_form`
 * adds its mode, owner and group (ls -l). */
static void print_entry(const char *directory, const struct directory_entry *entry, bool long_form)
{
    char path[FILE_PATH_MAX];
    struct file_status status = {0};
    snprintf(path, sizeof path, "%s/%s", directory, entry->name);
    stat(path, &status);
    char type = entry->type == 2 ? 'd' : '-';
    if (!long_form) {
        printf("%c %10lu  %s\n", type, status.size, entry->name);
        return;
    }
    char permissions[10];
    mode_text(status.mode, permissions);
    printf("%c%s %5u %5u %10lu  %s\n", type, permissions, status.uid, status.gid, status.size,
           entry->name);
}

bool command_ls(int word_count, char **words)
{
    bool long_form = word_count >= 2 && strcmp(words[1], "-l") == 0;
    if (long_form)
        word_count--, words++;
    const char *path = word_count >= 2 ? words[1] : "/";
    int fd = opendir(path);
    if (fd < 0)
        return fail("ls", path, fd);
    const char *prefix = path[0] == '/' && path[1] == '\0' ? "" : path;
    struct directory_entry entry;
    long result;
    while ((result = readdir(fd, &entry)) == 1)
        print_entry(prefix, &entry, long_form);
    closedir(fd);
    return result == 0 ? true : fail("ls", path, result);
}

/* Calls `consume` on every piece of the file at `path`; 0 or an error. */
static long for_each_piece(const char *path, void (*consume)(void *, const uint8_t *, long),
                           void *context)
{
    uint8_t *piece = malloc(COPY_PIECE);
    int fd = piece ? open(path, O_RDONLY) : -E_NO_MEMORY;
    long got = fd;
    while (fd >= 0 && (got = read(fd, piece, COPY_PIECE)) > 0)
        consume(context, piece, got);
    if (fd >= 0)
        close(fd);
    free(piece);
    return got < 0 ? got : 0;
}

static void write_to_console(void *context, const uint8_t *bytes, long length)
{
    (void)context;
    console_write(bytes, (size_t)length);
}

bool command_cat(int word_count, char **words)
{
    if (word_count != 2)
        return usage("cat PATH");
    fflush_console();
    long error = for_each_piece(words[1], write_to_console, NULL);
    return error == 0 ? true : fail("cat", words[1], error);
}

static void add_to_cksum(void *context, const uint8_t *bytes, long length)
{
    cksum_add(context, bytes, (size_t)length);
}

bool command_cksum(int word_count, char **words)
{
    if (word_count < 2)
        return usage("cksum PATH...");
    bool all_ok = true;
    for (int i = 1; i < word_count; i++) {
        struct cksum_state state;
        cksum_begin(&state);
        long error = for_each_piece(words[i], add_to_cksum, &state);
        if (error != 0)
            all_ok = fail("cksum", words[i], error);
        else
            printf("%u %lu %s\n", cksum_end(&state), state.length, words[i]);
    }
    return all_ok;
}

bool command_stat(int word_count, char **words)
{
    if (word_count != 2)
        return usage("stat PATH");
    struct file_status status;
    long error = stat(words[1], &status);
    if (error != 0)
        return fail("stat", words[1], error);
    printf("%s: inode %u, %s, %lu bytes, %lu sectors, mode 0x%x, %u links\n", words[1],
           status.inode, file_is_directory(status.mode) ? "directory" : "file", status.size,
           status.blocks, status.mode, status.links);
    printf("@json {\"kind\":\"stat\",\"inode\":%u,\"size\":%lu,\"mode\":%u,\"links\":%u,"
           "\"blocks\":%lu,\"uid\":%u,\"gid\":%u}\n",
           status.inode, status.size, status.mode, status.links, status.blocks, status.uid,
           status.gid);
    return true;
}

/* chmod MODE PATH (octal, as 644 or 0755) */
bool command_chmod(int word_count, char **words)
{
    char *end;
    unsigned long mode = word_count == 3 ? strtoul(words[1], &end, 8) : 0;
    if (word_count != 3 || end == words[1] || *end != '\0' || mode > 07777)
        return usage("chmod MODE PATH (MODE in octal)");
    long error = chmod(words[2], (uint32_t)mode);
    return error == 0 ? true : fail("chmod", words[2], error);
}

/* chown UID[:GID] PATH (numbers; without GID the group stays) */
bool command_chown(int word_count, char **words)
{
    struct file_status status;
    char *end = NULL;
    unsigned long uid = word_count == 3 ? strtoul(words[1], &end, 10) : 0;
    if (word_count != 3 || end == words[1] || (*end != '\0' && *end != ':'))
        return usage("chown UID[:GID] PATH");
    long error = stat(words[2], &status);
    unsigned long gid = status.gid;
    if (error == 0 && *end == ':') {
        const char *group = end + 1;
        gid = strtoul(group, &end, 10);
        if (end == group || *end != '\0')
            return usage("chown UID[:GID] PATH");
    }
    if (error == 0)
        error = chown(words[2], (uint32_t)uid, (uint32_t)gid);
    return error == 0 ? true : fail("chown", words[2], error);
}

struct copy_target {
    int fd;
    long error;
};

static void write_to_target(void *context, const uint8_t *bytes, long length)
{
    struct copy_target *target = context;
    long written = target->error == 0 ? write(target->fd, bytes, (size_t)length) : 0;
    if (target->error == 0 && written != length)
        target->error = written < 0 ? written : -E_NO_SPACE;
}

bool command_cp(int word_count, char **words)
{
    if (word_count != 3)
        return usage("cp SRC DST");
    struct copy_target target = {.fd = open(words[2], O_WRONLY | O_CREAT | O_TRUNC)};
    if (target.fd < 0)
        return fail("cp", words[2], target.fd);
    long error = for_each_piece(words[1], write_to_target, &target);
    close(target.fd);
    if (error != 0)
        return fail("cp", words[1], error);
    return target.error == 0 ? true : fail("cp", words[2], target.error);
}

/* One path operation: rm, mkdir, rmdir. */
static bool path_command(int word_count, char **words, long (*operation)(const char *))
{
    if (word_count != 2) {
        printf("usage: %s PATH\n", words[0]);
        return false;
    }
    long error = operation(words[1]);
    return error == 0 ? true : fail(words[0], words[1], error);
}

bool command_rm(int word_count, char **words)
{
    return path_command(word_count, words, unlink);
}

bool command_mkdir(int word_count, char **words)
{
    return path_command(word_count, words, mkdir);
}

bool command_rmdir(int word_count, char **words)
{
    return path_command(word_count, words, rmdir);
}

bool command_sync(int word_count, char **words)
{
    (void)word_count;
    long error = sync();
    return error == 0 ? true : fail(words[0], "", error);
}
