/* GPUTRACE_LOG: where warnings, debug lines and the terminal summary go.
 *
 * Everything is written with write(2), never through the program's stdio
 * streams, so the shim never touches their buffers or locks. A log file is
 * opened (O_APPEND, so that a parent and its children each add their
 * lines) for each write and closed again: the log is written rarely, and a
 * descriptor kept open could be closed, or its number reused, by a program
 * that closes every descriptor (daemons do) - we would then write into one
 * of its files. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

static enum gt_log_dest log_dest = GT_LOG_STDERR;
static const char *log_path;
static enum gt_verbosity log_verbosity = GT_VERB_DEFAULT;
static _Atomic int open_failure_told; /* relaxed: only decides one extra line */

void gt_log_init(enum gt_log_dest dest, const char *path, enum gt_verbosity v)
{
    log_dest = dest;
    log_path = path;
    log_verbosity = v;
    atomic_store_explicit(&open_failure_told, 0, memory_order_relaxed);
}

int gt_log_debug_enabled(void)
{
    return log_verbosity == GT_VERB_DEBUG;
}

static void write_all(int fd, const char *buf, size_t len)
{
    while (len) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        buf += n;
        len -= (size_t)n;
    }
}

static void write_to_file(const char *buf, size_t len)
{
    int fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0666);
    if (fd >= 0) {
        write_all(fd, buf, len);
        close(fd);
        return;
    }
    if (!atomic_exchange_explicit(&open_failure_told, 1, memory_order_relaxed)) {
        char line[GT_PATH_MAX + 160], shown[GT_SHOWN_VALUE_MAX * 4 + 8];
        gt_escape(shown, sizeof shown, log_path, strlen(log_path), GT_SHOWN_VALUE_MAX);
        int n = snprintf(line, sizeof line,
                         "gputrace: warning: cannot open GPUTRACE_LOG file '%s': %s; writing to "
                         "stderr\n",
                         shown, strerror(errno));
        if (n > 0)
            write_all(STDERR_FILENO, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    }
    write_all(STDERR_FILENO, buf, len);
}

void gt_log_write(const char *buf, size_t len)
{
    int saved = errno;
    switch (log_dest) {
    case GT_LOG_STDOUT:
        /* What the program has printed so far goes first; never wait for
         * its stream (a signal may have interrupted a thread holding it). */
        if (ftrylockfile(stdout) == 0) {
            fflush_unlocked(stdout);
            funlockfile(stdout);
        }
        write_all(STDOUT_FILENO, buf, len);
        break;
    case GT_LOG_FILE:
        write_to_file(buf, len);
        break;
    default:
        write_all(STDERR_FILENO, buf, len);
        break;
    }
    errno = saved;
}

static void log_line(const char *prefix, const char *fmt, va_list ap)
{
    char line[2048];
    int saved = errno;
    size_t n = (size_t)snprintf(line, sizeof line, "%s", prefix);
    int m = vsnprintf(line + n, sizeof line - n, fmt, ap);
    if (m > 0) n += (size_t)m;
    if (n > sizeof line - 2) n = sizeof line - 2; /* cut: still one whole line */
    line[n++] = '\n';
    gt_log_write(line, n);
    errno = saved;
}

void gt_warn(const char *fmt, ...)
{
    if (log_verbosity == GT_VERB_NONE) return;
    va_list ap;
    va_start(ap, fmt);
    log_line("gputrace: warning: ", fmt, ap);
    va_end(ap);
}

void gt_debug(const char *fmt, ...)
{
    if (log_verbosity != GT_VERB_DEBUG) return;
    va_list ap;
    va_start(ap, fmt);
    log_line("gputrace: debug: ", fmt, ap);
    va_end(ap);
}

/* Length of the well-formed UTF-8 sequence at s (at most `avail` bytes)
 * that encodes a printable code point, or 0. C1 controls (U+0080-U+009F)
 * are refused: terminals act on them. */
static size_t utf8_printable(const unsigned char *s, size_t avail)
{
    size_t n;
    uint32_t cp, min;
    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        n = 2, cp = s[0] & 0x1fu, min = 0xa0;
    else if (s[0] >= 0xe0 && s[0] <= 0xef)
        n = 3, cp = s[0] & 0x0fu, min = 0x800;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4)
        n = 4, cp = s[0] & 0x07u, min = 0x10000;
    else
        return 0;
    if (n > avail) return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0u) != 0x80u) return 0;
        cp = cp << 6 | (s[i] & 0x3fu);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return n;
}

size_t gt_escape(char *out, size_t out_size, const char *s, size_t len, size_t max_src)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *u = (const unsigned char *)s;
    size_t limit = len < max_src ? len : max_src, i = 0, o = 0;
    if (out_size == 0) return 0;
    while (i < limit) {
        char piece[8];
        size_t pn = 0, used = 1;
        size_t seq = u[i] >= 0x80 ? utf8_printable(u + i, limit - i) : 0;
        if (seq) {
            memcpy(piece, u + i, seq);
            pn = used = seq;
        } else if (u[i] == '\\' || u[i] == '\'') {
            piece[pn++] = '\\';
            piece[pn++] = (char)u[i];
        } else if (u[i] >= 0x20 && u[i] < 0x7f) {
            piece[pn++] = (char)u[i];
        } else {
            piece[pn++] = '\\';
            piece[pn++] = 'x';
            piece[pn++] = hex[u[i] >> 4];
            piece[pn++] = hex[u[i] & 15];
        }
        if (o + pn + 4 > out_size) break; /* room for "..." and the NUL */
        memcpy(out + o, piece, pn);
        o += pn;
        i += used;
    }
    if (i < len && o + 4 <= out_size) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
    return o;
}
