/* kept_tables.h: the pager's block tables in its kept region, so a restarted
 * pager finds its clients' swapped-out blocks again (docs/recovery.md). A
 * client's record counts only once its finish marker is written. */
#pragma once
#include "pager.h"
#include <stdbool.h>

#define KEPT_TABLE_BLOCKS 16384u /* a larger region's tables are not kept */

/* Maps the kept region; true when it held the tables of a pager that ended. */
bool kept_tables_open(void);
/* True when the client's tables would be kept (kept_tables_attach). */
bool kept_tables_would_attach(const struct client *client);
/* Points the client's tables (client number `index`) into the kept region,
 * emptied; false when they do not fit or there is no region. */
bool kept_tables_attach(struct client *client, int index);
/* Writes the client's configuration, then its finish marker. */
void kept_tables_commit(const struct client *client, int index);
/* Clears the finish marker: the record no longer counts. */
void kept_tables_forget(int index);
/* The kept configuration of client `index` as a PAGER_INIT message and its
 * requester (pid, uid, account); false when no finished record is there. */
bool kept_tables_record(int index, struct pager_init_message *asked, struct pager_requester *who);
/* Before a dirty block's store is sent: the checksum of its bytes, so a
 * restarted pager can tell whether the store reached the backend. */
void kept_tables_note_store(struct client *client, uint32_t block, uint64_t data_ica);
/* True when the bytes in `data_ica` are the ones the block's last store sent. */
bool kept_tables_store_matches(const struct client *client, uint32_t block, uint64_t data_ica);
/* Stores in flight are kept (their bytes, kept_stores.h) until the backend
 * acknowledges them, so a restarted pager can give back a block whose store
 * never arrived. A store waits for room. */
/* True when a store of the client's block size can be kept now (or the
 * client's tables are not kept). */
bool kept_tables_can_stage(const struct client *client);
/* After kept_tables_note_store: keeps the bytes in `data_ica`. */
void kept_tables_stage_store(const struct client *client, uint32_t block, uint64_t data_ica);
/* The block's store ended (acknowledged, failed or taken back): forgotten. */
void kept_tables_end_store(const struct client *client, uint32_t block);
/* Copies the kept bytes of the block's store into `data_ica`; false when
 * none are kept whole. */
bool kept_tables_staged_store(const struct client *client, uint32_t block, uint64_t data_ica);
/* Forgets every kept store of process `pid` (its client ended). */
void kept_tables_drop_stores(uint32_t pid);
/* The counters, kept after every request (PAGER_STATS goes on counting). */
void kept_tables_keep_counters(const struct client *client, int index);
void kept_tables_take_counters(struct client *client, int index);
/* The memory nodes' numbering kept for the replica tables, or NULL. */
struct node_directory *kept_tables_node_directory(void);
/* Points the client's tables at the kept ones, as they are. */
void kept_tables_reuse(struct client *client, int index);
