/* The unlocked stdio calls (GNU): a document is written by one thread,
 * which owns its FILE meanwhile, so each character need not take the
 * stream's lock (with threads in the process, glibc takes it on every
 * call, a large share of the writer's time on big reports). */
#define _GNU_SOURCE
#include "json_writer.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "utf8.h"

void gt_json_init(gt_json *w, FILE *out)
{
    memset(w, 0, sizeof(*w));
    w->out = out;
}

static void newline_indent(gt_json *w, unsigned depth)
{
    fputc_unlocked('\n', w->out);
    for (unsigned i = 0; i < depth; i++)
        fputs_unlocked("  ", w->out);
}

/* Whatever comes next in the current container: a separator and the
 * layout, unless it is the value of the key just written. */
static void next_item(gt_json *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (w->depth == 0) return;
    unsigned d = w->depth - 1;
    if (d >= GT_JSON_MAX_DEPTH) return;
    if (!w->empty[d]) fputc_unlocked(',', w->out);
    if (!w->compact[d])
        newline_indent(w, w->depth);
    else if (!w->empty[d] && !w->tight)
        fputc_unlocked(' ', w->out);
    w->empty[d] = false;
}

static void open_container(gt_json *w, char c, bool compact)
{
    next_item(w);
    fputc_unlocked(c, w->out);
    if (w->depth >= GT_JSON_MAX_DEPTH) {
        w->overflow = true;
    } else {
        w->empty[w->depth] = true;
        w->compact[w->depth] = compact;
    }
    w->depth++;
}

static void close_container(gt_json *w, char c)
{
    if (w->depth == 0) {
        w->overflow = true;
        return;
    }
    w->depth--;
    unsigned d = w->depth;
    if (d < GT_JSON_MAX_DEPTH && !w->compact[d] && !w->empty[d]) newline_indent(w, d);
    fputc_unlocked(c, w->out);
}

void gt_json_object_begin(gt_json *w, bool compact)
{
    open_container(w, '{', compact);
}

void gt_json_object_end(gt_json *w)
{
    close_container(w, '}');
}

void gt_json_array_begin(gt_json *w, bool compact)
{
    open_container(w, '[', compact);
}

void gt_json_array_end(gt_json *w)
{
    close_container(w, ']');
}

void gt_json_key(gt_json *w, const char *key)
{
    next_item(w);
    gt_json_write_string(w->out, key, strlen(key));
    fputs_unlocked(w->tight ? ":" : ": ", w->out);
    w->after_key = true;
}

void gt_json_string(gt_json *w, const char *s)
{
    next_item(w);
    if (!s) s = "";
    gt_json_write_string(w->out, s, strlen(s));
}

void gt_json_raw(gt_json *w, const char *json)
{
    next_item(w);
    fputs_unlocked(json, w->out);
}

/* v in decimal, without printf's format parsing (the writer's hot spot). */
static void put_decimal(FILE *out, bool negative, uint64_t v)
{
    char buf[24];
    size_t at = sizeof buf;
    do {
        buf[--at] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (negative) buf[--at] = '-';
    fwrite_unlocked(buf + at, 1, sizeof buf - at, out);
}

void gt_json_uint(gt_json *w, uint64_t v)
{
    next_item(w);
    put_decimal(w->out, false, v);
}

void gt_json_int(gt_json *w, int64_t v)
{
    next_item(w);
    put_decimal(w->out, v < 0, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
}

void gt_json_bool(gt_json *w, bool v)
{
    next_item(w);
    fputs_unlocked(v ? "true" : "false", w->out);
}

void gt_json_fixed(gt_json *w, double v, int decimals)
{
    next_item(w);
    fprintf(w->out, "%.*f", decimals, isfinite(v) ? v : 0.0);
}

void gt_json_number(gt_json *w, double v)
{
    next_item(w);
    if (!isfinite(v)) v = 0.0;
    if (v == (double)(int64_t)v && v > -9e15 && v < 9e15)
        fprintf(w->out, "%lld", (long long)v);
    else
        fprintf(w->out, "%.17g", v);
}

void gt_json_kv_number(gt_json *w, const char *key, double v)
{
    gt_json_key(w, key);
    gt_json_number(w, v);
}

void gt_json_kv_string(gt_json *w, const char *key, const char *s)
{
    gt_json_key(w, key);
    gt_json_string(w, s);
}

void gt_json_kv_uint(gt_json *w, const char *key, uint64_t v)
{
    gt_json_key(w, key);
    gt_json_uint(w, v);
}

void gt_json_kv_int(gt_json *w, const char *key, int64_t v)
{
    gt_json_key(w, key);
    gt_json_int(w, v);
}

void gt_json_kv_bool(gt_json *w, const char *key, bool v)
{
    gt_json_key(w, key);
    gt_json_bool(w, v);
}

int gt_json_finish(gt_json *w)
{
    fputc_unlocked('\n', w->out);
    return w->overflow || w->depth != 0 || ferror(w->out) ? -1 : 0;
}

void gt_json_write_string(FILE *out, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t plain = 0; /* bytes at p[i - plain, i) not yet written, needing no escape */
    fputc_unlocked('"', out);
    for (size_t i = 0; i < len;) {
        unsigned char c = p[i];
        bool valid = true;
        size_t n = c < 0x80 ? 1 : gt_utf8_sequence(p + i, len - i, &valid);
        if (valid && c >= 0x20 && c != '"' && c != '\\') {
            plain += n;
            i += n;
            continue;
        }
        fwrite_unlocked(p + i - plain, 1, plain, out);
        plain = 0;
        if (!valid)
            fputs_unlocked(GT_UTF8_REPLACEMENT, out);
        else if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else
            fprintf(out, "\\u%04x", c);
        i += n;
    }
    fwrite_unlocked(p + len - plain, 1, plain, out);
    fputc_unlocked('"', out);
}
