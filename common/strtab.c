/* Interned strings, safe from any thread without a lock.
 *
 * Two structures share the string nodes:
 *  - the id index: segments of node pointers, segment k holding
 *    SEG0_SIZE << k entries, allocated on first use and published with a
 *    release CAS, so that an id maps to its node in two acquire loads;
 *  - the hash index: a fixed array of bucket lists (its size chosen at
 *    creation); a new node is pushed on its bucket's head with a release
 *    CAS.
 * Nodes are immutable once published and live until the table is
 * destroyed. No lock is taken anywhere, so a fork() in the middle of an
 * intern cannot leave the child with a table it cannot use. Memory is the
 * strings themselves, one pointer per id (segments at most double that)
 * and the fixed bucket array.
 */
#include "strtab.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define SEG0_BITS 10u
#define SEG0_SIZE (1u << SEG0_BITS)
#define SEG_COUNT 23u /* SEG0_SIZE * (2^23 - 1) covers every uint32_t id */
#define BUCKET_BITS 14u /* the shim's table: a program has a few thousand names */

struct strnode {
    struct strnode *next; /* older node in the same bucket; fixed before publication */
    uint64_t hash;
    uint32_t id;
    size_t len;
    char str[];
};

struct gt_strtab {
    _Atomic(_Atomic(struct strnode *) *) segments[SEG_COUNT];
    _Atomic uint64_t next_id; /* relaxed: only uniqueness matters */
    uint64_t bucket_mask;
    _Atomic(struct strnode *) buckets[];
};

gt_strtab *gt_strtab_create_sized(unsigned bucket_bits)
{
    size_t count = (size_t)1 << bucket_bits;
    gt_strtab *t = calloc(1, sizeof(*t) + count * sizeof(t->buckets[0]));
    if (!t) return NULL;
    for (unsigned i = 0; i < SEG_COUNT; i++)
        atomic_init(&t->segments[i], NULL);
    for (size_t i = 0; i < count; i++)
        atomic_init(&t->buckets[i], NULL);
    atomic_init(&t->next_id, 1);
    t->bucket_mask = count - 1;
    return t;
}

gt_strtab *gt_strtab_create(void)
{
    return gt_strtab_create_sized(BUCKET_BITS);
}

/* Segment k covers ids [SEG0_SIZE * (2^k - 1), SEG0_SIZE * (2^(k+1) - 1)). */
static unsigned segment_of(uint32_t id, size_t *offset)
{
    uint64_t q = (uint64_t)id / SEG0_SIZE + 1;
    unsigned k = 63u - (unsigned)__builtin_clzll(q);
    *offset = (size_t)(id - (uint64_t)SEG0_SIZE * ((1ull << k) - 1));
    return k;
}

static size_t segment_size(unsigned k)
{
    return (size_t)SEG0_SIZE << k;
}

void gt_strtab_destroy(gt_strtab *t)
{
    if (!t) return;
    for (unsigned k = 0; k < SEG_COUNT; k++) {
        _Atomic(struct strnode *) *seg =
            atomic_load_explicit(&t->segments[k], memory_order_acquire);
        if (!seg) continue;
        for (size_t i = 0; i < segment_size(k); i++)
            free(atomic_load_explicit(&seg[i], memory_order_acquire));
        free((void *)seg);
    }
    free(t);
}

/* The slot of an id, allocating its segment when `create` is set. */
static _Atomic(struct strnode *) *slot_of(const gt_strtab *t, uint32_t id, bool create)
{
    size_t offset;
    unsigned k = segment_of(id, &offset);
    _Atomic(_Atomic(struct strnode *) *) *segp = (void *)&t->segments[k];
    _Atomic(struct strnode *) *seg = atomic_load_explicit(segp, memory_order_acquire);
    if (!seg && create) {
        _Atomic(struct strnode *) *fresh = calloc(segment_size(k), sizeof(*fresh));
        if (!fresh) return NULL;
        /* acq_rel: publishes the zeroed segment; on failure, acquires the winner's */
        if (atomic_compare_exchange_strong_explicit(segp, &seg, fresh, memory_order_acq_rel,
                                                    memory_order_acquire))
            seg = fresh;
        else
            free((void *)fresh);
    }
    return seg ? &seg[offset] : NULL;
}

static uint64_t hash_bytes(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

static const struct strnode *find_in_chain(const struct strnode *n, const struct strnode *stop,
                                           uint64_t hash, const char *s, size_t len)
{
    for (; n && n != stop; n = n->next)
        if (n->hash == hash && n->len == len && memcmp(n->str, s, len) == 0) return n;
    return NULL;
}

uint32_t gt_strtab_intern(gt_strtab *t, const char *s, size_t len)
{
    if (!t || !s || len == 0) return 0;
    uint64_t hash = hash_bytes(s, len);
    _Atomic(struct strnode *) *bucket = &t->buckets[hash & t->bucket_mask];
    struct strnode *head = atomic_load_explicit(bucket, memory_order_acquire);
    const struct strnode *found = find_in_chain(head, NULL, hash, s, len);
    if (found) return found->id;

    uint64_t id = atomic_fetch_add_explicit(&t->next_id, 1, memory_order_relaxed);
    if (id > UINT32_MAX) return 0;
    struct strnode *node = malloc(sizeof(*node) + len + 1);
    if (!node) return 0;
    node->hash = hash;
    node->id = (uint32_t)id;
    node->len = len;
    memcpy(node->str, s, len);
    node->str[len] = '\0';
    _Atomic(struct strnode *) *slot = slot_of(t, (uint32_t)id, true);
    if (!slot) {
        free(node);
        return 0;
    }
    /* release: the id resolves before any thread can learn it from the hash index */
    atomic_store_explicit(slot, node, memory_order_release);
    for (;;) {
        node->next = head;
        struct strnode *seen = head;
        /* acq_rel: publishes the node; on failure, acquires the newer head */
        if (atomic_compare_exchange_strong_explicit(bucket, &head, node, memory_order_acq_rel,
                                                    memory_order_acquire))
            return node->id;
        /* Only nodes pushed since `seen` can hold the same string. */
        found = find_in_chain(head, seen, hash, s, len);
        if (found) {
            /* relaxed: this id was never handed out, no reader can look for it */
            atomic_store_explicit(slot, NULL, memory_order_relaxed);
            free(node);
            return found->id;
        }
    }
}

const char *gt_strtab_get(const gt_strtab *t, uint32_t id)
{
    if (!t || id == 0) return "";
    _Atomic(struct strnode *) *slot = slot_of(t, id, false);
    if (!slot) return "";
    struct strnode *n = atomic_load_explicit(slot, memory_order_acquire);
    return n ? n->str : "";
}
