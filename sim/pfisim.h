/*
 * sim/pfisim.h - the public interface of libpfisim.
 *
 * pfisim simulates datacenter GPU power allocation: it turns power-cap measurements into
 * job power-throughput curves, fits a physical DVFS model to them, computes the Power
 * Flexibility Index (PFI), and (later layers) replays workloads under power caps.
 *
 * Conventions, for every function declared here:
 * - Functions that can fail return int: 0 on success or a negative PFS_E* code. Details of
 *   the first failure go into the caller's struct pfs_diag (file, line, column, field,
 *   message), which may be NULL when the caller does not want them.
 * - Top-level objects come from pfs_X_new() and go back through pfs_X_free(); on failure
 *   _new leaves *out == NULL; _free(NULL) does nothing.
 * - The library never prints, never exits and never reads argv. It reads one environment
 *   variable, PFISIM_DATA (the real-data directory), through pfs_data_dir().
 * - Units are in the names: _w watts, _j joules, _mhz megahertz, _frac 0..1.
 */
#ifndef PFISIM_H
#define PFISIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PFS_VERSION "0.1.0"

/* The errors, the diagnostics, and everything an allocation policy sees (the view, the
 * decision, the descriptor, the helpers): the policy ABI, a header of its own so that a
 * policy built outside pfisim includes that and nothing of the engine. */
#include "pfisim/policy.h"

/* Returns the real-data directory: $PFISIM_DATA when set and non-empty, else
 * "../shared/data". The string is owned by the environment or is static. */
const char *pfs_data_dir(void);

/* Stopping on a signal (docs/reliability.md, "Signals"). pfs_interrupt asks every run in
 * progress to stop: the simulator sees it at its next simulated minute and returns PFS_EINTR,
 * and the caller ends as on any failure (what it wrote whole stays, its temporary files go).
 * pfs_interrupted says whether it was asked. Both are async-signal-safe. pfs_tmp_remove_all
 * removes every temporary output file now being written (an output's, a new database's),
 * without locks: for a process that must end before its writers have finished. */
void pfs_interrupt(void);
bool pfs_interrupted(void);
void pfs_tmp_remove_all(void);

/* The folder of pfisim's shipped files (the corpus traces/h200-h100, configs/): $PFISIM_SHARE
 * when set; else found from the executable's path, an installed tree (BIN/../share/pfisim)
 * or the source tree it was built in; NULL when there is none. */
const char *pfs_share_dir(void);

/* ---------------------------------------------------------------------------------------
 * GPU profiles (models/gpu.c). The profiles are libconfig files in configs/gpus/, embedded
 * into the library at build time; pfs_gpu_load() reads any other file of the same form.
 */

/* A profile's parameters, in the order of pfs_gpu_param_name: the limits, idle and dynamic
 * draw, the clocks, v_min, memory, tensor throughput, and the knee as a fraction of f_max. */
#define PFS_GPU_N_PARAMS  13
#define PFS_GPU_KNEE_FRAC 12

struct pfs_gpu {
    char name[32];          /* profile name as typed: h100-sxm, a100-pcie, ... */
    char model[64];         /* the product, e.g. "NVIDIA H100 SXM5 80GB" */
    bool extrapolated;      /* true when not backed by measurements of that GPU */
    double min_limit_w;     /* smallest settable power limit, W */
    double default_limit_w; /* default power limit, W (PFI's reference power P0) */
    double max_limit_w;     /* largest settable power limit, W */
    double idle_w;          /* draw at idle, W */
    double dyn_w;           /* SM dynamic power at f_max, full voltage, activity 1, W */
    double f_min_mhz;       /* lowest SM clock DVFS goes to, MHz */
    double f_max_mhz;       /* highest SM clock (boost), MHz */
    double f_knee_mhz;      /* below this clock the voltage stays at v_min, MHz */
    double v_min;           /* voltage at and below the knee, fraction of that at f_max */
    double mem_bw_tbs;      /* memory bandwidth, TB/s */
    double mem_gb;          /* memory size, GB */
    double tflops_bf16;     /* dense BF16 (or FP16) tensor throughput, TFLOP/s */
    /* What is known of each parameter (issue 21; docs/model.md, "Profiles as ranges"):
     * parameter k (pfs_gpu_param_name) lies in [lo[k], hi[k]] (equal: a value) and the
     * fields above hold its point, a range's midpoint; kind[k] says what backs it. dyn_w
     * may be derived (max limit - idle), the knee given as a fraction of f_max (parameter
     * PFS_GPU_KNEE_FRAC); a draw recomputes them. */
    double lo[PFS_GPU_N_PARAMS], hi[PFS_GPU_N_PARAMS];
    unsigned char kind[PFS_GPU_N_PARAMS]; /* enum pfs_gpu_kind */
    bool dyn_derived, knee_derived;
};

/* What backs a profile's parameter: its provenance entry's kind (PFS_GPU_UNSTATED when the
 * profile gives none, as the measured-data profiles do in their comments). */
enum pfs_gpu_kind { PFS_GPU_UNSTATED, PFS_GPU_MEASURED, PFS_GPU_PUBLISHED, PFS_GPU_ASSUMED };

/* Parameter k's setting path ("limits_w.min", ...), or NULL past the end; its kind's name
 * ("measured", "published", "assumed", "" when unstated). */
const char *pfs_gpu_param_name(size_t k);
const char *pfs_gpu_kind_name(int kind);
/* Parameter k's point value (the knee fraction: f_knee / f_max). */
double pfs_gpu_param(const struct pfs_gpu *g, size_t k);
/* Whether some parameter of g is a range. */
bool pfs_gpu_uncertain(const struct pfs_gpu *g);
/* The source the profile gives for parameter k (its provenance entry's text) into buf, ""
 * when none. Returns 0 or what pfs_gpu_find returns. */
int pfs_gpu_source(const char *name, size_t k, char *buf, size_t size, struct pfs_diag *diag);

/* Draw d of n of a profile's uncertain parameters (docs/model.md): a centred Latin
 * hypercube, each ranged parameter's n strata in an order drawn from seed (and the
 * profile's name), draw d taking the middle of its stratum of each; the derived ones
 * recomputed. n = 1 is the point profile, every range at its midpoint. out holds a profile
 * with no ranges left (lo = hi = the drawn value). Returns 0, PFS_EINVAL (d >= n, or a
 * draw the model cannot use: its constraints named), PFS_ENOMEM. */
int pfs_gpu_draw(const struct pfs_gpu *g, size_t n, size_t d, unsigned long seed,
                 struct pfs_gpu *out, struct pfs_diag *diag);

/* Finds the embedded profile called name. Returns 0, or PFS_ENOTFOUND (the message lists
 * the known names), or PFS_EINVAL if the embedded text is broken. */
int pfs_gpu_find(const char *name, struct pfs_gpu *out, struct pfs_diag *diag);

/* Reads a profile from a libconfig file. Returns 0, PFS_EIO (unreadable) or PFS_EINVAL
 * (bad setting; diag names file, line and setting path). */
int pfs_gpu_load(const char *path, struct pfs_gpu *out, struct pfs_diag *diag);

/* The embedded profiles, for listings: the i-th name, or NULL past the end. */
const char *pfs_gpu_name(size_t i);

/* ---------------------------------------------------------------------------------------
 * The DVFS model (models/dvfs.c), DESIGN.md section 3. Per GPU under a power limit the
 * firmware lowers the SM clock f until the draw fits:
 *   P(f) = idle_w + mem_w + dyn_w * activity * (f / f_max) * v(f)^2
 *   T(f) = t_max / (alpha * f_max / f + (1 - alpha))
 * and under a cap the clock is the largest f with P(f) <= cap_fill * cap.
 */

struct pfs_dvfs_job {
    double t_max;    /* throughput of the whole job at f_max, in the job's unit (e.g. tokens/s) */
    double alpha;    /* compute-bound share of a step at f_max, 0..1 */
    double activity; /* dynamic-power activity factor, 0 .. PFS_DVFS_ACTIVITY_MAX */
    double mem_w;    /* per-GPU draw above idle that does not scale with the SM clock, W */
    double cap_fill; /* mean draw under a binding cap as a fraction of the cap, (0, 1]; 0 is
                      * taken as 1. The limiter clips short power peaks, so a bursty job
                      * averages below its cap (docs/model.md) */
};

#define PFS_DVFS_ACTIVITY_MAX 1.5
#define PFS_DVFS_FILL_MIN     0.7 /* smallest cap_fill the fit allows */

/* One operating point of a job under a cap. */
struct pfs_dvfs_point {
    double f_mhz;            /* SM clock, MHz */
    double power_w;          /* per-GPU draw, W */
    double throughput;       /* whole-job throughput, job's unit */
    double dthroughput_dcap; /* d throughput / d cap_w */
    double dpower_dcap;      /* d power_w / d cap_w */
    bool capped;             /* true when the cap binds (f < f_max) */
};

/* Per-GPU draw at SM clock f_mhz (clamped into [f_min, f_max]), W. */
double pfs_dvfs_power_w(const struct pfs_gpu *g, const struct pfs_dvfs_job *j, double f_mhz);

/* The largest clock in [f_min, f_max] whose draw fits cap_w; f_min when none fits. */
double pfs_dvfs_clock_mhz(const struct pfs_gpu *g, const struct pfs_dvfs_job *j, double cap_w);

/* Whole-job throughput at SM clock f_mhz. */
double pfs_dvfs_throughput(const struct pfs_gpu *g, const struct pfs_dvfs_job *j, double f_mhz);

/* The operating point under cap_w (clock, draw, throughput and their derivatives). */
void pfs_dvfs_eval(const struct pfs_gpu *g, const struct pfs_dvfs_job *j, double cap_w,
                   struct pfs_dvfs_point *out);

/* ---------------------------------------------------------------------------------------
 * Synchronous jobs on GPUs that differ (models/sync.c, docs/model.md section 6, issue 19).
 * Chip i of a SKU has an efficiency eta_i: its clock-dependent draw is the median chip's
 * divided by eta_i, so at a given power it holds eta_i times the median's clock (where the
 * draw is linear in the clock). A job of n GPUs waits at every step for its slowest GPU:
 *   step = alpha / min_i x_i + (1 - alpha)    (the job's DVFS split, at f_max = 1)
 * and a GPU that finishes its share early waits at idle_w.
 */

/* The spread of eta calibrated on Sinha et al. (SC'22, arXiv 2208.11035), "about 8%
 * performance variation across GPUs of one SKU": read as (p99 - p1) / p50 of a power-bound
 * kernel's performance, which tracks eta where the draw is linear in the clock, so the sd is
 * 0.08 / (2 z_0.99). The statistic behind the 8% is not stated this precisely; results.md
 * shows half and double this. */
#define PFS_ETA_SD_CALIBRATED (0.08 / (2 * 2.3263478740408408))

/* The settings' bounds: three times the sd of the calibration's double (Sinha et al.'s worst
 * cluster, 22%, is within it), and an outlier at half the median's efficiency (Sinha et al.:
 * 1 / 1.5). Beyond them a chip cannot hold even f_min at its minimum limit, where the model
 * has no answer (docs/model.md section 1, "Below the minimum clock"). */
