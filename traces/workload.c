/*
 * traces/workload.c - workloads: who arrives when, on how many GPUs, for how long, with
 * which curve, deadline and tier (docs/workload.md).
 *
 * Sources of arrivals, sizes and durations:
 * - a real trace (kalos, itp:clusterNN, helios, philly): the jobs submitted in the `days`
 *   from `start_day` days after the trace's first submission, their times shifted to start
 *   at 0; a trace shorter than that repeats, shifted by its span plus one mean gap;
 * - poisson:RATE: exponential interarrivals at RATE per hour, sizes those of the corpus's
 *   jobs, durations lognormal with a 6 h median and sigma 1 (an assumption, said so);
 * - fitted:SOURCE: the shipped model of configs/arrivals/ (traces/trace.c), so the default
 *   scenario needs no real data; with load > 0 its arrival rate is scaled so that the GPU
 *   time asked for is that share of the facility's (the sizes and durations stay the
 *   trace's: only how often jobs come changes).
 *
 * Each job then runs a corpus job's curve: one of the corpus jobs measured on a GPU the
 * facility has (H200 when the options name none) with the same GPU count, chosen uniformly; when
 * the corpus has no job of that size, one of the largest size below it (at most 32 GPUs), scaled
 * out linearly to the requested count. Tokens are the duration times the uncapped tokens/s at the
 * requested size, so an uncapped run takes exactly the trace's duration. Deadlines are submit +
 * slack x duration with slack uniform in [slack_lo, slack_hi]; tiers are drawn from the mix. One
 * seeded GSL stream, fixed order: the same options give the same workload.
 */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const tier_names[PFS_N_TIERS] = {"firm", "flex1", "flex2", "flex3"};
static const double tier_loss[PFS_N_TIERS] = {0.0, 0.10, 0.25, 0.50};

const char *
pfs_tier_name(int tier)
{
    return tier >= 0 && tier < PFS_N_TIERS ? tier_names[tier] : "?";
}

double
pfs_tier_max_loss(int tier)
{
    return tier >= 0 && tier < PFS_N_TIERS ? tier_loss[tier] : 0.0;
}

void
pfs_workload_defaults(struct pfs_workload_options *o)
{
    memset(o, 0, sizeof *o);
    o->arrivals = "fitted:kalos";
    o->facility_gpus = 1024;
    o->days = 7;
    o->seed = 1;
    o->gpu_scale = 1;
    o->slack_lo = 1.5;
    o->slack_hi = 3.0;
    o->tier_mix[PFS_TIER_FIRM] = 0.4;
    o->tier_mix[PFS_TIER_FLEX1] = 0.2;
    o->tier_mix[PFS_TIER_FLEX2] = 0.2;
    o->tier_mix[PFS_TIER_FLEX3] = 0.2;
}

/* The arrivals before mapping: each job's submit, duration and GPUs, in the workload's own
 * array (a copy of 2.8 M of them in one of their own, 67 MB, was a tenth of making it). */
struct arrivals {
    struct pfs_workload_job *v;
    size_t n, cap;
    struct pfs__prefault pf; /* v's pages faulted in beside the draws (reserve_arrivals) */
};

/* A workload's strings: blocks that never move (its jobs point into them), newest first. */
struct text_block {
    struct text_block *next;
    size_t used, size;
    char s[];
};

/* s copied into w's storage; NULL when out of memory. "" is not stored. */
static const char *
text_add(struct pfs_workload *w, const char *s)
{
    struct text_block *b = w->text;
    size_t n = strlen(s) + 1;
    char *p;

    if (n == 1)
        return "";
    if (!b || b->size - b->used < n) {
        size_t size = b && b->size < ((size_t)1 << 24) ? 2 * b->size : (b ? b->size : 4096);

        size = size < n ? n : size;
        if (!(b = pfs__huge_malloc(sizeof *b + size)))
            return NULL;
        b->next = w->text;
        b->used = 0;
        b->size = size;
        w->text = b;
    }
    p = b->s + b->used;
    memcpy(p, s, n);
    b->used += n;
    return p;
}

