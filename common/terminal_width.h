/* How wide the terminal is that a text goes to, so that the summary and
 * the command's tables fit it. */
#ifndef GT_TERMINAL_WIDTH_H
#define GT_TERMINAL_WIDTH_H

/* The COLUMNS value given (NULL: none) when it is a number from 1 to
 * GT_TERMINAL_MAX_COLUMNS, as the user's word comes first; else the
 * window size of fd when fd is a terminal; 0 when neither says (a file, a
 * pipe). */
#define GT_TERMINAL_MAX_COLUMNS 10000u
unsigned gt_terminal_width(const char *columns, int fd);

#endif
