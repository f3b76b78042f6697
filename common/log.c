/* GPUTRACE_LOG: where warnings, debug lines and the terminal summary go.
 *
 * The shim is a guest: its log must never change what the program's own
 * streams and descriptors do, nor hold up its exit.
 *
 * - Everything is written with write(2), never through the program's stdio
 *   streams. The summary comes after the program's output still in its
 *   stdout buffer at exit because the library's last exit point flushes
 *   that first, with the program's own SIGPIPE outcome (shim/init.c), or
 *   because the gputrace command prints it after the program ended.
 * - Descriptors 1 and 2 are written only while they are still the streams
 *   the process started with (device and inode, taken at load: a terminal,
 *   a pipe, a file, /dev/null each have their own). After `2>&-`, or once
 *   the program closed one, its number may be a file the program opened.
 * - A log file is opened (O_APPEND, so that a parent and its children each
 *   add their lines) for each write and closed again: the log is written
 *   rarely, and a descriptor kept open could be closed, or its number
 *   reused, by a program that closes every descriptor (daemons do) - we
 *   would then write into one of its files. It is opened O_NONBLOCK, so a
 *   FIFO with no reader fails at once (ENXIO) instead of waiting for one,
 *   and each time under safe_file.h's rule (no link followed, the user's
 *   own file with no other hard link), so that nobody can point a later
 *   open elsewhere.
 * - Every line is made safe on a terminal (utf8.h) as the summary's names
 *   are: warnings and debug lines quote names the program chose.
 * - A pipe, FIFO, socket or terminal that takes no more output is waited
 *   for at most GT_LOG_WAIT_MS in all over the life of the process; past
 *   that, what it does not take at once is dropped (a log file's is
 *   written to stderr instead).
 * - The SIGPIPE a write of ours raises is taken back: the program never
 *   dies of the shim's broken pipe, and its own writes still get theirs. */
#include "log.h"

#include "fd_guard.h"
#include "clock.h"
#include "config.h"
#include "safe_file.h"
#include "settings.h"
#include "terminal_width.h"
#include "utf8.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define GT_LOG_WAIT_MS 2000u

static enum gt_log_dest log_dest = GT_LOG_STDERR;
static const char *log_path;
static enum gt_verbosity log_verbosity = GT_VERB_DEFAULT;
static gt_fd_identity std_streams[STDERR_FILENO + 1]; /* written at init only */
static _Atomic int open_failure_told;                 /* relaxed: only decides one extra line */
static _Atomic int file_failure_told;                 /* relaxed: likewise */
static _Atomic uint64_t wait_left_ns; /* relaxed CAS: a budget, no data hangs on it */
static char columns_env[8];           /* COLUMNS at init (read then: getenv races later) */

void gt_log_init(enum gt_log_dest dest, const char *path, enum gt_verbosity v)
{
    log_dest = dest;
    log_path = path;
    log_verbosity = v;
    std_streams[STDOUT_FILENO] = gt_fd_identity_of(STDOUT_FILENO);
    std_streams[STDERR_FILENO] = gt_fd_identity_of(STDERR_FILENO);
    atomic_store_explicit(&open_failure_told, 0, memory_order_relaxed);
    atomic_store_explicit(&file_failure_told, 0, memory_order_relaxed);
    atomic_store_explicit(&wait_left_ns, (uint64_t)GT_LOG_WAIT_MS * 1000000u, memory_order_relaxed);
    const char *columns = getenv("COLUMNS");
    columns_env[0] = '\0';
    if (columns && strlen(columns) < sizeof columns_env) strcpy(columns_env, columns);
}

unsigned gt_log_columns(void)
{
    int fd = log_dest == GT_LOG_STDOUT ? STDOUT_FILENO : STDERR_FILENO;
    if (log_dest == GT_LOG_FILE) return 0;
    return gt_terminal_width(columns_env, gt_fd_is(fd, &std_streams[fd]) ? fd : -1);
}

int gt_log_debug_enabled(void)
{
    return log_verbosity == GT_VERB_DEBUG;
}

/* Takes ns (at least what is left) from the wait budget. */
static void charge(uint64_t ns)
{
    uint64_t left = atomic_load_explicit(&wait_left_ns, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&wait_left_ns, &left, left > ns ? left - ns : 0,
                                                  memory_order_relaxed, memory_order_relaxed)) {
    }
}

/* Waits until fd takes more output; false once the budget is spent. After
 * a write refused with EAGAIN though poll() said yes (a socket wanting
 * more room), `refused` waits a millisecond instead of spinning. */