#define PFS_ETA_SD_MAX      0.1
#define PFS_OUTLIER_ETA_MIN 0.5

struct pfs_variability {
    double eta_sd;       /* sd of eta around 1 (normal, cut at 4 sd); 0: identical GPUs */
    double outlier_frac; /* share of GPUs that are outliers (0: none) */
    double outlier_eta;  /* an outlier's eta, times its normal draw (Sinha et al.: down to
                          * 1 / 1.5 of the median's performance) */
};

/* Whether v makes GPUs differ at all. */
static inline bool
pfs_variability_on(const struct pfs_variability *v)
{
    return v->eta_sd > 0 || v->outlier_frac > 0;
}

/* n efficiencies for the GPUs of one job: a GSL MT19937 stream seeded with seed, the first n
 * draws (so that a job's GPUs at n are the first n of its GPUs at any larger size). Returns
 * 0, PFS_EINVAL (a setting out of range: eta_sd in [0, PFS_ETA_SD_MAX], outlier_frac in
 * [0, 1], outlier_eta in [PFS_OUTLIER_ETA_MIN, 1]), PFS_ENOMEM. */
int pfs_eta_draw(const struct pfs_variability *v, unsigned long seed, size_t n, double *eta,
                 struct pfs_diag *diag);

/* A job's GPUs, prepared once for any number of evaluations (their efficiencies sorted,
 * with prefix sums of 1 / eta). */
struct pfs_sync_gpus;

/* Copies eta[n] (n >= 1, every eta finite and positive). Returns 0, PFS_EINVAL, PFS_ENOMEM. */
int pfs_sync_gpus_new(const double *eta, size_t n, struct pfs_sync_gpus **out,
                      struct pfs_diag *diag);
void pfs_sync_gpus_free(struct pfs_sync_gpus *s);

/* A synchronous job's operating point. */
struct pfs_sync_point {
    double throughput; /* whole job: t_max / step */
    double power_w;    /* mean per-GPU draw over a step, W (NAN unless asked for) */
    double x_gate;     /* the clock (fraction of f_max) of the GPU every step waits for */
    double wait_frac;  /* mean share of a step the GPUs wait (NAN unless power asked for) */
};

/* The job under one cap on every GPU. The throughput costs one clock solve (the least
 * efficient GPU gates); with_power adds one per GPU. With every eta equal it is exactly
 * pfs_dvfs_eval on the profile with dyn_w / eta. */
void pfs_sync_uniform(const struct pfs_gpu *g, const struct pfs_dvfs_job *j,
                      const struct pfs_sync_gpus *s, double cap_w, bool with_power,
                      struct pfs_sync_point *out);

/* The job's draw within a step (the sub-minute swing a synchronous job puts on its feed),
 * per GPU, W: its mean over the step; its peak, every GPU computing at the step's start (the
 * compute share alpha / x of a GPU's busy time draws what its busy mean less the non-scaling
 * share at idle_w + mem_w leaves, at most the cap: the limiter holds it); its trough, every GPU
 * in the step's collective at idle_w + mem_w (the non-scaling share taken as communication:
 * the upper end of the swing).
 * Uniform caps. docs/model.md section 6. */
struct pfs_sync_swing {
    double mean_w, peak_w, trough_w;
};
void pfs_sync_swing(const struct pfs_gpu *g, const struct pfs_dvfs_job *j,
                    const struct pfs_sync_gpus *s, double cap_w, struct pfs_sync_swing *out);

/* Power shifting within the job (sync-shift): per-GPU caps caps_w[n] (in the order eta was
 * given; may be NULL) summing to at most n x mean_cap_w, within the profile's limits, that
 * maximise the job's throughput: every GPU set to hold one clock x*, the highest the budget
 * buys, slow GPUs given more power and fast ones less; a GPU that needs less than the
 * minimum limit for x* keeps the minimum (and waits). Returns 0, PFS_EINVAL when mean_cap_w
 * is below the minimum limit, PFS_ENOMEM. */
int pfs_sync_shift(const struct pfs_gpu *g, const struct pfs_dvfs_job *j,
                   const struct pfs_sync_gpus *s, double mean_cap_w, bool with_power,
                   double *caps_w, struct pfs_sync_point *out, struct pfs_diag *diag);

struct pfs_curveset;
struct pfs_job_curve;

#define PFS_SCALE_MAX_GPUS 1048576

/* Every job of a curve set run on n_gpus GPUs of drawn efficiencies (pfisim scale). */
struct pfs_scale_options {
    long n_gpus;                /* GPUs of every job, 1 .. PFS_SCALE_MAX_GPUS; or 0: */
    long times;                 /* every job on this many times its own GPUs */
    struct pfs_variability var; /* how its GPUs differ */
    unsigned long seed;         /* with the job's id, the stream of its GPUs */
    bool shift;                 /* with power shifting within the job (cap_w: the mean) */
};

/* The set with every job at o->n_gpus GPUs, or o->times its own (docs/model.md section 6):
 * the job's DVFS parameters fitted to its curve (pfs_fit_job); at each measured cap the
 * measured curve where identical GPUs hold the clock of the GPU the job waits for, scaled
 * out to that many GPUs, and the measured draw times the model's ratio of mean draws; so
 * that with identical GPUs (eta_sd 0, no outliers) the curve is the measured one, scaled.
 * Returns 0, PFS_EINVAL (a profile, a fit, a cap outside the profile's limits, a setting),
 * PFS_ENUMERIC, PFS_ENOMEM. */
int pfs_curveset_scale(const struct pfs_curveset *in, const struct pfs_scale_options *o,
                       struct pfs_curveset **out, struct pfs_diag *diag);

/* Job jc on the GPUs s (their count its size): throughput[] and power_w[] at its measured
 * caps, with power shifted within it or not, as pfs_job_curve_scale. */
int pfs_job_curve_sync(const struct pfs_gpu *g, const struct pfs_job_curve *jc,
                       const struct pfs_dvfs_job *fit, const struct pfs_sync_gpus *s, bool shift,
                       bool with_power, double *throughput, double *power_w, struct pfs_diag *diag);

/* The stream of a job's GPUs in pfisim scale: the seed and the job's id (FNV-1a), so that a
 * job keeps its GPUs whatever else its file holds. */
unsigned long pfs_job_seed(unsigned long seed, const char *job_id);

/* The GPUs a job of n_gpus runs on under o. */
long pfs_scaled_gpus(const struct pfs_scale_options *o, int n_gpus);

/* One job of it, given its profile and fitted parameters: throughput[] and power_w[] at its
 * measured caps (power_w the measured draw unless with_power: the draw costs a clock solve
 * per GPU, the throughput one per cap). Returns as pfs_curveset_scale. */
int pfs_job_curve_scale(const struct pfs_gpu *g, const struct pfs_job_curve *jc,
                        const struct pfs_dvfs_job *fit, const struct pfs_scale_options *o,
                        bool with_power, double *throughput, double *power_w,
                        struct pfs_diag *diag);

/* ---------------------------------------------------------------------------------------
 * Curves (models/curve.c): a job's throughput and per-GPU power as functions of the
 * per-GPU cap, either sampled (measured points, Steffen monotone interpolation) or
 * parametric (the DVFS model). Both answer through one interface.
 */

struct pfs_curve;

struct pfs_curve_point {
    double throughput;       /* whole-job throughput, job's unit */
    double power_w;          /* per-GPU draw, W */
    double dthroughput_dcap; /* per W of per-GPU cap */
    double dpower_dcap;
};

/* A sampled curve through n points; cap_w strictly increasing after sorting, n >= 2
 * (2 points: linear; 3 or more: Steffen). The arrays are copied. Returns 0, PFS_EINVAL
 * (too few points, duplicate or non-finite caps), PFS_ENOMEM. */
int pfs_curve_sampled_new(const double *cap_w, const double *throughput, const double *power_w,
                          size_t n, struct pfs_curve **out, struct pfs_diag *diag);

/* A parametric curve of the DVFS model; the profile and job are copied. Its domain is
 * [g->min_limit_w, g->max_limit_w]. Returns 0, PFS_EINVAL, PFS_ENOMEM. */
int pfs_curve_model_new(const struct pfs_gpu *g, const struct pfs_dvfs_job *j,
                        struct pfs_curve **out, struct pfs_diag *diag);

void pfs_curve_free(struct pfs_curve *c);

/* Evaluates the curve at per-GPU cap cap_w. Returns 0, or PFS_ERANGE when cap_w is outside
 * the curve's domain: a sampled curve never extrapolates. */
int pfs_curve_eval(const struct pfs_curve *c, double cap_w, struct pfs_curve_point *out);

/* The domain [lo_w, hi_w] in which pfs_curve_eval answers. */
void pfs_curve_domain(const struct pfs_curve *c, double *lo_w, double *hi_w);

/* "sampled" or "model". */
const char *pfs_curve_kind(const struct pfs_curve *c);

/* ---------------------------------------------------------------------------------------
 * PFI (models/pfi.c). PFI(c) = (1 - T(P0 (1 - c)) / T(P0)) / c, P0 the per-GPU reference
 * power (the default limit).
 */

/* Returns 0 and *pfi; PFS_EINVAL when cut_frac is not in (0, 1) or T(P0) <= 0;
 * PFS_ERANGE when P0 or P0 (1 - cut_frac) lies outside the curve's domain. */
int pfs_pfi(const struct pfs_curve *c, double p0_w, double cut_frac, double *pfi);

/* ---------------------------------------------------------------------------------------
 * Curve sets (traces/curves.c): the curves CSV of docs/formats.md, one row per measured
 * point: job_id,gpu,n_gpus,cap_w,throughput,unit,power_w.
 */

struct pfs_job_curve {
    char *job_id;       /* owned */
    char gpu[32];       /* profile name */
    char unit[32];      /* throughput unit, e.g. tokens/s */
    int n_gpus;         /* GPUs of the job, >= 1 */
    long line;          /* line of the job's first row in its file, 0 if not from a file */
    size_t n_points;    /* measured points, sorted by cap */
    double *cap_w;      /* per-GPU power limit, W; strictly increasing */
    double *throughput; /* whole-job throughput, unit */
    double *power_w;    /* mean per-GPU draw, W */
};

struct pfs__strindex;
struct pfs_curveset {
    char path[256]; /* file it was read from, "" when built in memory */
    size_t n_jobs;
    struct pfs_job_curve *jobs;  /* in order of first appearance */
    size_t cap_jobs;             /* private: the array's capacity */
    struct pfs__strindex *index; /* private: jobs by id (NULL: search them) */
};

/* An empty set to fill with pfs_curveset_add(). Returns 0 or PFS_ENOMEM. */
int pfs_curveset_new(struct pfs_curveset **out);

/* Adds one measured point (job created on first sight; gpu, n_gpus and unit must agree with
 * the job's earlier points, and (job, cap) must be new). Values are checked as the reader
 * checks them. line is the source line for messages (0 if none). Returns 0, PFS_EINVAL,
 * PFS_ENOMEM. */
int pfs_curveset_add(struct pfs_curveset *cs, const char *job_id, const char *gpu, int n_gpus,
                     double cap_w, double throughput, const char *unit, double power_w, long line,
                     struct pfs_diag *diag);

