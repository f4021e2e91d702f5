/*
 * policies/solver.c - what the policies share: piecewise-linear curves, their concave
 * envelope, the exact water-filling of a budget over concave curves, the clamped common
 * level, predicted curves and tier floors.
 *
 * Water-filling. For concave non-decreasing curves f_i of the per-GPU cap x_i, maximising
 * sum f_i(x_i) subject to sum n_i x_i <= B is a separable concave program whose optimum
 * takes curve segments in decreasing order of marginal throughput per watt, slope / n_i, up
 * to a threshold price mu*: every segment steeper than mu* is taken whole, the budget left
 * goes to segments at exactly mu*, nothing flatter is taken (the KKT conditions of the
 * program). Rather than sorting all S segments (O(S log S)), mu* is found in O(S): a pass
 * over buckets of slope, then a weighted quickselect within the bucket that holds it
 * (wf_price), which keeps an allocation over 10,000 jobs of 50 segments each within a few
 * milliseconds (docs/benchmarks.md). Ties at mu* are broken by job then segment index, so
 * the answer is deterministic. Jobs that share their curve and GPU count bit for bit may be
 * water-filled as classes (pfs__waterfill_classes): the same optimum over fewer segments.
 */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

/* c's value at x on its segment [lo, lo + 1]. */
static inline double
pwl_on(const struct pfs_pwl *c, size_t lo, double x)
{
    return c->y[lo] + (c->y[lo + 1] - c->y[lo]) * (x - c->x[lo]) / (c->x[lo + 1] - c->x[lo]);
}

