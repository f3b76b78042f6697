/* The layouts of the CPython structures python_walk.c reads: for 3.9 to
 * 3.12 the offsets of the fields it reads, from each version's headers;
 * for 3.13 the part of the interpreter's own _Py_DebugOffsets it reads.
 * In a header of its own so that tests/python/python_offsets.c, compiled
 * against each version's headers, can hold the table against them. */
#ifndef GT_PYTHON_LAYOUTS_H
#define GT_PYTHON_LAYOUTS_H

#include <stddef.h>
#include <stdint.h>

#include "python_lines.h"

typedef struct layout {
    int minor;
    enum gt_py_line_format lines;
    /* thread state -> current frame: directly (3.9, 3.10, 3.13), or
     * through the C frame (3.11, 3.12) */
    size_t ts_frame;
    int through_cframe;
    size_t cframe_current;
    /* frames: 3.9 and 3.10 frame objects, later interpreter frames */
    size_t frame_back, frame_code, frame_lasti, frame_instr, frame_owner;
    int frame_objects;
    /* code objects */
    size_t code_filename, code_name, code_firstlineno, code_linetable, code_adaptive;
    /* str objects: where a compact ASCII string's bytes start, and a
     * compact non-ASCII one's */
    size_t ascii_data, compact_data;
    int has_ready_bit; /* 3.9 to 3.11: a string may not be ready */
} layout;

/* From each version's headers (offsetof on x86-64 and aarch64 alike). */
static const layout known[] = {
    {.minor = 9,
     .lines = GT_PY_LNOTAB,
     .ts_frame = 24,
     .frame_back = 24,
     .frame_code = 32,
     .frame_lasti = 104,
     .frame_objects = 1,
     .code_filename = 104,
     .code_name = 112,
     .code_firstlineno = 40,
     .code_linetable = 120,
     .ascii_data = 48,
     .compact_data = 72,
     .has_ready_bit = 1},
    {.minor = 10,
     .lines = GT_PY_LINETABLE,
     .ts_frame = 24,
     .frame_back = 24,
     .frame_code = 32,
     .frame_lasti = 96,
     .frame_objects = 1,
     .code_filename = 104,
     .code_name = 112,
     .code_firstlineno = 40,
     .code_linetable = 120,
     .ascii_data = 48,
     .compact_data = 72,
     .has_ready_bit = 1},
    {.minor = 11,
     .lines = GT_PY_LOCATIONS,
     .ts_frame = 56,
     .through_cframe = 1,
     .cframe_current = 8,
     .frame_back = 48,
     .frame_code = 32,
     .frame_instr = 56,
     .frame_owner = 69,
     .code_filename = 112,
     .code_name = 128,
     .code_firstlineno = 72,
     .code_linetable = 136,
     .code_adaptive = 184,
     .ascii_data = 48,
     .compact_data = 72,
     .has_ready_bit = 1},
    {.minor = 12,
     .lines = GT_PY_LOCATIONS,
     .ts_frame = 56,
     .through_cframe = 1,
     .cframe_current = 0,
     .frame_back = 8,
     .frame_code = 0,
     .frame_instr = 56,
     .frame_owner = 70,
     .code_filename = 112,
     .code_name = 128,
     .code_firstlineno = 68,
     .code_linetable = 136,
     .code_adaptive = 192,
     .ascii_data = 40,
     .compact_data = 56},
};

/* 3.13's _Py_DebugOffsets, as far as this reader uses it (its layout is
 * fixed within 3.13). */
typedef struct debug_offsets_313 {
    char cookie[8];
    uint64_t version;
    uint64_t free_threaded;
    uint64_t runtime_state[3];
    uint64_t interpreter_state[13];
    uint64_t thread_state[9];      /* size, prev, next, interp, current_frame, ... */
    uint64_t interpreter_frame[6]; /* size, previous, executable, instr_ptr, localsplus, owner */
    uint64_t code_object[10];      /* size, filename, name, qualname, linetable, firstlineno,
                                      argcount, localsplusnames, localspluskinds, co_code_adaptive */
} debug_offsets_313;

#endif
