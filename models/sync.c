/*
 * models/sync.c - a synchronous job on GPUs that are not all alike (issue 19, docs/model.md
 * section 6).
 *
 * Chips of one SKU differ: at a given power some hold a higher clock than others (Sinha et
 * al., SC'22). Chip i has an efficiency eta_i and draws
 *
 *   P_i(x) = s + (P(x) - s) / eta_i,     s = idle_w + mem_w (what does not scale with clock)
 *
 * where P is the DVFS model's draw of the median chip (models/dvfs.c): the same model with
 * dyn_w / eta_i. Under a cap, chip i runs at its own clock x_i. A data-parallel (or
 * pipelined, or tensor-parallel) step ends at the collective, so every GPU waits for the
 * slowest: with the job's DVFS split alpha (the share of a step at f_max that scales with
 * the clock; the rest, communication and memory stalls, does not),
 *
 *   step = alpha / min_i x_i + (1 - alpha)           throughput = t_max / step
 *
 * A chip whose own share ends early waits for the rest of the step at idle_w: its mean
 * draw is P_i(x_i) - (P_i(x_i) - idle_w) (1 - busy_i / step), busy_i = alpha / x_i + 1 - alpha.
 * With every eta equal this is the DVFS model itself, bit for bit.
 *
 * Power shifting (sync-shift) gives the job's budget to its chips so that all hold one clock
 * x*: chip i needs P_i(x*) / cap_fill, at least the minimum limit, and x* is the highest clock
 * whose needs fit the budget. That maximises min_i x_i, hence the throughput, over every way
 * of dividing the budget (a test checks it against brute force). The needs are decreasing in
 * eta, so with the chips sorted by eta the sum at any x costs one binary search over prefix
 * sums of 1 / eta, and x* one bisection on x: a 16,384-GPU job costs microseconds.
 */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct pfs_sync_gpus {
    size_t n;
    double *eta;    /* [n] ascending */
    size_t *order;  /* [n] the index (as given) of each sorted chip */
    double *inv_ps; /* [n + 1] prefix sums of 1 / eta, ascending eta */
};

int
pfs_eta_draw(const struct pfs_variability *v, unsigned long seed, size_t n, double *eta,
             struct pfs_diag *diag)
{
    gsl_rng *r;

    if (!(v->eta_sd >= 0 && v->eta_sd <= PFS_ETA_SD_MAX) ||
        !(v->outlier_frac >= 0 && v->outlier_frac <= 1) ||
        (v->outlier_frac > 0 && !(v->outlier_eta >= PFS_OUTLIER_ETA_MIN && v->outlier_eta <= 1)))
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "variability",
                             "GPU variability: eta_sd %g (0 to %g), outlier_frac %g (0 to 1), "
                             "outlier_eta %g (%g to 1)",
                             v->eta_sd, PFS_ETA_SD_MAX, v->outlier_frac, v->outlier_eta,
                             PFS_OUTLIER_ETA_MIN);
    if (!(r = gsl_rng_alloc(gsl_rng_mt19937)))
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    gsl_rng_set(r, seed);
    for (size_t i = 0; i < n; i++) {
        double z;

        /* Two draws per GPU whatever the settings, so that a GPU's eta does not depend on
         * whether outliers are on. */
        do
            z = gsl_ran_gaussian_ziggurat(r, 1.0);
        while (fabs(z) > 4);
        eta[i] = 1 + v->eta_sd * z;
        if (gsl_rng_uniform(r) < v->outlier_frac)
            eta[i] *= v->outlier_eta;
    }
    gsl_rng_free(r);
    return 0;
}

struct keyed {
    double eta;
    size_t i;
};