/* Room at once for the arrivals a source expects (mean expect, standard deviation sd) and
 * 10 sd more; add grows past it. Doubling its way there copied 67 MB for a year of Poisson
 * arrivals and 1.3 GB for the 20 M jobs of a year on 100,000 GPUs. */
static int
reserve_arrivals(struct arrivals *a, double expect, double sd)
{
    struct pfs_workload_job *v;
    size_t n;

    if (!(expect + 10 * sd < 1e9)) /* (no reasonable guess: add grows as it goes) */
        return 0;
    n = (size_t)(expect + 10 * sd) + 256;
    if (n <= a->cap)
        return 0;
    pfs__prefault_stop(&a->pf);
    if (n > SIZE_MAX / sizeof *v ||
        !(v = a->v ? realloc(a->v, n * sizeof *v) : pfs__huge_malloc(n * sizeof *v)))
        return PFS_ENOMEM;
    if (a->v) /* (pfs__huge_malloc's is advised whole) */
        pfs__huge(v, n * sizeof *v);
    pfs__prefault_start(&a->pf, v, n * sizeof *v);
    a->v = v;
    a->cap = n;
    return 0;
}

/* "w" and i in at least six digits, as "w%06zu" (snprintf per job was half of making a
 * workload of 2.8 M jobs). */
static void
format_job_id(char out[32], size_t i)
{
    char digits[24];
    size_t n = 0, k = 0;

    do {
        digits[n++] = (char)('0' + i % 10);
        i /= 10;
    } while (i > 0);
    out[k++] = 'w';
    for (size_t pad = n; pad < 6; pad++)
        out[k++] = '0';
    while (n > 0)
        out[k++] = digits[--n];
    out[k] = '\0';
}

static int
add(struct arrivals *a, double submit_s, double duration_s, int n_gpus)
{
    void *grown;

    if (a->n == a->cap) /* (moved: its pages' faulting first stops) */
        pfs__prefault_stop(&a->pf);
    grown = pfs__grow(a->v, &a->cap, a->n, sizeof *a->v, 256);

    if (!grown)
        return PFS_ENOMEM;
    a->v = grown;
    a->v[a->n++] =
        (struct pfs_workload_job){.submit_s = submit_s, .duration_s = duration_s, .n_gpus = n_gpus};
    return 0;
}

static int
from_trace(const char *source, double start_s, double window_s, struct arrivals *a,
           struct pfs_diag *diag)
{
    struct pfs_trace *t = NULL;
    double t0, period;
    int rc = pfs_trace_read(source, &t, diag);

    if (rc)
        return rc;
    t0 = t->jobs[0].submit_s;
    /* A trace shorter than start + window repeats, shifted by its span and one mean gap. */
    period = t->jobs[t->n_jobs - 1].submit_s - t0;
    period += t->n_jobs > 1 ? period / (double)(t->n_jobs - 1) : 3600.0;
    for (double shift = 0; shift - start_s < window_s && rc == 0; shift += period) {
        for (size_t i = 0; i < t->n_jobs && rc == 0; i++) {
            double s = t->jobs[i].submit_s - t0 + shift - start_s;

            if (s >= 0 && s < window_s)
                rc = add(a, s, t->jobs[i].duration_s, t->jobs[i].n_gpus);
        }
    }
    pfs_trace_free(t);
    if (rc)
        return pfs__diag_set(diag, rc, NULL, 0, 0, NULL, "out of memory");
    return 0;
}

/* A duration from 21 quantiles: a uniform position, log-linear between quantiles. */
static double
sample_quantiles(gsl_rng *r, const double *q)
{
    double u = gsl_rng_uniform(r) * 20.0, lo, hi;
    int i = (int)u;

    if (i >= 20)
        return q[20];
    lo = fmax(q[i], 1.0);
    hi = fmax(q[i + 1], 1.0);
    return exp(log(lo) + (u - i) * (log(hi) - log(lo)));
}

