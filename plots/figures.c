/*
 * plots/figures.c - the figures of a results database (docs/plots.md).
 *
 * The database may hold many scenarios and seeds; the figures show the first scenario
 * stored and its lowest seed, every policy run on it. DR events are shaded where the run's
 * limit (the time series' budget_w) is on and below its highest value, i.e. where an event
 * lowers the facility's limit.
 */
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

#define MAX_RUNS 16

struct run_ts {
    char policy[64];
    size_t n;
    double *t_s, *facility_w, *gpu_w, *budget_w, *throughput;
};

struct figs {
    sqlite3 *db;
    const char *db_path;
    char scenario[64];
    struct run_ts runs[MAX_RUNS];
    size_t n_runs;
};

static double
col(sqlite3_stmt *q, int i)
{
    return sqlite3_column_type(q, i) == SQLITE_NULL ? (double)NAN : sqlite3_column_double(q, i);
}

static int
db_error(struct figs *f, struct pfs_diag *diag)
{
    return pfs__diag_set(diag, PFS_EINVAL, f->db_path, 0, 0, NULL, "cannot read: %s",
                         sqlite3_errmsg(f->db));
}

static int
load_series(struct figs *f, sqlite3_int64 run_id, struct run_ts *r, struct pfs_diag *diag)
{
    sqlite3_stmt *q = NULL;
    size_t cap = 0;
    int rc = 0;

    if (sqlite3_prepare_v2(f->db,
                           "SELECT t_s, facility_w, gpu_w, budget_w, throughput FROM timeseries "
                           "WHERE run_id = ? ORDER BY t_s",
                           -1, &q, NULL) != SQLITE_OK)
        return db_error(f, diag);
    sqlite3_bind_int64(q, 1, run_id);
    while (rc == 0 && sqlite3_step(q) == SQLITE_ROW) {
        if (r->n == cap) { /* five columns of one length: grow them together */
            double **cols[] = {&r->t_s, &r->facility_w, &r->gpu_w, &r->budget_w, &r->throughput};

            for (size_t c = 0; c < 5; c++) {
                size_t cc = cap;
                double *v = pfs__grow(*cols[c], &cc, r->n, sizeof(double), 1024);

                if (!v) {
                    rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
                    break;
                }
                *cols[c] = v;
                if (c == 4)
                    cap = cc;
            }
            if (rc)
                break;
        }
        r->t_s[r->n] = col(q, 0);
        r->facility_w[r->n] = col(q, 1);
        r->gpu_w[r->n] = col(q, 2);
        r->budget_w[r->n] = col(q, 3);
        r->throughput[r->n] = col(q, 4);
        r->n++;
    }
    sqlite3_finalize(q);
    return rc;
}

static int
load(struct figs *f, struct pfs_diag *diag)
{
    sqlite3_stmt *q = NULL;
    sqlite3_int64 ids[MAX_RUNS];
    int rc = 0;

    /* The first scenario stored, its lowest seed, its runs in the order they were written. */
    if (sqlite3_prepare_v2(f->db,
                           "SELECT run.id, run.policy, scenario.name FROM run "
                           "JOIN scenario ON scenario.id = run.scenario_id "
                           "WHERE run.scenario_id = (SELECT min(scenario_id) FROM run) "
                           "AND run.seed = (SELECT min(seed) FROM run WHERE scenario_id = "
                           "(SELECT min(scenario_id) FROM run)) ORDER BY run.id",
                           -1, &q, NULL) != SQLITE_OK)
        return db_error(f, diag);
    while (f->n_runs < MAX_RUNS && sqlite3_step(q) == SQLITE_ROW) {
        ids[f->n_runs] = sqlite3_column_int64(q, 0);
        pfs__strlcpy(f->runs[f->n_runs].policy, (const char *)sqlite3_column_text(q, 1),
                     sizeof f->runs[0].policy);
        pfs__strlcpy(f->scenario, (const char *)sqlite3_column_text(q, 2), sizeof f->scenario);
        f->n_runs++;
    }
    sqlite3_finalize(q);
    if (f->n_runs == 0)
        return pfs__diag_set(diag, PFS_EINVAL, f->db_path, 0, 0, NULL,
                             "no runs to plot (pfisim run --db writes them)");
    for (size_t k = 0; k < f->n_runs && rc == 0; k++)
        rc = load_series(f, ids[k], &f->runs[k], diag);
    return rc;
}

