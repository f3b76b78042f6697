/* XXH3-64: the 64-bit hash of the xxHash family, with seed 0 and the
 * default secret, written from its published specification (xxHash's
 * doc/xxhash_spec.md). What a checksum of copied-back data is made of
 * (checksum_hash.h): fast (it runs on the program's thread), free of
 * patents and licences, and a value anyone can check with
 * `xxhsum -H3 FILE` on the same bytes.
 *
 * One call for a whole buffer, or a state fed piece by piece (for data
 * that is transformed on the way, as the tolerant float modes do); both
 * give the same value for the same bytes, however they are split. */
#ifndef GT_XXH3_H
#define GT_XXH3_H

#include <stddef.h>
#include <stdint.h>

/* The name reports give the hash. */
#define GT_XXH3_NAME "xxh3-64"

uint64_t gt_xxh3_64(const void *data, size_t len);

typedef struct gt_xxh3 {
    _Alignas(16) uint64_t acc[8];
    uint64_t total;         /* bytes fed so far */
    uint32_t buffered;      /* bytes of buf not yet accumulated */
    uint32_t stripes;       /* stripes accumulated in the current block */
    unsigned char buf[256]; /* held back: a stripe is taken only once a byte follows it */
    unsigned char last[64]; /* the last 64 bytes accumulated, for the final stripe */
} gt_xxh3;

void gt_xxh3_init(gt_xxh3 *s);
void gt_xxh3_update(gt_xxh3 *s, const void *data, size_t len);
/* The hash of everything fed so far; the state may be fed on after it. */
uint64_t gt_xxh3_digest(const gt_xxh3 *s);

#endif
