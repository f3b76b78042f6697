/* An append-only buffer in front of a file descriptor, for writers that
 * stream a lot of small pieces (the trace timeline): one write(2) per
 * buffer full, no stdio (so that a forked child that abandons it never
 * flushes the parent's data a second time), and number formatting that
 * costs a few nanoseconds. The first write error is kept and stops
 * every later write. Before each batch of writes the descriptor is
 * checked to be still the file it was at init (fd_guard.h): when the
 * program has closed it, or put a file of its own on its number, nothing
 * more is written (the error is then EBADF).
 *
 * Write-behind: past GT_OUTBUF_BEHIND_START bytes of a regular file, each
 * GT_OUTBUF_BEHIND_WINDOW written is handed to writeback at once, and the
 * page cache of the window before it is dropped once written back. A
 * multi-gigabyte trace then holds a few windows of page cache instead of
 * its whole size, and its pages are recycled as it goes: taking fresh
 * pages is what costs in writing a large file (in a virtual machine they
 * may first have to be faulted in from the host). The writers' benchmark
 * spent 3.4 s here writing its 1.7 GB trace to a file beyond what
 * /dev/null took, 0.7 s with write-behind. Nothing waits for writeback to
 * finish (starting it waits at most for room in the disk's queue): a
 * window not yet written back simply stays cached. */
#ifndef GT_OUTBUF_H
#define GT_OUTBUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fd_guard.h"

#define GT_OUTBUF_BEHIND_START (64u << 20)
#define GT_OUTBUF_BEHIND_WINDOW (16u << 20)

/* Where a buffer without a file hands what it holds (gt_outbuf_init_sink):
 * whole commits, so a writer that commits whole records gets whole
 * records. */
typedef void (*gt_outbuf_sink)(void *ctx, const char *p, size_t n);

typedef struct gt_outbuf {
    int fd;
    char *buf;
    size_t len;
    size_t cap;
    uint64_t written;    /* bytes handed to the file so far */
    uint64_t behind;     /* bytes handed to writeback so far; UINT64_MAX: not a regular file */
    int error;           /* errno of the first failure, 0 while none */
    gt_fd_identity file; /* what fd was at init */
    gt_outbuf_sink sink; /* instead of the file, when set */
    void *sink_ctx;
} gt_outbuf;

/* 0, or -1 when the buffer cannot be allocated. The fd stays the caller's. */
int gt_outbuf_init(gt_outbuf *b, int fd, size_t cap);
/* The same for a buffer whose flushes go to sink (never an error here:
 * the sink keeps its own). */
int gt_outbuf_init_sink(gt_outbuf *b, size_t cap, gt_outbuf_sink sink, void *ctx);
void gt_outbuf_free(gt_outbuf *b);

/* Writes out what is buffered; 0, or -1 once an error has occurred. */
int gt_outbuf_flush(gt_outbuf *b);

/* Appends n bytes of any size. */
void gt_outbuf_write_slow(gt_outbuf *b, const void *p, size_t n);

static inline void gt_outbuf_write(gt_outbuf *b, const void *p, size_t n)
{
    if (n <= b->cap - b->len) {
        memcpy(b->buf + b->len, p, n);
        b->len += n;
    } else {
        gt_outbuf_write_slow(b, p, n);
    }
}

/* Makes room for n bytes when the buffer does not have it: flushes, and
 * grows the buffer when n is larger than it (the longest name decides). */
char *gt_outbuf_reserve_slow(gt_outbuf *b, size_t n);

/* Room for n more bytes at the returned pointer; the caller fills up to n
 * bytes and passes the new end to gt_outbuf_commit. NULL (nothing may be
 * written) when the buffer could not grow to n. */
static inline char *gt_outbuf_reserve(gt_outbuf *b, size_t n)
{
    if (n > b->cap - b->len) return gt_outbuf_reserve_slow(b, n);
    return b->buf + b->len;
}

static inline void gt_outbuf_commit(gt_outbuf *b, const char *end)
{
    b->len = (size_t)(end - b->buf);
}

#define GT_U64_DIGITS 20u

/* v in decimal at p; returns the end. */
char *gt_put_u64(char *p, uint64_t v);

/* ns as microseconds, exact: "-1234.567", "2.5", "7" (no trailing zeros);
 * returns the end. */
char *gt_put_us(char *p, int64_t ns);

static inline char *gt_put_lit(char *p, const char *s, size_t n)
{
    memcpy(p, s, n);
    return p + n;
}

/* A string literal at p. */
#define GT_PUT(p, lit) gt_put_lit((p), (lit), sizeof(lit) - 1)

#endif