static size_t
pick_bucket(gsl_rng *r, const struct pfs_arrival_model *m)
{
    double u = gsl_rng_uniform(r);

    for (size_t k = 0; k + 1 < m->n_buckets; k++) {
        if (u < m->bucket_p[k])
            return k;
        u -= m->bucket_p[k];
    }
    return m->n_buckets - 1;
}

/* The mean GPU-seconds a job of model m asks for (sizes x durations, per size class: the
 * mean of a log-linearly interpolated quantile function, by its 20 segments). */
static double
mean_gpu_seconds(const struct pfs_arrival_model *m)
{
    double small = 0, large = 0, gs = 0;

    for (int i = 0; i < 20; i++) {
        double lo[2] = {fmax(m->dur_small_q[i], 1), fmax(m->dur_large_q[i], 1)};
        double hi[2] = {fmax(m->dur_small_q[i + 1], 1), fmax(m->dur_large_q[i + 1], 1)};
        double seg[2];

        for (int c = 0; c < 2; c++) /* mean of exp(linear) over the segment */
            seg[c] = fabs(log(hi[c]) - log(lo[c])) < 1e-12
                         ? lo[c]
                         : (hi[c] - lo[c]) / (log(hi[c]) - log(lo[c]));
        small += seg[0] / 20;
        large += seg[1] / 20;
    }
    for (size_t k = 0; k < m->n_buckets; k++)
        gs += m->bucket_p[k] * m->bucket_gpus[k] *
              (m->bucket_gpus[k] <= m->small_max_gpus ? small : large);
    return gs;
}

static int
from_model(const struct pfs_arrival_model *m, double window_s, double load, int gpus, int k,
           gsl_rng *r, struct arrivals *a)
{
    /* Gamma renewal process: shape 1/cv^2, mean as fitted, or as the load asks (of jobs k
     * times as wide). */
    double cv = fmax(m->interarrival_cv, 0.05), shape = 1.0 / (cv * cv);
    double mean = load > 0 ? k * mean_gpu_seconds(m) / (load * gpus) : m->interarrival_mean_s;
    double scale = mean / shape, t = 0, expect = window_s / mean;

    if (reserve_arrivals(a, expect, cv * sqrt(expect))) /* (a renewal count's sd) */
        return PFS_ENOMEM;

    for (;;) {
        int g;
        double d;

        t += gsl_ran_gamma(r, shape, scale);
        if (t >= window_s)
            return 0;
        g = m->bucket_gpus[pick_bucket(r, m)];
        d = sample_quantiles(r, g <= m->small_max_gpus ? m->dur_small_q : m->dur_large_q);
        if (add(a, t, d, g))
            return PFS_ENOMEM;
    }
}

/* Corpus jobs usable as curves: jobs of the facility's GPUs with a throughput, by size. */
struct pool {
    const struct pfs_corpus_job **v;
    size_t n;
};

/* The jobs of the pool for a request of g GPUs: same size, else the largest below it
 * (else the smallest there is). Sets [*first, *last). */
static void
candidates(const struct pool *p, int g, size_t *first, size_t *last)
{
    int best = -1;

    for (size_t i = 0; i < p->n; i++)
        if (p->v[i]->n_gpus <= g && p->v[i]->n_gpus > best)
            best = p->v[i]->n_gpus;
    if (best < 0)
        best = p->v[0]->n_gpus;
    *first = p->n;
    *last = 0;
    for (size_t i = 0; i < p->n; i++) {
        if (p->v[i]->n_gpus == best) {
            if (i < *first)
                *first = i;
            *last = i + 1;
        }
    }
}

static int
cmp_size(const void *a, const void *b)
{
    const struct pfs_corpus_job *x = *(const struct pfs_corpus_job *const *)a;
    const struct pfs_corpus_job *y = *(const struct pfs_corpus_job *const *)b;

    if (x->n_gpus != y->n_gpus)
        return x->n_gpus - y->n_gpus;
    return strcmp(x->job_id, y->job_id);
}

