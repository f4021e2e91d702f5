/*
 * sim/pfisim/studies.h - the public interface of libpfisim, continued: the results database,
 * sweeps and interruptible-tier pricing (the store and the studies). Included by
 * <pfisim.h>, which declares every type these use; include that, not this.
 */
#ifndef PFISIM_STUDIES_H
#define PFISIM_STUDIES_H

#ifndef PFISIM_H
#error "include <pfisim.h>, which includes this header"
#endif

/* ---------------------------------------------------------------------------------------
 * The results database (sim/store.c, docs/results.md): SQLite, one file per study.
 */

struct pfs_store;

/* Opens (creating if needed) a results database. Returns 0; PFS_EINVAL when the file is not
 * a pfisim results database or of another schema version; PFS_EIO when it cannot be opened
 * or written. */
int pfs_store_open(const char *path, struct pfs_store **out, struct pfs_diag *diag);
void pfs_store_close(struct pfs_store *st);

/* pfs_store_open, but a database that does not exist yet is written to a temporary file
 * beside path, with its journal in memory and no waits for the disk, and is put at path by
 * pfs_store_finish: whole or not at all (pfs_store_close without it removes the file). Not
 * for a writer that others share the file with while it writes, or that must leave what it
 * stored if interrupted (a sweep, run --resume). */
int pfs_store_create(const char *path, struct pfs_store **out, struct pfs_diag *diag);

/* A database pfs_store_create made new: into WAL mode, flushed to disk and put at its path;
 * if another writer made one there meanwhile, its runs are merged into that one
 * (pfs_store_merge). Nothing to do for any other. Returns 0, PFS_EIO or PFS_EINVAL. */
int pfs_store_finish(struct pfs_store *st, struct pfs_diag *diag);

/* Opens an existing results database read-only, with the same identity checks (an empty
 * or missing file is PFS_EINVAL or PFS_EIO). */
int pfs_store_open_read(const char *path, struct pfs_store **out, struct pfs_diag *diag);

/* Whether the run (scenario, policy, seed) is already stored. Returns 0 or PFS_EIO. */
int pfs_store_has_run(struct pfs_store *st, const struct pfs_scenario *sc, const char *policy,
                      bool *yes, struct pfs_diag *diag);

/* The stored summary of the run (scenario, policy, sc->seed) into *out (NULL columns NAN);
 * *found false when there is none. Returns 0 or PFS_EIO. */
int pfs_store_get_summary(struct pfs_store *st, const struct pfs_scenario *sc, const char *policy,
                          struct pfs_run_result *out, bool *found, struct pfs_diag *diag);

/* Writes one run in one transaction, replacing the rows of the same scenario, policy and
 * seed: scenario (canonical text and hash), run, summary, per-job results (jobs may be NULL)
 * and the time series (ts may be NULL). On failure nothing of it is written. Returns 0 or
 * PFS_EIO. */
/* Sets the gap recovered of every stored run of sc's scenario and seed from the stored
 * equal and oracle runs (NULL without both): runs are written as they finish, before the
 * gap can be known. One statement, so all or none. Returns 0 or PFS_EIO. */
int pfs_store_update_gaps(struct pfs_store *st, const struct pfs_scenario *sc,
                          struct pfs_diag *diag);

int pfs_store_write_run(struct pfs_store *st, const struct pfs_scenario *sc,
                        const struct pfs_sim_inputs *in, const struct pfs_run_result *r,
                        const struct pfs_timeseries *ts, const struct pfs_job_results *jobs,
                        struct pfs_diag *diag);

/* ----- figures (plots/, docs/plots.md) ----- */

/* An axis: ticks at lo, lo + step, ..., hi (n_ticks of them), step 1, 2, 2.5 or 5 x 10^k. */
struct pfs_axis {
    double lo, hi, step;
    int n_ticks;
};

/* The smallest such axis covering [lo, hi] with at most max_ticks (>= 3) ticks (one value
 * gets a range around it). Returns 0, or PFS_EINVAL for a non-finite or reversed range. */
int pfs_axis_nice(double lo, double hi, int max_ticks, struct pfs_axis *ax);

enum {
    PFS_SERIES_LINE,
    PFS_SERIES_REFERENCE, /* dashed black: a budget, a measurement */
    PFS_SERIES_FIT        /* dashed in its colour: a model fitted to the line of that colour */
};

