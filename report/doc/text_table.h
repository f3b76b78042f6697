/* Aligned text tables for the terminal summary: columns as wide as their
 * widest cell, one flexible column shortened in the middle so that lines
 * fit a width, and every cell made safe to print (see gt_text_safe).
 * Widths count code points: a name in a script of double-width
 * characters takes more room than counted, which only shifts the columns
 * after it. */
#ifndef GT_TEXT_TABLE_H
#define GT_TEXT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define GT_TEXT_WIDTH 120u    /* lines fit this many columns when no terminal says otherwise */
#define GT_TEXT_MIN_WIDTH 40u /* a narrower terminal is taken as this wide */
#define GT_TEXT_INDENT "  "    /* before every table line */
#define GT_TEXT_GAP 2u         /* spaces between columns */
#define GT_TEXT_MIN_FLEX 16u   /* a shortened column keeps at least this many */
#define GT_TEXT_ELLIPSIS "..." /* stands for the middle of a shortened cell */

typedef struct gt_text_column {
    const char *title;
    bool right; /* right-aligned (numbers); else left */
    bool flex;  /* the column shortened to fit the width (at most one) */
    /* 0: always shown. Else, when the flex column would have to be cut,
     * this column is left out first, those of rank 1 before those of 2
     * and so on, until the flex column fits whole. */
    unsigned char drop;
} gt_text_column;

typedef struct gt_text_table {
    const gt_text_column *cols;
    unsigned ncols;
    char **cells; /* nrows * ncols, each safe to print */
    size_t nrows;
    size_t capacity; /* rows */
    bool failed;     /* a row could not be stored for want of memory */
    /* When set, a flex cell too wide for its column is first given to this
     * (a new string, NULL when out of memory), which may cut it where it
     * knows best; whatever is still too wide is cut in the middle. */
    char *(*shorten)(const char *cell, size_t width);
} gt_text_table;

void gt_text_table_init(gt_text_table *t, const gt_text_column *cols, unsigned ncols);
void gt_text_table_free(gt_text_table *t);

/* Adds a row of ncols cells (NULL is an empty cell), copied and made safe. */
void gt_text_table_add(gt_text_table *t, const char *const *cells);

/* Prints the header and the rows. With width > 0, columns that may be
 * dropped are left out as long as the flex column would not fit whole,
 * then the flex column is cut in the middle so that lines fit width
 * columns (never below GT_TEXT_MIN_FLEX); with 0 every column is printed
 * and every cell whole. No line ends in blanks. Returns 0, or -1 after a
 * write error or a lost row. */
int gt_text_table_print(const gt_text_table *t, FILE *out, unsigned width);

/* A copy of s that is safe on a terminal and valid UTF-8: ill-formed
 * sequences become U+FFFD, control characters (C0, DEL, C1) '?'. NULL
 * when out of memory. */
char *gt_text_safe(const char *s);

/* Writes safe text s cut to at most `width` columns by replacing its
 * middle with GT_TEXT_ELLIPSIS; returns the columns written. */
size_t gt_text_put_shortened(FILE *out, const char *s, size_t width);

/* The same, the end replaced (a command line: what comes first matters). */
size_t gt_text_put_head(FILE *out, const char *s, size_t width);

#endif
