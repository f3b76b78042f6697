#include "ode_batch.h"

#include <math.h>
#include <string.h>

#include "ode_models.h"

/* splitmix64: a tiny generator whose sequence is the same everywhere, so a
 * batch is reproducible from its seed on any machine. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double draw(uint64_t *state, struct ode_range r)
{
    double unit = (double)(next_random(state) >> 11) * 0x1.0p-53;
    return r.lo + (r.hi - r.lo) * unit;
}

void ode_batch_generate(const struct ode_model *m, uint64_t seed, int n, double *initial,
                        double *params)
{
    uint64_t state = seed;
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < ODE_DIM; k++)
            initial[ODE_DIM * i + k] = draw(&state, m->initial[k]);
        for (int k = 0; k < ODE_NPARAM; k++)
            params[ODE_NPARAM * i + k] = draw(&state, m->param[k]);
    }
}

void ode_batch_count_status(const int *status, int n, struct ode_status_counts *counts)
{
    memset(counts, 0, sizeof *counts);
    for (int i = 0; i < n; i++) {
        switch (status[i]) {
        case ODE_STATUS_OK:
            counts->ok++;
            break;
        case ODE_STATUS_NONFINITE:
            counts->nonfinite++;
            break;
        case ODE_STATUS_DIVERGED:
            counts->diverged++;
            break;
        case ODE_STATUS_UNWRITTEN:
            counts->unwritten++;
            break;
        default:
            counts->other++;
            break;
        }
    }
}

/* How far a device result is from the host's, relative to the host's size;
 * a NaN on either side is infinitely far. */
static double relative_difference(const double *device, const double *host)
{
    double worst = 0.0;
    for (int j = 0; j < ODE_DIM; j++) {
        double diff = fabs(device[j] - host[j]) / (1.0 + fabs(host[j]));
        if (isnan(diff)) return INFINITY;
        if (diff > worst) worst = diff;
    }
    return worst;
}

void ode_batch_check(ode_rhs_fn rhs, int n, int samples, double dt, int steps,
                     const double *initial, const double *params, const double *final,
                     struct ode_check *check)
{
    memset(check, 0, sizeof *check);
    check->tolerance = ODE_CHECK_TOLERANCE * fmax(1.0, (double)steps / ODE_CHECK_TOLERANCE_STEPS);
    if (samples > n) samples = n;
    for (int k = 0; k < samples; k++) {
        int i = (int)((long long)k * n / samples);
        double y[ODE_DIM];
        memcpy(y, &initial[ODE_DIM * i], sizeof y);
        ode_rk4_integrate(rhs, 0.0, dt, steps, y, &params[ODE_NPARAM * i]);
        double diff = relative_difference(&final[ODE_DIM * i], y);
        if (diff > check->tolerance) check->mismatched++;
        if (k == 0 || diff > check->max_rel_diff) {
            check->max_rel_diff = diff;
            check->worst = i;
        }
        check->checked++;
    }
}