/* A unit for values up to max: the divisor and its name. */
static double
unit(double max, const char *const names[3], const char **name)
{
    if (max >= 2e6) {
        *name = names[2];
        return 1e6;
    }
    if (max >= 2e3) {
        *name = names[1];
        return 1e3;
    }
    *name = names[0];
    return 1;
}

/* The DR spans of a run: where its limit is on and below its highest value. */
static size_t
spans(const struct run_ts *r, double scale, double (*out)[2], size_t max)
{
    double top = -INFINITY;
    bool has_null = false;
    size_t n = 0;

    for (size_t i = 0; i < r->n; i++) {
        if (isfinite(r->budget_w[i]))
            top = fmax(top, r->budget_w[i]);
        else
            has_null = true;
    }
    for (size_t i = 0; i < r->n; i++) {
        bool on = isfinite(r->budget_w[i]) && (has_null || r->budget_w[i] < top * (1 - 1e-9));
        /* Rows are minutes, t_s their start. */
        double t0 = r->t_s[i] / scale, t1 = (r->t_s[i] + 60) / scale;

        if (!on)
            continue;
        if (n > 0 && fabs(out[n - 1][1] - t0) < 1e-9 * fmax(1, fabs(t0)))
            out[n - 1][1] = t1;
        else if (n < max) {
            out[n][0] = t0;
            out[n][1] = t1;
            n++;
        }
    }
    return n;
}

static bool
wanted(const char *only, const char *name)
{
    return !only || strcmp(only, name) == 0;
}

static const char *const ext[] = {"png", "svg", "pdf"};

/* Writes one chart as dir/name.EXT and prints its path. */
static int
emit(const struct pfs_chart *c, const char *dir, const char *name, enum pfs_plot_format format,
     FILE *fp, struct pfs_diag *diag)
{
    char path[1024];
    int rc;

    snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext[format]);
    if ((rc = pfs_chart_write(c, path, format, diag)) == 0 && fp)
        fprintf(fp, "%s\n", path);
    return rc;
}

/* Figures 4 and 5: power against the limit, and throughput, over time. */
static int
timeline(struct figs *f, const char *dir, enum pfs_plot_format format, const char *only, FILE *fp,
         struct pfs_diag *diag)
{
    static const char *const w_units[] = {"W", "kW", "MW"};
    static const char *const t_units[] = {"tokens/s", "thousand tokens/s", "million tokens/s"};
    struct pfs_series s[MAX_RUNS + 1];
    double(*sp)[2] = NULL, *x[MAX_RUNS] = {0}, *y[MAX_RUNS + 1] = {0};
    double max_w = 0, max_tps = 0, span_s, tscale, wscale, tpscale;
    const char *w_unit, *tp_unit, *t_label;
    char title[160], ylab[64];
    size_t n_sp = 0;
    int rc = 0;

