/*
 * models/dvfs.c - the physical model of a GPU under a power limit (DESIGN.md section 3).
 *
 * Per GPU, with x = f / f_max and k = f_knee / f_max:
 *
 *   v(x) = v_min + (1 - v_min) * clamp((x - k) / (1 - k), 0, 1)     voltage, flat below knee
 *   P(x) = idle_w + mem_w + dyn_w * activity * x * v(x)^2            draw
 *   T(x) = t_max / (alpha / x + (1 - alpha))                         throughput
 *
 * P is continuous and strictly increasing in x (for activity > 0), so the firmware's clock
 * under a cap, the largest x with P(x) <= cap, is unique. Below the knee P is linear in x;
 * above it, with v = b0 + b1 x, P - cap is the cubic D x (b0 + b1 x)^2 + S - cap, whose one
 * root in [k, 1] gsl_poly_solve_cubic finds in closed form and one Newton step polishes. No
 * iteration to a tolerance, so the solve is cheap enough to run inside the simulator and
 * inside the fit's Jacobian.
 *
 * The limiter regulates short-term power, so a job whose draw fluctuates averages below its
 * cap: the mean draw under a binding cap is cap_fill * cap (cap_fill <= 1, job-specific,
 * fitted). The clock therefore solves P(x) = cap_fill * cap, and a job is capped as soon as
 * its uncapped mean draw exceeds cap_fill * cap, which is how Zeus's A40 ResNet-50 slows at
 * a 250 W cap while averaging 212 W (shared/data/power/zeus-nsdi23).
 *
 * T is the step-time split of the model: a share alpha of a step (at f_max) scales with
 * 1/f, the rest (memory stalls, communication, input) does not. A job whose uncapped draw
 * is below the cap runs at f_max and loses nothing. Below f_min the clock cannot go lower
 * and the draw exceeds the cap: a real GPU then throttles further by other means, which
 * the model does not describe, so callers keep caps at or above the profile's minimum.
 */
#include <gsl/gsl_poly.h>
#include <math.h>

#include "internal.h"

/* The voltage line above the knee, v(x) = b0 + b1 x; b1 == 0 when v_min == 1. */
static void
voltage_line(const struct pfs_gpu *g, double *b0, double *b1)
{
    double k = g->f_knee_mhz / g->f_max_mhz;

    *b1 = (1.0 - g->v_min) / (1.0 - k);
    *b0 = g->v_min - *b1 * k;
}