static int
cmp_eta(const void *a, const void *b)
{
    const struct keyed *x = a, *y = b;

    if (x->eta < y->eta || x->eta > y->eta)
        return x->eta < y->eta ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

int
pfs_sync_gpus_new(const double *eta, size_t n, struct pfs_sync_gpus **out, struct pfs_diag *diag)
{
    struct pfs_sync_gpus *s;
    struct keyed *k;

    *out = NULL;
    if (n == 0)
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "n_gpus", "a job needs a GPU");
    for (size_t i = 0; i < n; i++)
        if (!(eta[i] > 0) || !isfinite(eta[i]))
            return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "eta",
                                 "GPU %zu: efficiency %g (must be finite and positive)", i, eta[i]);
    if (!(s = calloc(1, sizeof *s)) || !(s->eta = malloc(n * sizeof *s->eta)) ||
        !(s->order = malloc(n * sizeof *s->order)) ||
        !(s->inv_ps = malloc((n + 1) * sizeof *s->inv_ps))) {
        pfs_sync_gpus_free(s);
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    if (!(k = malloc(n * sizeof *k))) {
        pfs_sync_gpus_free(s);
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    s->n = n;
    for (size_t i = 0; i < n; i++)
        k[i] = (struct keyed){eta[i], i};
    qsort(k, n, sizeof *k, cmp_eta);
    s->inv_ps[0] = 0;
    for (size_t i = 0; i < n; i++) {
        s->eta[i] = k[i].eta;
        s->order[i] = k[i].i;
        s->inv_ps[i + 1] = s->inv_ps[i] + 1 / s->eta[i];
    }
    free(k);
    *out = s;
    return 0;
}

void
pfs_sync_gpus_free(struct pfs_sync_gpus *s)
{
    if (!s)
        return;
    free(s->eta);
    free(s->order);
    free(s->inv_ps);
    free(s);
}

/* The profile of a chip of efficiency eta. */
static struct pfs_gpu
chip(const struct pfs_gpu *g, double eta)
{
    struct pfs_gpu c = *g;

    c.dyn_w = g->dyn_w / eta;
    return c;
}

static double
fill_of(const struct pfs_dvfs_job *j)
{
    return j->cap_fill > 0 ? j->cap_fill : 1.0;
}

static double
step_of(const struct pfs_dvfs_job *j, double x)
{
    return j->alpha / x + (1.0 - j->alpha);
}

/* Chip c at clock x, its draw p there, in a step of length step: its mean draw over the step
 * (adds to *sum_w) and the share it waits (adds to *sum_wait). */
static void
account(const struct pfs_gpu *c, const struct pfs_dvfs_job *j, double x, double step, double *sum_w,
        double *sum_wait)
{
    double p = pfs__dvfs_p(c, j, x), wait = 1 - step_of(j, x) / step;

    *sum_w += p - (p - c->idle_w) * wait;
    *sum_wait += wait;
}

/* The first of the chips (ascending eta) with eta >= v, or n. */
static size_t
first_at_least(const struct pfs_sync_gpus *s, double v)
{
    size_t a = 0, b = s->n;

    while (a < b) {
        size_t m = a + (b - a) / 2;

        if (s->eta[m] < v)
            a = m + 1;
        else
            b = m;
    }
    return a;
}

/* The chips' draws and waits under one cap (chip 0 at x_gate, steps of length step), summed.
 * By regime: a chip uncapped at f_max draws s + (P(1) - s) / eta; one capped below the knee
 * holds x = u eta, u = (fill cap - s) / (dyn activity v_min^2) (the closed form of
 * clock_frac); so both groups sum in closed form over prefix sums of 1 / eta, and only the
 * chips between the knee and f_max (and any at the floor) are solved one by one, by Newton's
 * method from the previous chip's clock. */
static void
uniform_draw(const struct pfs_gpu *g, const struct pfs_dvfs_job *j, const struct pfs_sync_gpus *s,
             double cap_w, double x_gate, double step, double *sum_w, double *sum_wait)
{
    double fill = fill_of(j), tgt = fill * cap_w, st = g->idle_w + j->mem_w;
    double d = g->dyn_w * j->activity, k = g->f_knee_mhz / g->f_max_mhz;
    double x_min = g->f_min_mhz / g->f_max_mhz, x_prev = x_gate;
    size_t lin0 = 0, lin1 = 0, sat = s->n;

    if (d > 0 && tgt > st && g->v_min < 1) {
        double u = (tgt - st) / (d * g->v_min * g->v_min);

        lin0 = first_at_least(s, x_min / u); /* above the floor */
        lin1 = first_at_least(s, (pfs__dvfs_p(g, j, k) - st) / (tgt - st) * (1 + 1e-12));
        sat = first_at_least(s, (pfs__dvfs_p(g, j, 1.0) - st) / (tgt - st) * (1 + 1e-12));
        lin1 = lin1 < lin0 ? lin0 : lin1;
        sat = sat < lin1 ? lin1 : sat;
        if (lin1 > lin0) { /* idle + (tgt - idle) busy / step, busy = alpha / (u eta) + 1 - alpha */
            double inv = s->inv_ps[lin1] - s->inv_ps[lin0], m = (double)(lin1 - lin0);
            double busy = j->alpha / u * inv + m * (1 - j->alpha);

            *sum_w += m * g->idle_w + (tgt - g->idle_w) * busy / step;
            *sum_wait += m - busy / step;
        }
        if (sat < s->n) { /* at f_max: busy 1, draw s + (P(1) - s) / eta */
            double inv = s->inv_ps[s->n] - s->inv_ps[sat], m = (double)(s->n - sat);
            double p1 = pfs__dvfs_p(g, j, 1.0);

            *sum_w += m * g->idle_w + (m * st + (p1 - st) * inv - m * g->idle_w) / step;
            *sum_wait += m * (1 - 1 / step);
        }
    } /* else every chip one by one */
    for (size_t i = 0; i < s->n; i++) {
        struct pfs_gpu c;
        double x;

        if (i >= lin0 && i < lin1) {
            i = lin1 - 1; /* (summed above) */
            continue;
        }
        if (i >= sat)
            break;
        c = chip(g, s->eta[i]);
        x = i == 0 ? x_gate : pfs__dvfs_x_near(&c, j, cap_w, x_prev);
        account(&c, j, x, step, sum_w, sum_wait);
        x_prev = x;
    }
}

void
pfs_sync_uniform(const struct pfs_gpu *g, const struct pfs_dvfs_job *j,
                 const struct pfs_sync_gpus *s, double cap_w, bool with_power,
                 struct pfs_sync_point *out)
{
    struct pfs_gpu slow = chip(g, s->eta[0]);
    double step, sum_w = 0, sum_wait = 0;

    out->x_gate = pfs__dvfs_x(&slow, j, cap_w); /* the clock falls with eta */
    step = step_of(j, out->x_gate);
    out->throughput = j->t_max / step;
    out->power_w = out->wait_frac = NAN;
    if (!with_power)
        return;
    if (!(s->eta[0] < s->eta[s->n - 1])) { /* all alike: no one waits */
        out->power_w = pfs__dvfs_p(&slow, j, out->x_gate);
        out->wait_frac = 0;
        return;
    }
    uniform_draw(g, j, s, cap_w, out->x_gate, step, &sum_w, &sum_wait);
    out->power_w = sum_w / (double)s->n;
    out->wait_frac = sum_wait / (double)s->n;
}

void
pfs_sync_swing(const struct pfs_gpu *g, const struct pfs_dvfs_job *j, const struct pfs_sync_gpus *s,
               double cap_w, struct pfs_sync_swing *out)
{
    struct pfs_gpu slow = chip(g, s->eta[0]);
    double x_prev = pfs__dvfs_x(&slow, j, cap_w), step = step_of(j, x_prev);
    double st = g->idle_w + j->mem_w, mean = 0, peak = 0;

    for (size_t i = 0; i < s->n; i++) {
        struct pfs_gpu c = chip(g, s->eta[i]);
        double x = i == 0 ? x_prev : pfs__dvfs_x_near(&c, j, cap_w, x_prev);
        double p = pfs__dvfs_p(&c, j, x), busy = step_of(j, x), comp = j->alpha / x;

        double pc = comp > 0 ? st + (p - st) * busy / comp : p;

        mean += p - (p - g->idle_w) * (1 - busy / step);
        /* its draw while it computes: the mean while busy less the non-scaling share at st,
         * but never above its limit (the limiter holds it; the compute phase is then longer
         * than alpha says: memory stalls draw inside it) */
        peak += pc < cap_w || p > cap_w ? pc : cap_w;
        x_prev = x;
    }
    out->mean_w = mean / (double)s->n;
    out->peak_w = peak / (double)s->n;
    out->trough_w = j->alpha < 1 ? st : out->mean_w; /* alpha 1: no phase without compute */
}

/* What the chips need to hold clock x (each at least lo): the sum, and in *k the number of
 * chips (the least efficient) that need more than lo. */
static double
needs_w(const struct pfs_gpu *g, const struct pfs_dvfs_job *j, const struct pfs_sync_gpus *s,
        double x, double lo, size_t *k)
{
    double fill = fill_of(j), st = g->idle_w + j->mem_w, d = pfs__dvfs_p(g, j, x) - st;
    size_t a = 0, b = s->n;

    /* need_i = (st + d / eta_i) / fill, decreasing in eta: the first chip needing <= lo. */
    while (a < b) {
        size_t m = a + (b - a) / 2;

        if ((st + d / s->eta[m]) / fill > lo)
            a = m + 1;
        else
            b = m;
    }
    *k = a;
    return ((double)a * st + d * s->inv_ps[a]) / fill + (double)(s->n - a) * lo;
}

int
pfs_sync_shift(const struct pfs_gpu *g, const struct pfs_dvfs_job *j, const struct pfs_sync_gpus *s,
               double mean_cap_w, bool with_power, double *caps_w, struct pfs_sync_point *out,
               struct pfs_diag *diag)
{
    double lo = g->min_limit_w, hi = g->max_limit_w, fill = fill_of(j);
    double budget, x_lo, x_hi, x, st = g->idle_w + j->mem_w, top = hi;
    struct pfs_gpu slow = chip(g, s->eta[0]);
    size_t k;

    if (!(mean_cap_w >= lo * (1 - 1e-12)))
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "cap_w",
                             "a mean cap of %g W is below the minimum limit (%g W)", mean_cap_w,
                             lo);
    budget = (double)s->n * (mean_cap_w < hi ? mean_cap_w : hi);
    x_lo = g->f_min_mhz / g->f_max_mhz;
    x_hi = pfs__dvfs_x(&slow, j, hi); /* the slowest chip cannot go past its clock at hi */
    if (needs_w(g, j, s, x_hi, lo, &k) <= budget)
        x = x_hi;
    else if (needs_w(g, j, s, x_lo, lo, &k) > budget) {
        /* Even f_min needs more than the budget on some chips: the model's floor, where a
         * chip draws above its cap (docs/model.md). All run at f_min; those that need more
         * than the mean cap there are held at it. */
        x = x_lo;
        top = mean_cap_w;
    } else {
        double a = x_lo, b = x_hi;

        for (int it = 0; it < 200 && b - a > 1e-15; it++) {
            double m = 0.5 * (a + b);

            if (needs_w(g, j, s, m, lo, &k) <= budget)
                a = m;
            else
                b = m;
        }
        x = a;
    }
    (void)needs_w(g, j, s, x, lo, &k);
    if (caps_w) {
        double d = pfs__dvfs_p(g, j, x) - st;

        for (size_t i = 0; i < s->n; i++) {
            double need = (st + d / s->eta[i]) / fill;

            caps_w[s->order[i]] = i >= k ? lo : (need < top ? need : top);
        }
    }
    out->x_gate = x;
    out->throughput = j->t_max / step_of(j, x);
    out->power_w = out->wait_frac = NAN;
    if (with_power) {
        double step = step_of(j, x), d = pfs__dvfs_p(g, j, x) - st;
        double sum_w = (double)k * st + d * s->inv_ps[k], sum_wait = 0, x_prev = 0;

        for (size_t i = k, first = 1; i < s->n; i++, first = 0) { /* at the minimum limit:
                                                                   * faster, and waiting */
            struct pfs_gpu c = chip(g, s->eta[i]);
            double xi = first ? pfs__dvfs_x(&c, j, lo) : pfs__dvfs_x_near(&c, j, lo, x_prev);

            x_prev = xi;
            account(&c, j, xi > x ? xi : x, step, &sum_w, &sum_wait);
        }
        out->power_w = sum_w / (double)s->n;
        out->wait_frac = sum_wait / (double)s->n;
    }
    return 0;
}