static int
check_options(const struct pfs_workload_options *o, struct pfs_diag *diag)
{
    double sum = 0;

    for (int i = 0; i < PFS_N_TIERS; i++) {
        if (!(o->tier_mix[i] >= 0))
            return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "tiers",
                                 "tier shares must not be negative");
        sum += o->tier_mix[i];
    }
    if (fabs(sum - 1) > 1e-6)
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "tiers",
                             "tier shares must add up to 1, not %g", sum);
    if (o->facility_gpus < 1)
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "gpus",
                             "the facility needs at least one GPU");
    if (!(o->days > 0 && o->days <= 3660) || !(o->start_day >= 0 && o->start_day <= 3660))
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "days",
                             "days must be in (0, 3660] and the start day in [0, 3660]");
    if (o->gpu_scale < 1 || o->gpu_scale > 4096)
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "gpu_scale",
                             "gpu_scale must be an integer in [1, 4096], not %d", o->gpu_scale);
    if (!(o->load >= 0 && o->load <= 10))
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "load", "load must be in [0, 10]");
    if (!(o->slack_lo >= 1 && o->slack_hi >= o->slack_lo))
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "slack", "slack needs 1 <= low <= high");
    return 0;
}

int
pfs_workload_generate(const struct pfs_workload_options *o, const struct pfs_jobset *corpus,
                      struct pfs_workload **out, struct pfs_diag *diag)
{
    const double window_s = o->days * 86400.0;
    struct arrivals a = {0};
    struct pool pool = {0};
    struct pfs_workload *w = NULL;
    gsl_rng *r = NULL;
    int rc, biggest = 0, max_g = 0;
    double scale_down = 1;
    size_t *memo = NULL;
    const char **curve_id = NULL; /* per corpus job: its id in the workload's storage */

