/* nvm_identity.h: the 128-byte header every Formica layout on an NVDIMM
 * starts with (docs/design.md, "The identity and checksum header"): whose
 * data it holds, checked by magic, version, size and checksum. Written in
 * the order body, checksum, magic, each persisted, so a torn write is never
 * valid; a layout that changes it later keeps two slots and writes the
 * older one (nvm_identity_pair_update). Pure apart from the flush layer. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NVM_IDENTITY_BYTES 48u
#define NVM_IDENTITY_GEOMETRY 5u

struct nvm_identity {
    uint64_t magic;                       /* the user's: "FORMNVM1", "FORMTIER", "FORMNODE" */
    uint32_t version;                     /* of the user's layout */
    uint32_t header_bytes;                /* sizeof(struct nvm_identity) */
    uint64_t device_bytes;                /* the NVDIMM's size from the NFIT */
    uint8_t identity[NVM_IDENTITY_BYTES]; /* whose data: the disk's, the node's, 0 for the pager */
    uint64_t generation;                  /* mounts (or updates) so far */
    uint64_t geometry[NVM_IDENTITY_GEOMETRY]; /* the user's */
    uint64_t kept_checksum;                   /* kept_checksum of everything before it */
};
_Static_assert(sizeof(struct nvm_identity) == 128, "the identity header is 128 bytes");

enum nvm_identity_verdict {
    NVM_IDENTITY_OURS,          /* valid, and the identity matches */
    NVM_IDENTITY_NOT_OURS,      /* magic, version, size or checksum fails */
    NVM_IDENTITY_SOMEONE_ELSES, /* valid, written for another identity */
};

/* The checksum a header's body should carry. */
uint64_t nvm_identity_sum(const struct nvm_identity *header);
/* Writes `body` (its magic and checksum ignored) into `header`: the body
 * with magic 0, persisted; then the checksum, persisted; then `magic`,
 * persisted. */
void nvm_identity_write(struct nvm_identity *header, const struct nvm_identity *body,
                        uint64_t magic);
/* True when `header` has `magic`, `version`, 128 header bytes,
 * `device_bytes` and a right checksum. */
bool nvm_identity_valid(const struct nvm_identity *header, uint64_t magic, uint32_t version,
                        uint64_t device_bytes);
/* nvm_identity_valid, then the first `compare` bytes of the identity
 * against `identity` (NULL or 0: not compared). */
enum nvm_identity_verdict nvm_identity_check(const struct nvm_identity *header, uint64_t magic,
                                             uint32_t version, uint64_t device_bytes,
                                             const uint8_t *identity, size_t compare);
/* Of two slots, the valid one with the higher generation: 0, 1, or -1
 * when neither is valid. */
int nvm_identity_pair_newest(const struct nvm_identity pair[2], uint64_t magic, uint32_t version,
                             uint64_t device_bytes);
/* Makes `body` (generation one past the newest) the newest of the pair by
 * writing the other slot (its magic cleared first, persisted): a crash
 * leaves the old newest valid, or the new one. Returns the slot written. */
int nvm_identity_pair_update(struct nvm_identity pair[2], const struct nvm_identity *body,
                             uint64_t magic, uint32_t version);
