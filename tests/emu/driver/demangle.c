/* Function names of mangled kernel names, for GPUTRACE_EMU_KERNEL_NS:
 * `busy` matches `_Z4busyPfi`. __cxa_demangle is used when the process has
 * it (every C++ program); otherwise a small parser handles plain and
 * namespace-qualified names (`_ZN2ns3fooEv` -> `ns::foo`). ABI tags are
 * left out (`[abi:v1]`, mangled `B2v1`): Numba tags every kernel with one
 * that hashes its compilation, so only the name without them is stable
 * (`_ZN8__main__5scaleB2v1B96cw51...E5ArrayIfLi1E1C7mutable7alignedEd` is
 * `__main__::scale`). */
#include "emu.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

static demangle_fn find_demangler(void)
{
    static _Atomic(demangle_fn) cached;
    static _Atomic int looked;
    /* acquire/release: the cached pointer is published with the flag. */
    if (atomic_load_explicit(&looked, memory_order_acquire))
        return atomic_load_explicit(&cached, memory_order_relaxed);
    demangle_fn fn = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
    atomic_store_explicit(&cached, fn, memory_order_relaxed);
    atomic_store_explicit(&looked, 1, memory_order_release);
    return fn;
}

/* "void ns::f<int>(int*) const" -> "ns::f<int>" */
static bool strip_signature(const char *full, char *buf, size_t len)
{
    size_t n = strlen(full);
    /* The parameter list is the last parenthesised group at depth 0. */
    size_t close = n;
    while (close > 0 && full[close - 1] != ')')
        close--;
    if (close == 0) return false;
    size_t open = close - 1;
    int depth = 0;
    for (;;) {
        if (full[open] == ')')
            depth++;
        else if (full[open] == '(' && --depth == 0)
            break;
        if (open == 0) return false;
        open--;
    }
    /* A leading return type (templates) ends at the last space at depth 0. */
    size_t start = 0;
    depth = 0;
    for (size_t i = 0; i < open; i++) {
        char c = full[i];
        if (c == '<' || c == '(')
            depth++;
        else if ((c == '>' || c == ')') && depth > 0)
            depth--;
        else if (c == ' ' && depth == 0)
            start = i + 1;
    }
    size_t out = 0;
    for (size_t i = start; i < open; i++) {
        if (full[i] == '[' && !strncmp(full + i, "[abi:", 5)) {
            const char *end = memchr(full + i, ']', open - i);
            if (end) {
                i = (size_t)(end - full);
                continue;
            }
        }
        if (out + 1 >= len) return false;
        buf[out++] = full[i];
    }
    buf[out] = '\0';
    return out > 0;
}

static bool append(char *buf, size_t len, size_t *pos, const char *s, size_t n)
{
    if (*pos + n >= len) return false;
    memcpy(buf + *pos, s, n);
    *pos += n;
    buf[*pos] = '\0';
    return true;
}

/* <length><identifier> at *p, appended to buf unless buf is NULL. */
static bool source_name(const char **p, char *buf, size_t len, size_t *pos)
{
    if (**p < '1' || **p > '9') return false;
    size_t n = 0;
    while (**p >= '0' && **p <= '9')
        n = n * 10 + (size_t)(*(*p)++ - '0');
    if (strnlen(*p, n) < n) return false;
    bool ok = !buf || append(buf, len, pos, *p, n);
    *p += n;
    return ok;
}

/* A name and the ABI tags after it (B <source-name>), which are skipped. */
static bool tagged_name(const char **p, char *buf, size_t len, size_t *pos)
{
    if (!source_name(p, buf, len, pos)) return false;
    while (**p == 'B') {
        (*p)++;
        if (!source_name(p, NULL, 0, NULL)) return false;
    }
    return true;
}

static bool parse_simple(const char *mangled, char *buf, size_t len)
{
    const char *p = mangled + 2;
    size_t pos = 0;
    buf[0] = '\0';
    if (*p == 'L') p++;
    if (*p != 'N') return tagged_name(&p, buf, len, &pos) && *p != 'I';
    p++;
    while (*p == 'K' || *p == 'V' || *p == 'r')
        p++;
    bool first = true;
    while (*p != 'E') {
        if (!first && !append(buf, len, &pos, "::", 2)) return false;
        if (!tagged_name(&p, buf, len, &pos)) return false;
        first = false;
    }
    return !first;
}

bool gt_function_base_name(const char *mangled, char *buf, size_t len)
{
    if (strncmp(mangled, "_Z", 2) != 0 || len == 0) return false;
    demangle_fn demangle = find_demangler();
    if (demangle) {
        int status = 0;
        char *full = demangle(mangled, NULL, NULL, &status);
        if (full && status == 0) {
            bool ok = strip_signature(full, buf, len);
            free(full);
            return ok;
        }
        free(full);
    }
    return parse_simple(mangled, buf, len);
}