/* Reads a curves CSV strictly: any bad row fails the whole read and nothing is returned.
 * Returns 0, PFS_EIO, PFS_EINVAL (diag: file:line:column and field), PFS_ENOMEM. */
int pfs_curveset_read(const char *path, struct pfs_curveset **out, struct pfs_diag *diag);

/* Writes the set as a curves CSV, numbers in the fewest digits that read back exactly.
 * The path variant writes whole or not at all ("-": standard output; docs/reliability.md
 * has how devices and links are treated). Returns 0 or PFS_EIO. */
int pfs_curveset_write(const struct pfs_curveset *cs, FILE *fp, struct pfs_diag *diag);
int pfs_curveset_write_path(const struct pfs_curveset *cs, const char *path, struct pfs_diag *diag);

/* Returns the job called job_id, or NULL. */
const struct pfs_job_curve *pfs_curveset_find(const struct pfs_curveset *cs, const char *job_id);

void pfs_curveset_free(struct pfs_curveset *cs);

/* ---------------------------------------------------------------------------------------
 * Fitting (models/fit.c): nonlinear least squares of the DVFS job parameters to a measured
 * curve (GSL multifit_nlinear), with bounds that keep them physical.
 */

struct pfs_fit {
    struct pfs_dvfs_job job; /* fitted parameters */
    double t0;               /* measured throughput at the highest cap (normaliser) */
    double rmse_throughput;  /* RMSE of throughput / t0 */
    double rmse_power;       /* RMSE of per-GPU power / default limit */
    double uncapped_w;       /* fitted per-GPU draw at f_max, W */
    size_t n_points;
    size_t n_iter;                /* solver iterations of the best start */
    double se_alpha, se_activity; /* standard errors (pfs_fit_shared given se, NaN without;
                                   * pfs_fit_shared_job; else 0) */
};

#define PFS_FIT_MIN_POINTS 3

/* Fits jc on profile g. Returns 0; PFS_EINVAL when the job has fewer than
 * PFS_FIT_MIN_POINTS points or no positive throughput (diag names the job and its line);
 * PFS_ENUMERIC when no start converges. */
int pfs_fit_job(const struct pfs_gpu *g, const struct pfs_job_curve *jc, struct pfs_fit *out,
                struct pfs_diag *diag);

/* The profile's voltage shape (v_min, f_knee) fitted jointly to several jobs of that GPU,
 * each with its own job parameters: a grid search over the two profile parameters with
 * per-job least squares inside. On success *g holds the best shape. */
struct pfs_profile_fit {
    double v_min;
    double f_knee_mhz;
    double rmse_throughput; /* over all points of all jobs */
    double rmse_power;
};

int pfs_fit_profile(struct pfs_gpu *g, const struct pfs_job_curve *const *jobs, size_t n_jobs,
                    struct pfs_profile_fit *out, struct pfs_diag *diag);

/* Standard errors of the shared parameters of a pfs_fit_shared fit, from the Jacobian at the
 * solution (docs/model.md): sigma^2 (J'J)^-1 in the solver's unbounded coordinates, carried to
 * each parameter through its bounding map (delta method). sigma is the residual standard
 * deviation of the normalised residuals (T/T0 and power / default limit alike). */
struct pfs_shared_se {
    double v_min, f_knee_mhz, mem_w, cap_fill;
    double sigma;
    size_t dof; /* residuals less parameters, the projected scales counted */
};

/* Shared GPU physics (issue 15, docs/model.md): the voltage shape, one clock-independent draw
 * and one cap fill for all n_jobs jobs of profile g, and per job only alpha and activity (its
 * throughput scale is projected, not fitted), jointly by GSL's nonlinear least squares on the
 * points with cap >= min_cap_w (0: all). Writes the fitted profile to *g_out and each job's
 * parameters and RMSEs (over the points used) to out[n_jobs]; and where se is not NULL, the
 * shared parameters' standard errors to *se and each job's to out[] (with se NULL those are
 * NaN and not worked out: they cost the Jacobian's factors; NaN also where no degree of freedom is
 * left or J'J is singular in a parameter's direction, infinite where its error is wider than
 * its whole bounded range: the data do not identify it). Returns 0, PFS_EINVAL (a job with fewer
 * than 2 points to use, more parameters than residuals), PFS_ENUMERIC, PFS_ENOMEM. */
int pfs_fit_shared(const struct pfs_gpu *g, const struct pfs_job_curve *const *jobs, size_t n_jobs,
                   double min_cap_w, struct pfs_gpu *g_out, struct pfs_fit *out,
                   struct pfs_shared_se *se, struct pfs_diag *diag);

/* A Gaussian prior on a job's alpha from the other jobs of its GPU (empirical Bayes,
 * docs/model.md): their alphas' mean and sd, and sigma the residual sd of their shared fit.
 * Given to pfs_fit_shared_job it adds one residual, sigma (alpha - mean) / sd, so that caps
 * that do not identify alpha leave it near the GPU's typical job instead of where the solver
 * started, and caps that do outweigh it. pfs_alpha_prior_from fills it from n fits; it returns
 * PFS_EINVAL (and no prior is to be used) for n < 2, a sigma that is not positive, or alphas
 * that do not vary. */
struct pfs_alpha_prior {
    double mean, sd, sigma;
};
int pfs_alpha_prior_from(const struct pfs_fit *fits, size_t n, double sigma,
                         struct pfs_alpha_prior *out);

/* One job on given shared physics (leave-one-job-out, docs/model.md): profile g_shared with
 * its voltage shape, the clock-independent draw mem_w and cap fill cap_fill held fixed, only
 * the job's alpha and activity fitted (its scale projected) on its points with cap >=
 * min_cap_w, with the prior on alpha unless prior is NULL. Writes *out (with standard
 * errors). Returns as pfs_fit_shared (PFS_EINVAL also for a prior not finite or with sd or
 * sigma not positive). */
int pfs_fit_shared_job(const struct pfs_gpu *g_shared, double mem_w, double cap_fill,
                       const struct pfs_alpha_prior *prior, const struct pfs_job_curve *jc,
                       double min_cap_w, struct pfs_fit *out, struct pfs_diag *diag);

/* Fitted models saved and read back (models/fitfile.c; pfisim fit --save, pfisim model --fit):
 * per job its GPU profile's name and voltage shape and its job parameters. */
struct pfs_fitted_job {
    char job_id[64];
    char gpu[32];
    int n_gpus;
    char unit[32];
    struct pfs_dvfs_job job;  /* the fitted job parameters */
    double v_min, f_knee_mhz; /* the voltage shape it was fitted with */
    double rmse_throughput;   /* of T/T0 over the caps it was fitted on */
};

struct pfs_fitset {
    char source[256];     /* the curves it was fitted to */
    double holdout_below; /* fitted on caps >= this fraction of the default limit (0: all) */
    size_t n_jobs;
    struct pfs_fitted_job *jobs;
};

/* Writes the set as libconfig with 17 significant digits (read back bit for bit). Returns 0
 * or PFS_EIO. */
int pfs_fitset_write(const struct pfs_fitset *fs, FILE *fp, struct pfs_diag *diag);

/* Reads a fit file, every setting checked (file:line: fit.path: message). Returns 0, PFS_EIO,
 * PFS_EINVAL, PFS_ENOMEM. */
int pfs_fitset_load(const char *path, struct pfs_fitset **out, struct pfs_diag *diag);

/* The job called job_id, or NULL. */
const struct pfs_fitted_job *pfs_fitset_find(const struct pfs_fitset *fs, const char *job_id);

void pfs_fitset_free(struct pfs_fitset *fs);

/* ---------------------------------------------------------------------------------------
 * Importers of real power-cap data (traces/import.c): each appends to a curve set.
 */

struct pfs_importer_ops {
    const char *name;    /* as typed: perseus, zeus, emerald */
    const char *summary; /* one line */
    /* Reads path into cs with GPU profile name gpu. Returns 0, PFS_EIO, PFS_EINVAL. */
    int (*read)(const char *path, const char *gpu, struct pfs_curveset *cs, struct pfs_diag *diag);
    /* Optional: the GPU profile the file name implies, or NULL. */
    const char *(*gpu_from_path)(const char *path);
};

/* NULL-terminated registry of importers. */
extern const struct pfs_importer_ops *const pfs_importers[];

/* Returns the importer called name, or NULL. */
const struct pfs_importer_ops *pfs_importer_find(const char *name);

/* imp's read of path as measured on GPU profile gpu, refused (PFS_EINVAL, naming the file)
 * where the file's own name says another GPU (Zeus's summary_power_a40.csv given as
 * h100-sxm was labelled so without a word). Returns as imp->read. */
int pfs_import_read(const struct pfs_importer_ops *imp, const char *path, const char *gpu,
                    struct pfs_curveset *cs, struct pfs_diag *diag);

/* ---------------------------------------------------------------------------------------
 * Corpus jobs (traces/jobs.c): jobs.csv of docs/formats.md, one row per job: identity,
 * configuration, the telemetry a DCGM exporter gives at the job's uncapped operating point,
 * and the true PFI at 10-50% cuts (labels, for training and evaluation only).
 */

struct pfs_corpus_job {
    char job_id[32];
    char gpu[32];     /* profile name */
    char split[16];   /* train, validation, transfer (or "" for an imported job) */
    char twin_id[32]; /* for a transfer job: the H200 job with the same configuration */
    int n_gpus;
    char family[8];         /* dense, moe */
    char phase[16];         /* pretrain, finetune, lora */
    double params_b;        /* total parameters, billions */
    double active_params_b; /* parameters active per token, billions (= params_b if dense) */
    int seq_len, micro_batch, tp, pp, dp, ep;
    /* telemetry at the uncapped operating point (default limit); NAN when unknown */
    double power_w;         /* mean draw per GPU, W */
    double power_frac;      /* power_w / the GPU's default limit */
    double sm_clock_mhz;    /* mean SM clock, MHz */
    double sm_active;       /* DCGM SM active, 0..1 */
    double tensor_active;   /* DCGM tensor pipe active, 0..1 */
    double dram_active;     /* DCGM DRAM active, 0..1 */
    double nvlink_gbps;     /* NVLink tx + rx per GPU, GB/s */
    double net_gbps;        /* network (InfiniBand/RoCE) per GPU, Gb/s */
    double tokens_per_s;    /* uncapped throughput of the whole job, tokens/s */
    double pfi[PFS_N_CUTS]; /* labels: true PFI at pfs_cut(k); NAN when unknown */
};

struct pfs_jobset {
    char path[256];
    size_t n_jobs;
    struct pfs_corpus_job *jobs;
    struct pfs__strindex *index; /* private: jobs by id, when read from a file (NULL: search) */
};

/* Reads a jobs CSV strictly (telemetry and label fields may be empty: NAN). Returns 0,
 * PFS_EIO, PFS_EINVAL (file:line:column, field), PFS_ENOMEM. */
int pfs_jobset_read(const char *path, struct pfs_jobset **out, struct pfs_diag *diag);

/* Writes the set as a jobs CSV (NAN as an empty field). Returns 0 or PFS_EIO. */
int pfs_jobset_write(const struct pfs_jobset *js, FILE *fp, struct pfs_diag *diag);

const struct pfs_corpus_job *pfs_jobset_find(const struct pfs_jobset *js, const char *job_id);