    for (size_t k = 0; k < f->n_runs; k++)
        for (size_t i = 0; i < f->runs[k].n; i++) {
            if (isfinite(f->runs[k].facility_w[i]))
                max_w = fmax(max_w, f->runs[k].facility_w[i]);
            if (isfinite(f->runs[k].throughput[i]))
                max_tps = fmax(max_tps, f->runs[k].throughput[i]);
        }
    span_s = f->runs[0].n ? f->runs[0].t_s[f->runs[0].n - 1] : 0;
    tscale = span_s > 3 * 86400 ? 86400 : span_s > 12 * 3600 ? 3600 : 60;
    t_label = span_s > 3 * 86400   ? "time (days)"
              : span_s > 12 * 3600 ? "time (hours)"
                                   : "time (minutes)";
    wscale = unit(max_w, w_units, &w_unit);
    tpscale = unit(max_tps, t_units, &tp_unit);
    sp = malloc((f->runs[0].n + 1) * sizeof *sp);
    for (size_t k = 0; k <= f->n_runs; k++) {
        size_t n = f->runs[k < f->n_runs ? k : 0].n;

        if (k < f->n_runs)
            x[k] = malloc((n + 1) * sizeof(double));
        y[k] = malloc((n + 1) * sizeof(double));
        if ((k < f->n_runs && !x[k]) || !y[k])
            rc = PFS_ENOMEM;
    }
    if (!sp || rc) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    n_sp = spans(&f->runs[0], tscale, sp, f->runs[0].n);
    for (size_t k = 0; k < f->n_runs; k++)
        for (size_t i = 0; i < f->runs[k].n; i++)
            x[k][i] = f->runs[k].t_s[i] / tscale;

    if (wanted(only, "power")) {
        for (size_t k = 0; k < f->n_runs; k++) {
            for (size_t i = 0; i < f->runs[k].n; i++)
                y[k][i] = f->runs[k].facility_w[i] / wscale;
            s[k] = (struct pfs_series){f->runs[k].policy, x[k],  y[k], f->runs[k].n,
                                       PFS_SERIES_LINE,   (int)k};
        }
        for (size_t i = 0; i < f->runs[0].n; i++)
            y[f->n_runs][i] = f->runs[0].budget_w[i] / wscale;
        s[f->n_runs] = (struct pfs_series){"facility limit",     x[0], y[f->n_runs], f->runs[0].n,
                                           PFS_SERIES_REFERENCE, 0};
        snprintf(title, sizeof title, "%s: facility power against its limit", f->scenario);
        snprintf(ylab, sizeof ylab, "facility power (%s)", w_unit);
        rc = emit(&(struct pfs_chart){title, t_label, ylab, s, f->n_runs + 1,
                                      (const double(*)[2])sp, n_sp, "DR event", true},
                  dir, "power", format, fp, diag);
    }
    if (rc == 0 && wanted(only, "throughput")) {
        for (size_t k = 0; k < f->n_runs; k++) {
            for (size_t i = 0; i < f->runs[k].n; i++)
                y[k][i] = f->runs[k].throughput[i] / tpscale;
            s[k] = (struct pfs_series){f->runs[k].policy, x[k],  y[k], f->runs[k].n,
                                       PFS_SERIES_LINE,   (int)k};
        }
        snprintf(title, sizeof title, "%s: throughput per policy", f->scenario);
        snprintf(ylab, sizeof ylab, "throughput (%s)", tp_unit);
        rc = emit(&(struct pfs_chart){title, t_label, ylab, s, f->n_runs, (const double(*)[2])sp,
                                      n_sp, "DR event", true},
                  dir, "throughput", format, fp, diag);
    }
out:
    for (size_t k = 0; k <= f->n_runs; k++) {
        if (k < f->n_runs)
            free(x[k]);
        free(y[k]);
    }
    free(sp);
    return rc;
}

/* Figure 7: the Phoenix replay's GPU power against the measured series (kW, minutes). */
static int
phoenix(struct figs *f, const char *dir, enum pfs_plot_format format, FILE *fp,
        struct pfs_diag *diag)
{
    static const char *const names[] = {"timestamp", "total"};
    struct pfs__csv csv = {0};
    struct pfs_series s[MAX_RUNS + 1];
    double *mx = NULL, *my = NULL, *x[MAX_RUNS] = {0}, *y[MAX_RUNS] = {0}, (*sp)[2] = NULL;
    size_t n = 0, cap = 0, idx[2], n_sp;
    char path[1024];
    int rc;

