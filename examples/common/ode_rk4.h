/* Fixed-step classical Runge-Kutta (RK4) for a batch of two-variable ODE
 * systems, written once for the host, nvcc device code and NVRTC.
 *
 * The same text is compiled three ways: by the host C compiler (CPU reference
 * and tests), by nvcc (precompiled integrators) and by NVRTC (generated
 * right-hand sides, where it is handed over as an in-memory header). That is
 * why it includes nothing: NVRTC has no system headers, and the math
 * functions a right-hand side calls are built into every CUDA compiler.
 *
 * A system's state is (u, v); it has four parameters (a, b, c, d). */
#ifndef ODE_RK4_H
#define ODE_RK4_H

#define ODE_DIM 2
#define ODE_NPARAM 4

#if defined(__CUDACC__)
#define ODE_HD __host__ __device__
/* Forced inlining lets the compiler see which right-hand side a function
 * pointer names and call it directly. */
#define ODE_INLINE static __forceinline__
#else
#define ODE_HD
#define ODE_INLINE static inline
#endif

typedef void (*ode_rhs_fn)(double t, const double *y, const double *p, double *dydt);

/* The names a right-hand side is written in, inside a function with the
 * parameters of ode_rhs_fn: time t, state u, v and parameters a, b, c, d. */
#define ODE_RHS_NAMES                                                                              \
    const double u = y[0], v = y[1];                                                               \
    const double a = p[0], b = p[1], c = p[2], d = p[3];                                           \
    (void)t, (void)u, (void)v, (void)a, (void)b, (void)c, (void)d;

/* Defines `static void ode_rhs_<name>(t, y, p, dydt)` computing du/dt = du_expr
 * and dv/dt = dv_expr, expressions in the ODE_RHS_NAMES. */
#define ODE_DEFINE_RHS(name, du_expr, dv_expr)                                                     \
    ODE_INLINE ODE_HD void ode_rhs_##name(double t, const double *y, const double *p,              \
                                          double *dydt)                                            \
    {                                                                                              \
        ODE_RHS_NAMES                                                                              \
        dydt[0] = (du_expr);                                                                       \
        dydt[1] = (dv_expr);                                                                       \
    }

/* One RK4 step of size h from time t, in place. */
ODE_INLINE ODE_HD void ode_rk4_step(ode_rhs_fn rhs, double t, double h, double *y, const double *p)
{
    double k1[ODE_DIM], k2[ODE_DIM], k3[ODE_DIM], k4[ODE_DIM], stage[ODE_DIM];
    int i;

    rhs(t, y, p, k1);
    for (i = 0; i < ODE_DIM; i++)
        stage[i] = y[i] + 0.5 * h * k1[i];
    rhs(t + 0.5 * h, stage, p, k2);
    for (i = 0; i < ODE_DIM; i++)
        stage[i] = y[i] + 0.5 * h * k2[i];
    rhs(t + 0.5 * h, stage, p, k3);
    for (i = 0; i < ODE_DIM; i++)
        stage[i] = y[i] + h * k3[i];
    rhs(t + h, stage, p, k4);
    for (i = 0; i < ODE_DIM; i++)
        y[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
}

/* `steps` steps of size h from t0, in place. Time is t0 + k*h rather than a
 * running sum, so that host and device see the same times. */
ODE_INLINE ODE_HD void ode_rk4_integrate(ode_rhs_fn rhs, double t0, double h, int steps, double *y,
                                         const double *p)
{
    int k;
    for (k = 0; k < steps; k++)
        ode_rk4_step(rhs, t0 + k * h, h, y, p);
}

#if defined(__CUDACC__)
/* Defines the batch kernel `name`: one thread integrates one system.
 * state holds (u, v) per system, params (a, b, c, d) per system. */
#define ODE_DEFINE_INTEGRATOR(name, rhs)                                                           \
    extern "C" __global__ void name(const double *__restrict__ params, double *__restrict__ state, \
                                    int n, double t0, double h, int steps)                         \
    {                                                                                              \
        const int i = blockIdx.x * blockDim.x + threadIdx.x;                                       \
        if (i >= n) return;                                                                        \
        double y[ODE_DIM] = {state[ODE_DIM * i], state[ODE_DIM * i + 1]};                          \
        double p[ODE_NPARAM];                                                                      \
        for (int j = 0; j < ODE_NPARAM; j++)                                                       \
            p[j] = params[ODE_NPARAM * i + j];                                                     \
        ode_rk4_integrate(rhs, t0, h, steps, y, p);                                                \
        state[ODE_DIM * i] = y[0];                                                                 \
        state[ODE_DIM * i + 1] = y[1];                                                             \
    }
#endif

#endif