void pfs_jobset_free(struct pfs_jobset *js);

/* ---------------------------------------------------------------------------------------
 * The synthetic H100/H200 corpus (traces/synth.c, docs/corpus.md). SYNTHETIC: generated from
 * the DVFS model with documented rules; it stands in for measurements nobody has published.
 */

#define PFS_SYNTH_VERSION "1"

/* The generator's uncertain inputs (docs/corpus.md, "The corpus's own uncertainty"): what
 * the source study says only in words (dense and MoE, pre-training and fine-tuning, up to 32
 * GPUs) and the spread of curve shapes the real curves allow. pfs_synth_defaults sets the
 * shipped corpus's values; pfs_synth_draw one draw of their ranges. */
enum {
    PFS_MIX_P_MOE,      /* share of MoE configurations (0.30) */
    PFS_MIX_P_PRETRAIN, /* share of pre-training; fine-tuning and LoRA share the rest 6:5 */
    PFS_MIX_SIZE_TILT,  /* job sizes: each doubling beyond the fewest GPUs weighted e^(t k) */
    PFS_MIX_P_WIDE,     /* P(TP 4 over 2 for 10-30B models; PP 4 over 2), 0.5 */
    PFS_MIX_Z_BASE,     /* intensity logit of a reference job (2.2, calibrated) */
    PFS_MIX_Z_SD,       /* sd of its per-configuration variation (0.40) */
    PFS_MIX_N
};

/* Mix parameter i: its name (as in --csv and the docs), default, and the range draws span;
 * NULL past the last. */
const char *pfs_synth_mix_param(size_t i, double *def, double *lo, double *hi);

struct pfs_synth_options {
    unsigned long seed;
    size_t n_train;      /* H200 jobs in split train (131 in the source study) */
    size_t n_validation; /* further H200 jobs, split validation (24) */
    size_t n_transfer;   /* H100 twins of H200 configurations, split transfer (34) */
    double unseen_scale; /* multiplies the variation telemetry cannot see (1; 0 removes it,
                          * keeping its mean): for measuring the predictor's ceiling */
    /* Multiplies every error of the telemetry columns (1, the shipped corpus; 0 reads the
     * counters exactly): the per-reading sensor noise and the window's phase error below.
     * The curves and labels do not depend on it. */
    double telemetry_noise;
    /* The averaging window of one telemetry reading, s: 0 (the shipped corpus) a whole run's
     * mean; 1 an nvidia-smi reading, 30 a dcgm-exporter interval: a window of a few steps
     * catches their communication phases unevenly (docs/corpus.md). */
    double telemetry_window_s;
    double mix[PFS_MIX_N];   /* the uncertain inputs (pfs_synth_mix_param) */
    size_t draw, n_draws;    /* this corpus is draw `draw` of n_draws (n_draws 0: not drawn) */
    unsigned long draw_seed; /* and their seed */
    /* NULL: the H200 corpus and its H100 twins. Else the same configurations (train and
     * validation, the same draws) measured on this GPU alone, no twins: a corpus on a GPU
     * the data has never seen (Blackwell: EXTRAPOLATED as its profile is, docs/corpus.md). */
    const struct pfs_gpu *gpu;
};

/* Reads a source written "synth:GPU[:SEED]" (SEED a non-negative integer, 7 when left out):
 * GPU's name into gpu (size bytes with its NUL) and the seed into *seed. False when src is
 * not of that form or the name does not fit. */
bool pfs_synth_spec(const char *src, char *gpu, size_t size, unsigned long *seed);

/* The source study's sizes: 131 / 24 / 34. */
void pfs_synth_defaults(struct pfs_synth_options *o, unsigned long seed);

/* Sets o's mix to draw d of n of the ranges: a centred Latin hypercube (each parameter's
 * range in n equal strata, each stratum used by exactly one draw, the pairing a seeded
 * shuffle per parameter), reproducible from seed. Returns 0 or PFS_EINVAL (d >= n). */
int pfs_synth_draw(struct pfs_synth_options *o, size_t n, size_t d, unsigned long seed,
                   struct pfs_diag *diag);

/* The options that differ from the shipped corpus's, as synth's flags (" --telemetry-noise
 * 2 --draw 3/20 --draw-seed 1"), into buf; "" for the defaults. */
void pfs_synth_flags(const struct pfs_synth_options *o, char *buf, size_t size);

/* Generates the corpus: jobs (with telemetry and true PFI) and their measured curves (caps
 * 200-700 W in 50 W steps, about 1% noise, non-decreasing). The same options give the same
 * corpus bit for bit. Returns 0, PFS_EINVAL (impossible sizes), PFS_ENOMEM. */
int pfs_synth(const struct pfs_synth_options *o, struct pfs_jobset **jobs,
              struct pfs_curveset **curves, struct pfs_diag *diag);

/* Writes DIR/curves.csv, DIR/jobs.csv and DIR/README.md (what it is, the seed, the
 * generator version, the word synthetic, and its calibration summary). All three are
 * written to temporary names first and renamed only when all succeeded. DIR is created if
 * missing. Returns 0 or PFS_EIO. */
int pfs_corpus_write(const char *dir, const struct pfs_synth_options *o,
                     const struct pfs_jobset *jobs, const struct pfs_curveset *curves,
                     struct pfs_diag *diag);

/* ---------------------------------------------------------------------------------------
 * Telemetry importers (traces/telemetry.c): an operator's own job, from nvidia-smi or
 * dcgmi dmon logs, summarised into the telemetry columns of jobs.csv (steady-state means;
 * the rule that drops idle and warm-up samples is in docs/formats.md).
 */

struct pfs_telemetry_ops {
    const char *name;    /* as typed: nvidia-smi, dcgm */
    const char *summary; /* one line */
    /* Reads the log at path of a job on GPUs of profile g into out (job_id and gpu are the
     * caller's; n_gpus and the telemetry fields it can see are set, the rest NAN or 0).
     * Returns 0, PFS_EIO, PFS_EINVAL (file:line:column and field). */
    int (*read)(const char *path, const struct pfs_gpu *g, struct pfs_corpus_job *out,
                struct pfs_diag *diag);
};

/* NULL-terminated registry, and lookup by name (NULL if none). */
extern const struct pfs_telemetry_ops *const pfs_telemetry_importers[];
const struct pfs_telemetry_ops *pfs_telemetry_find(const char *name);

/* ---------------------------------------------------------------------------------------
 * Job arrival traces and workloads (traces/trace.c, traces/workload.c, docs/workload.md).
 */

/* One job of a real cluster trace. */
struct pfs_trace_job {
    double submit_s;   /* seconds, on the trace's own clock */
    double duration_s; /* run time, s */
    int n_gpus;
};

struct pfs_trace {
    char source[64]; /* kalos, itp:clusterNN, helios, philly */
    char path[256];  /* the file read, under the data directory */
    size_t n_jobs;   /* GPU jobs only, sorted by submit time */
    struct pfs_trace_job *jobs;
};

/* Reads the real trace named source from the data directory (pfs_data_dir()). CPU-only
 * jobs are dropped; failed and killed jobs are kept (they held GPUs too). Returns 0,
 * PFS_ENOTFOUND (unknown source; the message lists them), PFS_EIO, PFS_EINVAL. */
int pfs_trace_read(const char *source, struct pfs_trace **out, struct pfs_diag *diag);
void pfs_trace_free(struct pfs_trace *t);

/* A stochastic arrival model fitted to a trace: a gamma renewal process for arrivals (rate
 * and burstiness), a categorical distribution of GPU counts (powers of two), and duration
 * quantiles per size class. Shipped fitted in configs/arrivals/, source cited. */
#define PFS_ARRIVAL_MAX_BUCKETS 16
#define PFS_ARRIVAL_N_QUANTILES 21 /* 0, 5, ..., 100% */

struct pfs_arrival_model {
    char source[64];
    char cite[256];
    size_t n_jobs;    /* jobs it was fitted to */
    double span_days; /* the trace's span */
    double interarrival_mean_s;
    double interarrival_cv; /* coefficient of variation: 1 Poisson, > 1 bursty */
    size_t n_buckets;
    int bucket_gpus[PFS_ARRIVAL_MAX_BUCKETS]; /* GPU counts rounded up to powers of two */
    double bucket_p[PFS_ARRIVAL_MAX_BUCKETS];
    int small_max_gpus;                          /* size classes: <= this, and above */
    double dur_small_q[PFS_ARRIVAL_N_QUANTILES]; /* duration quantiles, s */
    double dur_large_q[PFS_ARRIVAL_N_QUANTILES];
};

/* Fits the model to a trace. Returns 0 or PFS_EINVAL (fewer than 10 jobs). */
int pfs_arrival_fit(const struct pfs_trace *t, struct pfs_arrival_model *m, struct pfs_diag *diag);

/* Writes the model as a libconfig file (configs/arrivals/). Returns 0 or PFS_EIO. */
int pfs_arrival_write(const struct pfs_arrival_model *m, FILE *fp, struct pfs_diag *diag);

/* The shipped model fitted to source (embedded from configs/arrivals/). Returns 0,
 * PFS_ENOTFOUND, PFS_EINVAL. */
int pfs_arrival_find(const char *source, struct pfs_arrival_model *m, struct pfs_diag *diag);

/* Flex tiers (DESIGN.md section 5): firm, or Flex 1/2/3 tolerating 10/25/50% throughput
 * loss averaged over the job. */

#define PFS_MAX_POOLS 8 /* GPU pools of a facility (struct pfs_pool) */

struct pfs_workload_options {
    const char *arrivals; /* kalos, itp:clusterNN, helios, philly, poisson:RATE_PER_HOUR,
                           * fitted:SOURCE */
    int facility_gpus;    /* the facility's GPUs: no job may ask for more */
    double days;          /* length of the window */
    double start_day;     /* a real trace's window starts this many days after its first
                           * submission (default 0) */
    unsigned long seed;
    double slack_lo, slack_hi;    /* deadline = submit + U(slack_lo, slack_hi) * duration */
    double tier_mix[PFS_N_TIERS]; /* shares of firm, flex1, flex2, flex3 (sum 1) */
    bool rescale;                 /* scale GPU counts down to fit the facility instead of failing */
    double load;        /* fitted sources: scale the arrival rate so that the offered GPU time is
                         * this share of the facility's (0: the trace's own rate) */
    int gpu_scale;      /* every arriving job asks for this many times its GPUs (default 1): a
                         * trace from a small cluster scaled up to a large facility; with load
                         * set, the rate falls by the same factor */
    size_t n_gpu_types; /* the GPUs the facility has (0: h200-sxm alone) */
    char gpu_types[PFS_MAX_POOLS][32]; /* jobs run curves measured on one of these */
};

void pfs_workload_defaults(struct pfs_workload_options *o);

/* A job of a workload. Its strings (1-31 bytes each; pool may be "") point into the
 * workload's own storage when pfisim made or read it: a year on 100,000 GPUs is 20 M jobs,
 * and three 32-byte arrays a job were 2 GB of the run's memory. */