struct pfs_series {
    const char *label;   /* NULL: not in the legend */
    const double *x, *y; /* NAN breaks the line */
    size_t n;
    int style;             /* PFS_SERIES_* */
    int colour;            /* palette index (lines) */
    bool markers;          /* a dot at every point (a few measured points, not a trace) */
    const double *lo, *hi; /* whiskers from lo[i] to hi[i] (the seeds' range), NULL: none */
};

struct pfs_chart {
    const char *title, *x_label, *y_label; /* labels carry their units */
    const struct pfs_series *series;
    size_t n_series;
    const double (*spans)[2]; /* shaded x ranges (DR events) */
    size_t n_spans;
    const char *span_label;
    bool y_from_zero;
};

enum pfs_plot_format { PFS_PLOT_PNG, PFS_PLOT_SVG, PFS_PLOT_PDF };

/* A panel of a bar chart: one bar per label (NAN: "n/a"); value_format 1 prints two
 * decimals, 0 four significant digits. */
struct pfs_bar_panel {
    const char *title, *y_label;
    const char *const *labels;
    const double *values;
    size_t n;
    int value_format;
    const double *lo, *hi; /* whiskers (the spread over seeds), NULL or NAN: none */
    const char *missing;   /* what a NAN bar says ("n/a" when NULL) */
    double y_lo, y_hi;     /* the y range when y_hi > y_lo (panels that share a scale);
                            * else one fitted to the values */
};

/* The axes a chart is drawn on: x from the data's first to last value, y a nice range
 * over the finite data (from zero when y_from_zero). Returns 0 or PFS_EINVAL (no data). */
int pfs_chart_ranges(const struct pfs_chart *c, struct pfs_axis *x, struct pfs_axis *y);

/* Draws c into path (900 x 520 pixels or points), via path.tmp and a rename. Returns 0,
 * PFS_EINVAL (nothing to plot) or PFS_EIO. */
int pfs_chart_write(const struct pfs_chart *c, const char *path, enum pfs_plot_format format,
                    struct pfs_diag *diag);

/* Draws the figures of a results database into dir (created if missing): "power" (facility
 * power against the limit, DR events shaded), "throughput", and "phoenix" (simulated
 * against measured GPU power, for the phoenix-srp scenario when the data directory has the
 * measurement); only the one named when only is not NULL. Prints each path written to fp.
 * Returns 0, PFS_EINVAL (not a pfisim database, no runs, unknown figure) or PFS_EIO. */
int pfs_plot_db(const char *db_path, const char *dir, enum pfs_plot_format format, const char *only,
                FILE *fp, struct pfs_diag *diag);

/* Writes the PDF report of a results database to out_path (via out_path.tmp): a title page
 * naming the scenario, the pfisim version and whether its curves and workload are real or
 * synthetic, a summary table, then each figure of pfs_plot_db on a page of its own with a
 * one-line reading. Returns 0, PFS_EINVAL or PFS_EIO. */
int pfs_report_db(const char *db_path, const char *out_path, struct pfs_diag *diag);

/* ---------------------------------------------------------------------------------------
 * Sweeps (sim/sweep.c, docs/sweeps.md): a base scenario and axes overriding its settings;
 * the runs of their cross product go into one results database.
 */
struct pfs_sweep;

/* Reads a sweep file and checks every value of every axis against the base scenario.
 * Returns 0, PFS_EIO, PFS_EINVAL (file:line: sweep.path: message), PFS_ENOMEM. */
int pfs_sweep_load(const char *path, struct pfs_sweep **out, struct pfs_diag *diag);
void pfs_sweep_free(struct pfs_sweep *sw);
const char *pfs_sweep_name(const struct pfs_sweep *sw);
/* Points of the sweep (one value of each non-policy axis) and policies run at each. */
size_t pfs_sweep_n_items(const struct pfs_sweep *sw);
size_t pfs_sweep_n_policies(const struct pfs_sweep *sw);
/* The scenario of point item (0-based, the first axis varying slowest). */
int pfs_sweep_scenario(const struct pfs_sweep *sw, size_t item, struct pfs_scenario *sc,
                       struct pfs_diag *diag);
