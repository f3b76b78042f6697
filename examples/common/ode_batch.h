/* Host side of a batch: drawing initial states and parameters, and checking
 * the device's results against the CPU reference. No CUDA here. */
#ifndef ODE_BATCH_H
#define ODE_BATCH_H

#include <stdint.h>

#include "ode_rk4.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ode_model;

/* Per-system status codes written by the status kernel. A status array is
 * filled with 0xff bytes before the kernels run, so ODE_STATUS_UNWRITTEN
 * means that no kernel reached that system. */
enum ode_status {
    ODE_STATUS_OK = 0,
    ODE_STATUS_NONFINITE = 1, /* a NaN or infinity in the final state */
    ODE_STATUS_DIVERGED = 2,  /* final state beyond ODE_DIVERGED_FACTOR * (1 + |initial|) */
    ODE_STATUS_UNWRITTEN = -1,
};

#define ODE_DIVERGED_FACTOR 1e6

/* Largest relative difference (|device - host| / (1 + |host|)) accepted
 * between device and host over ODE_CHECK_TOLERANCE_STEPS steps, and in
 * proportion beyond: the two differ only in rounding (the device fuses
 * multiply-adds, its cos is not glibc's), which the oscillators carry along
 * as a phase error that grows with the number of steps. Measured differences
 * at the defaults are around 1e-13. */
#define ODE_CHECK_TOLERANCE 1e-9
#define ODE_CHECK_TOLERANCE_STEPS 1000

/* Fills initial[ODE_DIM * n] and params[ODE_NPARAM * n] with values drawn
 * uniformly from the model's ranges; the same seed gives the same batch. */
void ode_batch_generate(const struct ode_model *m, uint64_t seed, int n, double *initial,
                        double *params);

struct ode_status_counts {
    int ok, nonfinite, diverged, unwritten, other;
};

void ode_batch_count_status(const int *status, int n, struct ode_status_counts *counts);

struct ode_check {
    int checked;
    int mismatched;      /* beyond ODE_CHECK_TOLERANCE */
    int worst;           /* system with the largest difference */
    double max_rel_diff; /* over the checked systems */
    double tolerance;    /* for this number of steps */
};

/* Integrates `samples` systems spread evenly over the batch with rhs on the
 * host and compares them with final[]. */
void ode_batch_check(ode_rhs_fn rhs, int n, int samples, double dt, int steps,
                     const double *initial, const double *params, const double *final,
                     struct ode_check *check);

#ifdef __cplusplus
}
#endif

#endif