static bool wait_writable(int fd, bool refused)
{
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    if (!refused && poll(&p, 1, 0) == 1) return true;
    for (;;) {
        uint64_t left = atomic_load_explicit(&wait_left_ns, memory_order_relaxed);
        if (left == 0) return false;
        uint64_t start = gt_clock_mono_ns();
        int ready;
        if (refused) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
            ready = 1;
        } else {
            ready = poll(&p, 1, (int)((left + 999999u) / 1000000u));
        }
        uint64_t spent = gt_clock_mono_ns() - start;
        charge(refused && spent < 1000000u ? 1000000u : spent);
        if (ready > 0) return true; /* POLLERR/POLLHUP too: the write says what */
        if (ready < 0 && errno != EINTR) return false;
    }
}

/* Writes as much of buf as fd takes within the budget; returns how much
 * that was, with *failure 0 when all, ETIMEDOUT when the budget ran out,
 * else the write's errno. Pipes and the like get pieces of at most PIPE_BUF, each after
 * poll() said there is room, so that a blocking descriptor (the program's
 * stdout or stderr, whose flags are not ours to change) never blocks. */
static size_t write_bounded(int fd, const char *buf, size_t len, int *failure)
{
    struct stat st;
    bool regular = fstat(fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode));
    sigset_t pipe_signal, old, pending;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, &old);
    bool was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE);
    bool refused = false;
    size_t done = 0;
    *failure = 0;
    while (done < len) {
        size_t n = regular || len - done <= PIPE_BUF ? len - done : PIPE_BUF;
        if (!regular && !wait_writable(fd, refused)) {
            *failure = ETIMEDOUT;
            break;
        }
        ssize_t w = write(fd, buf + done, n);
        refused = w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && !regular;
        if (refused || (w < 0 && errno == EINTR)) continue;
        if (w <= 0) {
            *failure = w < 0 ? errno : EIO;
            break;
        }
        done += (size_t)w;
    }
    if (*failure == EPIPE && !was_pending) {
        struct timespec now = {0, 0};
        sigtimedwait(&pipe_signal, NULL, &now);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return done;
}

/* Descriptors 1 and 2: only while they are what they were at load. */
static void write_std(int fd, const char *buf, size_t len)
{
    int failure;
    if (gt_fd_is(fd, &std_streams[fd])) write_bounded(fd, buf, len, &failure);
}

static void tell_on_stderr(_Atomic int *told, const char *what, const char *why)
{
    if (atomic_exchange_explicit(told, 1, memory_order_relaxed)) return;
    char line[GT_SHOWN_VALUE_MAX * 4 + 256], shown[GT_SHOWN_VALUE_MAX * 4 + 8];
    gt_escape(shown, sizeof shown, log_path, strlen(log_path), GT_SHOWN_VALUE_MAX);
    int n = snprintf(line, sizeof line,
                     "gputrace: warning: %s GPUTRACE_LOG file '%s': %s; writing to stderr\n", what,
                     shown, why);
    if (n > 0)
        write_std(STDERR_FILENO, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

static void write_to_file(const char *buf, size_t len)
{
    const char *refused;
    int fd = gt_file_open_append(log_path, &refused);
    if (fd < 0) {
        tell_on_stderr(&open_failure_told, "cannot open", refused);
        write_std(STDERR_FILENO, buf, len);
        return;
    }
    int failure;
    size_t done = write_bounded(fd, buf, len, &failure);
    close(fd);
    if (done == len) return;
    char why[96];
    if (failure == ETIMEDOUT)
        snprintf(why, sizeof why, "it stopped taking output (the log waits %u ms at most)",
                 GT_LOG_WAIT_MS);
    tell_on_stderr(&file_failure_told, "cannot write to",
                   failure == ETIMEDOUT ? why : strerror(failure));
    write_std(STDERR_FILENO, buf + done, len - done);
}

void gt_log_write(const char *buf, size_t len)
{
    int saved = errno;
    switch (log_dest) {
    case GT_LOG_STDOUT:
        write_std(STDOUT_FILENO, buf, len);
        break;
    case GT_LOG_FILE:
        write_to_file(buf, len);
        break;
    default:
        write_std(STDERR_FILENO, buf, len);
        break;
    }
    errno = saved;
}

static void log_line(const char *prefix, const char *fmt, va_list ap)
{
    char text[2048], line[2048];
    int saved = errno;
    int m = vsnprintf(text, sizeof text, fmt, ap);
    size_t len = m < 0 ? 0 : (size_t)m < sizeof text ? (size_t)m : sizeof text - 1;
    size_t n = (size_t)snprintf(line, sizeof line, "%s", prefix);
    /* cut to leave room for the newline: still one whole line */
    n += gt_text_safe_copy(line + n, sizeof line - 1 - n, text, len);
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