    *out = NULL;
    if ((rc = check_options(o, diag)) != 0)
        return rc;
    pool.v = malloc(corpus->n_jobs * sizeof *pool.v);
    curve_id = calloc(corpus->n_jobs + 1, sizeof *curve_id);
    r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!pool.v || !r || !curve_id) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    gsl_rng_set(r, o->seed);
    for (size_t i = 0; i < corpus->n_jobs; i++) {
        bool ours = o->n_gpu_types == 0 && strcmp(corpus->jobs[i].gpu, "h200-sxm") == 0;

        for (size_t k = 0; k < o->n_gpu_types && !ours; k++)
            ours = strcmp(corpus->jobs[i].gpu, o->gpu_types[k]) == 0;
        if (ours && corpus->jobs[i].tokens_per_s > 0)
            pool.v[pool.n++] = &corpus->jobs[i];
    }
    if (pool.n == 0) {
        char types[PFS_MAX_POOLS * 34] = "h200-sxm";

        for (size_t k = 0, used = 0; k < o->n_gpu_types; k++)
            used += (size_t)snprintf(types + used, sizeof types - used, "%s%s", k ? ", " : "",
                                     o->gpu_types[k]);
        rc = pfs__diag_set(diag, PFS_EINVAL, corpus->path, 0, 0, NULL,
                           "the corpus has no job measured on %s with a throughput to run (give "
                           "a corpus with curves of that GPU, or a facility pool of a GPU the "
                           "corpus has)",
                           types);
        goto out;
    }
    qsort(pool.v, pool.n, sizeof *pool.v, cmp_size);

    if (strncmp(o->arrivals, "poisson:", 8) == 0) {
        double rate, expect;

        if (!pfs__parse_double(o->arrivals + 8, &rate) || !(rate > 0) || rate > 1e6) {
            rc = pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "arrivals",
                               "poisson:RATE needs a rate per hour in (0, 1e6], got '%s'",
                               o->arrivals + 8);
            goto out;
        }
        expect = rate * window_s / 3600.0;
        rc = reserve_arrivals(&a, expect, sqrt(expect));
        for (double t = gsl_ran_exponential(r, 3600.0 / rate); t < window_s && rc == 0;
             t += gsl_ran_exponential(r, 3600.0 / rate))
            rc = add(&a, t, 6 * 3600.0 * exp(gsl_ran_gaussian(r, 1.0)),
                     pool.v[gsl_rng_uniform_int(r, pool.n)]->n_gpus);
    } else if (strncmp(o->arrivals, "fitted:", 7) == 0) {
        struct pfs_arrival_model m;

        if ((rc = pfs_arrival_find(o->arrivals + 7, &m, diag)) != 0)
            goto out;
        rc = from_model(&m, window_s, o->load, o->facility_gpus, o->gpu_scale, r, &a);
    } else {
        rc = from_trace(o->arrivals, o->start_day * 86400.0, window_s, &a, diag);
    }
    if (rc) {
        if (rc == PFS_ENOMEM)
            pfs__diag_set(diag, rc, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }

    for (size_t i = 0; i < a.n; i++) {
        a.v[i].n_gpus *= o->gpu_scale;
        if (a.v[i].n_gpus > biggest)
            biggest = a.v[i].n_gpus;
    }
    if (biggest > o->facility_gpus) {
        if (!o->rescale) {
            rc = pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "gpus",
                               "a job of %s asks for %d GPUs but the facility has %d (give a "
                               "larger facility, or --rescale to scale job sizes down)",
                               o->arrivals, biggest, o->facility_gpus);
            goto out;
        }
        scale_down = (double)o->facility_gpus / biggest;
    }

    if (!(w = calloc(1, sizeof *w))) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    w->jobs = a.n ? a.v : NULL; /* (the arrivals, mapped below in place) */
    w->n_jobs = a.n;
    if (a.n)
        a.v = NULL;
    /* The candidates of each size once (two scans of the pool per job were 9% of a run of
     * 2.8 M jobs): memo[2g], memo[2g + 1] = [first, last), first > last when not yet known. */
    for (size_t i = 0; i < a.n; i++)
        max_g = w->jobs[i].n_gpus > max_g ? w->jobs[i].n_gpus : max_g;
    if (!(memo = malloc(2 * ((size_t)max_g + 1) * sizeof *memo))) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    for (size_t g = 0; g <= (size_t)max_g; g++)
        memo[2 * g] = 1, memo[2 * g + 1] = 0;
    for (size_t i = 0; i < a.n; i++) {
        struct pfs_workload_job *j = &w->jobs[i];
        const struct pfs_corpus_job *c;
        size_t first, last, *m;
        double u;

        if (scale_down < 1)
            j->n_gpus = (int)fmax(1, floor(j->n_gpus * scale_down));
        if (j->n_gpus < 1 || j->n_gpus > max_g) {
            candidates(&pool, j->n_gpus, &first, &last);
        } else {
            m = &memo[2 * (size_t)j->n_gpus];
            if (m[0] > m[1])
                candidates(&pool, j->n_gpus, &m[0], &m[1]);
            first = m[0];
            last = m[1];
        }
        c = pool.v[first + gsl_rng_uniform_int(r, last - first)];
        {
            char id[32];
            size_t k = (size_t)(c - corpus->jobs);

            format_job_id(id, i + 1);
            if (!curve_id[k])
                curve_id[k] = text_add(w, c->job_id);
            if (!(j->job_id = text_add(w, id)) || !curve_id[k]) {
                rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
                goto out;
            }
            j->curve_id = curve_id[k];
            j->pool = "";
        }
        j->tokens = j->duration_s * c->tokens_per_s * j->n_gpus / c->n_gpus;
        j->deadline_s = j->submit_s + gsl_ran_flat(r, o->slack_lo, o->slack_hi) * j->duration_s;
        u = gsl_rng_uniform(r);
        j->tier = PFS_N_TIERS - 1;
        for (int k = 0; k < PFS_N_TIERS; k++) {
            if (u < o->tier_mix[k]) {
                j->tier = k;
                break;
            }
            u -= o->tier_mix[k];
        }
    }
    *out = w;
    w = NULL;
out:
    pfs__prefault_stop(&a.pf); /* (before its array, now the jobs', can be freed) */
    if (r)
        gsl_rng_free(r);
    free(memo);
    free(a.v);
    free(pool.v);
    free(curve_id);
    pfs_workload_free(w);
    return rc;
}

