/* The language and library a program's GPU work came from, so that advice
 * names the fix in the terms its author writes: a Numba, CuPy or PyTorch
 * user gets that library's way, not only the CUDA runtime's. */
#ifndef GT_LANGUAGE_H
#define GT_LANGUAGE_H

#include "report.h"

enum gt_language {
    GT_LANG_NATIVE, /* C, C++, Fortran: the CUDA runtime and driver */
    GT_LANG_NUMBA,
    GT_LANG_CUPY,
    GT_LANG_TORCH,
    GT_LANG_PYTHON, /* Python, another client (cuda-bindings, cuda.core) */
    GT_LANG_COUNT
};

/* Told from the report: the library whose kernels took the most GPU time
 * (Numba's names, CuPy's cupy_ kernels, PyTorch's at:: and c10::), else
 * NVVM compiles (Numba's), else a Python interpreter as the command (p's;
 * NULL: none). */
enum gt_language gt_report_language(const gt_report *r, const gt_process_info *p);

/* The fixes advice names, each phrased per language. */
enum gt_fix {
    GT_FIX_PINNED,     /* host memory pinned for copies */
    GT_FIX_ASYNC_COPY, /* copies that overlap kernels */
    GT_FIX_GRAPH,      /* fewer, larger launches: fusion, graphs */
    GT_FIX_SYNC,       /* fewer synchronizations */
    GT_FIX_OVERLAP,    /* work kept queued on streams */
    GT_FIX_COUNT
};

/* The fix in words, a phrase that fits "...: %s." */
const char *gt_advice_fix(enum gt_fix fix, enum gt_language lang);

#endif