struct pfs_workload_job {
    const char *job_id;
    const char *curve_id; /* the corpus job whose curve it runs */
    const char *pool;     /* the facility pool it must run on, "" for the scheduler's choice */
    double submit_s;      /* s from the window's start */
    double tokens;        /* tokens to train: duration x uncapped tokens/s at n_gpus */
    double deadline_s;    /* same clock as submit_s */
    double duration_s;    /* uncapped run time (not written; tokens and the curve imply it) */
    int n_gpus;           /* GPUs it runs on (the curve's job scaled out when different) */
    int tier;             /* enum pfs_tier */
};

/* The longest id a workload's job, curve or pool may have, bytes. */
#define PFS_WORKLOAD_ID_MAX 31

struct pfs_workload {
    size_t n_jobs;
    struct pfs_workload_job *jobs;
    void *text; /* the storage of its jobs' strings (pfs_workload_free frees it); NULL when
                 * the caller built the workload with strings of its own */
};

/* Generates a workload: arrivals, sizes and durations from the source, each job mapped to a
 * corpus job measured on one of the facility's GPU types (o->gpu_types) of the same GPU count, or
 * the largest smaller one scaled out (docs/workload.md). Returns 0; PFS_ENOTFOUND (unknown source),
 * PFS_EINVAL (a job larger than the facility without rescale, no corpus job of the facility's GPUs,
 * bad options), PFS_EIO. */
int pfs_workload_generate(const struct pfs_workload_options *o, const struct pfs_jobset *corpus,
                          struct pfs_workload **out, struct pfs_diag *diag);

/* Reads a workload CSV strictly (duration_s is left 0: the simulator derives it from the
 * tokens and the curve; an optional column pool names the pool a job must run on). Returns 0,
 * PFS_EIO, PFS_EINVAL (file:line:column), PFS_ENOMEM. */
int pfs_workload_read(const char *path, struct pfs_workload **out, struct pfs_diag *diag);

/* Writes job_id,submit_s,curve_id,n_gpus,tokens,deadline_s,tier (and pool when a job names
 * one). Returns 0 or PFS_EIO. */
int pfs_workload_write(const struct pfs_workload *w, FILE *fp, struct pfs_diag *diag);

void pfs_workload_free(struct pfs_workload *w);

/* The observable part of a corpus job (pfi_given stays NAN: labels are not observations). */
void pfs_telemetry_of(const struct pfs_corpus_job *j, struct pfs_telemetry *t);
/* ---------------------------------------------------------------------------------------
 * The telemetry-to-PFI predictor (models/predict.c, docs/predictor.md). It sees only the
 * telemetry columns of jobs.csv and the job's GPU count, family and phase: never a label,
 * never a hidden parameter.
 */

struct pfs_predictor;

/* The features, by name, and the jobs.csv columns each is computed from. */
struct pfs_feature_info {
    const char *name;
    const char *columns; /* comma-separated jobs.csv columns it reads */
};
const struct pfs_feature_info *pfs_predict_features(size_t *n);

enum pfs_predict_method {
    PFS_PREDICT_RIDGE,   /* telemetry -> PFI at each cut, ridge regression */
    PFS_PREDICT_PHYSICS, /* telemetry -> the DVFS job parameters (fitted to the training
                          * jobs' curves), then PFI through the model */
};

struct pfs_predict_options {
    enum pfs_predict_method method;
    unsigned long seed; /* of the cross-validation folds */
    int folds;          /* k of k-fold cross-validation (default 5) */
    const char *drop;   /* a feature to leave out (ablation), or NULL */
};

void pfs_predict_defaults(struct pfs_predict_options *o);

/* Trains on the jobs of split "train" (curves are needed by the physics method, may be NULL
 * for ridge). Returns 0; PFS_EINVAL (no training jobs, a job lacking a feature or a label);
 * PFS_ENUMERIC. */
int pfs_predictor_train(const struct pfs_jobset *js, const struct pfs_curveset *cs,
                        const struct pfs_predict_options *o, struct pfs_predictor **out,
                        struct pfs_diag *diag);

/* Predicted PFI at the cuts pfs_cut(0..PFS_N_CUTS-1) for job j. Returns 0, or PFS_EINVAL
 * when j lacks a feature the model uses (diag names the job and the feature). */
int pfs_predictor_pfi(const struct pfs_predictor *p, const struct pfs_telemetry *j,
                      double pfi[PFS_N_CUTS], struct pfs_diag *diag);

/* Out-of-fold predictions: the jobs of split "train" dealt into `folds` folds (a seeded
 * shuffle, o->seed), each predicted by a model trained as pfs_predictor_train does on the
 * other folds' jobs, so that every prediction is of a job its model never saw. pred[i] for
 * job i of js (NAN for the jobs of other splits). Returns 0 or what training returned. */
int pfs_predictor_crossfit(const struct pfs_jobset *js, const struct pfs_curveset *cs,
                           const struct pfs_predict_options *o, int folds,
                           double (*pred)[PFS_N_CUTS], struct pfs_diag *diag);

/* Saves as libconfig (features, scaling, coefficients, regularisation, training metrics);
 * loads one back, checking it whole. Return 0, PFS_EIO, PFS_EINVAL. */
int pfs_predictor_save(const struct pfs_predictor *p, FILE *fp, struct pfs_diag *diag);
int pfs_predictor_load(const char *path, struct pfs_predictor **out, struct pfs_diag *diag);

/* The model's method, its features in use (names) and, for target k (a PFI cut, or a job
 * parameter for the physics method), its standardised coefficients and lambda. */
enum pfs_predict_method pfs_predictor_method(const struct pfs_predictor *p);
size_t pfs_predictor_n_features(const struct pfs_predictor *p);
const char *pfs_predictor_feature(const struct pfs_predictor *p, size_t i);
size_t pfs_predictor_n_targets(const struct pfs_predictor *p);
const char *pfs_predictor_target(const struct pfs_predictor *p, size_t k);
double pfs_predictor_coef(const struct pfs_predictor *p, size_t k, size_t i);
double pfs_predictor_lambda(const struct pfs_predictor *p, size_t k);
double pfs_predictor_cv_rmse(const struct pfs_predictor *p, size_t k);

void pfs_predictor_free(struct pfs_predictor *p);

/* Regression helpers, public so that tests can check them against closed forms. */

/* Ridge regression of y on standardised X (n x p, row-major, columns already centred and
 * scaled), minimising |y - my - X b|^2 + lambda^2 |b|^2 (GSL's Tikhonov standard form; the
 * intercept my = mean(y) is not penalised). Writes b[p] and *intercept. Returns 0,
 * PFS_EINVAL (n < 2), PFS_ENUMERIC, PFS_ENOMEM. */
int pfs_ridge(const double *X, const double *y, size_t n, size_t p, double lambda, double *b,
              double *intercept);

/* Statistics of predictions against truth over n values. */
double pfs_stat_r2(const double *truth, const double *pred, size_t n);
double pfs_stat_mae(const double *truth, const double *pred, size_t n);
double pfs_stat_spearman(const double *a, const double *b, size_t n);

/* ---------------------------------------------------------------------------------------
 * Allocation (policies/, sim/alloc.c, docs/policies.md): dividing a GPU power budget among
 * running jobs. A policy sees a struct pfs_alloc_view and returns a cap per GPU of each job
 * and, where it may, the fraction of time the job is paused.
 */

/* The registry: the i-th policy, or NULL past the end; lookup by name. */
const struct pfs_policy_ops *pfs_policy_at(size_t i);
const struct pfs_policy_ops *pfs_policy_find(const char *name);
const char *pfs_policy_name(const struct pfs_policy_ops *ops);
const char *pfs_policy_summary(const struct pfs_policy_ops *ops);
bool pfs_policy_may_pause(const struct pfs_policy_ops *ops);
/* Whether its decision depends only on the budget and the jobs' fields other than the
 * time-varying ones (policies/policy.h), so that an unchanged view may reuse it. */
bool pfs_policy_memoryless(const struct pfs_policy_ops *ops);
/* Whether ops is one of pfisim's own policies (not added from a library or a program). */
bool pfs_policy_builtin(const struct pfs_policy_ops *ops);

/* Loads the policies of the shared library at path (docs/policies.md, "Your own policy"):
 * dlopen, its PFS_POLICY_ENTRY, its ABI against PFS_POLICY_ABI, and every descriptor (a
 * valid, new name; an allocate function), all added to the registry or none. Loading the
 * same file again adds nothing. The library stays loaded for the life of the process.
 * Returns 0 (*n_added: how many policies it added, may be NULL) or PFS_EINVAL with diag
 * naming the file: it cannot be loaded, it is not a policy library, it was built for another
 * ABI (both versions named), or a descriptor is wrong. */
int pfs_policy_load(const char *path, size_t *n_added, struct pfs_diag *diag);

/* Whether reading a scenario file may load the libraries its policy_libs names (and so run
 * their code: a constructor runs as the library is opened). Off by default: the scenario
 * reader then refuses a scenario that names one, saying how to allow it (pfisim's
 * --allow-plugins). A scenario's text read back from a results database never loads one,
 * whatever this says (docs/reliability.md, "What pfisim trusts"). pfs_policy_load itself is
 * the caller's own request and is not affected. Set it before any thread reads a scenario. */
void pfs_policy_allow_scenario_libs(bool allow);
bool pfs_policy_scenario_libs_allowed(void);

/* The rules every policy keeps (sim/conformance.c, pfisim policy-check), each checked on
 * seeded random instances: its name, what it asks, how many answers it was tried on, how many
 * broke it, and the first that did. */
struct pfs_conformance_check {
    const char *name, *what;
    size_t tried, failed;
    char first[400];
};
struct pfs_conformance {
    size_t n, n_failed; /* checks, and how many of them failed */
    size_t instances;   /* instances asked */
    size_t refused;     /* feasible budgets the policy refused (allowed: floors, deadlines) */
    struct pfs_conformance_check checks[8];
};
/* Checks ops on n_instances seeded instances (a fifth of them with a budget below the
 * minimum caps): limits, pausing only if declared, the budget, infeasible budgets refused or
 * paused for, determinism, the memoryless claim, failures. Returns 0 (the report in *c,
 * whether or not anything failed), PFS_ENOMEM, or what building an instance returned. */
int pfs_policy_conformance(const struct pfs_policy_ops *ops, unsigned long seed, size_t n_instances,
                           struct pfs_conformance *c, struct pfs_diag *diag);

/* An external program as a policy (policies/exec.c, docs/policies.md): cmd is run by
 * /bin/sh with a socket as its standard input and output, and speaks the JSON-lines
 * protocol: the handshake names its policy, then one view per decision and one answer.
 * timeout_s bounds every exchange. Returns 0 with *out the policy, registered under the name
 * the program gave (it runs until pfs_policy_exec_close_all); PFS_EINVAL (the program did not
 * start, died, was silent past the timeout, or answered the handshake wrongly; diag quotes
 * what it said) or PFS_ENOMEM. */
int pfs_policy_exec_start(const char *cmd, double timeout_s, const struct pfs_policy_ops **out,
                          struct pfs_diag *diag);
/* Ends every external program: its input closed, then killed if it has not exited within a
 * second. Safe to call more than once. */
void pfs_policy_exec_close_all(void);
/* Kills every policy program's process group at once, without waiting: for a signal
 * handler (async-signal-safe), before the process ends. */
void pfs_policy_exec_kill_all(void);