/* ----- a curve set at another size (pfisim scale) ----- */

/* A job's stream: the seed and its id (FNV-1a), so that a job keeps its GPUs whatever else
 * its file holds. */
unsigned long
pfs_job_seed(unsigned long seed, const char *job_id)
{
    uint64_t h = pfs__fnv1a_str(PFS__FNV_OFFSET, job_id);

    return (unsigned long)(h ^ (seed * 0x9e3779b97f4a7c15ull));
}

/* The job's measured throughput (at its own size) when its gating GPU holds clock x where
 * identical GPUs under measured cap q would hold their own: the measured curve at the cap
 * where identical GPUs hold x (interpolated), so that the measured shape carries the job and
 * the model only maps clocks to caps. The same cap when the clocks agree (identical GPUs:
 * the measured point itself) or x is f_max; beyond the measured caps, the nearest measured
 * point times the model's ratio of throughputs. */
static double
measured_at(const struct pfs_gpu *g, const struct pfs_dvfs_job *fit, const struct pfs_job_curve *jc,
            const struct pfs_curve *c, size_t q, double x)
{
    double x_one = pfs__dvfs_x(g, fit, jc->cap_w[q]), lo = jc->cap_w[0];
    double hi = jc->cap_w[jc->n_points - 1], eq;
    struct pfs_curve_point p;

    if ((!(x < x_one) && !(x > x_one)) || !(x < 1))
        return jc->throughput[q];
    eq = pfs__dvfs_p(g, fit, x) / fill_of(fit);
    if (eq >= lo && eq <= hi && pfs_curve_eval(c, eq, &p) == 0)
        return p.throughput;
    {
        size_t at = eq < lo ? 0 : jc->n_points - 1;

        return jc->throughput[at] * step_of(fit, pfs__dvfs_x(g, fit, jc->cap_w[at])) /
               step_of(fit, x);
    }
}

