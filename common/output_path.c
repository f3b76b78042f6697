#include "output_path.h"

#include "safe_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define MAX_VAR_NAME 255u

static const char *const format_names[GT_OUTPUT_FORMAT_COUNT] = {"text", "json", "csv", "chrome",
                                                                 "perfetto"};
static const char *const extensions[GT_OUTPUT_FORMAT_COUNT] = {".txt", ".json", ".csv",
                                                               ".trace.json", ".pftrace"};

const char *gt_output_format_name(enum gt_output_format f)
{
    return (unsigned)f < GT_OUTPUT_FORMAT_COUNT ? format_names[f] : "unknown";
}

const char *gt_output_extension(enum gt_output_format f)
{
    return (unsigned)f < GT_OUTPUT_FORMAT_COUNT ? extensions[f] : "";
}

/* A bounded string being built; `full` once anything did not fit. */
typedef struct path_builder {
    char *out;
    size_t limit; /* bytes usable, the NUL included */
    size_t len;
    bool full;
} path_builder;

static void builder_init(path_builder *b, char *out, size_t cap)
{
    b->out = out;
    b->limit = cap < PATH_MAX ? cap : PATH_MAX;
    b->len = 0;
    b->full = cap == 0;
    if (cap) out[0] = '\0';
}

static void append(path_builder *b, const char *s, size_t n)
{
    if (b->full || n >= b->limit - b->len) {
        b->full = true;
        return;
    }
    memcpy(b->out + b->len, s, n);
    b->len += n;
    b->out[b->len] = '\0';
}

static void append_str(path_builder *b, const char *s)
{
    if (s) append(b, s, strlen(s));
}

/* A value from outside the template (a host name, a report's, an
 * environment variable): one name, never a way elsewhere. A '/' or a
 * control byte becomes '_', and so does a leading '.', so that no path
 * component the value is part of can be "." or "..". With `literal`, a '%'
 * is doubled (the result is a template again). */
static void append_value(path_builder *b, const char *s, bool literal)
{
    for (size_t i = 0; s && s[i]; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '/' || c < 0x20 || c == 0x7f || (i == 0 && c == '.'))
            append(b, "_", 1);
        else if (c == '%' && literal)
            append(b, "%%", 2);
        else
            append(b, s + i, 1);
    }
}

static int builder_result(path_builder *b)
{
    if (!b->full) return 0;
    if (b->limit) b->out[0] = '\0';
    return -1;
}

/* At p: "{NAME}" with 0 < len(NAME) <= MAX_VAR_NAME. Copies NAME into name
 * and returns the length consumed, or 0 when malformed. */
static size_t parse_var(const char *p, char name[MAX_VAR_NAME + 1])
{
    if (p[0] != '{') return 0;
    const char *close = strchr(p + 1, '}');
    size_t n = close ? (size_t)(close - p - 1) : 0;
    if (n == 0 || n > MAX_VAR_NAME) return 0;
    memcpy(name, p + 1, n);
    name[n] = '\0';
    return n + 2;
}

/* The expansion; with vars_only, %q{VAR} alone (its value a template
 * again, see append_value) and every other token kept as written. */
static int expand(const char *tmpl, int pid, const char *host, const char *(*get)(const char *),
                  bool vars_only, unsigned number, char *out, size_t cap)
{
    path_builder b;
    builder_init(&b, out, cap);
    for (const char *p = tmpl; *p;) {
        const char *pct = strchr(p, '%');
        if (!pct) {
            append_str(&b, p);
            break;
        }
        append(&b, p, (size_t)(pct - p));
        char c = pct[1], name[MAX_VAR_NAME + 1];
        size_t used = c == 'q' ? parse_var(pct + 2, name) : 0;
        p = pct + 2;
        if (used) {
            append_value(&b, get ? get(name) : NULL, vars_only);
            p += used;
        } else if (vars_only || (c != '%' && c != 'p' && c != 'h' && (c != 'n' || !number))) {
            /* Kept as written: "%%" whole (its second '%' starts nothing);
             * else the '%' alone, the rest read on as text (a trailing '%',
             * an unknown letter, a %q without a well-formed {VAR}). */
            p = pct + (c == '%' ? 2 : 1);
            append(&b, pct, (size_t)(p - pct));
        } else if (c == '%') {
            append(&b, "%", 1);
        } else if (c == 'p' || c == 'n') {
            char num[24];
            if (c == 'p')
                snprintf(num, sizeof(num), "%d", pid);
            else
                snprintf(num, sizeof(num), "%u", number);
            append_str(&b, num);
        } else {
            append_value(&b, host, false);
        }
    }
    return builder_result(&b);
}