/* The segment of c holding x, x[0] < x < x[n - 1]: the lo with x[lo] <= x < x[lo + 1]. */
static inline size_t
pwl_segment(const struct pfs_pwl *c, double x)
{
    size_t lo = 0, hi = c->n - 1;

    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;

        if (c->x[mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

double
pfs_pwl_eval(const struct pfs_pwl *c, double x)
{
    if (c->n == 1 || x <= c->x[0])
        return c->y[0];
    if (x >= c->x[c->n - 1])
        return c->y[c->n - 1];
    return pwl_on(c, pwl_segment(c, x), x);
}

double
pfs__pwl_eval_near(const struct pfs_pwl *c, double x, uint32_t *k)
{
    if (c->n == 1 || x <= c->x[0])
        return c->y[0];
    if (x >= c->x[c->n - 1])
        return c->y[c->n - 1];
    if (!(*k + 1 < c->n && c->x[*k] <= x && x < c->x[*k + 1]))
        *k = (uint32_t)pwl_segment(c, x);
    return pwl_on(c, *k, x);
}

void
pfs_pwl_hull(struct pfs_pwl *c)
{
    size_t m = 0;

    /* Non-decreasing first: a job never runs slower with more power. */
    for (size_t k = 1; k < c->n; k++)
        if (c->y[k] < c->y[k - 1])
            c->y[k] = c->y[k - 1];
    /* Upper hull by the monotone chain: drop a point on or below the chord of its
     * neighbours. */
    for (size_t k = 0; k < c->n; k++) {
        while (m >= 2) {
            double x1 = c->x[m - 2], y1 = c->y[m - 2], x2 = c->x[m - 1], y2 = c->y[m - 1];
            double cross = (x2 - x1) * (c->y[k] - y1) - (y2 - y1) * (c->x[k] - x1);

            if (cross < 0)
                break;
            m--;
        }
        c->x[m] = c->x[k];
        c->y[m] = c->y[k];
        m++;
    }
    c->n = m;
}

double
pfs_alloc_power_w(const struct pfs_alloc_job *j, const struct pfs_alloc_decision *d)
{
    int active = pfs_alloc_active_gpus(j, d);

    return active * (d->pause_frac * j->idle_w + (1 - d->pause_frac) * d->cap_w) +
           (j->n_gpus - active) * j->idle_w;
}

int
pfs__infeasible(struct pfs_diag *diag, const char *policy, double budget_w, double need_w,
                const char *what)
{
    return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "budget",
                         "infeasible for %s: the budget of %.0f W is below the %.0f W that %s "
                         "need",
                         policy, budget_w, need_w, what);
}

/* The threshold price (policy.h): a three-way partition around a pivot's slope, narrowing
 * to the side that holds R. */
double
pfs__threshold(struct pfs__seg *s, size_t n, double R)
{
    size_t lo = 0, hi = n;
    double mu = -1;

    if (!(R > 0))
        return HUGE_VAL;

    while (lo < hi) {
        double p = s[lo + (hi - lo) / 2].slope, w_gt = 0, w_eq = 0;
        size_t a = lo, b = lo, c = hi;

        /* Three-way partition of [lo, hi): > p, == p, < p (Dijkstra's flag). What is steeper
         * than p is summed as it is put in its place: in the order of those places, as a pass
         * over [lo, a) afterwards would (the same bits, one pass fewer). */
        while (b < c) {
            if (s[b].slope > p) {
                struct pfs__seg t = s[a];

                w_gt += s[b].need;
                s[a++] = s[b];
                s[b++] = t;
            } else if (s[b].slope < p) {
                struct pfs__seg t = s[--c];

                s[c] = s[b];
                s[b] = t;
            } else {
                b++;
            }
        }
        for (size_t i = a; i < c; i++)
            w_eq += s[i].need;
        if (w_gt >= R) {
            hi = a;
        } else if (w_gt + w_eq >= R) {
            return p;
        } else {
            R -= w_gt + w_eq;
            lo = c;
        }
    }
    /* Everything in [0, hi) fits. When hi < n, the segments from hi on, all flatter, were
     * left out while the budget seemed short, and what remains of R is rounding: the price is
     * the steepest of them (its ties get the crumb). Only when hi = n does everything fit. */
    for (size_t i = hi; i < n; i++)
        mu = fmax(mu, s[i].slope);
    return mu;
}

/* A curve as the water-filling reads it: its first point (x0, y0), then the n points of x[]
 * and y[]. A whole curve is its first point and the rest of its arrays; one clipped at a
 * floor (wf_from) starts at the floor and reads the points above it where they are, without
 * the copy pfs__pwl_clip makes (a copy of every running job's curve at every decision of an
 * event was a tenth of sla's run). */
struct wf_curve {
    double x0, y0;
    const double *x, *y;
    size_t n;
};

/* The water-filling's working arrays, kept per thread between calls: a simulation calls it
 * at every decision of every event, over every running job's segments, and allocating them
 * afresh each time (megabytes, from the kernel: mmap and page faults) cost as much as the
 * solve (issue 16, docs/benchmarks.md). Freed when the thread ends. */
#define WF_BUCKETS 1024
_Static_assert(WF_BUCKETS <= UINT16_MAX + 1, "a bucket index is kept in 16 bits (wf_price)");
#define WF_SMALL 256 /* at most this many segments: the plain selection over all of them */

struct wf_scratch {
    double *seg; /* seg_cap slopes, then seg_cap needs: per segment, job then segment order */
    size_t seg_cap;
    size_t *first; /* per job, its first segment; first[n] = the number of segments */
    size_t first_cap;
    size_t *tied; /* pfs__waterfill_fr: the jobs with a segment at exactly the price */
    size_t tied_cap;
    size_t *has; /* pfs__waterfill_fr: the jobs with a segment, in order */
    size_t has_cap;
    uint16_t *bk; /* wf_price: each segment's bucket */
    size_t bk_cap;
    struct pfs__seg *s; /* the segments of the threshold's bucket */
    size_t s_cap;
    size_t *cls; /* pfs__waterfill_classes: per class, WC_WORDS words */
    size_t cls_cap;
    uint32_t *order; /* the classes present, in order of their first job */
    size_t order_cap;
    double *cap_of; /* per class, its jobs' cap */
    size_t cap_of_cap;
    uint64_t *seen; /* pfs__predicted_kept: the classes met, a bit each */
    size_t seen_cap;
    struct pfs_pwl *pred; /* pfs__predicted_curves's array */
    size_t pred_cap;
    void *pol[PFS__SCRATCH_SLOTS]; /* pfs__scratch's */
    size_t pol_cap[PFS__SCRATCH_SLOTS];
    struct wf_curve *cv; /* pfs__waterfill_from's curves from their floors */
    size_t cv_cap;
    /* pfs__waterfill_counted's last answer, for pfs__waterfill_tie */
    const struct pfs_pwl *tie_curves;
    const struct pfs_alloc_job *tie_jobs;
    const double *tie_slope; /* the slopes its classes' WC_FIRST index */
    double tie_mu;
    double fr_mu; /* pfs__waterfill_fr's last price, tried first at the next call */
    double bucket[WF_BUCKETS];
};

static pthread_key_t wf_key;
static pthread_once_t wf_once = PTHREAD_ONCE_INIT;

static void
wf_free(void *p)
{
    struct wf_scratch *w = p;

    if (w) {
        free(w->seg);
        free(w->first);
        free(w->tied);
        free(w->has);
        free(w->bk);
        free(w->cls);
        free(w->order);
        free(w->cap_of);
        free(w->seen);
        free(w->pred);
        for (int k = 0; k < PFS__SCRATCH_SLOTS; k++)
            free(w->pol[k]);
        free(w->cv);
        free(w->s);
        free(w);
    }
}

static void
wf_make_key(void)
{
    (void)pthread_key_create(&wf_key, wf_free);
}

/* Grows *p to hold n elements of size sz (twice what is asked, so that it rarely grows). */
static int
wf_grow(void **p, size_t *cap, size_t n, size_t sz)
{
    void *g;

    if (n <= *cap)
        return 0;
    if (!(g = realloc(*p, 2 * n * sz)))
        return -1;
    *p = g;
    *cap = 2 * n;
    return 0;
}

/* Room in w's segments for n, the first m kept (slopes and needs); -1 without memory. */
static int
wf_seg_room(struct wf_scratch *w, size_t m, size_t n)
{
    size_t cap = 2 * n;
    double *g;

    if (n <= w->seg_cap)
        return 0;
    if (!(g = malloc(2 * cap * sizeof *g)))
        return -1;
    if (m > 0) {
        memcpy(g, w->seg, m * sizeof *g);
        memcpy(g + cap, w->seg + w->seg_cap, m * sizeof *g);
    }
    free(w->seg);
    w->seg = g;
    w->seg_cap = cap;
    return 0;
}

/* This thread's scratch with room for n_seg segments and n jobs; NULL without memory. */
static struct wf_scratch *
wf_scratch(size_t n_seg, size_t n)
{
    struct wf_scratch *w;

    pthread_once(&wf_once, wf_make_key);
    if (!(w = pthread_getspecific(wf_key))) {
        if (!(w = calloc(1, sizeof *w)) || pthread_setspecific(wf_key, w) != 0) {
            free(w);
            return NULL;
        }
        w->fr_mu = NAN; /* (no price yet) */
    }
    if (wf_seg_room(w, 0, n_seg + 1) ||
        wf_grow((void **)&w->first, &w->first_cap, n + 1, sizeof *w->first) ||
        wf_grow((void **)&w->tied, &w->tied_cap, n + 1, sizeof *w->tied))
        return NULL;
    return w;
}

void *
pfs__scratch(unsigned k, size_t bytes)
{
    struct wf_scratch *w = k < PFS__SCRATCH_SLOTS ? wf_scratch(0, 0) : NULL;

    if (!w || wf_grow(&w->pol[k], &w->pol_cap[k], bytes + 1, 1))
        return NULL;
    return w->pol[k];
}

/* The bucket of a slope: its bits above lo's, shifted. The bits of positive doubles order as
 * the doubles do, so buckets are in order of slope, of equal width in the bits: spread over
 * each binade alike, so that a few very steep segments do not crowd the rest into one bucket
 * as buckets linear in the slope would. */
static size_t
wf_bucket(double slope, uint64_t lo, unsigned shift)
{
    uint64_t u;

    memcpy(&u, &slope, sizeof u);
    u = u > lo ? (u - lo) >> shift : 0;
    return u < WF_BUCKETS ? (size_t)u : WF_BUCKETS - 1;
}

/* The threshold price over the m segments (slope, need) for budget R, as pfs__threshold has it,
 * without reordering them. Up to WF_SMALL segments it is pfs__threshold itself. Beyond, one pass
 * spreads the needs over WF_BUCKETS buckets of slope (wf_bucket), the buckets summed from the
 * steepest find the one holding the price, and pfs__threshold runs on that bucket's segments alone
 * with what the steeper buckets leave of R: two passes of a few operations per segment, where the
 * selection over all of them swaps every segment a few times (issue 16: 31% of a Poisson year on
 * 10,000 GPUs). */
static double
wf_price(struct wf_scratch *w, size_t m, double R, double lo, double hi)
{
    const double *slope = w->seg, *need = w->seg + w->seg_cap;
    double above = 0, mu;
    size_t b = WF_BUCKETS, e = 0;
    uint64_t lo_bits, hi_bits;
    unsigned shift = 0;

    if (!(R > 0))
        return HUGE_VAL;
    if (m <= WF_SMALL) {
        if (wf_grow((void **)&w->s, &w->s_cap, m + 1, sizeof *w->s))
            return NAN;
        for (size_t q = 0; q < m; q++)
            w->s[q] = (struct pfs__seg){slope[q], need[q]};
        return pfs__threshold(w->s, m, R);
    }
    if (wf_grow((void **)&w->bk, &w->bk_cap, m + 1, sizeof *w->bk))
        return NAN;
    memcpy(&lo_bits, &lo, sizeof lo_bits); /* positive slopes: lo > 0 */
    memcpy(&hi_bits, &hi, sizeof hi_bits);
    while (shift < 63 && (hi_bits - lo_bits) >> shift >= WF_BUCKETS)
        shift++;
    memset(w->bucket, 0, sizeof w->bucket);
    for (size_t q = 0; q < m; q++) { /* (each one's bucket kept for the pass below) */
        w->bk[q] = (uint16_t)wf_bucket(slope[q], lo_bits, shift);
        w->bucket[w->bk[q]] += need[q];
    }
    while (b-- > 0) {
        if (above + w->bucket[b] >= R)
            break;
        above += w->bucket[b];
    }
    if (b == (size_t)-1)
        return -1; /* everything fits */
    if (wf_grow((void **)&w->s, &w->s_cap, m + 1, sizeof *w->s))
        return NAN;
    for (size_t q = 0; q < m; q++) {
        if (w->bk[q] == b)
            w->s[e++] = (struct pfs__seg){slope[q], need[q]};
    }
    mu = pfs__threshold(w->s, e, R - above);
    if (mu < 0) {
        /* The whole bucket fits after all (the sums differ in rounding): as pfs__threshold does
         * with its own left-out segments, the price is the steepest of the flatter buckets'
         * segments, or everything fits. */
        for (size_t q = 0; q < m; q++) {
            if (w->bk[q] < b && slope[q] > mu)
                mu = slope[q];
        }
    }
    return mu;
}

/* Whether the price over the m segments for budget R is mu, told apart from rounding:
 * the segments steeper than mu need less than R, those as steep or steeper more, each by a
 * margin far above what summing in another order can move a sum (1e-9 of R and of those
 * needs; a sum of m terms moves by some m x 1e-16 of it). wf_price then finds mu, whatever
 * order it sums in: so the answer does not depend on where the guess came from. */
static bool
wf_price_is(const struct wf_scratch *w, size_t m, double R, double mu)
{
    const double *slope = w->seg, *need = w->seg + w->seg_cap;
    double gt = 0, eq = 0, margin;

    if (!(R > 0 && mu > 0 && mu < HUGE_VAL))
        return false;
    for (size_t q = 0; q < m; q++) {
        if (slope[q] > mu)
            gt += need[q];
        else if (!(slope[q] < mu))
            eq += need[q];
    }
    margin = 1e-9 * (R + gt + eq);
    return gt < R - margin && gt + eq > R + margin;
}

static inline struct wf_curve
wf_whole(const struct pfs_pwl *c)
{
    return (struct wf_curve){c->x[0], c->y[0], c->x + 1, c->y + 1, c->n - 1};
}

/* Curve c from lo on: the points pfs__pwl_clip(c, lo) leaves, the same bits. */
static struct wf_curve
wf_from(const struct pfs_pwl *c, double lo)
{
    size_t k = 1;

    if (lo <= c->x[0])
        return wf_whole(c);
    while (k < c->n && c->x[k] <= lo)
        k++;
    return (struct wf_curve){lo, pfs_pwl_eval(c, lo), c->x + k, c->y + k, c->n - k};
}

struct pfs__from
pfs__from_of(const struct pfs_pwl *c, double lo)
{
    struct wf_curve w = wf_from(c, lo);

    return (struct pfs__from){w.y0, (uint32_t)(w.x - c->x)};
}

/* wf_from as fr has it: x0 is lo, or the lowest point where lo is not above it. */
static inline struct wf_curve
wf_kept(const struct pfs_pwl *c, double lo, struct pfs__from fr)
{
    return (struct wf_curve){fr.k == 1 && lo <= c->x[0] ? c->x[0] : lo, fr.y0, c->x + fr.k,
                             c->y + fr.k, c->n - fr.k};
}

/* Job i's curve in pfs__waterfill_fr: whole, from its floor where its part from there is
 * kept, else as wf_from made it once (cv[i]). */
static inline struct wf_curve
wf_job(const struct pfs_pwl *curves, const double *from, const struct pfs__sla_kept *kept,
       const struct wf_curve *cv, size_t i)
{
    return !from ? wf_whole(&curves[i]) : kept ? wf_kept(&curves[i], from[i], kept[i].fr) : cv[i];
}

/* Curve c's part from floor, kept in e: made again only where the floor moved. */
static inline struct pfs__from
wf_kept_from(struct pfs__sla_kept *e, const struct pfs_pwl *c, double floor)
{
    if (memcmp(&e->floor, &floor, sizeof floor) != 0) {
        e->floor = floor;
        e->fr = pfs__from_of(c, floor);
    }
    return e->fr;
}

/* Point m's cap (0: the first). */
static inline double
wf_x(const struct wf_curve *c, size_t m)
{
    return m == 0 ? c->x0 : c->x[m - 1];
}

/* Appends curve c's segments for n_gpus GPUs (each one's need times count: the jobs of a
 * class) to slope[] and need[] from index m, widening [*lo, *hi] (lo NULL: not kept);
 * returns the new m. */
static inline size_t
wf_segments(const struct wf_curve *c, int n_gpus, double count, double *slope, double *need,
            size_t m, double *lo, double *hi)
{
    double xa = c->x0, ya = c->y0;

    for (size_t k = 0; k < c->n; k++) {
        double nd = n_gpus * (c->x[k] - xa);
        double gain = c->y[k] - ya;

        if (!(gain > 0))
            break; /* concave: nothing steeper follows */
        slope[m] = gain / nd;
        need[m] = nd * count;
        if (lo && slope[m] < *lo) /* comparisons: fmin and fmax are calls into libm */
            *lo = slope[m];
        if (lo && slope[m] > *hi)
            *hi = slope[m];
        m++;
        xa = c->x[k];
        ya = c->y[k];
    }
    return m;
}

/* What is left of the budget, *R, to one job's segments at exactly the price mu, in order:
 * its segments are slope[first .. first + n_seg) of curve c on g GPUs; sets *cap. */
static void
wf_tie(const struct wf_curve *c, int g, const double *slope, size_t first, size_t n_seg, double mu,
       double *R, double *cap)
{
    for (size_t q = first; q<first + n_seg && * R> 0; q++) {
        if (!(slope[q] > mu) && !(slope[q] < mu)) {
            size_t at = q - first;
            double x = wf_x(c, at), take = fmin(*R, g * (wf_x(c, at + 1) - x));

            *cap = x + take / g;
            *R -= take;
        }
    }
}

/* wf_tie for a class's whole curve c. */
static void
wf_tie_whole(const struct pfs_pwl *c, int g, const double *slope, size_t first, size_t n_seg,
             double mu, double *R, double *cap)
{
    struct wf_curve cv = wf_whole(c);

    wf_tie(&cv, g, slope, first, n_seg, mu, R, cap);
}

int
pfs__waterfill(const char *who, const struct pfs_pwl *curves, const struct pfs_alloc_job *jobs,
               size_t n, double budget_w, const bool *skip, struct pfs_alloc_decision *out,
               struct pfs_diag *diag)
{
    return pfs__waterfill_from(who, curves, NULL, jobs, n, budget_w, skip, out, diag);
}

int
pfs__waterfill_from(const char *who, const struct pfs_pwl *curves, const double *from,
                    const struct pfs_alloc_job *jobs, size_t n, double budget_w, const bool *skip,
                    struct pfs_alloc_decision *out, struct pfs_diag *diag)
{
    return pfs__waterfill_fr(who, curves, from, NULL, jobs, n, budget_w, skip, out, diag);
}

double
pfs__waterfill_hint(double mu)
{
    struct wf_scratch *w = wf_scratch(0, 0);
    double last = w ? w->fr_mu : (double)NAN;

    if (w)
        w->fr_mu = mu;
    return last;
}

int
pfs__waterfill_fr(const char *who, const struct pfs_pwl *curves, const double *from,
                  struct pfs__sla_kept *kept, const struct pfs_alloc_job *jobs, size_t n,
                  double budget_w, const bool *skip, struct pfs_alloc_decision *out,
                  struct pfs_diag *diag)
{
    size_t m = 0, n_tied = 0, n_has = 0, *first;
    struct wf_scratch *w = wf_scratch(0, n);
    struct wf_curve *cv = NULL;
    double used = 0, R, mu, lo = HUGE_VAL, hi = -HUGE_VAL;

    if (!w || wf_grow((void **)&w->has, &w->has_cap, n + 1, sizeof *w->has) ||
        (from && !kept && wf_grow((void **)&w->cv, &w->cv_cap, n + 1, sizeof *w->cv)))
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    cv = w->cv; /* (read only where from is given without kept: wf_from, made once) */
    first = w->first;
    /* Each job at its lowest point, its segments above it: in one pass, the curves from
     * the floors made as they are read (a pass of its own, then the segments', read each
     * curve twice) */
    for (size_t i = 0; i < n; i++) {
        struct wf_curve c;

        first[i] = m;
        if (skip && skip[i]) {
            used += pfs_alloc_power_w(&jobs[i], &out[i]);
            continue;
        }
        c = !from  ? wf_whole(&curves[i])
            : kept ? wf_kept(&curves[i], from[i], wf_kept_from(&kept[i], &curves[i], from[i]))
                   : (cv[i] = wf_from(&curves[i], from[i]));
        out[i].cap_w = c.x0;
        out[i].pause_frac = 0;
        used += jobs[i].n_gpus * c.x0;
        if (wf_seg_room(w, m, m + c.n + 1))
            return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        m = wf_segments(&c, jobs[i].n_gpus, 1, w->seg, w->seg + w->seg_cap, m, NULL, NULL);
        if (m > first[i])
            w->has[n_has++] = i;
    }
    first[n] = m;
    if (used > budget_w * (1 + 1e-12))
        return pfs__infeasible(diag, who, budget_w, used, "the minimum caps");
    R = budget_w - used;
    /* The price: the last one where it still holds (a decision moves a few jobs' floors and
     * the budget a little, and the price stays on the same slope), else found anew. */
    if (wf_price_is(w, m, R, w->fr_mu)) {
        mu = w->fr_mu;
    } else { /* (the slopes' range, for the price's buckets: only here) */
        for (size_t q = 0; q < m; q++) {
            if (w->seg[q] < lo)
                lo = w->seg[q];
            if (w->seg[q] > hi)
                hi = w->seg[q];
        }
        mu = wf_price(w, m, R, lo, hi);
    }
    if (isnan(mu))
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    w->fr_mu = mu;
    /* Everything steeper than mu is taken whole; within a job, segments come in order. Then
     * the budget left goes to segments at exactly mu, in job then segment order: to the jobs
     * that have one (wf_tie leaves the others as they are; going through every job for them
     * was 4% of sla's decisions). */
    const double *slope = w->seg, *need = w->seg + w->seg_cap;

    for (size_t k = 0; k < n_has; k++) { /* (the rest have none: as they are) */
        size_t i = w->has[k], taken = 0;
        bool tie = false;

        for (size_t q = first[i]; q < first[i + 1]; q++) {
            if (mu < 0 || slope[q] > mu) {
                taken++;
                R -= need[q];
            } else if (!(slope[q] < mu)) {
                tie = true;
            }
        }
        if (taken > 0) { /* (none: its lowest point, set above) */
            struct wf_curve c = wf_job(curves, from, kept, cv, i);

            out[i].cap_w = wf_x(&c, taken);
        }
        if (tie)
            w->tied[n_tied++] = i;
    }
    for (size_t k = 0; mu >= 0 && k < n_tied && R > 0; k++) {
        size_t i = w->tied[k];
        struct wf_curve c = wf_job(curves, from, kept, cv, i);

        wf_tie(&c, jobs[i].n_gpus, slope, first[i], first[i + 1] - first[i], mu, &R, &out[i].cap_w);
    }
    return 0;
}

/* A class's words in wf_scratch.cls: its first job, its jobs, its first segment, its
 * segments, the segments taken, whether a segment is at exactly the price. */
enum { WC_REP, WC_COUNT, WC_FIRST, WC_NSEG, WC_TAKEN, WC_TIES, WC_WORDS };

/* The classes' half of the water-filling: the classes w->order[0..n_used), each with its
 * words' WC_REP and WC_COUNT set, share R (the budget over their lowest points). Prices
 * their segments, sets each one's WC_TAKEN, WC_TIES and its cap in w->cap_of, and returns
 * the price (NAN: out of memory) with the budget left at it in *R. */
static double
wf_classes_price(struct wf_scratch **wp, const struct pfs_pwl *curves,
                 const struct pfs_alloc_job *jobs, size_t n_used, size_t n_seg, double *R)
{
    struct wf_scratch *w;
    double mu, lo = HUGE_VAL, hi = -HUGE_VAL, *slope, *need;
    size_t m = 0, *cw;

    if (!(w = *wp = wf_scratch(n_seg, 0)))
        return NAN;
    cw = w->cls;
    slope = w->seg;
    need = w->seg + w->seg_cap;
    for (size_t u = 0; u < n_used; u++) {
        size_t *k = cw + (size_t)w->order[u] * WC_WORDS, i = k[WC_REP];
        struct wf_curve c = wf_whole(&curves[i]);

        k[WC_FIRST] = m;
        m = wf_segments(&c, jobs[i].n_gpus, (double)k[WC_COUNT], slope, need, m, &lo, &hi);
        k[WC_NSEG] = m - k[WC_FIRST];
    }
    mu = wf_price(w, m, *R, lo, hi);
    if (isnan(mu))
        return NAN;
    for (size_t u = 0; u < n_used; u++) {
        size_t *k = cw + (size_t)w->order[u] * WC_WORDS;

        k[WC_TAKEN] = k[WC_TIES] = 0;
        for (size_t q = k[WC_FIRST]; q < k[WC_FIRST] + k[WC_NSEG]; q++) {
            if (mu < 0 || slope[q] > mu) {
                k[WC_TAKEN]++;
                *R -= need[q];
            } else if (!(slope[q] < mu)) {
                k[WC_TIES] = 1;
            }
        }
        w->cap_of[w->order[u]] = curves[k[WC_REP]].x[k[WC_TAKEN]];
    }
    w->tie_curves = curves;
    w->tie_jobs = jobs;
    w->tie_slope = slope;
    w->tie_mu = mu;
    return mu;
}

/* A run's classes' segments, kept from one decision to the next (sim/sim.c). A class's curve
 * and GPUs never change within a run, so its slopes and needs per job are worked out once, by
 * wf_segments's expressions, and the present classes' segments are kept in order of slope,
 * steepest first: a decision walks down them to the price, and only a class that came or went
 * since the last one is merged in or dropped. Before, each decision recomputed every present
 * class's slopes (a division a segment) and found the price over them afresh by buckets and a
 * selection: 22% of the instructions of a Poisson year on 10,000 GPUs (issue 16). */
struct cseg {
    double slope, nd; /* throughput per watt; W a job */
    uint32_t c, k;    /* class, its k-th segment */
};

/* The list's blocks: runs of whole groups of equal slope, about CC_BLOCK segments each. A
 * block's sum of needs is kept until a class of its segments changes in number: a decision
 * adds up the blocks to the one that reaches the budget and walks only that one. */
#define CC_BLOCK 16

struct pfs__class_cache {
    uint32_t n_cap;     /* classes with room in the arrays below */
    uint32_t *first;    /* per class: its first segment in slope[] and nd[]; UINT32_MAX: not made */
    uint32_t *n_seg;    /* per class: its segments */
    uint64_t *stamp;    /* per class: the decision it was last present at */
    double *count;      /* per class: its jobs at that decision */
    bool *listed;       /* per class: its segments are in list[] */
    uint32_t n_listed;  /* such classes */
    double *slope, *nd; /* segments, class after class: throughput per watt, W a job */
    size_t n_segs, segs_cap;
    struct cseg *list, *tmp, *add; /* the listed segments, steepest first; merge space */
    size_t n_list, list_cap, tmp_cap, n_add, add_cap;
    uint32_t *block_of;  /* per segment (as slope[]): its block while listed */
    size_t block_of_cap; /* (room in block_of) */
    double *used;        /* per class: the count its blocks' sums were made with */
    uint32_t *bstart;    /* [n_blocks + 1] each block's first entry in list[] */
    double *bsum;        /* per block: its segments' needs at their classes' counts */
    bool *bdirty;        /* per block: bsum is to be made again */
    size_t n_blocks, blocks_cap;
    uint64_t decision;
};

struct pfs__class_cache *
pfs__class_cache_new(void)
{
    return calloc(1, sizeof(struct pfs__class_cache));
}

void
pfs__class_cache_free(struct pfs__class_cache *cc)
{
    if (!cc)
        return;
    free(cc->first);
    free(cc->n_seg);
    free(cc->stamp);
    free(cc->count);
    free(cc->listed);
    free(cc->slope);
    free(cc->nd);
    free(cc->list);
    free(cc->tmp);
    free(cc->add);
    free(cc->block_of);
    free(cc->used);
    free(cc->bstart);
    free(cc->bsum);
    free(cc->bdirty);
    free(cc);
}

/* Room for classes [0, n) in cc; -1 without memory. */
static int
cc_reserve(struct pfs__class_cache *cc, uint32_t n)
{
    size_t cap = cc->n_cap;

    if (n <= cc->n_cap)
        return 0;
    if (wf_grow((void **)&cc->first, &cap, n, sizeof *cc->first) ||
        (cap = cc->n_cap, wf_grow((void **)&cc->n_seg, &cap, n, sizeof *cc->n_seg)) ||
        (cap = cc->n_cap, wf_grow((void **)&cc->stamp, &cap, n, sizeof *cc->stamp)) ||
        (cap = cc->n_cap, wf_grow((void **)&cc->count, &cap, n, sizeof *cc->count)) ||
        (cap = cc->n_cap, wf_grow((void **)&cc->used, &cap, n, sizeof *cc->used)) ||
        (cap = cc->n_cap, wf_grow((void **)&cc->listed, &cap, n, sizeof *cc->listed)))
        return -1;
    for (size_t c = cc->n_cap; c < cap; c++) {
        cc->first[c] = UINT32_MAX;
        cc->n_seg[c] = 0;
        cc->stamp[c] = 0;
        cc->used[c] = -1;
        cc->listed[c] = false;
    }
    cc->n_cap = (uint32_t)cap;
    return 0;
}

/* Class c's segments, made from curve cv on g GPUs when first met; -1 without memory. */
static int
cc_class(struct pfs__class_cache *cc, uint32_t c, const struct pfs_pwl *cv, int g)
{
    size_t cap = cc->segs_cap, m;
    double lo = HUGE_VAL, hi = -HUGE_VAL;
    struct wf_curve whole;

    if (cc->first[c] != UINT32_MAX)
        return 0;
    if (cc->n_segs + cv->n >= UINT32_MAX ||
        wf_grow((void **)&cc->slope, &cap, cc->n_segs + cv->n, sizeof *cc->slope) ||
        (cap = cc->segs_cap, wf_grow((void **)&cc->nd, &cap, cc->n_segs + cv->n, sizeof *cc->nd)))
        return -1;
    cc->segs_cap = cap;
    whole = wf_whole(cv);
    m = wf_segments(&whole, g, 1, cc->slope, cc->nd, cc->n_segs, &lo, &hi);
    cc->first[c] = (uint32_t)cc->n_segs;
    cc->n_seg[c] = (uint32_t)(m - cc->n_segs);
    cc->n_segs = m;
    return 0;
}

static int
cmp_cseg(const void *a, const void *b)
{
    const struct cseg *x = a, *y = b;

    if (x->slope > y->slope || x->slope < y->slope)
        return x->slope > y->slope ? -1 : 1;
    if (x->c != y->c)
        return x->c < y->c ? -1 : 1;
    return x->k < y->k ? -1 : x->k > y->k;
}

/* The blocks of the list as it is now: whole groups of equal slope, at least CC_BLOCK
 * segments a block but the last; every sum to be made. -1 without memory. */
static int
cc_blocks(struct pfs__class_cache *cc)
{
    size_t nb = 0, cap = cc->blocks_cap;

    if (wf_grow((void **)&cc->block_of, &cc->block_of_cap, cc->n_segs + 1, sizeof *cc->block_of) ||
        wf_grow((void **)&cc->bstart, &cap, cc->n_list + 2, sizeof *cc->bstart) ||
        (cap = cc->blocks_cap,
         wf_grow((void **)&cc->bsum, &cap, cc->n_list + 2, sizeof *cc->bsum)) ||
        (cap = cc->blocks_cap,
         wf_grow((void **)&cc->bdirty, &cap, cc->n_list + 2, sizeof *cc->bdirty)))
        return -1;
    cc->blocks_cap = cap;
    for (size_t i = 0; i < cc->n_list; i++) {
        const struct cseg *e = &cc->list[i];

        /* a new block where a group starts and the block has its size */
        if (i == 0 || (i - cc->bstart[nb - 1] >= CC_BLOCK && e->slope < cc->list[i - 1].slope)) {
            cc->bstart[nb] = (uint32_t)i;
            cc->bdirty[nb++] = true;
        }
        cc->block_of[cc->first[e->c] + e->k] = (uint32_t)(nb - 1);
    }
    cc->bstart[nb] = (uint32_t)cc->n_list;
    cc->n_blocks = nb;
    return 0;
}

/* wf_classes_price with the run's cache: the same price (pfs__threshold's definition, its sums
 * made by blocks steepest first), words and caps; the budget left at the price is R less the
 * blocks' and groups' needs steeper than it, where wf_classes_price subtracts them one by one
 * in class order (the same but for rounding: a few units in the last place of R). */
static double
wf_classes_price_cached(struct wf_scratch *w, struct pfs__class_cache *cc,
                        const struct pfs_pwl *curves, const struct pfs_alloc_job *jobs,
                        size_t n_used, uint32_t n_classes, double *R)
{
    size_t *cw = w->cls, n = 0, still = 0; /* still: present classes already listed */
    bool changed = false;
    double mu = -1, gt = 0;
    uint64_t now = ++cc->decision;

    if (cc_reserve(cc, n_classes))
        return NAN;
    for (size_t u = 0; u < n_used; u++) {
        uint32_t c = w->order[u];
        size_t *k = cw + (size_t)c * WC_WORDS, r = k[WC_REP];

        if (cc_class(cc, c, &curves[r], jobs[r].n_gpus))
            return NAN;
        k[WC_FIRST] = cc->first[c];
        k[WC_NSEG] = cc->n_seg[c];
        cc->stamp[c] = now;
        cc->count[c] = (double)k[WC_COUNT];
        still += cc->listed[c];
    }
    /* The classes gone since the last decision leave the list; those come join it. */
    if (still < cc->n_listed) {
        for (size_t q = 0; q < cc->n_list; q++) {
            if (cc->stamp[cc->list[q].c] == now)
                cc->list[n++] = cc->list[q];
            else if (cc->listed[cc->list[q].c]) {
                cc->listed[cc->list[q].c] = false;
                cc->n_listed--;
            }
        }
        cc->n_list = n;
        changed = true;
    }
    cc->n_add = 0;
    for (size_t u = 0; still < n_used && u < n_used; u++) {
        uint32_t c = w->order[u];

        if (cc->listed[c])
            continue;
        cc->listed[c] = true;
        cc->n_listed++;
        if (wf_grow((void **)&cc->add, &cc->add_cap, cc->n_add + cc->n_seg[c] + 1, sizeof *cc->add))
            return NAN;
        for (uint32_t k = 0; k < cc->n_seg[c]; k++)
            cc->add[cc->n_add++] =
                (struct cseg){cc->slope[cc->first[c] + k], cc->nd[cc->first[c] + k], c, k};
    }
    if (cc->n_add > 0) {
        size_t a = 0, b = 0, o = 0;
        struct cseg *t;

        qsort(cc->add, cc->n_add, sizeof *cc->add, cmp_cseg);
        if (wf_grow((void **)&cc->tmp, &cc->tmp_cap, cc->n_list + cc->n_add, sizeof *cc->tmp))
            return NAN;
        while (a < cc->n_list || b < cc->n_add)
            cc->tmp[o++] =
                b == cc->n_add || (a < cc->n_list && cmp_cseg(&cc->list[a], &cc->add[b]) < 0)
                    ? cc->list[a++]
                    : cc->add[b++];
        t = cc->list; /* the merged list becomes the list, the old one merge space */
        cc->list = cc->tmp;
        cc->tmp = t;
        a = cc->list_cap;
        cc->list_cap = cc->tmp_cap;
        cc->tmp_cap = a;
        cc->n_list = o;
        changed = true;
    }
    if ((changed && cc_blocks(cc)))
        return NAN;
    for (size_t u = 0; u < n_used; u++) { /* a class changed in number: its blocks' sums */
        uint32_t c = w->order[u];

        if (cc->used[c] < cc->count[c] || cc->used[c] > cc->count[c]) {
            for (uint32_t k = 0; k < cc->n_seg[c]; k++)
                cc->bdirty[cc->block_of[cc->first[c] + k]] = true;
            cc->used[c] = cc->count[c];
        }
    }
    for (size_t b = 0; b < cc->n_blocks; b++) {
        if (cc->bdirty[b]) {
            double sum = 0;

            for (size_t q = cc->bstart[b]; q < cc->bstart[b + 1]; q++)
                sum += cc->list[q].nd * cc->count[cc->list[q].c];
            cc->bsum[b] = sum;
            cc->bdirty[b] = false;
        }
    }
    /* The price: the first group of equal slopes, steepest first, at whose end the needs
     * reach R; gt, the needs before it (-1 and all of them: everything fits; +inf: no budget
     * to give). By blocks to the one that reaches R, then its groups. */
    if (!(*R > 0)) {
        mu = HUGE_VAL;
    } else {
        size_t b = 0;

        while (b < cc->n_blocks && gt + cc->bsum[b] < *R)
            gt += cc->bsum[b++];
        if (b < cc->n_blocks) {
            double acc = gt;

            for (size_t q = cc->bstart[b]; q < cc->bstart[b + 1]; q++) {
                acc += cc->list[q].nd * cc->count[cc->list[q].c];
                if (q + 1 == cc->bstart[b + 1] || cc->list[q + 1].slope < cc->list[q].slope) {
                    mu = cc->list[q].slope; /* (the block's last group, if rounding says
                                             * none of them: the block reaches R) */
                    if (acc >= *R)
                        break;
                    gt = acc;
                }
            }
        }
    }
    /* What is left at the price: R less every need steeper than it. Each class takes its
     * segments steeper than the price (its slopes fall: most classes take all of theirs). */
    *R = mu < HUGE_VAL ? *R - gt : *R;
    for (size_t u = 0; u < n_used; u++) {
        uint32_t c = w->order[u];
        size_t *k = cw + (size_t)c * WC_WORDS, ns = k[WC_NSEG], taken = 0;
        const double *sl = cc->slope + k[WC_FIRST];

        if (mu < 0 || (ns > 0 && sl[ns - 1] > mu))
            taken = ns;
        else
            while (taken < ns && sl[taken] > mu)
                taken++;
        k[WC_TAKEN] = taken;
        k[WC_TIES] = taken < ns && !(sl[taken] < mu);
        w->cap_of[c] = curves[k[WC_REP]].x[taken];
    }
    w->tie_curves = curves;
    w->tie_jobs = jobs;
    w->tie_slope = cc->slope;
    w->tie_mu = mu;
    return mu;
}

/* Room for n_classes classes' words, order and caps in this thread's scratch. */
static struct wf_scratch *
wf_classes_scratch(uint32_t n_classes)
{
    struct wf_scratch *w = wf_scratch(0, 0);

    if (!w ||
        wf_grow((void **)&w->cls, &w->cls_cap, (size_t)n_classes * WC_WORDS + 1, sizeof *w->cls) ||
        wf_grow((void **)&w->order, &w->order_cap, (size_t)n_classes + 1, sizeof *w->order) ||
        wf_grow((void **)&w->cap_of, &w->cap_of_cap, (size_t)n_classes + 1, sizeof *w->cap_of))
        return NULL;
    return w;
}

int
pfs__waterfill_classes(const char *who, const struct pfs_pwl *curves,
                       const struct pfs_alloc_job *jobs, size_t n, const uint32_t *cls,
                       uint32_t n_classes, double budget_w, struct pfs_alloc_decision *out,
                       struct pfs_diag *diag)
{
    size_t n_seg = 0, n_used = 0, *cw;
    struct wf_scratch *w;
    double used = 0, R, mu, *slope;

    if (!(w = wf_classes_scratch(n_classes)))
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    cw = w->cls;
    for (uint32_t c = 0; c < n_classes; c++)
        cw[(size_t)c * WC_WORDS + WC_REP] = SIZE_MAX;
    /* Job by job, only its class is read: its curve and GPUs are its class's first job's,
     * the same bits (the sum below adds the same numbers in the same order as job by job). */
    for (size_t i = 0; i < n; i++) {
        size_t *k = cw + (size_t)cls[i] * WC_WORDS, rep;

        if (k[WC_REP] == SIZE_MAX) {
            k[WC_REP] = i;
            k[WC_COUNT] = 0;
            w->order[n_used++] = cls[i];
            n_seg += curves[i].n - 1;
        }
        rep = k[WC_REP];
        out[i].cap_w = curves[rep].x[0];
        out[i].pause_frac = 0;
        used += jobs[rep].n_gpus * curves[rep].x[0];
        k[WC_COUNT]++;
    }
    if (used > budget_w * (1 + 1e-12))
        return pfs__infeasible(diag, who, budget_w, used, "the minimum caps");
    R = budget_w - used;
    mu = wf_classes_price(&w, curves, jobs, n_used, n_seg, &R);
    if (isnan(mu))
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    cw = w->cls;
    slope = w->seg;
    for (size_t i = 0; i < n; i++) /* the class's cap: one read a job */
        out[i].cap_w = w->cap_of[cls[i]];
    /* The budget left goes to segments at exactly mu, job by job in job order (only jobs of
     * a class with such a segment: a scan of every job's segments cost a third of this). */
    for (size_t i = 0; mu >= 0 && i < n && R > 0; i++) {
        const size_t *k = cw + (size_t)cls[i] * WC_WORDS;

        if (k[WC_TIES])
            wf_tie_whole(&curves[k[WC_REP]], jobs[k[WC_REP]].n_gpus, slope, k[WC_FIRST], k[WC_NSEG],
                         mu, &R, &out[i].cap_w);
    }
    return 0;
}

int
pfs__waterfill_counted(const char *who, const struct pfs_pwl *curves,
                       const struct pfs_alloc_job *jobs, const struct pfs__class_set *cs,
                       struct pfs__class_cache *cc, double budget_w, double *cap_of, bool *tied,
                       double *left_w, struct pfs_diag *diag)
{
    size_t n_seg = 0, *cw;
    struct wf_scratch *w;
    double used = 0, R, mu;

    if (!(w = wf_classes_scratch(cs->n_classes)))
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    cw = w->cls;
    for (uint32_t u = 0; u < cs->n_present; u++) {
        uint32_t c = cs->present[u], i = cs->rep[c];
        size_t *k = cw + (size_t)c * WC_WORDS;

        k[WC_REP] = i;
        k[WC_COUNT] = cs->count[c];
        w->order[u] = c;
        n_seg += curves[i].n - 1;
        used += (double)cs->count[c] * (jobs[i].n_gpus * curves[i].x[0]);
    }
    if (used > budget_w * (1 + 1e-12))
        return pfs__infeasible(diag, who, budget_w, used, "the minimum caps");
    R = budget_w - used;
    mu = cc ? wf_classes_price_cached(w, cc, curves, jobs, cs->n_present, cs->n_classes, &R)
            : wf_classes_price(&w, curves, jobs, cs->n_present, n_seg, &R);
    if (isnan(mu))
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    for (uint32_t u = 0; u < cs->n_present; u++) {
        uint32_t c = cs->present[u];

        tied[c] = mu >= 0 && w->cls[(size_t)c * WC_WORDS + WC_TIES];
        cap_of[c] = w->cap_of[c];
    }
    *left_w = R;
    return 0;
}

void
pfs__waterfill_tie(uint32_t c, double *left_w, double *cap)
{
    struct wf_scratch *w;
    const size_t *k;

    if (!(*left_w > 0)) /* (most tied jobs: the budget at the price is given out) */
        return;
    w = pthread_getspecific(wf_key);
    k = w->cls + (size_t)c * WC_WORDS;
    if (k[WC_TIES] && w->tie_mu >= 0)
        wf_tie_whole(&w->tie_curves[k[WC_REP]], w->tie_jobs[k[WC_REP]].n_gpus, w->tie_slope,
                     k[WC_FIRST], k[WC_NSEG], w->tie_mu, left_w, cap);
}

struct pfs_alloc_decision
pfs__class_decision(const struct pfs_alloc_view *v, const struct pfs__class_answer *a, uint32_t c,
                    size_t rep, double *left_w)
{
    double cap = a->cap[c];

    if (left_w && a->tied[c])
        pfs__waterfill_tie(c, left_w, &cap);
    if (a->decision)
        return a->decision(&a->curves[rep], &v->jobs[rep], cap);
    return (struct pfs_alloc_decision){.cap_w = cap, .pause_frac = 0};
}

/* Whether levels a and l clamp every item alike (low, high or free). */
static bool
same_side(size_t n, const double *lo, const double *hi, double a, double l)
{
    for (size_t i = 0; i < n; i++)
        if ((a <= lo[i]) != (l <= lo[i]) || (a >= hi[i]) != (l >= hi[i]))
            return false;
    return true;
}

/* The level of pfs__level over n items, item i gpus[i] GPUs in [lo[i], hi[i]]: *level, or
 * HUGE_VAL when every item fits at hi. */
static int
level_of(const char *who, size_t n, const double *gpus, const double *lo, const double *hi,
         double budget_w, double *level, struct pfs_diag *diag)
{
    double need_lo = 0, need_hi = 0, a = HUGE_VAL, b = -HUGE_VAL;

    for (size_t i = 0; i < n; i++) {
        need_lo += gpus[i] * lo[i];
        need_hi += gpus[i] * hi[i];
        a = lo[i] < a ? lo[i] : a;
        b = hi[i] > b ? hi[i] : b;
    }
    if (need_lo > budget_w * (1 + 1e-12))
        return pfs__infeasible(diag, who, budget_w, need_lo, "the minimum caps");
    if (need_hi <= budget_w) {
        *level = HUGE_VAL;
        return 0;
    }
    /* The total is continuous and non-decreasing in the level: bisect, keeping the lower
     * end, whose total never exceeds the budget. At each midpoint the partition it makes
     * (below, free or above) is kept too, with the levels [prv, nxt] that make the same
     * one: where the level that partition gives, l, lies inside them clear of the margin,
     * the bisection would end there too, at a level with that partition (a total rounded
     * by at most 2 n eps need_hi is off the exact one by under free_gpus x margin), and
     * keep l from it, the same sums taken in the same order: the same bits, found at the
     * first midpoint of the right segment. An equal cut over GPUs of one type (every
     * class between the same two limits) ends at the first, where the bisection took
     * some 45 passes over the classes at every decision of an event. */
    for (int it = 0; it < 200 && b - a > 1e-12 * fmax(1, b); it++) {
        double mid = 0.5 * (a + b), tot = 0, fixed = 0, free_gpus = 0, prv = -HUGE_VAL,
               nxt = HUGE_VAL;

        for (size_t i = 0; i < n; i++) {
            tot += gpus[i] * pfs__clamp(mid, lo[i], hi[i]);
            if (mid <= lo[i]) {
                fixed += gpus[i] * lo[i];
                nxt = lo[i] < nxt ? lo[i] : nxt;
            } else if (mid >= hi[i]) {
                fixed += gpus[i] * hi[i];
                prv = hi[i] > prv ? hi[i] : prv;
            } else {
                free_gpus += gpus[i];
                prv = lo[i] > prv ? lo[i] : prv;
                nxt = hi[i] < nxt ? hi[i] : nxt;
            }
        }
        if (free_gpus > 0) {
            double l = (budget_w - fixed) / free_gpus,
                   margin = 1e-9 * fmax(1, b) + 2 * (double)n * DBL_EPSILON * need_hi / free_gpus;

            if (l > prv + margin && l < nxt - margin) {
                *level = l;
                return 0;
            }
        }
        if (tot <= budget_w)
            a = mid;
        else
            b = mid;
    }
    /* The exact level: at the bisected level each item is clamped low, clamped high or free;
     * the free ones share what the clamped ones leave. Kept where it is consistent: inside
     * the bisected bracket, or on the same side of every limit as the bisected level (the
     * bracket's ends are sums rounded in an order of their own: a level just outside it is
     * still the one the partition gives). GPU limits are whole watts and GPU counts whole,
     * so fixed and free_gpus are exact sums, the same over jobs or over classes of jobs:
     * so is the level, wherever both keep it. */
    {
        double fixed = 0, free_gpus = 0, l;

        for (size_t i = 0; i < n; i++) {
            if (a <= lo[i])
                fixed += gpus[i] * lo[i];
            else if (a >= hi[i])
                fixed += gpus[i] * hi[i];
            else
                free_gpus += gpus[i];
        }
        l = free_gpus > 0 ? (budget_w - fixed) / free_gpus : a;
        if ((l >= a && l <= b) || (free_gpus > 0 && same_side(n, lo, hi, a, l)))
            a = l;
    }
    *level = a;
    return 0;
}

int
pfs__level(const char *who, const struct pfs_alloc_job *jobs, size_t n, const double *lo,
           const double *hi, double budget_w, struct pfs_alloc_decision *out, struct pfs_diag *diag)
{
    double *gpus = pfs__scratch(PFS__SCRATCH_SLOTS - 1, n * sizeof *gpus), level;
    int rc;

    if (!gpus) /* (the last slot: its callers, equal and static-tag, use the first ones) */
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    for (size_t i = 0; i < n; i++)
        gpus[i] = jobs[i].n_gpus;
    rc = level_of(who, n, gpus, lo, hi, budget_w, &level, diag);
    for (size_t i = 0; rc == 0 && i < n; i++)
        out[i].cap_w = pfs__clamp(level, lo[i], hi[i]);
    return rc;
}

int
pfs__level_classes(const char *who, const struct pfs_alloc_view *v, const struct pfs__class_set *cs,
                   struct pfs__class_answer *a, struct pfs_diag *diag)
{
    size_t n = cs->n_present;
    double *w = pfs__scratch(PFS__SCRATCH_SLOTS - 1, 3 * n * sizeof *w), *lo, *hi, level;
    int rc;

    if (!w) /* (the engine's, at every decision by class of an event) */
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    lo = w + n;
    hi = w + 2 * n;
    for (size_t u = 0; u < n; u++) {
        uint32_t c = cs->present[u];
        const struct pfs_alloc_job *j = &v->jobs[cs->rep[c]];

        w[u] = (double)cs->count[c] * j->n_gpus;
        lo[u] = j->min_w;
        hi[u] = j->max_w;
    }
    rc = level_of(who, n, w, lo, hi, v->budget_w, &level, diag);
    for (size_t u = 0; rc == 0 && u < n; u++) {
        uint32_t c = cs->present[u];

        a->cap[c] = pfs__clamp(level, lo[u], hi[u]);
        a->tied[c] = false;
    }
    a->left_w = 0;
    a->curves = NULL;
    a->decision = NULL;
    return rc;
}

size_t
pfs__view_pfi(const struct pfs_alloc_view *view, size_t i, double pfi[PFS_N_CUTS])
{
    const struct pfs_telemetry *t = &view->telemetry[i];
    size_t known = 0;

    for (size_t k = 0; k < PFS_N_CUTS; k++)
        pfi[k] = NAN;
    if (view->predictor) {
        struct pfs_diag quiet = {0};

        if (pfs_predictor_pfi(view->predictor, t, pfi, &quiet) != 0)
            for (size_t k = 0; k < PFS_N_CUTS; k++)
                pfi[k] = NAN;
    }
    for (size_t k = 0; k < PFS_N_CUTS; k++)
        known += isfinite(pfi[k]);
    if (known == 0) /* no prediction: the PFI the operator measured, at the cuts measured */
        for (size_t k = 0; k < PFS_N_CUTS; k++)
            known += isfinite(pfi[k] = t->pfi_given[k]);
    return known;
}

int
pfs__predicted_curve(const struct pfs_alloc_view *view, size_t i, bool extrapolate,
                     struct pfs_pwl *out, struct pfs_diag *diag)
{
    const struct pfs_alloc_job *j = &view->jobs[i];
    const struct pfs_telemetry *t = &view->telemetry[i];
    double pfi[PFS_N_CUTS], t0 = t->tokens_per_s, p0 = j->ref_w;
    size_t n = 0, known = pfs__view_pfi(view, i, pfi);

    if (known == 0 || !(t0 > 0))
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "telemetry",
                             "job '%s': no PFI to go by (no predictor features and no given "
                             "PFI) or no observed throughput",
                             j->job_id);
    /* Points from the deepest known cut up; a cut outside the limits is skipped. */
    for (size_t k = PFS_N_CUTS; k-- > 0;) {
        double x = p0 * (1 - pfs_cut(k));

        if (!isfinite(pfi[k]) || x < j->min_w || x > j->max_w)
            continue;
        out->x[n] = x;
        out->y[n++] = fmax(0, t0 * (1 - pfs_cut(k) * fmax(pfi[k], 0)));
    }
    out->x[n] = fmin(p0, j->max_w);
    out->y[n++] = t0;
    if (j->max_w > p0) {
        out->x[n] = j->max_w;
        out->y[n++] = t0;
    }
    /* Below the deepest known point nothing is known. Asked to, assume throughput falls in
     * proportion to power from there (a line through the origin), which errs on the side of
     * caution: real curves fall at least that fast once the clock is at its floor. */
    if (extrapolate && j->min_w < out->x[0]) {
        memmove(out->x + 1, out->x, n * sizeof *out->x);
        memmove(out->y + 1, out->y, n * sizeof *out->y);
        out->x[0] = j->min_w;
        out->y[0] = out->y[1] * j->min_w / out->x[1];
        n++;
    }
    out->n = n;
    pfs_pwl_hull(out);
    return 0;
}

double
pfs__floor_cap(const struct pfs_pwl *c, double loss)
{
    double target = (1 - loss) * c->y[c->n - 1];

    if (c->y[0] >= target)
        return c->x[0];
    for (size_t k = 0; k + 1 < c->n; k++) {
        if (c->y[k + 1] >= target) {
            double dy = c->y[k + 1] - c->y[k];

            return dy > 0 ? c->x[k] + (target - c->y[k]) / dy * (c->x[k + 1] - c->x[k])
                          : c->x[k + 1];
        }
    }
    return c->x[c->n - 1];
}

const struct pfs_pwl *
pfs__predicted_given(const struct pfs_alloc_view *v, bool extrapolate)
{
    const struct pfs_pwl *kept = v->predicted[extrapolate];

    return kept && v->predicted_by == v->predictor && v->telemetry ? kept : NULL;
}

const struct pfs_pwl *
pfs__predicted_kept(const struct pfs_alloc_view *v, bool extrapolate)
{
    const struct pfs_pwl *kept = pfs__predicted_given(v, extrapolate);

    if (!kept)
        return NULL;
    if (v->classes) {
        /* One job of each class is enough: a class's kept curves are the same bits. Seen
         * classes are marked in a bitmap (a stride of kilobytes through every job's curve,
         * a cache miss each, cost as much as the water-filling at 20,000 jobs). */
        size_t words = (v->n_classes + 63) / 64;
        struct wf_scratch *w = wf_scratch(0, 0);

        if (w && !wf_grow((void **)&w->seen, &w->seen_cap, words + 1, sizeof *w->seen)) {
            uint64_t *seen = w->seen;
            bool all = true;

            memset(seen, 0, (words + 1) * sizeof *seen);
            for (size_t i = 0; all && i < v->n_jobs; i++) {
                uint32_t k = v->classes[i];

                if (!(seen[k / 64] >> (k % 64) & 1)) {
                    seen[k / 64] |= (uint64_t)1 << (k % 64);
                    all = kept[i].n > 0;
                }
            }
            return all ? kept : NULL;
        }
    }
    for (size_t i = 0; i < v->n_jobs; i++)
        if (kept[i].n == 0)
            return NULL;
    return kept;
}

int
pfs__predicted_curves(const struct pfs_alloc_view *v, const char *policy, bool extrapolate,
                      struct pfs_pwl **out, struct pfs_diag *diag)
{
    struct wf_scratch *w;
    struct pfs_pwl *c;
    int rc = 0;

    *out = NULL;
    if (!v->telemetry)
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "telemetry",
                             "the %s policy needs each job's telemetry", policy);
    if (!(w = wf_scratch(0, 0)) ||
        wf_grow((void **)&w->pred, &w->pred_cap, v->n_jobs + 1, sizeof *w->pred))
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    c = w->pred;
    for (size_t i = 0; rc == 0 && i < v->n_jobs; i++) {
        const struct pfs_pwl *kept = v->predicted[extrapolate];

        if (kept && v->predicted_by == v->predictor && kept[i].n > 0) {
            /* the engine's, made by the same function: its points only (a whole pwl is a
             * kilobyte, its points a tenth of that; the copies were a fifth of sla's run) */
            c[i].n = kept[i].n;
            memcpy(c[i].x, kept[i].x, kept[i].n * sizeof *c[i].x);
            memcpy(c[i].y, kept[i].y, kept[i].n * sizeof *c[i].y);
        } else
            rc = pfs__predicted_curve(v, i, extrapolate, &c[i], diag);
    }
    if (rc == 0)
        *out = c;
    return rc;
}

