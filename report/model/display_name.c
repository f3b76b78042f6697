/* Kernel names for people (display_name.h).
 *
 * A demangled C++ name is scanned with the depth of its brackets, so that
 * the parts of the name proper (depth 0) are told from what its template
 * arguments, parameter list and ABI tags hold. A '<' that begins a name
 * component (Numba's "<locals>") opens no template argument list. */
#include "display_name.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

#define NAMESPACES_CUT "...::" /* stands for the leading components left out */

static bool ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* The byte a Numba escape "_xx" at s stands for, or -1. Numba writes
 * every byte of a character outside [A-Za-z0-9_] as "_" and two lowercase
 * hex digits; one inside that set is never escaped. */
static int escaped_byte(const char *s)
{
    if (s[0] != '_') return -1;
    int hi = hex_digit(s[1]), lo = hi < 0 ? -1 : hex_digit(s[2]);
    if (lo < 0) return -1;
    int b = hi << 4 | lo;
    return b > 0x20 && b != 0x7f && !ident_char((char)b) ? b : -1;
}

/* Python's names for what has no name of its own, as Numba escapes them
 * in a qualified name ("build_kernel.<locals>.kernel" becomes
 * "build_kernel::_3clocals_3e::kernel"). */
static const char *const python_scopes[] = {"_3clocals_3e",   "_3clambda_3e",  "_3clistcomp_3e",
                                            "_3cdictcomp_3e", "_3csetcomp_3e", "_3cgenexpr_3e"};

/* Numba's names: a kernel Numba compiled for itself lives in the namespace
 * "cudapy" and carries an ABI tag "v<n>" (a unique number) on the
 * function's name; one it compiled for link-time optimisation, or that a
 * library built with it names otherwise, has neither, but a nested
 * function's name holds an escaped Python scope. */
bool gt_name_is_numba(const char *s)
{
    if (strncmp(s, "cudapy::", 8) == 0 || strstr(s, "[abi:v") != NULL) return true;
    for (size_t i = 0; i < sizeof python_scopes / sizeof python_scopes[0]; i++)
        if (strstr(s, python_scopes[i])) return true;
    return false;
}

/* Numba's "_3clocals_3e" back to "<locals>", in place: one escaped ASCII
 * character, or the escaped bytes of one well-formed UTF-8 character. */
static void unescape_numba(char *s)
{
    char *out = s;
    while (*s) {
        unsigned char bytes[4];
        size_t n = 0;
        int b;
        while (n < sizeof bytes && (b = escaped_byte(s + 3 * n)) >= 0) {
            bytes[n++] = (unsigned char)b;
            if (bytes[0] < 0x80) break;
        }
        bool valid = false;
        size_t len = n ? gt_utf8_sequence(bytes, n, &valid) : 0;
        if (n && valid) {
            memcpy(out, bytes, len);
            out += len;
            s += 3 * len;
        } else {
            *out++ = *s++;
        }
    }
    *out = '\0';
}

static bool opens(char c)
{
    return c == '(' || c == '<' || c == '[' || c == '{';
}

static bool closes(char c)
{
    return c == ')' || c == '>' || c == ']' || c == '}';
}

/* Whether the '<' at s[i] opens template arguments: it follows a name. */
static bool template_open(const char *s, size_t i)
{
    return i > 0 && (ident_char(s[i - 1]) || s[i - 1] == '>' || s[i - 1] == ']');
}

/* The bracket depth change at s[i]: 1, -1 or 0. A '<' or '>' that is part
 * of a name ("<locals>" after "::") changes nothing. */
static int depth_step(const char *s, size_t i, int *angle_names)
{
    char c = s[i];
    if (c == '<' && !template_open(s, i)) {
        ++*angle_names;
        return 0;
    }
    if (c == '>' && *angle_names) {
        --*angle_names;
        return 0;
    }
    return opens(c) ? 1 : closes(c) ? -1 : 0;
}

/* Removes s[from, to). */
static void cut(char *s, size_t from, size_t to)
{
    memmove(s + from, s + to, strlen(s + to) + 1);
}

/* The parameter list that ends the name, and the return type before the
 * name (template functions are demangled with it), in place. */
static void drop_signature(char *s)
{
    size_t len = strlen(s);
    if (!len || s[len - 1] != ')') return;
    int depth = 0, names = 0;
    size_t params = len, space = 0;
    bool spaced = false;
    for (size_t i = 0; i < len; i++) {
        int step = depth_step(s, i, &names);
        if (step > 0 && depth == 0 && s[i] == '(') params = i;
        if (depth == 0 && s[i] == ' ' && params == len) {
            space = i;
            spaced = true;
        }
        depth += step;
        if (depth < 0) return; /* not a name this understands */
    }
    if (params == 0 || params == len || depth != 0) return;
    s[params] = '\0';
    if (spaced && space + 1 < params) cut(s, 0, space + 1);
}

/* Removes the bracketed groups at depth 0: ABI tags ("[abi:...]") or
 * template argument lists ("<...>"). */
static void drop_groups(char *s, bool abi_tags)
{
    int depth = 0, names = 0;
    size_t i = 0, start = 0;
    bool in_group = false;
    while (s[i]) {
        if (depth == 0 &&
            (abi_tags ? strncmp(s + i, "[abi:", 5) == 0 : s[i] == '<' && template_open(s, i))) {
            start = i;
            in_group = true;
        }
        depth += depth_step(s, i, &names);
        if (depth < 0) return; /* not a name this understands */
        if (in_group && depth == 0) {
            cut(s, start, i + 1);
            i = start;
            in_group = false;
            continue;
        }
        i++;
    }
}

char *gt_display_name(const char *full)
{
    char *s = strdup(full ? full : "");
    if (!s) return NULL;
    if (gt_name_is_numba(s)) unescape_numba(s);
    drop_signature(s);
    drop_groups(s, true);
    return s;
}

char *gt_verbose_name(const char *full)
{
    char *s = strdup(full ? full : "");
    if (!s || !gt_name_is_numba(s)) return s;
    unescape_numba(s);
    drop_groups(s, true);
    return s;
}

/* The offsets of the "::" at depth 0, up to `max`; returns how many. */
static size_t separators(const char *s, size_t *at, size_t max)
{
    int depth = 0, names = 0;
    size_t n = 0;
    for (size_t i = 0; s[i] && n < max; i++) {
        if (depth == 0 && s[i] == ':' && s[i + 1] == ':')
            at[n++] = i++;
        else
            depth += depth_step(s, i, &names);
    }
    return n;
}

char *gt_display_name_fit(const char *name, size_t width)
{
    char *s = strdup(name ? name : "");
    if (!s || gt_text_width(s) <= width) return s;
    drop_groups(s, false);
    size_t at[64];
    size_t n = separators(s, at, sizeof at / sizeof at[0]);
    /* The fewest leading namespaces left out that make it fit; at most
     * all of them, the function's own name alone being left. */
    for (size_t k = 0; k < n && gt_text_width(s) > width; k++) {
        const char *rest = s + at[k] + 2;
        size_t shorter = strlen(NAMESPACES_CUT) + strlen(rest);
        if (gt_text_width(NAMESPACES_CUT) + gt_text_width(rest) > width && k + 1 < n) continue;
        char *cut_name = malloc(shorter + 1);
        if (!cut_name) break;
        strcpy(cut_name, NAMESPACES_CUT);
        strcat(cut_name, rest);
        free(s);
        s = cut_name;
        break;
    }
    return s;
}
