/* nvm_identity.c: the identity and checksum header of NVDIMM layouts
 * (formica/nvm_identity.h): its ordered write, its checks, and the pair of
 * slots a layout that changes its header alternates between. */
#include <formica/kept_region.h>
#include <formica/nvm_identity.h>
#include <formica/nvm_persist.h>
#include <string.h>

uint64_t nvm_identity_sum(const struct nvm_identity *header)
{
    return kept_checksum(header, offsetof(struct nvm_identity, kept_checksum));
}

void nvm_identity_write(struct nvm_identity *header, const struct nvm_identity *body,
                        uint64_t magic)
{
    struct nvm_identity staged = *body;
    staged.magic = 0;
    staged.header_bytes = sizeof(struct nvm_identity);
    staged.kept_checksum = 0;
    nvm_write_persist(header, &staged, sizeof staged);
    staged.magic = magic; /* the checksum covers the magic the header will have */
    nvm_store64_persist(&header->kept_checksum, nvm_identity_sum(&staged));
    nvm_store64_persist(&header->magic, magic);
}

bool nvm_identity_valid(const struct nvm_identity *header, uint64_t magic, uint32_t version,
                        uint64_t device_bytes)
{
    return header->magic == magic && header->version == version &&
           header->header_bytes == sizeof(struct nvm_identity) &&
           header->device_bytes == device_bytes &&
           header->kept_checksum == nvm_identity_sum(header);
}

enum nvm_identity_verdict nvm_identity_check(const struct nvm_identity *header, uint64_t magic,
                                             uint32_t version, uint64_t device_bytes,
                                             const uint8_t *identity, size_t compare)
{
    if (!nvm_identity_valid(header, magic, version, device_bytes))
        return NVM_IDENTITY_NOT_OURS;
    if (identity != NULL && compare > NVM_IDENTITY_BYTES)
        compare = NVM_IDENTITY_BYTES;
    if (identity != NULL && compare > 0 && memcmp(header->identity, identity, compare) != 0)
        return NVM_IDENTITY_SOMEONE_ELSES;
    return NVM_IDENTITY_OURS;
}

int nvm_identity_pair_newest(const struct nvm_identity pair[2], uint64_t magic, uint32_t version,
                             uint64_t device_bytes)
{
    bool first = nvm_identity_valid(&pair[0], magic, version, device_bytes);
    bool second = nvm_identity_valid(&pair[1], magic, version, device_bytes);
    if (first && second)
        return pair[1].generation > pair[0].generation ? 1 : 0;
    return first ? 0 : second ? 1 : -1;
}

int nvm_identity_pair_update(struct nvm_identity pair[2], const struct nvm_identity *body,
                             uint64_t magic, uint32_t version)
{
    int newest = nvm_identity_pair_newest(pair, magic, version, body->device_bytes);
    int slot = newest == 0 ? 1 : 0;
    struct nvm_identity next = *body;
    next.version = version;
    next.generation = newest < 0 ? body->generation : pair[newest].generation + 1;
    nvm_store64_persist(&pair[slot].magic, 0); /* no longer a candidate before it changes */
    nvm_identity_write(&pair[slot], &next, magic);
    return slot;
}
