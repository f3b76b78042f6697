/* UTF-8 validation for writers that must emit valid text whatever bytes a
 * name holds (kernel names, NVTX messages, command lines). */
#ifndef GT_UTF8_H
#define GT_UTF8_H

#include <stdbool.h>
#include <stddef.h>

#define GT_UTF8_REPLACEMENT "\xEF\xBF\xBD" /* U+FFFD */

/* The length of the sequence at s (n > 0 bytes available). *valid says
 * whether it is a well-formed character; when not, the length covers the
 * maximal ill-formed prefix (at least 1 byte), which a writer replaces
 * with one U+FFFD (the Unicode "maximal subpart" practice). Overlong
 * forms, surrogates, code points above U+10FFFF and truncated sequences
 * are ill-formed. */
size_t gt_utf8_sequence(const unsigned char *s, size_t n, bool *valid);

/* Copies n bytes of src to dst as valid UTF-8, each ill-formed sequence
 * replaced as above; returns the bytes written, at most 3 * n. */
size_t gt_utf8_copy(char *dst, const char *src, size_t n);

/* Whether the well-formed sequence of n bytes at s is a control character
 * (C0, DEL, C1), which terminals and spreadsheets act on. */
bool gt_text_is_control(const unsigned char *s, size_t n);

/* Copies n bytes of src to dst (cap bytes, the NUL included) as text that
 * is safe on a terminal and valid UTF-8: each ill-formed sequence becomes
 * U+FFFD as above, each control character (C0, DEL, C1) '?'. Whole
 * characters only: stops before one that does not fit. Returns the bytes
 * written, the NUL not counted; 3 * n + 1 bytes always hold it all. The
 * rule of everything printed from a program or a report. */
size_t gt_text_safe_copy(char *dst, size_t cap, const char *src, size_t n);

/* The display width of safe text s (as gt_text_safe makes it): its code
 * points. */
size_t gt_text_width(const char *s);

#endif
