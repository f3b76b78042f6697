/* JSON output primitives: nesting, separators, indentation and string
 * escaping, so that the report writers only say what goes where.
 *
 * A container opened `compact` keeps its content on one line; otherwise
 * each member goes on its own line, indented. Write errors are collected
 * and returned by gt_json_finish. The writer does not lock its FILE: one
 * thread writes a document, and no other writes to that FILE meanwhile. */
#ifndef GT_JSON_WRITER_H
#define GT_JSON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define GT_JSON_MAX_DEPTH 16u

typedef struct gt_json {
    FILE *out;
    unsigned depth;
    bool after_key;
    bool overflow; /* nesting past GT_JSON_MAX_DEPTH: a bug in the caller */
    /* No space after ':' and ',': the form a JSON parser's compact print
     * gives (a call site kept as JSON text, checksum_list.h). */
    bool tight;
    bool empty[GT_JSON_MAX_DEPTH];
    bool compact[GT_JSON_MAX_DEPTH];
} gt_json;

void gt_json_init(gt_json *w, FILE *out);
void gt_json_object_begin(gt_json *w, bool compact);
void gt_json_object_end(gt_json *w);
void gt_json_array_begin(gt_json *w, bool compact);
void gt_json_array_end(gt_json *w);
void gt_json_key(gt_json *w, const char *key);

void gt_json_string(gt_json *w, const char *s);
void gt_json_uint(gt_json *w, uint64_t v);
void gt_json_int(gt_json *w, int64_t v);
void gt_json_bool(gt_json *w, bool v);
/* A fixed-point number; NaN and infinities (not JSON) are written as 0. */
void gt_json_fixed(gt_json *w, double v, int decimals);

/* A number as exactly as a double holds it (integers whole); NaN and
 * infinities are written as 0. */
void gt_json_number(gt_json *w, double v);
void gt_json_kv_number(gt_json *w, const char *key, double v);

/* A value already in JSON (valid, compact), written as it is. */
void gt_json_raw(gt_json *w, const char *json);

void gt_json_kv_string(gt_json *w, const char *key, const char *s);
void gt_json_kv_uint(gt_json *w, const char *key, uint64_t v);
void gt_json_kv_int(gt_json *w, const char *key, int64_t v);
void gt_json_kv_bool(gt_json *w, const char *key, bool v);

/* Ends the document with a newline: 0, or -1 after a write error or a
 * nesting mistake. */
int gt_json_finish(gt_json *w);

/* s (len bytes) as a quoted JSON string: `"` and `\` escaped, control
 * bytes as \u00XX, ill-formed UTF-8 replaced by U+FFFD. For any writer
 * that embeds names in JSON. */
void gt_json_write_string(FILE *out, const char *s, size_t len);

#endif
