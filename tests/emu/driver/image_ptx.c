/* PTX: kernel entries (`.entry`, `.visible .entry`) and module-scope
 * `.global` / `.const` variables with their sizes and simple initialisers
 * (integers and the 0f/0d hexadecimal float forms nvcc writes). */
#include "emu_module.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Copy of the text without comments (replaced by spaces). */
static char *strip_comments(const char *text, size_t len)
{
    char *out = malloc(len + 1);
    if (!out) return NULL;
    size_t i = 0;
    while (i < len) {
        if (text[i] == '/' && i + 1 < len && text[i + 1] == '/') {
            while (i < len && text[i] != '\n')
                out[i++] = ' ';
        } else if (text[i] == '/' && i + 1 < len && text[i + 1] == '*') {
            while (i < len && !(text[i] == '*' && i + 1 < len && text[i + 1] == '/'))
                out[i++] = ' ';
            for (int k = 0; k < 2 && i < len; k++)
                out[i++] = ' ';
        } else if (text[i] == '"') {
            out[i] = text[i];
            i++;
            while (i < len && text[i] != '"')
                out[i] = text[i], i++;
            if (i < len) out[i] = text[i], i++;
        } else {
            out[i] = text[i];
            i++;
        }
    }
    out[len] = '\0';
    return out;
}

static bool ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '$' || c == '.' || c == '%';
}

/* Does the statement [s, e) contain the directive word `w`? */
static const char *find_word(const char *s, const char *e, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = s; p + n <= e; p++) {
        if (memcmp(p, w, n) == 0 && (p == s || !ident_char(p[-1])) &&
            (p + n == e || !ident_char(p[n])))
            return p;
    }
    return NULL;
}

static const char *skip_space(const char *p, const char *e)
{
    while (p < e && isspace((unsigned char)*p))
        p++;
    return p;
}

static size_t type_size(const char *t, size_t n)
{
    static const struct {
        const char *name;
        size_t size;
    } types[] = {{".b8", 1},  {".u8", 1},  {".s8", 1},    {".pred", 1}, {".b16", 2},
                 {".u16", 2}, {".s16", 2}, {".f16", 2},   {".bf16", 2}, {".b32", 4},
                 {".u32", 4}, {".s32", 4}, {".f32", 4},   {".b64", 8},  {".u64", 8},
                 {".s64", 8}, {".f64", 8}, {".b128", 16}, {".f16x2", 4}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strlen(types[i].name) == n && !memcmp(types[i].name, t, n)) return types[i].size;
    return 0;
}

static uint64_t parse_value(const char *tok, size_t n, size_t elem, bool is_float)
{
    char buf[64];
    if (n >= sizeof buf) return 0;
    memcpy(buf, tok, n);
    buf[n] = '\0';
    if ((buf[0] == '0') && (buf[1] == 'f' || buf[1] == 'F' || buf[1] == 'd' || buf[1] == 'D'))
        return strtoull(buf + 2, NULL, 16); /* raw IEEE bits */
    if (is_float && (strchr(buf, '.') || strchr(buf, 'e'))) {
        double d = strtod(buf, NULL);
        if (elem == 4) {
            float f = (float)d;
            uint32_t bits;
            memcpy(&bits, &f, 4);
            return bits;
        }
        uint64_t bits;
        memcpy(&bits, &d, 8);
        return bits;
    }
    return strtoull(buf, NULL, 0);
}

/* Fills `init` (size bytes) from the initialiser between [s, e). */
static void parse_initializer(const char *s, const char *e, unsigned char *init, size_t size,
                              size_t elem, bool is_float)
{
    size_t pos = 0;
    const char *p = s;
    while (p < e && pos + elem <= size) {
        while (p < e && !(isalnum((unsigned char)*p) || *p == '-' || *p == '+'))
            p++;
        const char *t = p;
        while (p < e &&
               (isalnum((unsigned char)*p) || *p == '.' || *p == '-' || *p == '+' || *p == '_'))
            p++;
        if (p == t) break;
        if (!isdigit((unsigned char)t[0]) && t[0] != '-' && t[0] != '+') {
            pos += elem; /* an address (generic(x), symbol): leave zero */
            continue;
        }
        uint64_t v = parse_value(t, (size_t)(p - t), elem, is_float);
        memcpy(init + pos, &v, elem); /* little endian: low bytes first */
        pos += elem;
    }
}

