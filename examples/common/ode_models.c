/* The built-in models' expressions, parameter ranges and host right-hand
 * sides. Ranges keep every system well inside RK4's stability region at the
 * default step, so a failed system points at a bug, not at the model. */
#include "ode_models.h"

#include <string.h>

const struct ode_model ode_models[] = {
    {
        .name = "oscillator",
        .du = ODE_STR(ODE_OSCILLATOR_DU),
        .dv = ODE_STR(ODE_OSCILLATOR_DV),
        .host_rhs = ode_rhs_oscillator,
        .param = {{0.5, 2.0}, {0.05, 0.5}, {0.0, 1.0}, {0.2, 3.0}},
        .initial = {{-1.0, 1.0}, {-1.0, 1.0}},
    },
    {
        .name = "vanderpol",
        .du = ODE_STR(ODE_VANDERPOL_DU),
        .dv = ODE_STR(ODE_VANDERPOL_DV),
        .host_rhs = ode_rhs_vanderpol,
        .param = {{0.1, 3.0}, {0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}},
        .initial = {{-2.0, 2.0}, {-2.0, 2.0}},
    },
    {
        .name = "lotka-volterra",
        .du = ODE_STR(ODE_LOTKA_VOLTERRA_DU),
        .dv = ODE_STR(ODE_LOTKA_VOLTERRA_DV),
        .host_rhs = ode_rhs_lotka_volterra,
        .param = {{0.8, 1.2}, {0.3, 0.5}, {0.2, 0.4}, {0.8, 1.2}},
        .initial = {{0.5, 3.0}, {0.5, 3.0}},
    },
};

const int ode_model_count = (int)(sizeof ode_models / sizeof ode_models[0]);

const struct ode_model *ode_model_find(const char *name)
{
    for (int i = 0; i < ode_model_count; i++)
        if (strcmp(ode_models[i].name, name) == 0) return &ode_models[i];
    return NULL;
}
