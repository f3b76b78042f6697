/* How to step from a frame to its caller on x86-64, as the object's
 * .eh_frame says (cfi.c): the call frame information every compiler emits
 * for exceptions, present without frame pointers and without debug
 * information. */
#ifndef GT_CFI_H
#define GT_CFI_H

#include <stdint.h>

enum gt_cfi_kind {
    GT_CFI_STEP,    /* the caller's frame is found as below */
    GT_CFI_END,     /* the outermost frame: no caller (the return address is undefined) */
    GT_CFI_UNKNOWN, /* no entry for the address, or one this reader does not follow */
};

/* At an address: the canonical frame address (CFA) is cfa_reg (rsp or
 * rbp) plus cfa_off, the return address is at CFA - 8, and the caller's
 * rbp is at CFA + rbp_off when rbp_saved (else rbp is the caller's). */
typedef struct gt_cfi_rule {
    uint8_t kind;    /* enum gt_cfi_kind */
    uint8_t cfa_rbp; /* 1: CFA from rbp, 0: from rsp */
    uint8_t rbp_saved;
    int32_t cfa_off;
    int32_t rbp_off;
} gt_cfi_rule;

/* The rule at `target` (an instruction address: for a caller's frame, its
 * return address minus one) in the object whose .eh_frame_hdr section (the
 * PT_GNU_EH_FRAME segment, mapped) is at `eh_frame_hdr`. Reads only the
 * object's mapped sections. */
gt_cfi_rule gt_cfi_find(const void *eh_frame_hdr, uintptr_t target);

#endif