int
pfs__predicted_readonly(const struct pfs_alloc_view *v, const char *policy, bool extrapolate,
                        const struct pfs_pwl **out, struct pfs_diag *diag)
{
    struct pfs_pwl *made = NULL;
    int rc;

    if ((*out = pfs__predicted_kept(v, extrapolate)) != NULL)
        return 0;
    rc = pfs__predicted_curves(v, policy, extrapolate, &made, diag);
    *out = made;
    return rc;
}

void
pfs__pwl_clip(struct pfs_pwl *c, double lo)
{
    double y = pfs_pwl_eval(c, lo);
    size_t k = 0, m = 1;

    if (lo <= c->x[0])
        return;
    while (k < c->n && c->x[k] <= lo)
        k++;
    c->x[0] = lo;
    c->y[0] = y;
    for (; k < c->n; k++, m++) {
        c->x[m] = c->x[k];
        c->y[m] = c->y[k];
    }
    c->n = m;
}

/* ----- the helpers of the policy ABI (sim/pfisim/policy.h), for plugins ----- */

int
pfs_policy_fail(struct pfs_diag *diag, int code, const char *fmt, ...)
{
    va_list ap;

    if (!diag || diag->code != 0)
        return code;
    diag->code = code;
    va_start(ap, fmt);
    vsnprintf(diag->message, sizeof diag->message, fmt, ap);
    va_end(ap);
    return code;
}