long
pfs_scaled_gpus(const struct pfs_scale_options *o, int n_gpus)
{
    return o->n_gpus > 0 ? o->n_gpus : o->times * (long)n_gpus;
}

int
pfs_job_curve_sync(const struct pfs_gpu *g, const struct pfs_job_curve *jc,
                   const struct pfs_dvfs_job *fit, const struct pfs_sync_gpus *s, bool shift,
                   bool with_power, double *throughput, double *power_w, struct pfs_diag *diag)
{
    struct pfs_curve *c = NULL;
    int rc;

    if ((rc = pfs_curve_sampled_new(jc->cap_w, jc->throughput, jc->power_w, jc->n_points, &c,
                                    diag)) != 0)
        return rc;
    for (size_t q = 0; q < jc->n_points && rc == 0; q++) {
        double cap = jc->cap_w[q];
        struct pfs_dvfs_point one;
        struct pfs_sync_point at;

        if (cap < g->min_limit_w || cap > g->max_limit_w) {
            rc = pfs__diag_set(diag, PFS_EINVAL, NULL, jc->line, 0, "cap_w",
                               "job '%s': cap %g W is outside the %s limits [%g, %g] W", jc->job_id,
                               cap, g->name, g->min_limit_w, g->max_limit_w);
            break;
        }
        pfs_dvfs_eval(g, fit, cap, &one);
        if (shift)
            rc = pfs_sync_shift(g, fit, s, cap, with_power, NULL, &at, diag);
        else
            pfs_sync_uniform(g, fit, s, cap, with_power, &at);
        if (rc)
            break;
        throughput[q] = measured_at(g, fit, jc, c, q, at.x_gate) * (double)s->n / jc->n_gpus;
        power_w[q] =
            jc->power_w[q] * (with_power && one.power_w > 0 ? at.power_w / one.power_w : 1);
    }
    pfs_curve_free(c);
    return rc;
}