int
pfs_workload_write(const struct pfs_workload *w, FILE *fp, struct pfs_diag *diag)
{
    bool pools = false;

    for (size_t i = 0; i < w->n_jobs && !pools; i++)
        pools = w->jobs[i].pool && w->jobs[i].pool[0] != '\0';
    fprintf(fp, "job_id,submit_s,curve_id,n_gpus,tokens,deadline_s,tier%s\n", pools ? ",pool" : "");
    for (size_t i = 0; i < w->n_jobs; i++) {
        const struct pfs_workload_job *j = &w->jobs[i];

        if (strpbrk(j->job_id, "\n\r") || strpbrk(j->curve_id, "\n\r") ||
            (j->pool && strpbrk(j->pool, "\n\r")))
            return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "job_id",
                                 "job '%.40s': a line break cannot be written to a CSV", j->job_id);
        pfs__csv_put_text(fp, j->job_id);
        fputc(',', fp);
        pfs__csv_put_num(fp, j->submit_s);
        fputc(',', fp);
        pfs__csv_put_text(fp, j->curve_id);
        fprintf(fp, ",%d,", j->n_gpus);
        pfs__csv_put_num(fp, j->tokens);
        fputc(',', fp);
        pfs__csv_put_num(fp, j->deadline_s);
        fprintf(fp, ",%s", pfs_tier_name(j->tier));
        if (pools) {
            fputc(',', fp);
            pfs__csv_put_text(fp, j->pool ? j->pool : "");
        }
        fputc('\n', fp);
    }
    if (fflush(fp) != 0 || ferror(fp))
        return pfs__diag_set(diag, PFS_EIO, NULL, 0, 0, NULL, "write error");
    return 0;
}

static const char *
wl_key(const void *base, size_t i)
{
    return ((const struct pfs_workload *)base)->jobs[i].job_id;
}

