/* Whose Python code a file holds, from its name alone.
 *
 * A frame is passed over when its file is
 *  - frozen into the interpreter ("<frozen importlib._bootstrap>");
 *  - the standard library: under a lib/pythonX.Y (or lib64) directory but
 *    not in its site-packages or dist-packages;
 *  - an installed package of the Python CUDA stack: the first directory
 *    (or module file) under site-packages or dist-packages is one of
 *    `stack_packages`;
 *  - in a package the user named (GPUTRACE_CALLSITES_SKIP): its dotted
 *    name as consecutive directories, or as directories and a module file,
 *    anywhere in the path ("mylib.kernels" matches .../mylib/kernels/... and
 *    .../mylib/kernels.py), so that a package used from a checkout counts
 *    as well as an installed one.
 * The stack's packages match only where they are installed: a user's own
 * directory named `cuda` or `torch` stays the user's. */
#include "python_paths.h"

#include <stdio.h>
#include <string.h>

static const char *const stack_packages[] = {
    "cuda",  "cupy",   "cupy_backends", "cupyx",  "numba",  "numba_cuda", "llvmlite",
    "numpy", "nvidia", "nvtx",          "nvmath", "pycuda", "torch",      "triton",
    "jax",   "jaxlib", "tensorflow",    "rmm",    "cudf",   "warp",       "gputrace",
};

typedef struct text {
    const char *s;
    size_t len;
} text;

static int text_is(text t, const char *word, size_t n)
{
    return t.len == n && memcmp(t.s, word, n) == 0;
}

static int starts(text t, const char *prefix)
{
    size_t n = strlen(prefix);
    return t.len >= n && memcmp(t.s, prefix, n) == 0;
}

/* The path component starting at `at` (up to the next '/' or the end). */
static text component(text path, size_t at)
{
    const char *slash = memchr(path.s + at, '/', path.len - at);
    size_t end = slash ? (size_t)(slash - path.s) : path.len;
    return (text){path.s + at, end - at};
}

/* A module file's name without its extension (.py, .pyc, .so...). */
static text stem(text c)
{
    const char *dot = memchr(c.s, '.', c.len);
    return dot ? (text){c.s, (size_t)(dot - c.s)} : c;
}

static void set_package(char *package, size_t cap, const char *s, size_t len)
{
    if (!package || !cap) return;
    if (len >= cap) len = cap - 1;
    memcpy(package, s, len);
    package[len] = '\0';
}

/* Where the components of `path` start: offsets, at most max. */
static size_t components(text path, size_t *at, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < path.len && n < max; i++)
        if (i == 0 ? path.s[0] != '/' : path.s[i - 1] == '/') at[n++] = i;
    return n;
}

#define COMPONENTS_MAX 128u

/* pythonX, pythonX.Y, or a free-threaded build's pythonX.Yt. */
static int python_lib_dir(text c)
{
    if (!starts(c, "python") || c.len < 7 || c.s[6] < '2' || c.s[6] > '9') return 0;
    for (size_t i = 7; i < c.len; i++)
        if (!(c.s[i] == '.' || (c.s[i] >= '0' && c.s[i] <= '9') ||
              (c.s[i] == 't' && i + 1 == c.len)))
            return 0;
    return 1;
}

static int packages_dir(text c)
{
    return text_is(c, "site-packages", 13) || text_is(c, "dist-packages", 13);
}

static int stack_package(text top)
{
    for (size_t i = 0; i < sizeof stack_packages / sizeof stack_packages[0]; i++)
        if (text_is(top, stack_packages[i], strlen(stack_packages[i]))) return 1;
    return 0;
}

/* Whether the dotted name matches the components from index i on. */
static int dotted_at(text path, const size_t *at, size_t n, size_t i, text name)
{
    for (size_t part = 0; part < name.len;) {
        const char *dot = memchr(name.s + part, '.', name.len - part);
        size_t end = dot ? (size_t)(dot - name.s) : name.len;
        text want = {name.s + part, end - part};
        if (i >= n) return 0;
        text c = component(path, at[i]);
        int last = end == name.len;
        /* The last part may be a module file; the others are directories. */
        int dir = i + 1 < n;
        if (!(dir && text_is(c, want.s, want.len)) &&
            !(last && !dir && text_is(stem(c), want.s, want.len)))
            return 0;
        part = end + 1;
        i++;
    }
    return 1;
}

static int extra_package(text path, const size_t *at, size_t n, const char *extra, char *package,
                         size_t cap)
{
    for (const char *p = extra; p && *p;) {
        const char *comma = strchr(p, ',');
        text name = {p, comma ? (size_t)(comma - p) : strlen(p)};
        for (size_t i = 0; name.len && i < n; i++)
            if (dotted_at(path, at, n, i, name)) {
                set_package(package, cap, name.s, name.len);
                return 1;
            }
        p = comma ? comma + 1 : NULL;
    }
    return 0;
}

int gt_python_path_skipped(const char *s, size_t len, const char *extra, char *package, size_t cap)
{
    text path = {s, len};
    if (starts(path, "<frozen")) {
        set_package(package, cap, "", 0);
        return 1;
    }
    size_t at[COMPONENTS_MAX];
    size_t n = components(path, at, COMPONENTS_MAX);
    if (extra_package(path, at, n, extra, package, cap)) return 1;
    for (size_t i = 1; i < n; i++) {
        text lib = component(path, at[i - 1]);
        if (!text_is(lib, "lib", 3) && !text_is(lib, "lib64", 5)) continue;
        if (!python_lib_dir(component(path, at[i]))) continue;
        /* lib/pythonX.Y/site-packages/TOP/..., or Debian's lib/python3/dist-packages */
        if (i + 1 < n && packages_dir(component(path, at[i + 1]))) {
            if (i + 2 >= n) return 0;
            text top = stem(component(path, at[i + 2]));
            if (!stack_package(top)) return 0;
            set_package(package, cap, top.s, top.len);
            return 1;
        }
        set_package(package, cap, "", 0);
        return 1;
    }
    /* site-packages outside a lib/pythonX.Y tree (a --target install, a
     * wheel cache): its top packages count the same. */
    for (size_t i = 0; i + 1 < n; i++) {
        if (!packages_dir(component(path, at[i]))) continue;
        text top = stem(component(path, at[i + 1]));
        if (!stack_package(top)) return 0;
        set_package(package, cap, top.s, top.len);
        return 1;
    }
    return 0;
}