int
pfs_job_curve_scale(const struct pfs_gpu *g, const struct pfs_job_curve *jc,
                    const struct pfs_dvfs_job *fit, const struct pfs_scale_options *o,
                    bool with_power, double *throughput, double *power_w, struct pfs_diag *diag)
{
    struct pfs_sync_gpus *s = NULL;
    long n = pfs_scaled_gpus(o, jc->n_gpus);
    double *eta;
    int rc = 0;

    if (n < 1 || n > PFS_SCALE_MAX_GPUS)
        return pfs__diag_set(diag, PFS_EINVAL, NULL, jc->line, 0, "n_gpus",
                             "job '%s': %ld GPUs (1 to %d)", jc->job_id, n, PFS_SCALE_MAX_GPUS);
    if (!(eta = malloc((size_t)n * sizeof *eta)))
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    if ((rc = pfs_eta_draw(&o->var, pfs_job_seed(o->seed, jc->job_id), (size_t)n, eta, diag)) ==
            0 &&
        (rc = pfs_sync_gpus_new(eta, (size_t)n, &s, diag)) == 0)
        rc = pfs_job_curve_sync(g, jc, fit, s, o->shift, with_power, throughput, power_w, diag);
    free(eta);
    pfs_sync_gpus_free(s);
    return rc;
}
