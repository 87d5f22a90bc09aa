/* hostile.h: what the attack files of tests/programs/hostile share: the one @json
 * line per attempt, and the attacks of other users' files (ownership.c),
 * of the shared servers' capacity (fair_share.c) and of the published
 * region slots (regions.c). */
#pragma once
#include <stdint.h>

/* Prints the case's @json "hostile" line; counts it as failed unless
 * result == wanted. */
void expect(const char *name, long result, long wanted);
/* The failures counted so far. */
int hostile_failures(void);

/* ownership.c: `hostile victim` makes another user's files; `hostile
 * owners` (as another user) tries to read, overwrite, remove, rename,
 * chmod and chown them and to open the pager's swap file. */
int make_victim_files(void);
int attack_owners(void);

/* fair_share.c: `hostile handles HOLD_MS` takes every FS handle its
 * account can get (with `hostile holder HOLD_MS` children) and holds them;
 * `hostile fill PATH [MARK]` writes PATH until the disk refuses (then makes
 * the file MARK); `hostile normal ROUNDS` is the ordinary program whose time
 * is measured; `hostile swapper MARK` keeps a disk-backed pager region busy
 * across a full disk (waiting for MARK between its halves); `hostile
 * newregion` asks for one more once the disk is full; `hostile await MARK
 * [BYTES]` waits until MARK exists (and holds BYTES: the pager's swap file
 * grown for a region). */
int take_all_handles(uint64_t hold_ms);
int hold_handles(uint64_t hold_ms);
int fill_disk(const char *path, const char *mark);
int normal_program(uint32_t rounds);
int swap_across_full_disk(const char *mark);
int new_region_on_full_disk(void);
int await_mark(const char *mark, uint64_t bytes);

/* stale_lends.c: `hostile keeplends blk|fs` keeps the pages its own file's
 * lend-only readblocks lent past the file's truncate, unlink and sync, and
 * reports whether any shows another user's bytes; `hostile secret blk|fs`
 * is that other user, writing a private file and directory once the
 * attacker's blocks are free. */
int keep_lends_past_truncate(const char *mode);
int write_secret_after_truncate(const char *mode);
/* `hostile raceread forward|pin|read|indirect|shorten` reads its file through an
 * FS replica that pauses as of its view (fs_replica_delay) while `hostile
 * racefree` truncates it (`shorten`: inside its last block) and `hostile
 * secret` takes the blocks. */
int read_during_free(const char *mode);
int free_during_read(const char *mode);

/* regions.c: `hostile regions PREFIX COUNT BYTES [MARK]` has COUNT children
 * (`hostile region NAME BYTES PARENT`) each register a name and map a
 * published region of BYTES, reports each result, and with MARK makes that
 * file and holds them until killed. */
int take_regions(const char *prefix, uint32_t count, uint64_t bytes, const char *mark);
int hold_region(const char *name, uint64_t bytes, long parent);

/* share_weight.c: `hostile weight [driver]` tries SYS_SHARE_WEIGHT's
 * refusals and the weights it takes (`driver`: run with --driver). */
int try_share_weights(const char *mode);