/* Runs policy ops on view, writing view->n_jobs decisions. Returns 0; PFS_EINVAL when the
 * budget cannot be met (below the sum of minimum caps and the policy may not pause, or not
 * even pausing every pausable job fits) or the view lacks what the policy needs; diag says
 * which. The decisions are checked against the limits and the budget before returning. */
int pfs_policy_allocate(const struct pfs_policy_ops *ops, const struct pfs_alloc_view *view,
                        struct pfs_alloc_decision *out, struct pfs_diag *diag);

/* Builds the truth from true curves (n_jobs, in the order of the view's jobs): each curve
 * tabulated (measured points, or a 10 W grid for a model) between the job's limits. Returns
 * 0, PFS_EINVAL, PFS_ENOMEM. */
int pfs_truth_new(const struct pfs_curve *const *curves, const struct pfs_alloc_job *jobs,
                  size_t n_jobs, struct pfs_truth **out, struct pfs_diag *diag);
void pfs_truth_free(struct pfs_truth *t);

/* The true throughput of job i under decision d: (1 - pause) x its true curve's concave
 * envelope at the cap (the same yardstick for every policy). */
double pfs_truth_throughput(const struct pfs_truth *t, size_t i,
                            const struct pfs_alloc_decision *d);
/* The envelope itself: job i's best throughput at an average per-GPU power avg_w, pausing
 * part of the time where that is better (for brute-force checks of the oracle). */
double pfs_truth_envelope(const struct pfs_truth *t, size_t i, double avg_w);

/* The true per-GPU draw of job i at cap_w (its measured draw, interpolated). */
double pfs_truth_power_w(const struct pfs_truth *t, size_t i, double cap_w);

/* ---------------------------------------------------------------------------------------
 * The simulator (sim/sim.c, sim/scenario.c, DESIGN.md section 5, docs/simulator.md).
 */

/* A demand-response event as a programme announces it (docs/scenarios.md): the facility's
 * power target ramps down over ramp_s from start_s to its first level, holds it (or steps
 * through levels), and from end_s ramps back up to the baseline over the ramp up. A level is
 * absolute (target_w > 0, facility watts) or a cut from the event's baseline (cut_frac). */
enum pfs_dr_baseline {
    PFS_BASELINE_INSTANT = 0, /* the facility's power when the controller first plans for it */
    PFS_BASELINE_AVERAGE,     /* its mean power over baseline_window_s before start_s */
    PFS_BASELINE_GIVEN,       /* baseline_w, as announced */
};

#define PFS_MAX_DR_STEPS 4 /* levels of one event */

struct pfs_dr_step {
    double at_s;     /* from the event's start, s; the first is 0 */
    double target_w; /* facility W, or 0 */
    double cut_frac; /* 0..1, used when target_w is 0 */
};

struct pfs_dr_event {
    double start_s, end_s, ramp_s; /* ramp_s: the ramp down */
    double target_w;               /* facility W, or 0 (the first level when n_steps > 0) */
    double cut_frac;               /* 0..1, used when target_w is 0 */
    double notice_s;               /* the facility learns of the event this long before its start
                                    * (INFINITY: known from the beginning, the default) */
    bool ramp_up_given;            /* false: the ramp up lasts ramp_s too */
    double ramp_up_s;              /* the ramp back up, s (with ramp_up_given) */
    int baseline;                  /* enum pfs_dr_baseline */
    double baseline_window_s;      /* PFS_BASELINE_AVERAGE's window, s */
    double baseline_w;             /* PFS_BASELINE_GIVEN's value, facility W */
    size_t n_steps;                /* 0: one level (target_w or cut_frac); else these */
    struct pfs_dr_step steps[PFS_MAX_DR_STEPS];
};

/* The event's ramp up, s, and the end of it (when the event is over). */
static inline double
pfs_dr_ramp_up_s(const struct pfs_dr_event *e)
{
    return e->ramp_up_given ? e->ramp_up_s : e->ramp_s;
}

static inline double
pfs_dr_over_s(const struct pfs_dr_event *e)
{
    return e->end_s + pfs_dr_ramp_up_s(e);
}

/* Draws DR events (scenario.dr_generator, docs/scenarios.md). */
struct pfs_dr_generator {
    double per_year;      /* events per 365 days (exactly round(per_year x days / 365)) */
    double duration_h[2]; /* uniform in [low, high] hours */
    double notice_h[2];   /* uniform in [low, high] hours */
    double ramp_s, cut;
    double hour_w[24];  /* weights of the start hour (local time) */
    double month_w[12]; /* weights of the month (t = 0 is 1 January 00:00) */
    unsigned long seed;
    double warmup_h; /* no event starts before this (the facility fills up first), h */
};

#define PFS_DR_WARMUP_H 72.0 /* the generator's default warm-up, h (docs/scenarios.md) */

/* What the operator charges and is paid (scenario.pricing, docs/pricing.md). */
struct pfs_pricing {
    double gpu_hour_usd;         /* the firm tier's price of a GPU-hour */
    double capacity_usd_kw_year; /* DR capacity payment per kW committed, per year */
    double energy_usd_mwh;       /* DR energy payment per MWh shed during events */
};

#define PFS_MAX_DR          4096
#define PFS_MAX_POLICIES    16
#define PFS_MAX_POLICY_LIBS 4
#define PFS_MAX_SEEDS       256

/* A pool of identical GPUs in the facility (docs/scenarios.md). A job runs on one pool, on
 * curves measured on that pool's GPU. */
struct pfs_pool {
    char name[32];       /* unique within the facility, as in results */
    char gpu[32];        /* GPU profile */
    int gpus;            /* GPUs in the pool */
    int gpus_per_node;   /* nodes = gpus / this, rounded up */
    double node_other_w; /* non-GPU power per node, W */
};

/* facility.tree (issue 58, docs/scenarios.md "The power tree"): the limits power meets on
 * its way to the GPUs, as written: each node once, with the copies it stands for. Node 0 is
 * the root (the feed); a node's parent comes before it. A leaf (a rack) holds `nodes` nodes
 * of pool `pool`. Limits are on IT power (the GPUs and each node's other draw). */
#define PFS_MAX_TREE_SPEC 32
struct pfs_tree_spec_node {
    char name[32];
    double limit_w; /* 0: none (a node that only groups) */
    int count;      /* copies of it under each copy of its parent (names -1 .. -count) */
    int nodes;      /* a rack: the nodes it holds; 0 for a node with children */
    int pool;       /* the pool of its nodes (index into the facility's pools) */
    int parent;     /* -1 for the root */
};
struct pfs_tree_spec {
    size_t n;    /* 0: no tree (the facility's cap alone) */
    bool spread; /* facility.placement = "spread": a job into the rack with the most room */
    struct pfs_tree_spec_node node[PFS_MAX_TREE_SPEC];
};

struct pfs_scenario {
    char name[64];
    /* facility */
    int gpus; /* GPUs in the facility */
    int gpus_per_node;
    char gpu[32];        /* GPU profile */
    double node_other_w; /* non-GPU power per node (CPUs, memory, NICs, fans), W */
    double pue;          /* facility power = IT power x pue */
    double base_cap_w;   /* facility power cap outside events, W (0: none) */
    size_t n_pools;      /* 0: one pool of gpus x gpu (the fields above); else these pools,
                          * with gpus their total and gpu the first one's */
    struct pfs_pool pools[PFS_MAX_POOLS];
    struct pfs_tree_spec tree; /* facility.tree */
    /* facility.variability (issue 19, docs/model.md section 6): every GPU's efficiency drawn
     * (eta_sd 0 and no outliers: identical GPUs, today's results); a job waits at every step
     * for its slowest GPU */
    struct pfs_variability var;
    unsigned long var_seed; /* the GPUs' draw (the facility's chips, not the workload's) */
    /* workload */
    char corpus[256];                     /* corpus directory (curves.csv, jobs.csv) */
    char workload[256];                   /* a workload CSV, or "" to build one from arrivals */
    struct pfs_workload_options arrivals; /* when building: source, days, seed, tiers */
    char arrivals_source[64];
    double days; /* simulated time, days */
    unsigned long seed;
    size_t n_seeds; /* `seeds`: pfisim run runs every policy under each (0: seed alone) */
    unsigned long seeds[PFS_MAX_SEEDS];
    /* events and control */
    size_t n_dr;
    struct pfs_dr_event dr[PFS_MAX_DR];
    size_t n_dr_after; /* events given that start at or after the run's end: dropped
                        * (pfs_scenario_set_days), not part of the run or its key; pfisim
                        * run and check say so where the scenario's own duration left them */
    /* workload settings the file gives that its source of jobs does not read (load with
     * arrivals not fitted; arrivals, load, tiers, slack, gpu_scale beside a workload file),
     * as a sentence for pfisim run and check to warn with ("" for none) */
    char workload_unread[200];
    double cadence_s;       /* control period outside events, s */
    double event_cadence_s; /* control period during events, s */
    double actuation_s;     /* delay before new caps take effect, s */
    double resume_s;        /* a paused job's resume overhead, s */
    double checkpoint_s;    /* a job being paused writes its state first: no progress, its
                             * draw before the pause, for this long (s, default 0) */
    bool track_power;       /* scale the caps' budget so that metered power meets the limit
                             * (an integral controller, docs/simulator.md); else budget caps */
    double margin;          /* control.margin: aim this fraction below a DR event's target
                             * (0..0.5, default 0: an operator's written rule, never fitted
                             * to a measured response, docs/validation.md) */
    bool discrete_pauses;   /* control.pausing = "discrete": fractional pauses become whole
                             * jobs stopped in turns, compliance first, each within its tier's
                             * allowance (docs/simulator.md); else a fluid duty cycle */
    bool edf;               /* control.queue = "deadline": the queue in deadline order (EASY
                             * backfill as before); "fifo" (default): arrival order */
    bool over_limit_report; /* control.over_limit = "report": a limit capping cannot hold is
                             * exceeded and every excess counted (a soft cap); "hold"
                             * (default): the engine holds it by admission by power and by
                             * pausing running jobs (docs/scenarios.md, "Limits that hold") */
    bool scan_backfill;     /* not a setting (no part of the scenario's text or hash): run EASY
                             * backfill by scanning the whole queue, the straightforward
                             * scheduler the indexed one must match (tests, and the
                             * environment variable PFISIM_SCAN_BACKFILL=1; docs/simulator.md) */
    bool admit_deadlines;   /* control.admission = "deadline": a job about to start whose
                             * deadline even full power from now cannot make is refused, not
                             * run (and counted as refused, not as a miss) */
    char predictor[256];    /* the pfi policy's model file ("" : the corpus's predictor.cfg) */
    size_t n_policies;
    char policies[PFS_MAX_POLICIES][32];
    struct pfs_pricing price;
    /* policy_libs: shared libraries of policies, loaded as the scenario is read (before its
     * policies are looked up; pfs_policy_load), paths as found */
    size_t n_policy_libs;
    char policy_libs[PFS_MAX_POLICY_LIBS][256];
    /* uncertainty = { draws; draw; seed; }: run draw `draw` (from 0) of `draws` of the
     * facility's uncertain GPU profiles (pfs_gpu_draw, docs/model.md); draws 0: the point
     * profiles. pfisim run --uncertainty sets it per draw; a sweep may have it as an axis. */
    size_t unc_draws, unc_draw;
    unsigned long unc_seed;
    /* What the draw made (pfs_scenario_apply_draw): profiles that stand in for the named ones
     * in this run, for the pools' GPUs and a synth: corpus. */
    size_t n_gpu_drawn;
    struct pfs_gpu gpu_drawn[PFS_MAX_POOLS];
};

