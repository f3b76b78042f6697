/* The built-in models. Each right-hand side is written once, as a macro: the
 * host reference and nvcc compile the macro as code, and the run-time code
 * generator receives the very same text as a string (ODE_STR). */
#ifndef ODE_MODELS_H
#define ODE_MODELS_H

#include <math.h> /* the expressions call cos */

#include "ode_rk4.h"

/* Damped driven oscillator: u'' + 2 b a u' + a^2 u = c cos(d t), with natural
 * frequency a, damping ratio b, drive amplitude c and drive frequency d. */
#define ODE_OSCILLATOR_DU v
#define ODE_OSCILLATOR_DV (c * cos(d * t) - 2.0 * b * a * v - a * a * u)
/* Van der Pol oscillator with stiffness a (b, c, d unused). */
#define ODE_VANDERPOL_DU v
#define ODE_VANDERPOL_DV (a * (1.0 - u * u) * v - u)
/* Lotka-Volterra predator-prey: prey u grows at a and is eaten at b; the
 * predator v grows at c per prey and dies at d. */
#define ODE_LOTKA_VOLTERRA_DU (a * u - b * u * v)
#define ODE_LOTKA_VOLTERRA_DV (c * u * v - d * v)

#define ODE_STR_(...) #__VA_ARGS__
#define ODE_STR(x) ODE_STR_(x)

ODE_DEFINE_RHS(oscillator, ODE_OSCILLATOR_DU, ODE_OSCILLATOR_DV)
ODE_DEFINE_RHS(vanderpol, ODE_VANDERPOL_DU, ODE_VANDERPOL_DV)
ODE_DEFINE_RHS(lotka_volterra, ODE_LOTKA_VOLTERRA_DU, ODE_LOTKA_VOLTERRA_DV)

#ifdef __cplusplus
extern "C" {
#endif

/* A closed interval values are drawn from, uniformly. */
struct ode_range {
    double lo, hi;
};

struct ode_model {
    const char *name;    /* as given to --model */
    const char *du, *dv; /* the right-hand side as C expression text */
    ode_rhs_fn host_rhs; /* the same right-hand side, compiled for the host */
    struct ode_range param[ODE_NPARAM];
    struct ode_range initial[ODE_DIM];
};

/* The built-in models, in the order --help lists them. */
extern const struct ode_model ode_models[];
extern const int ode_model_count;

/* The model called `name`, or NULL. */
const struct ode_model *ode_model_find(const char *name);

#ifdef __cplusplus
}
#endif

#endif