    snprintf(path, sizeof path, "%s/emerald-phoenix/SRP_total_power.csv", pfs_data_dir());
    if ((rc = pfs__csv_open(&csv, path, diag)) || (rc = pfs__csv_header(&csv, names, 2, idx)))
        goto out;
    while ((rc = pfs__csv_next(&csv)) == 1) {
        double v, *nx, *ny;
        size_t c = cap;

        if ((rc = pfs__csv_double(&csv, idx[1], "total", &v)))
            goto out;
        if (n == cap) {
            nx = pfs__grow(mx, &c, n, sizeof *mx, 512);
            if (nx)
                mx = nx;
            c = cap;
            ny = nx ? pfs__grow(my, &c, n, sizeof *my, 512) : NULL;
            if (!ny) {
                rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
                goto out;
            }
            my = ny;
            cap = c;
        }
        mx[n] = (double)n;
        my[n] = v / 1e3;
        n++;
    }
    if (rc)
        goto out;
    sp = malloc((f->runs[0].n + 1) * sizeof *sp);
    if (!sp) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    n_sp = spans(&f->runs[0], 60, sp, f->runs[0].n);
    for (size_t k = 0; k < f->n_runs; k++) {
        const struct run_ts *r = &f->runs[k];

        x[k] = malloc((r->n + 1) * sizeof(double));
        y[k] = malloc((r->n + 1) * sizeof(double));
        if (!x[k] || !y[k]) {
            rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < r->n; i++) {
            x[k][i] = r->t_s[i] / 60; /* a minute's mean, at the minute's start */
            y[k][i] = r->gpu_w[i] / 1e3;
        }
        s[k] = (struct pfs_series){r->policy, x[k], y[k], r->n, PFS_SERIES_LINE, (int)k};
    }
    s[f->n_runs] =
        (struct pfs_series){"measured (Emerald, Phoenix)", mx, my, n, PFS_SERIES_REFERENCE, 0};
    rc = emit(&(struct pfs_chart){"Phoenix DR event: simulated against measured GPU power",
                                  "minutes from the first measured minute", "GPU power (kW)", s,
                                  f->n_runs + 1, (const double(*)[2])sp, n_sp,
                                  "DR event (simulated limit)", false},
              dir, "phoenix", format, fp, diag);
out:
    pfs__csv_close(&csv);
    for (size_t k = 0; k < f->n_runs; k++) {
        free(x[k]);
        free(y[k]);
    }
    free(mx);
    free(my);
    free(sp);
    return rc;
}

int
pfs_plot_db(const char *db_path, const char *dir, enum pfs_plot_format format, const char *only,
            FILE *fp, struct pfs_diag *diag)
{
    static const char *const known[] = {"power", "throughput", "phoenix"};
    struct pfs_store *st = NULL;
    struct figs f = {.db_path = db_path};
    bool ok = !only;
    int rc;

    for (size_t k = 0; only && k < sizeof known / sizeof known[0]; k++)
        ok |= strcmp(only, known[k]) == 0;
    if (!ok)
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "only",
                             "unknown figure '%s' (power, throughput, phoenix)", only);
    if ((rc = pfs_store_open_read(db_path, &st, diag)))
        return rc;
    f.db = pfs__store_db(st);
    if ((rc = load(&f, diag)) == 0 && mkdir(dir, 0777) != 0 && errno != EEXIST)
        rc = pfs__diag_set(diag, PFS_EIO, dir, 0, 0, NULL, "cannot create: %s", strerror(errno));
    if (rc == 0)
        rc = timeline(&f, dir, format, only, fp, diag);
    if (rc == 0 && wanted(only, "phoenix")) {
        if (strcmp(f.scenario, "phoenix-srp") == 0)
            rc = phoenix(&f, dir, format, fp, diag);
        else if (only)
            rc = pfs__diag_set(diag, PFS_EINVAL, db_path, 0, 0, NULL,
                               "figure phoenix needs a run of the phoenix-srp scenario, not '%s'",
                               f.scenario);
    }
    for (size_t k = 0; k < f.n_runs; k++) {
        free(f.runs[k].t_s);
        free(f.runs[k].facility_w);
        free(f.runs[k].gpu_w);
        free(f.runs[k].budget_w);
        free(f.runs[k].throughput);
    }
    pfs_store_close(st);
    return rc;
}
