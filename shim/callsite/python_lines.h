/* The line a Python code object is at, from its line table and the
 * offset of its current instruction (python_lines.c): CPython's own
 * algorithms (Objects/codeobject.c and its lnotab_notes.txt) for the three
 * table formats, on the table's bytes as read from memory, with no call
 * into the interpreter. */
#ifndef GT_PYTHON_LINES_H
#define GT_PYTHON_LINES_H

#include <stddef.h>
#include <stdint.h>

enum gt_py_line_format {
    GT_PY_LNOTAB,    /* 3.9: co_lnotab, (address delta, line delta) pairs */
    GT_PY_LINETABLE, /* 3.10: co_linetable, (address delta, line delta or -128) pairs */
    GT_PY_LOCATIONS, /* 3.11 on: co_linetable, the location table of PEP 657 */
};

/* The line of the instruction at byte offset `offset` of the code; the
 * first line when the offset is before the first instruction, -1 when
 * the instruction has no line. */
int gt_python_line(enum gt_py_line_format format, const uint8_t *table, size_t len, int firstlineno,
                   int64_t offset);

#endif
