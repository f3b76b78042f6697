/* Kernel names for people. A demangled kernel name carries its return
 * type, its parameter list, template arguments, ABI tags and namespaces;
 * Numba's names also carry its escapes ("_3clocals_3e" for "<locals>")
 * and long Array parameter types. The report keeps the full name (JSON
 * "name", verbose text) and shows a shorter one that keeps the part that
 * tells kernels apart: the function's own name. */
#ifndef GT_DISPLAY_NAME_H
#define GT_DISPLAY_NAME_H

#include <stdbool.h>
#include <stddef.h>

/* The readable form of a demangled kernel name (JSON "display_name"), in
 * a new string (NULL when out of memory): Numba's escapes undone, the
 * parameter list and the return type dropped, ABI tags dropped (Numba's
 * are a counter and a hash of its flags). A name that is no C++
 * signature comes back as it is. */
char *gt_display_name(const char *full);

/* The whole name, signature included, as verbose output shows it: a
 * Numba name (gt_name_is_numba) with its escapes undone and its ABI tags
 * (a counter and a hash of its flags, some 60 characters) dropped; any
 * other name as it is. A new string, NULL when out of memory. */
char *gt_verbose_name(const char *full);

/* Whether a demangled name is one Numba made: its escapes ("_3c" for
 * '<') are then undone in every form shown. */
bool gt_name_is_numba(const char *full);

/* A readable form cut to `width` columns, in a new string: template
 * arguments dropped, then leading namespaces ("...::solver::step"), as far
 * as needed. It may still be wider when the function's own name is: the
 * caller cuts that in the middle. */
char *gt_display_name_fit(const char *name, size_t width);

#endif
