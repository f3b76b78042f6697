#include "text_table.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

#define MAX_COLUMNS 16u

void gt_text_table_init(gt_text_table *t, const gt_text_column *cols, unsigned ncols)
{
    memset(t, 0, sizeof(*t));
    t->cols = cols;
    t->ncols = ncols < MAX_COLUMNS ? ncols : MAX_COLUMNS;
}

void gt_text_table_free(gt_text_table *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof(*t));
}

char *gt_text_safe(const char *s)
{
    if (!s) s = "";
    size_t len = strlen(s);
    /* Each input byte becomes at most 3 output bytes (U+FFFD). */
    char *out = malloc(len * 3 + 1);
    if (out) gt_text_safe_copy(out, len * 3 + 1, s, len);
    return out;
}

/* The byte offset of code point `n` in safe text s (its length past the end). */
static size_t offset_of(const char *s, size_t n)
{
    size_t i = 0;
    for (; s[i] && n; n--)
        for (i++; ((unsigned char)s[i] & 0xC0) == 0x80; i++)
            ;
    return i;
}

size_t gt_text_put_shortened(FILE *out, const char *s, size_t width)
{
    size_t w = gt_text_width(s);
    if (w <= width) {
        fputs(s, out);
        return w;
    }
    size_t dots = strlen(GT_TEXT_ELLIPSIS);
    if (width <= dots) {
        fwrite(s, 1, offset_of(s, width), out);
        return width;
    }
    size_t keep = width - dots;
    size_t head = (keep + 1) / 2, tail = keep - head;
    fwrite(s, 1, offset_of(s, head), out);
    fputs(GT_TEXT_ELLIPSIS, out);
    fputs(s + offset_of(s, w - tail), out);
    return width;
}

size_t gt_text_put_head(FILE *out, const char *s, size_t width)
{
    size_t w = gt_text_width(s), dots = strlen(GT_TEXT_ELLIPSIS);
    if (w <= width) {
        fputs(s, out);
        return w;
    }
    if (width <= dots) {
        fwrite(s, 1, offset_of(s, width), out);
        return width;
    }
    fwrite(s, 1, offset_of(s, width - dots), out);
    fputs(GT_TEXT_ELLIPSIS, out);
    return width;
}

void gt_text_table_add(gt_text_table *t, const char *const *cells)
{
    if (t->nrows == t->capacity) {
        size_t cap = t->capacity ? t->capacity * 2 : 16;
        char **grown = realloc(t->cells, cap * t->ncols * sizeof(*grown));
        if (!grown) {
            t->failed = true;
            return;
        }
        t->cells = grown;
        t->capacity = cap;
    }
    char **row = &t->cells[t->nrows * t->ncols];
    for (unsigned c = 0; c < t->ncols; c++) {
        row[c] = gt_text_safe(cells[c]);
        if (!row[c]) {
            while (c--)
                free(row[c]);
            t->failed = true;
            return;
        }
    }
    t->nrows++;
}

/* Spaces are held back until text follows them, so that no line ends
 * in blanks. */
typedef struct line {
    FILE *out;
    size_t pending;
} line;

static void put_text(line *l, const char *s, size_t width)
{
    for (; l->pending; l->pending--)
        fputc(' ', l->out);
    gt_text_put_shortened(l->out, s, width);
}

static void put_cell(line *l, const char *s, size_t width, bool right)
{
    size_t w = gt_text_width(s);
    size_t shown = w < width ? w : width;
    if (right) l->pending += width - shown;
    if (shown) put_text(l, s, width);
    if (!right) l->pending += width - shown;
}

/* Column widths from the cells (0: the column is left out). With a width,
 * droppable columns go, lowest rank first, while the flex column would
 * not fit whole; then the flex column is cut to fit. */
static void column_widths(const gt_text_table *t, unsigned width, size_t *w)
{
    size_t used = strlen(GT_TEXT_INDENT);
    int flex = -1;
    unsigned shown = 0;
    for (unsigned c = 0; c < t->ncols; c++) {
        w[c] = gt_text_width(t->cols[c].title);
        for (size_t r = 0; r < t->nrows; r++) {
            size_t cw = gt_text_width(t->cells[r * t->ncols + c]);
            if (cw > w[c]) w[c] = cw;
        }
        if (t->cols[c].flex)
            flex = (int)c;
        else
            used += w[c];
        used += shown++ ? GT_TEXT_GAP : 0;
    }
    if (flex < 0 || width == 0) return;
    for (unsigned rank = 1; rank <= UCHAR_MAX && used + w[flex] > width; rank++)
        for (unsigned c = 0; c < t->ncols; c++) {
            if (t->cols[c].drop != rank) continue;
            used -= w[c] + GT_TEXT_GAP;
            w[c] = 0;
        }
    size_t room = used < width ? width - used : 0;
    if (room < GT_TEXT_MIN_FLEX) room = GT_TEXT_MIN_FLEX;
    if (w[flex] > room) w[flex] = room;
}

int gt_text_table_print(const gt_text_table *t, FILE *out, unsigned width)
{
    size_t w[MAX_COLUMNS];
    column_widths(t, width, w);
    for (size_t r = 0; r <= t->nrows; r++) {
        line l = {out, 0};
        fputs(GT_TEXT_INDENT, out);
        bool first = true;
        for (unsigned c = 0; c < t->ncols; c++) {
            if (!w[c] && t->cols[c].drop) continue; /* dropped to fit */
            const char *cell = r == 0 ? t->cols[c].title : t->cells[(r - 1) * t->ncols + c];
            char *shorter = r && t->cols[c].flex && t->shorten && gt_text_width(cell) > w[c]
                                ? t->shorten(cell, w[c])
                                : NULL;
            if (!first) l.pending += GT_TEXT_GAP;
            first = false;
            put_cell(&l, shorter ? shorter : cell, w[c], t->cols[c].right);
            free(shorter);
        }
        fputc('\n', out);
    }
    return ferror(out) || t->failed ? -1 : 0;
}