/* The distinct GPU profiles of sc's pools that have ranges, the catalogue's (not drawn),
 * into out (at most PFS_MAX_POOLS): their count, 0 when none has a range. */
size_t pfs_scenario_uncertain_gpus(const struct pfs_scenario *sc, struct pfs_gpu *out);

/* Fills sc->gpu_drawn from sc->unc_* (none when unc_draws is 0). Returns 0, or PFS_EINVAL:
 * no profile of the facility has a range, or a draw the model cannot use. */
int pfs_scenario_apply_draw(struct pfs_scenario *sc, struct pfs_diag *diag);

/* The profile called name for scenario sc: its drawn one (gpu_drawn) if any, else the
 * embedded one (pfs_gpu_find, whose errors it returns). */
int pfs_scenario_gpu(const struct pfs_scenario *sc, const char *name, struct pfs_gpu *out,
                     struct pfs_diag *diag);

/* A scenario's policy name: a registered policy, or one followed by "+sync-shift" (the same
 * policy across jobs, power shifted within each job: docs/model.md section 6; it changes
 * anything only with facility.variability on). NULL (and *shift false) when neither. */
const struct pfs_policy_ops *pfs_sim_policy_find(const char *name, bool *shift);

/* The embedded default scenario (DESIGN.md section 5 and issue 6): the H200 corpus on a
 * 1,024-GPU facility for 7 days, arrivals from the model fitted to Microsoft ITP cluster 04
 * at 90% offered load, three 3-hour 30% DR events; policies equal, pfi, oracle, sla. Every
 * field is set but the events past its three (dr[3..PFS_MAX_DR), 780 kB that clearing took
 * a page fault each for: 2 ms of every run here): an event is added whole, at dr[n_dr++],
 * and none past n_dr is read. */
void pfs_scenario_default(struct pfs_scenario *sc);

/* The power tree of a scenario, every copy its own node (sim/tree.c). */
struct pfs_power_node {
    char name[96];      /* its path: row-3/rack-7 (the root's own name) */
    double limit_w;     /* HUGE_VAL: none */
    int32_t parent;     /* -1 for the root; before the node */
    int level;          /* 0 for the root */
    int spec;           /* the facility.tree entry it is a copy of */
    int nodes, pool;    /* a rack's nodes and their pool; 0, -1 above the racks */
    int first_node;     /* a rack: its first node's index in its pool (nodes in rack order) */
    double nameplate_w; /* IT power of its nodes with every GPU at its top limit */
    double floor_w;     /* ... with every GPU busy at its lowest limit: what capping can hold */
    double idle_w;      /* ... with every GPU idle */
    long gpus;          /* the GPUs under it */
    double other_w;     /* its nodes' other draw (CPUs, memory, NICs, fans) */
};
struct pfs_power_tree {
    size_t n;
    struct pfs_power_node *node;
};

/* The scenario's tree expanded, copies numbered (NULL in *out when it has none). Returns 0,
 * PFS_EINVAL (more than PFS_MAX_TREE_NODES nodes), PFS_ENOMEM. */
#define PFS_MAX_TREE_NODES 65536
int pfs_power_tree_new(const struct pfs_scenario *sc, struct pfs_power_tree **out,
                       struct pfs_diag *diag);
void pfs_power_tree_free(struct pfs_power_tree *t);

/* The standing cap the facility is held to, W (0: none): its cap_w, or its tree's root
 * limit (IT power) times the PUE where that is lower. A tree of one node is the facility
 * under that cap, nothing more (issue 58). */
double pfs_scenario_cap_w(const struct pfs_scenario *sc);

/* Places n jobs, all running at once, in t's racks (issue 58, docs/policies.md "Under a power
 * tree"): job i's gpus[i] GPUs of pool pool[i], in order. A job that fits a rack goes whole
 * into one: the first in the tree's order with room (packed) or the one with the most room
 * (spread); a job larger than any rack of its pool takes whole free racks, first in order, and
 * holds them alone. node[i] is the rack, or for a job on several the lowest node above them
 * all; max_w[i] the per-GPU cap its racks' own limits allow it (HUGE_VAL: none); fixed_w[v]
 * what does not move under node v (its nodes' other draw, the idle draw of GPUs no job
 * holds): its jobs' GPUs may draw its limit less that. gpus[] and pool[]
 * index pools as the scenario's; idle_w[p] is pool p's GPU idle draw. Returns 0, or PFS_EINVAL
 * naming the job when no rack has room for it. */
int pfs_power_tree_place(const struct pfs_power_tree *t, const struct pfs_pool *pools,
                         const double *idle_w, const int *pool, const int *gpus, size_t n,
                         bool spread, uint32_t *node, double *max_w, double *fixed_w,
                         struct pfs_diag *diag);

/* The facility's pools into out (PFS_MAX_POOLS entries): the scenario's, or the one pool
 * its gpus, gpu, gpus_per_node and node_other_w describe (named after the GPU). Returns
 * their number. */
size_t pfs_scenario_pools(const struct pfs_scenario *sc, struct pfs_pool *out);

/* Reads a scenario file (libconfig), starting from the default for every setting it does
 * not give. Returns 0, PFS_EIO, PFS_EINVAL (file:line: setting.path: message). */
int pfs_scenario_load(const char *path, struct pfs_scenario *sc, struct pfs_diag *diag);

/* The same with the simulated days set to days before the file's settings are read (NAN: as
 * the file has them), so that drawn events fall inside the run; path NULL: the default
 * scenario. Returns as pfs_scenario_load. */
int pfs_scenario_load_days(const char *path, double days, struct pfs_scenario *sc,
                           struct pfs_diag *diag);

/* Sets the simulated days and drops the events that start at or after the run's end (they
 * are not part of the run: not counted, not stored). */
void pfs_scenario_set_days(struct pfs_scenario *sc, double days);

/* The same from text (a scenario's canonical text from the results database); name is what
 * errors call it. The text is data: its policy_libs are kept as paths and never loaded, and
 * its policies are taken by name without the registry (a plugin's are not registered). */
int pfs_scenario_parse(const char *text, const char *name, struct pfs_scenario *sc,
                       struct pfs_diag *diag);

/* Writes the scenario as a libconfig file that pfs_scenario_load reads back to the same
 * settings, all of them, in a fixed order (the canonical text the results database hashes;
 * the seed and policies are not in it: they key the runs). Returns 0 or PFS_EIO. */
int pfs_scenario_write(const struct pfs_scenario *sc, FILE *fp);

/* A pool's share of a run. */
struct pfs_pool_result {
    char name[32], gpu[32];
    double tokens;     /* trained on the pool */
    double energy_j;   /* its GPUs and nodes, x PUE */
    double busy_gpu_h; /* GPU-hours its GPUs held jobs */
    size_t jobs_started, jobs_finished;
};

/* Per-run results (DESIGN.md section 5 metrics). */
struct pfs_run_result {
    char policy[32];
    double tokens;   /* trained in the simulated time */
    double mean_tps; /* tokens / simulated seconds */
    double energy_j; /* facility energy */
    double tokens_per_j;
    double dr_minutes_over; /* minutes whose mean facility power exceeded the DR target */
    double dr_worst_excess_w;
    double dr_energy_over_j;
    size_t deadline_misses;    /* jobs that finished after their deadline, or did not finish by
                                * the end with their deadline passed */
    size_t tier_violations;    /* finished jobs whose mean slowdown broke their tier's tolerance */
    size_t deadlines_given_up; /* jobs whose deadline the policy said it gave up (the budget
                                * could not hold every deadline's floor) */
    size_t jobs_refused;       /* not started: its deadline was out of reach (admission) */
    size_t jobs_submitted, jobs_started, jobs_finished;
    size_t events;        /* events processed */
    double gap_recovered; /* (tokens - equal) / (oracle - equal); NAN when unknown */
    size_t n_pools;
    struct pfs_pool_result pool[PFS_MAX_POOLS];
    /* The planner's summary (docs/results.md). */
    double cap_w;           /* the facility's base cap, W; NAN without one */
    double peak_facility_w; /* the highest minute mean of facility power, W */
    double p99_facility_w;  /* the 99th percentile of minute means, W */
    double cap_binding_h;   /* hours a limit held some running job below full power */
    size_t dr_events;       /* DR events in the run */
    size_t dr_events_met;   /* with no minute over target */
    size_t dr_events_missed;
    size_t dr_events_uncappable; /* with a minute whose target lay below the capping floor
                                  * (every running job at its minimum cap): only pausing
                                  * could meet it */
    double dr_floor_excess_w;    /* the most that floor exceeded a target, W */
    /* Compliance with the standing cap (cap_w), minute by minute as for DR (0 without a
     * cap): minutes whose mean exceeded it, the worst and the mean excess of those minutes
     * (W), the energy above it (J); jobs admission by power kept waiting (control.over_limit
     * = "hold") and their hours in the queue, submission to start (or the run's end); jobs
     * the engine paused to hold a limit (cap or DR), and its pauses (one job may count
     * several) */
    double cap_minutes_over, cap_worst_excess_w, cap_mean_excess_w, cap_energy_over_j;
    size_t jobs_held_back;
    double held_back_wait_h;
    size_t jobs_paused_hold, hold_pauses;
    double job_loss_mean, job_loss_p50, job_loss_p95,
        job_loss_max; /* over started jobs: 1 -
                       * tokens / (full-power rate on its pool x time in the run) */
    /* The cost of DR against the same workload and policy without events (NAN when the
     * run has none). */
    double nodr_tokens;
    double nodr_deadline_misses; /* deadline misses of that run */
    double dr_cost_tokens, dr_cost_frac, dr_cost_per_event;
    double dr_energy_shed_j; /* energy without events less energy with them, J */
    double dr_cost_per_mwh;  /* tokens lost per MWh shed */
    char gap_note[96];       /* why gap_recovered is NAN, "" when it is defined */
    bool indexed_queue;      /* the indexed scheduler ran (else the scan: docs/simulator.md) */
    size_t policy_decisions; /* times the policy was asked (a limit bound) */
    size_t class_decisions;  /* of those, answered by class (equal, pfi, the oracle:
                                docs/simulator.md) */
    size_t slot_passes; /* decisions applied in a pass over the running jobs' slots, not sorted */
    /* Per node of the power tree below its root (facility.tree, issue 58), in the tree's order;
     * NULL (n_tree 0) without one. The run allocates it; pfs_run_result_free frees it. */
    struct pfs_node_result *tree;
    size_t n_tree;
    size_t tree_waits; /* jobs whose start waited, at least once, for a place in the racks
                        * (a rack with room for it whole, or whole free racks) */
};

/* One node of the power tree over a run (docs/scenarios.md "The power tree"): its IT power
 * minute by minute against its limit. p99 is read off a histogram of 1,024 bins over the
 * node's nameplate: the upper edge of the bin it falls in (within 1/1024 of the nameplate
 * above the exact value, and never above the peak). At its limit: a minute mean within 1% below it;
 * over: above it. */