static double
clampd(double v, double lo, double hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

/* The fraction of the cap the mean draw reaches when the cap binds; 0 means 1. */
static double
fill_of(const struct pfs_dvfs_job *j)
{
    return j->cap_fill > 0 ? j->cap_fill : 1.0;
}

/* P(x) and dP/dx at normalised clock x in [0, 1]. */
static double
power_at(const struct pfs_gpu *g, const struct pfs_dvfs_job *j, double x, double *dpdx)
{
    double k = g->f_knee_mhz / g->f_max_mhz, d = g->dyn_w * j->activity;
    double s = g->idle_w + j->mem_w, b0, b1, v;

    if (x <= k) {
        if (dpdx)
            *dpdx = d * g->v_min * g->v_min;
        return s + d * x * g->v_min * g->v_min;
    }
    voltage_line(g, &b0, &b1);
    v = b0 + b1 * x;
    if (dpdx)
        *dpdx = d * v * (v + 2.0 * b1 * x);
    return s + d * x * v * v;
}

double
pfs_dvfs_power_w(const struct pfs_gpu *g, const struct pfs_dvfs_job *j, double f_mhz)
{
    double f = clampd(f_mhz, g->f_min_mhz, g->f_max_mhz);

    return power_at(g, j, f / g->f_max_mhz, NULL);
}

/* The normalised clock under cap_w; see the file comment. */
static double
clock_frac(const struct pfs_gpu *g, const struct pfs_dvfs_job *j, double cap_w_set)
{
    double cap_w = cap_w_set * fill_of(j); /* the mean draw the limiter holds */
    double x_min = g->f_min_mhz / g->f_max_mhz, k = g->f_knee_mhz / g->f_max_mhz;
    double d = g->dyn_w * j->activity, s = g->idle_w + j->mem_w;
    double b0, b1, x, roots[3];
    int n;

    if (power_at(g, j, 1.0, NULL) <= cap_w)
        return 1.0;
    if (!(d > 0))
        return x_min; /* the draw does not depend on the clock: nothing fits */
    if (cap_w <= power_at(g, j, k, NULL)) {
        x = (cap_w - s) / (d * g->v_min * g->v_min);
        return clampd(x, x_min, k);
    }
    voltage_line(g, &b0, &b1);
    if (b1 < 1e-12) { /* no voltage scaling: linear all the way */
        x = (cap_w - s) / (d * b0 * b0);
        return clampd(x, k, 1.0);
    }
    /* x^3 + (2 b0 / b1) x^2 + (b0 / b1)^2 x - (cap - s) / (d b1^2) = 0 */
    n = gsl_poly_solve_cubic(2.0 * b0 / b1, (b0 / b1) * (b0 / b1), -(cap_w - s) / (d * b1 * b1),
                             &roots[0], &roots[1], &roots[2]);
    x = roots[0];
    for (int i = 1; i < n; i++)
        if (fabs(roots[i] - clampd(roots[i], k, 1.0)) < fabs(x - clampd(x, k, 1.0)))
            x = roots[i];
    x = clampd(x, k, 1.0);
    {
        double dp, p = power_at(g, j, x, &dp);

        if (dp > 0)
            x = clampd(x - (p - cap_w) / dp, k, 1.0);
    }
    return x;
}

double
pfs__dvfs_x(const struct pfs_gpu *g, const struct pfs_dvfs_job *j, double cap_w)
{
    return clock_frac(g, j, cap_w);
}

double
pfs__dvfs_x_near(const struct pfs_gpu *g, const struct pfs_dvfs_job *j, double cap_w, double guess)
{
    double target = cap_w * fill_of(j), k = g->f_knee_mhz / g->f_max_mhz, x = guess;

    /* Above the knee and below f_max only: elsewhere the closed forms of clock_frac. */
    if (!(guess > k && guess < 1) || power_at(g, j, 1.0, NULL) <= target ||
        target <= power_at(g, j, k, NULL))
        return clock_frac(g, j, cap_w);
    for (int it = 0; it < 8; it++) {
        double dp, p = power_at(g, j, x, &dp), step;

        if (!(dp > 0))
            break;
        step = (p - target) / dp;
        x = clampd(x - step, k, 1.0);
        if (fabs(step) < 1e-9) /* quadratic convergence: x is now within ~1e-18 */
            return x;
    }
    return clock_frac(g, j, cap_w); /* (not converged: the cubic's root) */
}

double
pfs__dvfs_p(const struct pfs_gpu *g, const struct pfs_dvfs_job *j, double x)
{
    return power_at(g, j, x, NULL);
}

double
pfs_dvfs_clock_mhz(const struct pfs_gpu *g, const struct pfs_dvfs_job *j, double cap_w)
{
    return clock_frac(g, j, cap_w) * g->f_max_mhz;
}

double
pfs_dvfs_throughput(const struct pfs_gpu *g, const struct pfs_dvfs_job *j, double f_mhz)
{
    double x = clampd(f_mhz, g->f_min_mhz, g->f_max_mhz) / g->f_max_mhz;

    return j->t_max / (j->alpha / x + (1.0 - j->alpha));
}

void
pfs_dvfs_eval(const struct pfs_gpu *g, const struct pfs_dvfs_job *j, double cap_w,
              struct pfs_dvfs_point *out)
{
    double x_min = g->f_min_mhz / g->f_max_mhz;
    double x = clock_frac(g, j, cap_w), dpdx, denom;

    out->f_mhz = x * g->f_max_mhz;
    out->power_w = power_at(g, j, x, &dpdx);
    denom = j->alpha / x + (1.0 - j->alpha);
    out->throughput = j->t_max / denom;
    out->capped = x < 1.0;
    if (out->capped && x > x_min && dpdx > 0) {
        /* dT/dcap = dT/dx * dx/dcap, and dx/dcap = 1 / (dP/dx) while the cap binds. */
        double dtdx = j->t_max * j->alpha / (x * x * denom * denom);

        out->dthroughput_dcap = dtdx / dpdx * fill_of(j);
        out->dpower_dcap = fill_of(j);
    } else {
        out->dthroughput_dcap = 0.0;
        out->dpower_dcap = 0.0;
    }
}
