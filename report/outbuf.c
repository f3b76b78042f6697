#include "outbuf.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

int gt_outbuf_init(gt_outbuf *b, int fd, size_t cap)
{
    memset(b, 0, sizeof(*b));
    b->fd = fd;
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

static void write_all(gt_outbuf *b, const char *p, size_t n)
{
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

int gt_outbuf_flush(gt_outbuf *b)
{
    write_all(b, b->buf, b->len);
    b->len = 0;
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

char *gt_put_u64(char *p, uint64_t v)
{
    char tmp[GT_U64_DIGITS];
    char *t = tmp + sizeof tmp;
    while (v >= 100) {
        unsigned pair = (unsigned)(v % 100);
        v /= 100;
        t -= 2;
        memcpy(t, &digit_pairs[2 * pair], 2);
    }
    if (v >= 10) {
        t -= 2;
        memcpy(t, &digit_pairs[2 * v], 2);
    } else {
        *--t = (char)('0' + v);
    }
    size_t n = (size_t)(tmp + sizeof tmp - t);
    memcpy(p, t, n);
    return p + n;
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