struct pfs_node_result {
    char name[96];
    int level;          /* 0: the root */
    double limit_w;     /* HUGE_VAL: none */
    double nameplate_w; /* every GPU under it at its top limit, and the nodes' other draw */
    double peak_w;      /* the highest minute mean */
    double p99_w;
    double minutes_at, minutes_over;
    double worst_excess_w; /* the most a minute mean went over the limit, W (0: never) */
    double energy_j;       /* IT energy under it */
};

/* Frees what a run allocated in r (its tree's results); r's numbers stay. */
void pfs_run_result_free(struct pfs_run_result *r);

/* One row per simulated minute. */
struct pfs_ts_row {
    double t_s;
    double facility_w, gpu_w, budget_w; /* minute means; budget NAN when uncapped */
    double throughput;                  /* tokens/s, minute mean */
    int running_jobs, paused_jobs;
};

/* A run's minutes: n rows, in memory (rows), or, once pfs_timeseries_spill made it so
 * before the run, in a temporary file as the run produces them (spill; rows NULL), so that
 * a run of a year holds no row in memory (25 MB a policy in memory). Read them with
 * pfs_timeseries_read either way. */
struct pfs_timeseries {
    size_t n, cap;
    struct pfs_ts_row *rows;
    FILE *spill;
};

/* Makes ts (empty) keep its rows in a temporary file from now on; 0, or PFS_EIO with the
 * rows kept in memory when no temporary file can be made. */
int pfs_timeseries_spill(struct pfs_timeseries *ts);
/* Copies rows [from, from + max) (fewer at the end) of a run's time series into buf (several
 * threads may read one at once); returns how many, or 0 past the end or on a read error
 * (*err set to PFS_EIO then, untouched otherwise). */
size_t pfs_timeseries_read(const struct pfs_timeseries *ts, size_t from, struct pfs_ts_row *buf,
                           size_t max, int *err);
void pfs_timeseries_free(struct pfs_timeseries *ts);

/* Everything a run needs that is read from files once and shared by the runs of all
 * policies. */
struct pfs_sim_inputs;

/* Loads the corpus, builds or reads the workload, loads the predictor, and checks that the
 * scenario can be met at all (budget above idle draw, no job larger than the facility)
 * before anything is simulated. Returns 0, PFS_EINVAL (with a clear message), PFS_EIO,
 * PFS_ENOMEM. */
int pfs_sim_inputs_new(const struct pfs_scenario *sc, struct pfs_sim_inputs **out,
                       struct pfs_diag *diag);
void pfs_sim_inputs_free(struct pfs_sim_inputs *in);

/* Per-job outcome of a run. */
struct pfs_job_result {
    double start_s, finish_s; /* NAN when it did not start / finish */
    double tokens_done;
    int pool;          /* the pool it ran on, -1 when it did not start */
    size_t curve;      /* the curve it ran (pfs_sim_inputs_curve), its own when not started */
    double duration_s; /* its uncapped run time there (or on its own curve), s */
    bool given_up;     /* its deadline was given up by the policy (PFS_DEADLINE_BUDGET) */
    bool refused;      /* admission refused it (its deadline out of reach): never started */
};

/* A job's result that came after its place in the spill was written (struct
 * pfs_job_results). */
struct pfs_job_late {
    size_t j;
    struct pfs_job_result r;
};

/* A run's per-job results, one per workload job, read in job order: in memory (rows), or,
 * once pfs_job_results_spill made it so before the run, in a temporary file of n records in
 * job order, written as the run's jobs finish (spill; rows NULL). Jobs finish out of order:
 * a window of `window` jobs from `base` is kept in memory (win, job j at j % window) and
 * written half by half, one write each, as the run's finishes pass it. A job that finishes
 * after its half was written (it ran or waited longer than about half a window of arrivals)
 * is late: its result is kept in memory (late, in job order once the run is over) and
 * pfs_job_results_read puts it in its place; past late_max of them they are written to
 * their places, one write each. A year on 100,000 GPUs is 20 M jobs, 1.1 GB a policy in
 * memory; spilled, the window's 7.3 MB and its 768,893 late jobs' 49 MB. A run with no more
 * jobs than the window keeps them in memory. Read them with pfs_job_results_read either
 * way. */
struct pfs_job_results {
    size_t n; /* the workload's jobs (the run sets it) */
    struct pfs_job_result *rows;
    FILE *spill;
    bool to_spill;   /* pfs_job_results_spill asked for it */
    size_t window;   /* jobs in memory while spilled (even; 0: PFS_JOB_WINDOW) */
    size_t late_max; /* late results held in memory at most (0: PFS_JOB_LATE) */
    size_t base;     /* the first job not yet written (spilled), a multiple of window / 2 */
    struct pfs_job_result *win;
    struct pfs_job_late *late; /* the late results held */
    size_t n_late, late_cap;
    size_t late_total; /* late jobs in all, held or written (finished after their half was) */
    int err;           /* PFS_EIO once a write failed */
};

#define PFS_JOB_WINDOW ((size_t)1 << 17)
#define PFS_JOB_LATE   ((size_t)1 << 20) /* (64 MB of them) */

/* Makes jr (emptied) keep its rows in a temporary file from its next run on, where the run
 * has more jobs than the window (the file made then: in memory where none can be made). */
void pfs_job_results_spill(struct pfs_job_results *jr);
/* Copies the results of jobs [from, from + max) (fewer at the end) into buf; returns how
 * many, or 0 past the end or on a read error (*err set to PFS_EIO then, untouched otherwise). */
size_t pfs_job_results_read(const struct pfs_job_results *jr, size_t from,
                            struct pfs_job_result *buf, size_t max, int *err);
void pfs_job_results_free(struct pfs_job_results *jr);

/* The workload's jobs, in order (the order of a run's job results); and how many more it
 * gave that are submitted after the run's end, left out (pfisim run and check say so). */
size_t pfs_sim_inputs_n_jobs(const struct pfs_sim_inputs *in);
size_t pfs_sim_inputs_n_after(const struct pfs_sim_inputs *in);
const struct pfs_workload_job *pfs_sim_inputs_job(const struct pfs_sim_inputs *in, size_t j);

/* The scenario's curves: curve k's measured (or tabulated) points, its corpus job (NULL when
 * the corpus has no jobs.csv row for it: family, phase and the true PFI), and the PFI at
 * cut pfs_cut(cut) the policies are given for it (predicted from telemetry, or from the
 * sweep when there is no telemetry; NAN if neither). */
size_t pfs_sim_inputs_n_curves(const struct pfs_sim_inputs *in);
const struct pfs_job_curve *pfs_sim_inputs_curve(const struct pfs_sim_inputs *in, size_t k);
const struct pfs_corpus_job *pfs_sim_inputs_curve_job(const struct pfs_sim_inputs *in, size_t k);
double pfs_sim_inputs_curve_pfi(const struct pfs_sim_inputs *in, size_t k, size_t cut);

/* A hook told, every simulated hour of every run (the run without DR events that prices DR
 * included), the simulated seconds since it was last told and the events simulated in them;
 * for a progress display. It may be called from several threads at once (pfisim run
 * --threads). fn NULL: none (the default). Not a result: nothing it sees changes a run. */
void pfs_sim_set_progress(void (*fn)(void *arg, double sim_s, size_t events), void *arg);

/* Runs one policy over the scenario. ts and jobs may be NULL; jobs gets every workload job's
 * result (its rows made anew, or written to its spill). Returns 0 or PFS_E* (diag says). */
int pfs_sim_run(const struct pfs_scenario *sc, const struct pfs_sim_inputs *in, const char *policy,
                struct pfs_run_result *out, struct pfs_timeseries *ts, struct pfs_job_results *jobs,
                struct pfs_diag *diag);

/* pfs_sim_run in two steps, for a caller that runs several policies on a few threads: the
 * run (its cost of DR left NaN), then the pricing of its DR events against the run without
 * them (nothing where it held none), made once where it is every policy's. Pricing after
 * all the runs keeps a thread from idling while another makes that run. The same results
 * as pfs_sim_run. */
int pfs_sim_run_unpriced(const struct pfs_scenario *sc, const struct pfs_sim_inputs *in,
                         const char *policy, struct pfs_run_result *out, struct pfs_timeseries *ts,
                         struct pfs_job_results *jobs, struct pfs_diag *diag);
int pfs_sim_price(const struct pfs_scenario *sc, const struct pfs_sim_inputs *in,
                  const char *policy, struct pfs_run_result *out, struct pfs_diag *diag);

/* Makes the run without DR events that prices DR (every run with events needs it) now, if
 * not made yet, so that a caller with a CPU to spare can make it beside pfs_sim_run's runs
 * instead of after them: pfs_sim_run then finds it made, or waits for it, with the same bytes
 * out either way. Without a base cap it is every policy's. Under one it is made for policy
 * (the first a caller will run): every policy's if the cap never binds in it (no policy is
 * asked), else policy's alone, the others making their own. Returns 0 or PFS_E* (diag says;
 * pfs_sim_run would then fail the same way). */
int pfs_sim_nodr_prepare(const struct pfs_scenario *sc, const struct pfs_sim_inputs *in,
                         const char *policy, struct pfs_diag *diag);

/* The gap recovered, (tokens - equal) / (oracle - equal), of each of n runs of one scenario
 * and seed, from the equal and oracle runs among them. It is defined only where the oracle
 * beats equal by more than PFS_GAP_MIN_FRAC of equal's tokens: over a long run the
 * instantaneous oracle can make fewer tokens than equal (it optimises each allocation, not
 * the run), and a ratio over a gap of noise misleads. Elsewhere gap_recovered is NAN and
 * gap_note says why. With several seeds the CLI also asks that the gap exceed its spread. */
#define PFS_GAP_MIN_FRAC 1e-3
void pfs_gap_recovered(struct pfs_run_result *runs, size_t n);

/* ---------------------------------------------------------------------------------------
 * Grid signals (traces/grid.c): a utility's hourly demand (date, hour 1-24 ending, demand
 * columns) turned into DR events: each run of consecutive hours above a threshold is one
 * event from its first hour's start to its last hour's end; t = 0 is the first date's 00:00.
 */
struct pfs_grid_options {
    const char *column; /* the demand column */
    double threshold;   /* in the column's unit; or */
    int top_hours;      /* the threshold is the Nth highest hour's demand (ties included) */
    double cut, ramp_s, notice_s; /* of each event */
};

/* Writes at most max events to out, their number to *n, the threshold used to *threshold
 * (may be NULL). Returns 0, PFS_EIO, PFS_EINVAL (file:line:column: field: message). */
int pfs_grid_events(const char *path, const struct pfs_grid_options *o, struct pfs_dr_event *out,
                    size_t max, size_t *n, double *threshold, struct pfs_diag *diag);

/* The results database, sweeps and pricing: the store and the studies made from it, a header of
 * their own (sim/pfisim/studies.h) so that this one stays a size a reader can hold; part of
 * this interface all the same (including pfisim.h includes it). */
#include "pfisim/studies.h"

#endif /* PFISIM_H */