int
pfs_policy_infeasible(struct pfs_diag *diag, const char *policy, double budget_w, double need_w,
                      const char *what)
{
    return pfs__infeasible(diag, policy, budget_w, need_w, what);
}

int
pfs_policy_level(const char *who, const struct pfs_alloc_job *jobs, size_t n, const double *lo,
                 const double *hi, double budget_w, struct pfs_alloc_decision *out,
                 struct pfs_diag *diag)
{
    return pfs__level(who, jobs, n, lo, hi, budget_w, out, diag);
}

int
pfs_policy_waterfill(const char *who, const struct pfs_pwl *curves,
                     const struct pfs_alloc_job *jobs, size_t n, double budget_w,
                     struct pfs_alloc_decision *out, struct pfs_diag *diag)
{
    return pfs__waterfill(who, curves, jobs, n, budget_w, NULL, out, diag);
}

int
pfs_policy_predicted_curve(const struct pfs_alloc_view *view, size_t i, bool extrapolate,
                           struct pfs_pwl *out, struct pfs_diag *diag)
{
    return pfs__predicted_curve(view, i, extrapolate, out, diag);
}

double
pfs_policy_floor_cap(const struct pfs_pwl *c, double loss)
{
    return pfs__floor_cap(c, loss);
}

double
pfs_policy_pfi_at(const struct pfs_alloc_view *view, size_t i, double cut)
{
    double pfi[PFS_N_CUTS];
    size_t lo = PFS_N_CUTS, hi = PFS_N_CUTS; /* the known cuts nearest at or below, at or above */

    if (pfs__view_pfi(view, i, pfi) == 0)
        return NAN;
    for (size_t k = 0; k < PFS_N_CUTS; k++) { /* (pfs_cut rises with k) */
        if (!isfinite(pfi[k]))
            continue;
        if (pfs_cut(k) <= cut)
            lo = k;
        if (pfs_cut(k) >= cut && hi == PFS_N_CUTS)
            hi = k;
    }
    if (lo == PFS_N_CUTS || hi == PFS_N_CUTS || lo == hi) /* outside the known cuts, or on one */
        return pfi[lo == PFS_N_CUTS ? hi : lo];
    return pfi[lo] + (cut - pfs_cut(lo)) / (pfs_cut(hi) - pfs_cut(lo)) * (pfi[hi] - pfi[lo]);
}