int
pfs_workload_read(const char *path, struct pfs_workload **out, struct pfs_diag *diag)
{
    static const char *const names[] = {"job_id", "submit_s",   "curve_id", "n_gpus",
                                        "tokens", "deadline_s", "tier"};
    struct pfs__csv csv;
    struct pfs_workload *w = calloc(1, sizeof *w);
    size_t idx[7], cap = 0, pool_idx = (size_t)-1, seen;
    double last = -HUGE_VAL;
    struct pfs__strindex ids = {0};
    int rc;

    *out = NULL;
    if (!w)
        return pfs__diag_set(diag, PFS_ENOMEM, path, 0, 0, NULL, "out of memory");
    if ((rc = pfs__csv_open(&csv, path, diag)) != 0) {
        free(w);
        return rc;
    }
    if ((rc = pfs__csv_header(&csv, names, 7, idx)) != 0)
        goto fail;
    for (size_t f = 0; f < csv.n_fields; f++) /* optional */
        if (strcmp(csv.fields[f], "pool") == 0)
            pool_idx = f;
    while ((rc = pfs__csv_next(&csv)) == 1) {
        struct pfs_workload_job j = {0};
        const char *id, *curve, *tier, *pool = "";
        long n;
        int k;

        if ((rc = pfs__csv_str(&csv, idx[0], "job_id", &id)) ||
            (rc = pfs__csv_double(&csv, idx[1], "submit_s", &j.submit_s)) ||
            (rc = pfs__csv_str(&csv, idx[2], "curve_id", &curve)) ||
            (rc = pfs__csv_long(&csv, idx[3], "n_gpus", &n)) ||
            (rc = pfs__csv_double(&csv, idx[4], "tokens", &j.tokens)) ||
            (rc = pfs__csv_double(&csv, idx[5], "deadline_s", &j.deadline_s)) ||
            (rc = pfs__csv_str(&csv, idx[6], "tier", &tier)) ||
            (pool_idx != (size_t)-1 && (rc = pfs__csv_str(&csv, pool_idx, "pool", &pool))))
            goto fail;
        if (strlen(pool) > PFS_WORKLOAD_ID_MAX) {
            rc = pfs__csv_error(&csv, pool_idx, "pool", PFS_EINVAL, "must be at most 31 bytes");
            goto fail;
        }
        for (k = 0; k < PFS_N_TIERS && strcmp(tier, pfs_tier_name(k)) != 0; k++)
            ;
        if (k == PFS_N_TIERS) {
            rc = pfs__csv_error(&csv, idx[6], "tier", PFS_EINVAL,
                                "unknown tier '%s' (firm, flex1, flex2, flex3)", tier);
            goto fail;
        }
        if (!*id || strlen(id) > PFS_WORKLOAD_ID_MAX || !*curve ||
            strlen(curve) > PFS_WORKLOAD_ID_MAX) {
            /* Blame the field that is wrong (issue 17: a 32-byte job id was blamed on
             * curve_id). */
            bool id_bad = !*id || strlen(id) > PFS_WORKLOAD_ID_MAX;

            rc = pfs__csv_error(&csv, idx[id_bad ? 0 : 2], id_bad ? "job_id" : "curve_id",
                                PFS_EINVAL, "must be 1 to 31 bytes, got %zu",
                                strlen(id_bad ? id : curve));
            goto fail;
        }
        if (j.submit_s < 0 || j.submit_s < last) {
            rc = pfs__csv_error(&csv, idx[1], "submit_s", PFS_EINVAL,
                                "must not be negative or earlier than the row before");
            goto fail;
        }
        if (j.deadline_s < j.submit_s) { /* issue 17: accepted, and counted as a miss */
            rc = pfs__csv_error(&csv, idx[5], "deadline_s", PFS_EINVAL,
                                "%g is before the job's submit_s %g", j.deadline_s, j.submit_s);
            goto fail;
        }
        if (n < 1 || n > PFS__MAX_JOB_GPUS || !(j.tokens > 0)) {
            bool gpus_bad = n < 1 || n > PFS__MAX_JOB_GPUS;

            rc = pfs__csv_error(&csv, idx[gpus_bad ? 3 : 4], gpus_bad ? "n_gpus" : "tokens",
                                PFS_EINVAL,
                                gpus_bad ? "must be between 1 and 1000000" : "must be positive");
            goto fail;
        }
        if ((seen = pfs__strindex_find(&ids, id, wl_key, w)) != SIZE_MAX) {
            /* Two jobs of one id would collide in every per-job output (issue 17: the
             * results database refused them only after the whole simulation). */
            rc = pfs__csv_error(&csv, idx[0], "job_id", PFS_EINVAL,
                                "job '%s' appears twice (first on data row %zu)", id, seen + 1);
            goto fail;
        }
        last = j.submit_s;
        if (!(j.job_id = text_add(w, id)) || !(j.curve_id = text_add(w, curve)) ||
            !(j.pool = text_add(w, pool))) {
            rc = pfs__diag_set(diag, PFS_ENOMEM, path, 0, 0, NULL, "out of memory");
            goto fail;
        }
        j.n_gpus = (int)n;
        j.tier = k;
        void *grown = pfs__grow(w->jobs, &cap, w->n_jobs, sizeof *w->jobs, 256);

        if (!grown) {
            rc = pfs__diag_set(diag, PFS_ENOMEM, path, 0, 0, NULL, "out of memory");
            goto fail;
        }
        w->jobs = grown;
        w->jobs[w->n_jobs++] = j;
        if (pfs__strindex_add(&ids, w->n_jobs - 1, wl_key, w) != 0) {
            rc = pfs__diag_set(diag, PFS_ENOMEM, path, 0, 0, NULL, "out of memory");
            goto fail;
        }
    }
    if (rc < 0)
        goto fail;
    pfs__csv_close(&csv);
    pfs__strindex_fini(&ids);
    *out = w;
    return 0;
fail:
    pfs__diag_oom(diag, rc, path, csv.line, "reading the file"); /* (names it) */
    pfs__csv_close(&csv);
    pfs__strindex_fini(&ids);
    pfs_workload_free(w);
    return rc;
}

void
pfs_workload_free(struct pfs_workload *w)
{
    if (!w)
        return;
    for (struct text_block *b = w->text, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(w->jobs);
    free(w);
}