/* `[.visible] .global|.const [.align n] [.vN] .type name[dims] [= init];`
 * The statement may start with directives that end at a newline (.version,
 * .target): parsing starts at the state space. */
static bool parse_variable(const char *stmt, const char *e, struct gt_image_info *out)
{
    const char *s = find_word(stmt, e, ".global");
    const char *c = find_word(stmt, e, ".const");
    if (!s || (c && c < s)) s = c;
    if (!s || find_word(stmt, e, ".extern"))
        return true; /* not a variable, or a declaration without storage */
    size_t elem = 0, vec = 1;
    bool is_float = false;
    const char *p = s;
    const char *name = NULL;
    size_t name_len = 0;
    const char *eq = memchr(s, '=', (size_t)(e - s));
    const char *decl_end = eq ? eq : e;
    while (p < decl_end) {
        p = skip_space(p, decl_end);
        const char *t = p;
        while (p < decl_end && ident_char(*p))
            p++;
        size_t n = (size_t)(p - t);
        if (n == 0) {
            p++;
            continue;
        }
        if (n == 3 && !memcmp(t, ".v2", 3)) {
            vec = 2;
        } else if (n == 3 && !memcmp(t, ".v4", 3)) {
            vec = 4;
        } else if (type_size(t, n)) {
            elem = type_size(t, n);
            is_float = t[1] == 'f';
        } else if (t[0] != '.' && !isdigit((unsigned char)t[0]) && !name) {
            name = t;
            name_len = n;
            break;
        }
    }
    if (!name || !elem) return true;
    size_t count = 1;
    p = name + name_len;
    while ((p = skip_space(p, decl_end)) < decl_end && *p == '[') {
        char *end;
        unsigned long long dim = strtoull(p + 1, &end, 0);
        if (end == p + 1) return true; /* unsized array: nothing to back */
        count *= dim;
        p = memchr(p, ']', (size_t)(decl_end - p));
        if (!p) return true;
        p++;
    }
    size_t size = count * elem * vec;
    unsigned char *init = NULL;
    if (eq && size) {
        init = calloc(1, size);
        if (init) parse_initializer(eq + 1, e, init, size, elem, is_float);
    }
    bool managed = find_word(stmt, e, ".managed") != NULL; /* .attribute(.managed) */
    bool ok = gt_image_add_global(out, name, name_len, size, init, init ? size : 0, managed);
    free(init);
    return ok;
}

/* From the '{' at p, past its matching '}'. */
static const char *skip_braces(const char *p, const char *end)
{
    int depth = 0;
    do {
        depth += *p == '{';
        depth -= *p == '}';
        p++;
    } while (p < end && depth > 0);
    return p;
}

static bool name_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '$';
}

static bool parse_entry(const char *s, const char *e, struct gt_image_info *out)
{
    const char *p = find_word(s, e, ".entry");
    p = skip_space(p + 6, e);
    const char *name = p;
    while (p < e && name_char(*p))
        p++;
    if (p == name) return true;
    return gt_image_add_entry(out, name, (size_t)(p - name));
}

CUresult gt_ptx_parse(const char *text, size_t len, struct gt_image_info *out)
{
    char *t = strip_comments(text, len);
    if (!t) return CUDA_ERROR_OUT_OF_MEMORY;
    bool ok = true;
    const char *p = t, *end = t + len;
    while (ok && p < end) {
        p = skip_space(p, end);
        const char *start = p;
        int parens = 0;
        bool assigned = false;
        /* A statement ends at ';' or at the '{' of a body. */
        while (p < end) {
            if (*p == '(')
                parens++;
            else if (*p == ')')
                parens--;
            else if (*p == '=')
                assigned = true;
            else if ((*p == ';' || *p == '{') && parens <= 0 && !(assigned && *p == '{'))
                break;
            else if (*p == '{' && assigned) {
                p = skip_braces(p, end);
                continue;
            }
            p++;
        }
        const char *stmt_end = p;
        if (find_word(start, stmt_end, ".entry"))
            ok = parse_entry(start, stmt_end, out);
        else if (!find_word(start, stmt_end, ".func"))
            ok = parse_variable(start, stmt_end, out);
        if (p < end && *p == '{') {
            p = skip_braces(p, end);
        } else if (p < end) {
            p++;
        }
    }
    free(t);
    return ok ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
