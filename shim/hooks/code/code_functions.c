/* What a compilation compiles, by name: the functions its inputs define
 * (compile.h, gt_compile_add_code). Numba hands NVVM one module of LLVM IR
 * text per function it compiled, the kernel's first and then one per
 * device function it calls, all with an empty name, and libdevice as
 * bitcode: the names are in the modules' `define` lines. PTX given to
 * nvJitLink names its kernels with `.entry` and its device functions with
 * `.func`. Bitcode, fat binaries and cubins are not read.
 *
 * Scanning costs a pass over the text, at a call that compiles it: a few
 * microseconds against milliseconds. Bounded by CODE_SCAN_MAX bytes. */
#include "compile.h"
#include "intercept.h"

#include <string.h>

#define CODE_SCAN_MAX (16u << 20)

static bool is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '$' || c == '.';
}

/* The name after `p` up to `end`: an LLVM `@name` or `@"quoted name"`, or
 * a PTX identifier. Its length, 0 when none. */
static size_t name_at(const char *p, const char *end, const char **start)
{
    if (p < end && *p == '"') {
        const char *q = memchr(p + 1, '"', (size_t)(end - p - 1));
        *start = p + 1;
        return q ? (size_t)(q - p - 1) : 0;
    }
    const char *q = p;
    while (q < end && is_name_char(*q))
        q++;
    *start = p;
    return (size_t)(q - p);
}

/* An LLVM IR `define ... @name(` line: the name. */
static size_t llvm_define(const char *line, const char *end, const char **name)
{
    if ((size_t)(end - line) < 7 || memcmp(line, "define ", 7) != 0) return 0;
    const char *at = memchr(line, '@', (size_t)(end - line));
    return at ? name_at(at + 1, end, name) : 0;
}

/* A PTX `.entry name(` or `.func (...) name(` line: the name, and whether
 * it is an entry (a kernel). */
static size_t ptx_function(const char *line, const char *end, const char **name, bool *entry)
{
    const char *p = line;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    static const char *const prefixes[] = {".visible ", ".weak ", ".extern "};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        size_t n = strlen(prefixes[i]);
        if ((size_t)(end - p) > n && memcmp(p, prefixes[i], n) == 0) p += n;
    }
    if ((size_t)(end - p) > 7 && memcmp(p, ".entry ", 7) == 0) {
        *entry = true;
        p += 7;
    } else if ((size_t)(end - p) > 6 && memcmp(p, ".func ", 6) == 0) {
        *entry = false;
        p += 6;
        while (p < end && *p == ' ')
            p++;
        if (p < end && *p == '(') { /* the return parameters */
            const char *close = memchr(p, ')', (size_t)(end - p));
            if (!close) return 0;
            p = close + 1;
        }
    } else {
        return 0;
    }
    while (p < end && *p == ' ')
        p++;
    return name_at(p, end, name);
}

static bool is_text(const char *code, size_t size)
{
    static const unsigned char bitcode[] = {'B', 'C', 0xC0, 0xDE};
    static const unsigned char wrapper[] = {0xDE, 0xC0, 0x17, 0x0B};
    static const unsigned char elf[] = {0x7F, 'E', 'L', 'F'};
    if (size >= 4 &&
        (!memcmp(code, bitcode, 4) || !memcmp(code, wrapper, 4) || !memcmp(code, elf, 4)))
        return false;
    return size < 4 || (unsigned char)code[0] != 0x50 || (unsigned char)code[1] != 0xED;
}

void gt_code_functions(const void *data, size_t size, gt_code_function_fn fn, void *ctx)
{
    const char *code = data;
    if (!code || !size || !is_text(code, size)) return;
    const char *end = code + (size < CODE_SCAN_MAX ? size : CODE_SCAN_MAX);
    for (const char *line = code; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        const char *stop = nl ? nl : end;
        const char *name = NULL;
        bool entry = false;
        size_t len = llvm_define(line, stop, &name);
        if (!len) len = ptx_function(line, stop, &name, &entry);
        if (len && !fn(ctx, name, len, entry)) return;
        line = nl ? nl + 1 : end;
    }
}
