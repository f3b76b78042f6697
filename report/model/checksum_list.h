/* The checksums of what a run's device-to-host copies brought back
 * (GPUTRACE_CHECKSUM; JSON `checksums`): one entry per copy, in each
 * thread's order, and per thread a digest of all its copies.
 *
 * The list is bounded (GT_CHECKSUMS_LISTED_MAX entries): copies past it
 * are counted, and still enter their thread's digest, so that two runs
 * whose unlisted copies differ are still told apart (diff.h). The digest
 * is a sum of one hash per copy, whatever order the copies came in
 * (an asynchronous copy is hashed at its synchronize, after copies the
 * thread made later). */
#ifndef GT_CHECKSUM_LIST_H
#define GT_CHECKSUM_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "checksum_mode.h"
#include "idmap.h"

#define GT_CHECKSUMS_LISTED_MAX 100000u

typedef struct gt_checksum_entry {
    uint64_t index; /* among its thread's device-to-host copies, from 0 */
    uint64_t bytes;
    uint64_t hash;   /* with status GT_CK_HASHED */
    uint32_t thread; /* the thread's number (event.h, u.checksum.thread) */
    uint32_t rank;   /* a merged report's input it came from; 0 otherwise */
    /* Where the program made the copy: the string id of the site's
     * compact JSON text (as `callsites` writes a site, or as a report read
     * back had it); 0: unknown. */
    uint32_t site;
    uint8_t status; /* enum gt_checksum_status */
} gt_checksum_entry;

/* One thread's copies, listed or not. */
typedef struct gt_checksum_thread {
    uint32_t rank;
    uint32_t thread;
    uint64_t copies;
    uint64_t bytes;
    uint64_t digest; /* sum of gt_checksum_entry_digest over its copies */
} gt_checksum_thread;

typedef struct gt_checksums {
    bool on; /* the report was made with checksums (a mode other than off) */
    gt_checksum_mode mode;
    uint64_t hashed;
    uint64_t hashed_bytes;
    uint64_t unhashed;
    uint64_t by_status[GT_CK_STATUS_COUNT];
    uint64_t cost_ns; /* time the program's threads spent hashing */
    uint64_t unlisted;
    gt_checksum_entry *entries;
    size_t n, cap;
    gt_checksum_thread *threads;
    size_t nthreads, threads_cap;
    gt_idmap thread_index; /* rank << 32 | thread -> index in threads */
    bool incomplete;       /* memory ran out: some copies are missing */
} gt_checksums;

/* The mode the copies were hashed in; turns the list on (any mode but off). */
void gt_checksums_set_mode(gt_checksums *c, gt_checksum_mode m);

/* One copy: listed while there is room, counted and folded into its
 * thread's digest always. cost_ns: the time its hashing took. */
void gt_checksums_add(gt_checksums *c, const gt_checksum_entry *e, uint64_t cost_ns);

/* A listed copy of a report read back or merged, whose counts and thread
 * summaries are set apart: listed whatever the list's bound (the file's
 * size bounds it). 0, or -1 when out of memory. */
int gt_checksums_list(gt_checksums *c, const gt_checksum_entry *e);

/* A thread's summary as a report read back gives it (its copies past
 * the list included): replaces what adding its listed copies made. */
void gt_checksums_set_thread(gt_checksums *c, const gt_checksum_thread *t);

/* A copy's share of its thread's digest. */
uint64_t gt_checksum_entry_digest(const gt_checksum_entry *e);

/* The entries by rank, thread and index, and the threads by rank and
 * thread: new arrays, NULL when out of memory or empty. */
gt_checksum_entry *gt_checksums_sorted(const gt_checksums *c);
gt_checksum_thread *gt_checksums_threads_sorted(const gt_checksums *c);

/* The summary of thread (rank, thread); NULL when it has none. */
const gt_checksum_thread *gt_checksums_find_thread(const gt_checksums *c, uint32_t rank,
                                                   uint32_t thread);

void gt_checksums_free(gt_checksums *c);

#endif