int gt_output_expand(const char *tmpl, int pid, const char *host, const char *(*get)(const char *),
                     char *out, size_t cap)
{
    return expand(tmpl, pid, host, get, false, 0, out, cap);
}

int gt_output_expand_numbered(const char *tmpl, int pid, const char *host,
                              const char *(*get)(const char *), unsigned number, char *out,
                              size_t cap)
{
    return expand(tmpl, pid, host, get, false, number, out, cap);
}

bool gt_output_numbered(const char *tmpl)
{
    char a[PATH_MAX], b[PATH_MAX];
    /* Told by what it expands to, so that a %%n is no number. */
    return expand(tmpl, 0, "", NULL, false, 1, a, sizeof a) == 0 &&
           expand(tmpl, 0, "", NULL, false, 2, b, sizeof b) == 0 && strcmp(a, b) != 0;
}

int gt_output_expand_vars(const char *tmpl, const char *(*get)(const char *), char *out, size_t cap)
{
    return expand(tmpl, 0, NULL, get, true, 0, out, cap);
}

bool gt_output_relative(const char *tmpl, int pid, const char *host,
                        const char *(*get)(const char *))
{
    char probe[PATH_MAX];
    /* A template too long to expand is refused when the files are named. */
    return gt_output_expand(tmpl, pid, host, get, probe, sizeof probe) == 0 && probe[0] != '/';
}

int gt_output_anchor(const char *tmpl, const char *dir, char *out, size_t cap)
{
    path_builder b;
    builder_init(&b, out, cap);
    for (const char *p = dir; *p; p++)
        append(&b, *p == '%' ? "%%" : p, *p == '%' ? 2 : 1);
    if (!dir[0] || dir[strlen(dir) - 1] != '/') append(&b, "/", 1);
    append_str(&b, tmpl);
    return builder_result(&b);
}

int gt_output_file_name(const char *base, enum gt_output_format f, char *out, size_t cap)
{
    path_builder b;
    builder_init(&b, out, cap);
    append_str(&b, base);
    append_str(&b, gt_output_extension(f));
    return builder_result(&b);
}

/* Keeps the reason for the first failure. */
static void fail(char *err, size_t errcap, const char *path, const char *what, int errnum)
{
    if (!err || errcap == 0) return;
    if (errnum)
        snprintf(err, errcap, "%s: %s: %s", path, what, strerror(errnum));
    else
        snprintf(err, errcap, "%s: %s", path, what);
}

/* Writes the whole file into a new temporary beside path; 0, or the errno
 * of the failure (EIO when none was set) with *what saying which step
 * failed. */
static int write_temporary(int dirfd, const char *path, mode_t mode, char tmp[PATH_MAX],
                           int (*write_fn)(FILE *, void *), void *arg, const char **what)
{
    int fd = gt_file_create_temp(dirfd, path, O_WRONLY, mode, tmp, PATH_MAX);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        int failure = errno ? errno : EIO;
        if (fd >= 0) {
            close(fd);
            unlinkat(dirfd, tmp, 0);
        }
        tmp[0] = '\0';
        *what = failure == ENAMETOOLONG ? "path too long" : "cannot create the temporary file";
        return failure;
    }
    errno = 0;
    bool ok = write_fn(f, arg) == 0 && fflush(f) == 0 && !ferror(f);
    int failure = ok ? 0 : errno ? errno : EIO;
    if (fclose(f) != 0 && ok) failure = errno ? errno : EIO;
    if (failure) *what = "write failed";
    return failure;
}

int gt_output_write_at(int dirfd, const char *path, mode_t mode,
                       int (*write_fn)(FILE *out, void *arg), void *arg, char *err, size_t errcap)
{
    int saved_errno = errno;
    char tmp[PATH_MAX];
    const char *what = NULL;
    int failure = write_temporary(dirfd, path, mode, tmp, write_fn, arg, &what);
    if (!failure && renameat(dirfd, tmp, dirfd, path) != 0) {
        failure = errno;
        what = "cannot replace the file";
    }
    if (failure) {
        if (tmp[0]) unlinkat(dirfd, tmp, 0);
        fail(err, errcap, path, what, failure == ENAMETOOLONG ? 0 : failure);
    }
    errno = saved_errno;
    return failure ? -1 : 0;
}

int gt_output_write(const char *path, int (*write_fn)(FILE *out, void *arg), void *arg, char *err,
                    size_t errcap)
{
    return gt_output_write_at(AT_FDCWD, path, GT_FILE_MODE, write_fn, arg, err, errcap);
}
