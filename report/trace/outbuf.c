#define _GNU_SOURCE /* sync_file_range */
#include "fd_guard.h"
#include "outbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int gt_outbuf_init(gt_outbuf *b, int fd, size_t cap)
{
    memset(b, 0, sizeof(*b));
    b->fd = fd;
    struct stat st;
    if (fstat(fd, &st) == 0) b->file = gt_fd_identity_of_stat(&st);
    if (!b->file.known || !S_ISREG(st.st_mode)) b->behind = UINT64_MAX;
    b->buf = malloc(cap);
    if (!b->buf) return -1;
    b->cap = cap;
    return 0;
}

int gt_outbuf_init_sink(gt_outbuf *b, size_t cap, gt_outbuf_sink sink, void *ctx)
{
    memset(b, 0, sizeof(*b));
    b->fd = -1;
    b->behind = UINT64_MAX;
    b->sink = sink;
    b->sink_ctx = ctx;
    b->buf = malloc(cap);
    if (!b->buf) return -1;
    b->cap = cap;
    return 0;
}

void gt_outbuf_free(gt_outbuf *b)
{
    free(b->buf);
    b->buf = NULL;
    b->len = b->cap = 0;
}

/* One batch of writes: the descriptor is checked once before it (one
 * fstat per buffer full). */
static void write_all(gt_outbuf *b, const char *p, size_t n)
{
    if (b->sink) {
        if (n) b->sink(b->sink_ctx, p, n);
        b->written += n;
        return;
    }
    if (n && !b->error && !gt_fd_is(b->fd, &b->file)) b->error = EBADF;
    while (n && !b->error) {
        ssize_t w = write(b->fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            b->error = w < 0 ? errno : EIO;
            return;
        }
        p += w;
        n -= (size_t)w;
        b->written += (uint64_t)w;
    }
}

/* The windows written since the last call go to writeback; the window
 * before each is dropped from the page cache (what is still dirty or
 * under writeback stays). Failures only mean that pages stay cached. */
static void write_behind(gt_outbuf *b)
{
    const uint64_t w = GT_OUTBUF_BEHIND_WINDOW;
    /* After an error the descriptor may be another file's. */
    if (b->error || b->behind == UINT64_MAX || b->written < GT_OUTBUF_BEHIND_START) return;
    if (b->behind == 0) b->behind = b->written / w * w; /* the first windows stay cached */
    int saved = errno;
    for (; b->written - b->behind >= w; b->behind += w) {
        sync_file_range(b->fd, (off_t)b->behind, (off_t)w, SYNC_FILE_RANGE_WRITE);
        posix_fadvise(b->fd, (off_t)(b->behind - w), (off_t)w, POSIX_FADV_DONTNEED);
    }
    errno = saved;
}

int gt_outbuf_flush(gt_outbuf *b)
{
    write_all(b, b->buf, b->len);
    b->len = 0;
    write_behind(b);
    return b->error ? -1 : 0;
}

char *gt_outbuf_reserve_slow(gt_outbuf *b, size_t n)
{
    gt_outbuf_flush(b);
    if (n > b->cap) {
        char *grown = realloc(b->buf, n);
        if (!grown) return NULL;
        b->buf = grown;
        b->cap = n;
    }
    return b->buf;
}

void gt_outbuf_write_slow(gt_outbuf *b, const void *p, size_t n)
{
    gt_outbuf_flush(b);
    if (n <= b->cap) {
        memcpy(b->buf, p, n);
        b->len = n;
    } else {
        write_all(b, p, n);
    }
}

static const char digit_pairs[201] = "00010203040506070809"
                                     "10111213141516171819"
                                     "20212223242526272829"
                                     "30313233343536373839"
                                     "40414243444546474849"
                                     "50515253545556575859"
                                     "60616263646566676869"
                                     "70717273747576777879"
                                     "80818283848586878889"
                                     "90919293949596979899";

/* Decimal digits of v: from its bit length (log10(2) ~ 1233 / 4096), then
 * one comparison. */
static unsigned decimal_digits(uint64_t v)
{
    static const uint64_t pow10[GT_U64_DIGITS] = {
        1ull,
        10ull,
        100ull,
        1000ull,
        10000ull,
        100000ull,
        1000000ull,
        10000000ull,
        100000000ull,
        1000000000ull,
        10000000000ull,
        100000000000ull,
        1000000000000ull,
        10000000000000ull,
        100000000000000ull,
        1000000000000000ull,
        10000000000000000ull,
        100000000000000000ull,
        1000000000000000000ull,
        10000000000000000000ull,
    };
    if (v == 0) return 1;
    unsigned t = (unsigned)(64 - __builtin_clzll(v)) * 1233u >> 12;
    return t + 1 - (v < pow10[t]);
}

/* Written from the last digit back, straight into place: a number costs
 * no copy (most of the trace's bytes are numbers). */
char *gt_put_u64(char *p, uint64_t v)
{
    char *end = p + decimal_digits(v), *t = end;
    while (v >= 100) {
        unsigned pair = (unsigned)(v % 100);
        v /= 100;
        t -= 2;
        memcpy(t, &digit_pairs[2 * pair], 2);
    }
    if (v >= 10)
        memcpy(t - 2, &digit_pairs[2 * v], 2);
    else
        t[-1] = (char)('0' + v);
    return end;
}

char *gt_put_us(char *p, int64_t ns)
{
    uint64_t v = (uint64_t)ns;
    if (ns < 0) {
        *p++ = '-';
        v = 0 - v;
    }
    p = gt_put_u64(p, v / 1000);
    unsigned frac = (unsigned)(v % 1000);
    if (!frac) return p;
    *p++ = '.';
    *p++ = (char)('0' + frac / 100);
    if (frac % 100 == 0) return p;
    *p++ = digit_pairs[2 * (frac % 100)];
    if (frac % 10 == 0) return p;
    *p++ = digit_pairs[2 * (frac % 100) + 1];
    return p;
}