/* The point's axis values, "facility.gpus=1024 seed=2" (aggregates as {...}#k, the kth). */
void pfs_sweep_describe(const struct pfs_sweep *sw, size_t item, char *buf, size_t size);
/* The non-policy axes: their number, the setting each names, and one point's value of axis a
 * as text (as in pfs_sweep_describe). */
size_t pfs_sweep_n_axes(const struct pfs_sweep *sw);
const char *pfs_sweep_axis(const struct pfs_sweep *sw, size_t a);
void pfs_sweep_axis_value(const struct pfs_sweep *sw, size_t item, size_t a, char *buf,
                          size_t size);
/* Policy k of the policies run at every point. */
const char *pfs_sweep_policy(const struct pfs_sweep *sw, size_t k);

struct pfs_sweep_options {
    int jobs;             /* threads, >= 1: each simulates a point at a time and takes its
                           * turn at writing them, in sweep order */
    int shard_k, shard_n; /* run the points i with i mod shard_n = shard_k (0 and 1: all) */
    bool resume;          /* skip runs the database holds */
    /* Called after each point is written (and once before any): runs done and to do. */
    void (*progress)(void *arg, size_t done, size_t total);
    void *arg;
};

struct pfs_sweep_stats {
    size_t items;        /* points in this shard */
    size_t runs_total;   /* their runs */
    size_t runs_done;    /* simulated and written now */
    size_t runs_skipped; /* already in the database (--resume) */
};

/* Runs this shard's points into st, written in sweep order whatever jobs is, each run in its
 * own transaction. Returns 0 or the first error (runs written before it stay). */
int pfs_sweep_run(const struct pfs_sweep *sw, struct pfs_store *st,
                  const struct pfs_sweep_options *o, struct pfs_sweep_stats *stats,
                  struct pfs_diag *diag);

/* Copies every scenario and run of the database at path into st (a run already in st with
 * the same scenario, policy and seed is replaced), in one transaction, and recomputes the gap
 * recovered. Returns 0, PFS_EINVAL (not a pfisim database, another schema version), PFS_EIO. */
int pfs_store_merge(struct pfs_store *st, const char *path, struct pfs_diag *diag);

/* ---------------------------------------------------------------------------------------
 * Interruptible-tier pricing (sim/price.c, docs/pricing.md), from a results database's
 * per-job rows and each scenario's pricing settings.
 */
struct pfs_price_tier {
    size_t jobs, started, finished;
    size_t floor_violations; /* finished jobs slowed beyond their tier's tolerance */
    size_t deadline_misses;
    double delivered;          /* work done per GPU-hour used, against full speed (work_hours
                                * over gpu_hours): throughput as a fraction of uncapped */
    double gpu_hours;          /* billed: GPUs x time from start to finish (or the end) */
    double gpu_hours_uncapped; /* the same at full speed */
    double work_hours;         /* GPU-hours the tokens done take at full speed */
    double discount;           /* Flex: 1 - delivered, the firm tier's tokens per dollar */
};

struct pfs_price_run {
    char scenario[64], hash[17], policy[32];
    long long seed;
    double days, capacity_w; /* the facility's cap, else its full draw */
    size_t n_events;         /* DR events within the run */
    double event_hours;      /* their hours */
    double committed_kw;     /* mean kW an event asks to shed */
    double committed_mwh;    /* over all events */
    double compliance;       /* 1 - minutes over target / event minutes (NAN: no event) */
    struct pfs_price_tier tier[PFS_N_TIERS];
    /* Revenue per MW of capacity per year, USD. */
    double rev_compute;        /* firm work, Flex GPU-hours at the fair discounts */
    double rev_dr_capacity;    /* committed kW x capacity payment x compliance */
    double rev_dr_energy;      /* committed MWh x energy payment x compliance */
    double rev_with;           /* the three */
    double rev_without;        /* every job firm, at full speed and price; no DR */
    double breakeven_discount; /* the largest uniform Flex discount with rev_with >= without */
};

/* Prices every run of the database that has per-job rows, in run order (*runs malloc'd).
 * Returns 0, PFS_EINVAL (not a pfisim database, no run to price), PFS_ENOMEM. */
int pfs_price_db(const char *path, struct pfs_price_run **runs, size_t *n, struct pfs_diag *diag);

#endif /* PFISIM_STUDIES_H */
