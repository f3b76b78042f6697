/* Interned strings: names are turned into small ids once (off the hot path)
 * so that event records carry ids, never strings. */
#ifndef GT_STRTAB_H
#define GT_STRTAB_H

#include <stddef.h>
#include <stdint.h>

typedef struct gt_strtab gt_strtab;

gt_strtab *gt_strtab_create(void);
/* With 2^bucket_bits hash buckets (the default 2^14 suits a program's few
 * thousand names; a reader of large reports wants about one per name). */
gt_strtab *gt_strtab_create_sized(unsigned bucket_bits);
void gt_strtab_destroy(gt_strtab *t);

/* Returns the id of the string (len bytes, need not be NUL-terminated),
 * adding it when new. Id 0 is the empty string. Safe from any thread.
 * Returns 0 when memory runs out (the caller's name becomes empty). */
uint32_t gt_strtab_intern(gt_strtab *t, const char *s, size_t len);

/* The string of an id, NUL-terminated, valid until the table is destroyed.
 * Lock-free; safe from any thread, concurrently with gt_strtab_intern.
 * An unknown id gives "". */
const char *gt_strtab_get(const gt_strtab *t, uint32_t id);

#endif
