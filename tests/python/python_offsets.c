/* Holds the layouts python_walk.c reads CPython's memory with
 * (shim/callsite/python_layouts.h) against the headers of one CPython
 * version: compiled by check_python_offsets.py with that version's include
 * directories, it prints one line per field (the offset the table has, the
 * offset the headers give) and exits 1 when any differs, 2 when the table
 * has no row for the version.
 *
 * 3.9 to 3.12: every offset of the version's row of `known`. 3.13: the
 * walker takes its offsets from the interpreter's own _Py_DebugOffsets at
 * run time, so what is checked is where its copy of that struct
 * (debug_offsets_313) puts each member it reads. Every version: the
 * offsets the walker reads at fixed places (an object's type, a str's
 * length and state bits, a bytes object's size and data). */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <frameobject.h>
#if PY_VERSION_HEX >= 0x030b0000
#include <internal/pycore_frame.h>
#endif
#if PY_VERSION_HEX >= 0x030d0000
#include <internal/pycore_runtime.h>
#endif

#include <stdio.h>
#include <string.h>

#include "python_layouts.h"

static int failed;

static void same(const char *what, size_t table, size_t header)
{
    printf("%-48s %5zu %5zu%s\n", what, table, header, table == header ? "" : "  MISMATCH");
    if (table != header) failed = 1;
}

#define FIELD(row, field, type, member)                                                            \
    same(#field " = " #type "." #member, (row)->field, offsetof(type, member))

/* The bit of a str's state word (the 32 bits at offset 32) that a
 * bit-field of PyASCIIObject.state sets. */
#define STATE_BIT(member)                                                                          \
    ({                                                                                             \
        PyASCIIObject o;                                                                           \
        uint32_t word;                                                                             \
        memset(&o, 0, sizeof o);                                                                   \
        o.state.member = 1;                                                                        \
        memcpy(&word, (const char *)&o + 32, sizeof word);                                         \
        (size_t)(word ? __builtin_ctz(word) : 99);                                                 \
    })

/* What python_walk.c reads at the same place in every version. */
static void fixed_offsets(void)
{
    same("ob_type", 8, offsetof(PyObject, ob_type));
    same("str length", 16, offsetof(PyASCIIObject, length));
    same("str state", 32, offsetof(PyASCIIObject, state));
    same("str state.kind (bit)", 2, STATE_BIT(kind));
    same("str state.compact (bit)", 5, STATE_BIT(compact));
    same("str state.ascii (bit)", 6, STATE_BIT(ascii));
    same("bytes size", 16, offsetof(PyVarObject, ob_size));
    same("bytes data", 32, offsetof(PyBytesObject, ob_sval));
}

#if PY_VERSION_HEX >= 0x030d0000
#define DEBUG(member, index_member)                                                                \
    same("debug_offsets_313." #index_member, offsetof(debug_offsets_313, index_member),            \
         offsetof(_Py_DebugOffsets, member))

static int check(void)
{
    DEBUG(cookie, cookie);
    DEBUG(version, version);
    DEBUG(free_threaded, free_threaded);
    DEBUG(thread_state.current_frame, thread_state[4]);
    DEBUG(interpreter_frame.previous, interpreter_frame[1]);
    DEBUG(interpreter_frame.executable, interpreter_frame[2]);
    DEBUG(interpreter_frame.instr_ptr, interpreter_frame[3]);
    DEBUG(interpreter_frame.owner, interpreter_frame[5]);
    DEBUG(code_object.filename, code_object[1]);
    DEBUG(code_object.qualname, code_object[3]);
    DEBUG(code_object.linetable, code_object[4]);
    DEBUG(code_object.firstlineno, code_object[5]);
    DEBUG(code_object.co_code_adaptive, code_object[9]);
    /* layout_313 takes a str's data to start where the 3.12 row says */
    same("ascii_data = sizeof(PyASCIIObject)", 40, sizeof(PyASCIIObject));
    same("compact_data = sizeof(PyCompactUnicodeObject)", 56, sizeof(PyCompactUnicodeObject));
    return 0;
}
#else
static int check(void)
{
    const layout *l = NULL;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (known[i].minor == PY_MINOR_VERSION) l = &known[i];
    if (!l) {
        printf("no row for 3.%d in python_layouts.h\n", PY_MINOR_VERSION);
        return 2;
    }
#if PY_VERSION_HEX < 0x030b0000
    same("through_cframe", l->through_cframe, 0);
    FIELD(l, ts_frame, PyThreadState, frame);
    same("frame_objects", l->frame_objects, 1);
    FIELD(l, frame_back, PyFrameObject, f_back);
    FIELD(l, frame_code, PyFrameObject, f_code);
    FIELD(l, frame_lasti, PyFrameObject, f_lasti);
#else
    same("through_cframe", l->through_cframe, 1);
    FIELD(l, ts_frame, PyThreadState, cframe);
    FIELD(l, cframe_current, _PyCFrame, current_frame);
    same("frame_objects", l->frame_objects, 0);
    FIELD(l, frame_back, _PyInterpreterFrame, previous);
    FIELD(l, frame_code, _PyInterpreterFrame, f_code);
    FIELD(l, frame_instr, _PyInterpreterFrame, prev_instr);
    FIELD(l, frame_owner, _PyInterpreterFrame, owner);
    FIELD(l, code_adaptive, PyCodeObject, co_code_adaptive);
#endif
    FIELD(l, code_filename, PyCodeObject, co_filename);
#if PY_VERSION_HEX < 0x030b0000
    FIELD(l, code_name, PyCodeObject, co_name);
#else
    FIELD(l, code_name, PyCodeObject, co_qualname); /* the qualified name, where there is one */
#endif
    FIELD(l, code_firstlineno, PyCodeObject, co_firstlineno);
#if PY_VERSION_HEX < 0x030a0000
    FIELD(l, code_linetable, PyCodeObject, co_lnotab);
#else
    FIELD(l, code_linetable, PyCodeObject, co_linetable);
#endif
    same("ascii_data = sizeof(PyASCIIObject)", l->ascii_data, sizeof(PyASCIIObject));
    same("compact_data = sizeof(PyCompactUnicodeObject)", l->compact_data,
         sizeof(PyCompactUnicodeObject));
#if PY_VERSION_HEX < 0x030c0000
    same("has_ready_bit", l->has_ready_bit, 1);
    same("str state.ready (bit)", 7, STATE_BIT(ready));
#else
    same("has_ready_bit", l->has_ready_bit, 0);
#endif
    return 0;
}
#endif

int main(void)
{
    printf("%-48s %5s %5s\n", "CPython " PY_VERSION " headers", "table", "header");
    fixed_offsets();
    int rc = check();
    return rc ? rc : failed;
}
