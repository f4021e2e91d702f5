/*
 * plots/figures.c - the figures of a results database (docs/plots.md).
 *
 * The database may hold many scenarios and seeds; the figures show the first scenario
 * stored and its lowest seed, every policy run on it. DR events are shaded where the run's
 * limit (the time series' budget_w) is on and below its highest value, i.e. where an event
 * lowers the facility's limit.
 */
#include <cairo-pdf.h>
#include <cairo.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define MAX_RUNS 16

struct run_ts {
    char policy[64];
    sqlite3_int64 id;
    /* the run's summary (docs/results.md), NAN where NULL */
    double tokens, mean_tps, energy_j, tokens_per_j, dr_minutes_over, dr_worst_excess_w, gap;
    double deadline_misses, tier_violations;
    char gap_note[96]; /* why gap is NAN */
    double plan[18];   /* the planner's summary, in the order of PLAN_COLS */
    /* over every seed of the scenario: mean, min and max (n_seeds of them) */
    double tps_mean, tps_lo, tps_hi, gap_mean, gap_lo, gap_hi;
    long n_seeds;
    size_t n;
    double *t_s, *facility_w, *gpu_w, *budget_w, *throughput;
};

struct figs {
    sqlite3 *db;
    const char *db_path;
    cairo_t *page; /* writing the report: figures go onto its pages, not into files */
    char scenario[64], study[64];
    long seed;
    struct run_ts runs[MAX_RUNS];
    size_t n_runs;
};

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
        r->t_s[r->n] = pfs__sql_real(q, 0);
        r->facility_w[r->n] = pfs__sql_real(q, 1);
        r->gpu_w[r->n] = pfs__sql_real(q, 2);
        r->budget_w[r->n] = pfs__sql_real(q, 3);
        r->throughput[r->n] = pfs__sql_real(q, 4);
        r->n++;
    }
    sqlite3_finalize(q);
    return rc;
}

/* The planner's summary columns the report shows (docs/results.md). */
#define PLAN_COLS                                                                                  \
    "cap_w, peak_facility_w, p99_facility_w, cap_binding_h, dr_events, dr_events_met, "            \
    "dr_events_missed, dr_events_uncappable, dr_cost_frac, dr_cost_per_mwh, job_loss_mean, "       \
    "job_loss_p95, job_loss_max, cap_minutes_over, cap_worst_excess_w, jobs_held_back, "           \
    "held_back_wait_h, jobs_paused_hold"

static int
load(struct figs *f, struct pfs_diag *diag)
{
    sqlite3_stmt *q = NULL;
    sqlite3_int64 ids[MAX_RUNS];
    int rc = 0;

    /* The first scenario stored, its lowest seed, its runs in the order they were written. */
    if (sqlite3_prepare_v2(f->db,
                           "SELECT run.id, run.policy, scenario.name, run.seed, tokens, "
                           "mean_tps, energy_j, tokens_per_j, dr_minutes_over, "
                           "dr_worst_excess_w, gap_recovered, deadline_misses, "
                           "tier_violations, gap_note, " PLAN_COLS " FROM run "
                           "JOIN scenario ON scenario.id = run.scenario_id "
                           "LEFT JOIN summary ON summary.run_id = run.id "
                           "WHERE run.scenario_id = (SELECT min(scenario_id) FROM run) "
                           "AND run.seed = (SELECT min(seed) FROM run WHERE scenario_id = "
                           "(SELECT min(scenario_id) FROM run)) ORDER BY run.id",
                           -1, &q, NULL) != SQLITE_OK)
        return db_error(f, diag);
    while (f->n_runs < MAX_RUNS && sqlite3_step(q) == SQLITE_ROW) {
        struct run_ts *r = &f->runs[f->n_runs];

        ids[f->n_runs] = r->id = sqlite3_column_int64(q, 0);
        f->seed = (long)sqlite3_column_int64(q, 3);
        r->tokens = pfs__sql_real(q, 4);
        r->mean_tps = pfs__sql_real(q, 5);
        r->energy_j = pfs__sql_real(q, 6);
        r->tokens_per_j = pfs__sql_real(q, 7);
        r->dr_minutes_over = pfs__sql_real(q, 8);
        r->dr_worst_excess_w = pfs__sql_real(q, 9);
        r->gap = pfs__sql_real(q, 10);
        r->deadline_misses = pfs__sql_real(q, 11);
        r->tier_violations = pfs__sql_real(q, 12);
        for (int c = 0; c < 18; c++)
            r->plan[c] = pfs__sql_real(q, 14 + c);
        pfs__strlcpy(r->gap_note,
                     sqlite3_column_text(q, 13) ? (const char *)sqlite3_column_text(q, 13) : "",
                     sizeof r->gap_note);
        pfs__strlcpy(f->runs[f->n_runs].policy, (const char *)sqlite3_column_text(q, 1),
                     sizeof f->runs[0].policy);
        pfs__strlcpy(f->scenario, (const char *)sqlite3_column_text(q, 2), sizeof f->scenario);
        f->n_runs++;
    }
    sqlite3_finalize(q);
    if (f->n_runs == 0)
        return pfs__diag_set(diag, PFS_EINVAL, f->db_path, 0, 0, NULL,
                             "no runs to plot (pfisim run --db writes them)");
    if (sqlite3_prepare_v2(f->db, "SELECT name FROM study", -1, &q, NULL) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW)
        pfs__strlcpy(f->study, (const char *)sqlite3_column_text(q, 0), sizeof f->study);
    sqlite3_finalize(q);
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

static void
figs_free(struct figs *f)
{
    for (size_t k = 0; k < f->n_runs; k++) {
        free(f->runs[k].t_s);
        free(f->runs[k].facility_w);
        free(f->runs[k].gpu_w);
        free(f->runs[k].budget_w);
        free(f->runs[k].throughput);
    }
}

static bool
wanted(const char *only, const char *name)
{
    return !only || strcmp(only, name) == 0;
}

static const char *const ext[] = {"png", "svg", "pdf"};

/* Shows text from (x, y) in lines no wider than width, breaking at spaces; returns the y
 * below the last line. */
static double
wrap_text(cairo_t *cr, const char *text, double x, double y, double width, double line_h)
{
    char line[512];
    size_t len = 0;
    const char *p = text;

    while (*p) {
        const char *word_end = strchr(p, ' ');
        size_t wl = word_end ? (size_t)(word_end - p) : strlen(p);
        char trial[512];
        cairo_text_extents_t e;

        snprintf(trial, sizeof trial, "%.*s%s%.*s", (int)len, line, len ? " " : "", (int)wl, p);
        cairo_text_extents(cr, trial, &e);
        if (len && e.x_advance > width) {
            cairo_move_to(cr, x, y);
            cairo_show_text(cr, line);
            y += line_h;
            snprintf(line, sizeof line, "%.*s", (int)wl, p);
        } else {
            pfs__strlcpy(line, trial, sizeof line);
        }
        len = strlen(line);
        p += wl;
        while (*p == ' ')
            p++;
    }
    if (len) {
        cairo_move_to(cr, x, y);
        cairo_show_text(cr, line);
        y += line_h;
    }
    return y;
}

/* Ends a report page: the figure's reading below it. */
static void
caption(struct figs *f, const char *reading)
{
    cairo_set_source_rgb(f->page, 0, 0, 0);
    cairo_select_font_face(f->page, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                           CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(f->page, 11);
    wrap_text(f->page, reading, 60, 36 + 520 * 0.85 + 24, 722, 15);
    cairo_show_page(f->page);
}

/* A series without markers or whiskers. */
static struct pfs_series
line_series(const char *label, const double *x, const double *y, size_t n, int style, int colour)
{
    return (struct pfs_series){
        .label = label, .x = x, .y = y, .n = n, .style = style, .colour = colour};
}

/* On a report page (A4 landscape): a figure 900 wide and h high placed in the figure area,
 * scaled to fit (0.85 for the usual 900 x 520); page_done restores and captions it. */
static void
page_place(struct figs *f, double h)
{
    double scale = fmin(765.0 / 900, 442.0 / h);

    cairo_save(f->page);
    cairo_translate(f->page, 38.5 + (765 - 900 * scale) / 2, 36);
    cairo_scale(f->page, scale, scale);
}

static void
page_done(struct figs *f, const char *reading)
{
    cairo_restore(f->page);
    caption(f, reading);
}

/* dir/name.EXT into path; after a write that succeeded (rc 0), its path printed to fp. */
static void
figure_path(char *path, size_t size, const char *dir, const char *name, enum pfs_plot_format format)
{
    snprintf(path, size, "%s/%s.%s", dir, name, ext[format]);
}

static int
announced(FILE *fp, const char *path, int rc)
{
    if (rc == 0 && fp)
        fprintf(fp, "%s\n", path);
    return rc;
}

/* Writes one chart as dir/name.EXT and prints its path; for the report, draws it on a page
 * of its own with its one-line reading below. */
static int
emit(struct figs *f, const struct pfs_chart *c, const char *dir, const char *name,
     enum pfs_plot_format format, FILE *fp, const char *reading, struct pfs_diag *diag)
{
    char path[1024];

    if (f->page) {
        int rc;

        page_place(f, 520);
        if ((rc = pfs__chart_draw(f->page, c, 900, 520)) != 0) {
            cairo_restore(f->page); /* no page for it */
            return pfs__diag_set(diag, PFS_EINVAL, f->db_path, 0, 0, NULL,
                                 "%s: no finite data to plot", c->title);
        }
        page_done(f, reading);
        return 0;
    }
    figure_path(path, sizeof path, dir, name, format);
    return announced(fp, path, pfs_chart_write(c, path, format, diag));
}

/* As emit, for a figure of panels (pfs__charts_draw). */
static int
emit_panels(struct figs *f, const char *title, const struct pfs_chart *charts, size_t n,
            const char *dir, const char *name, enum pfs_plot_format format, FILE *fp,
            const char *reading, struct pfs_diag *diag)
{
    char path[1024];

    if (f->page) {
        double h = pfs__charts_height(n);

        page_place(f, h);
        pfs__charts_draw(f->page, title, charts, n, 900, h);
        page_done(f, reading);
        return 0;
    }
    figure_path(path, sizeof path, dir, name, format);
    return announced(fp, path, pfs__charts_write(title, charts, n, path, format, diag));
}

/* Appends one "policy value" item per run to buf: the summary field at byte offset field
 * of struct run_ts (offsetof), divided by scale. */
static void
per_policy(const struct figs *f, char *buf, size_t size, int decimals, size_t field, double scale)
{
    for (size_t k = 0; k < f->n_runs; k++) {
        const struct run_ts *r = &f->runs[k];
        double v;

        memcpy(&v, (const char *)r + field, sizeof v);
        v /= scale;
        size_t used = strlen(buf);

        if (isnan(v))
            continue;
        snprintf(buf + used, size - used, "%s%s ", used && buf[used - 1] != ' ' ? ", " : "",
                 r->policy);
        used = strlen(buf);
        snprintf(buf + used, size - used, "%.*f", decimals, v);
    }
}

static void
reading_power(const struct figs *f, char *buf, size_t size)
{
    /* The conclusion first: who met the events, who did not and by how much; then the
     * numbers behind it. */
    size_t met = 0, worst = 0;
    double plan_events = f->runs[0].plan[4];

    for (size_t k = 0; k < f->n_runs; k++) {
        met += f->runs[k].dr_minutes_over <= 0;
        if (f->runs[k].dr_minutes_over > f->runs[worst].dr_minutes_over)
            worst = k;
    }
    if (!(plan_events > 0))
        snprintf(buf, size, "No DR event in this run: the limit, where there is one, is the cap. ");
    else if (met == f->n_runs)
        snprintf(buf, size,
                 "Every policy kept the facility at or below its DR target in every event "
                 "minute. ");
    else
        snprintf(buf, size,
                 "%zu of %zu policies kept the facility at or below its DR target throughout; "
                 "%s ran over it longest (%.0f minutes, up to %.3g kW over). ",
                 met, f->n_runs, f->runs[worst].policy, f->runs[worst].dr_minutes_over,
                 f->runs[worst].dr_worst_excess_w / 1e3);
    pfs__strlcpy(buf + strlen(buf), "Minutes over the target: ", size - strlen(buf));
    per_policy(f, buf, size, 0, offsetof(struct run_ts, dr_minutes_over), 1);
    pfs__strlcpy(buf + strlen(buf), ".", size - strlen(buf));
}

static void
reading_throughput(const struct figs *f, double scale, const char *unit, char *buf, size_t size)
{
    size_t used, best = 0, eq = SIZE_MAX;

    for (size_t k = 0; k < f->n_runs; k++) {
        if (f->runs[k].mean_tps > f->runs[best].mean_tps)
            best = k;
        if (strcmp(f->runs[k].policy, "equal") == 0)
            eq = k;
    }
    if (eq != SIZE_MAX && best != eq && f->runs[eq].mean_tps > 0)
        snprintf(buf, size, "%s made the most, %+.2f%% against equal. ", f->runs[best].policy,
                 100 * (f->runs[best].mean_tps / f->runs[eq].mean_tps - 1));
    else if (eq != SIZE_MAX && best == eq)
        snprintf(buf, size, "No policy made more than equal. ");
    else
        buf[0] = '\0';
    used = strlen(buf);
    snprintf(buf + used, size - used, "Mean throughput (%s): ", unit);
    per_policy(f, buf, size, 2, offsetof(struct run_ts, mean_tps), scale);
    used = strlen(buf);
    snprintf(buf + used, size - used,
             ". Share of the equal-to-oracle gap recovered (needs both runs): ");
    used = strlen(buf);
    per_policy(f, buf, size, 2, offsetof(struct run_ts, gap), 1);
    if (strlen(buf) == used)
        snprintf(buf + used, size - used, "not defined (%s)",
                 f->runs[0].gap_note[0] ? f->runs[0].gap_note : "no equal and oracle runs");
    pfs__strlcpy(buf + strlen(buf), ".", size - strlen(buf));
}

static void
reading_phoenix(const struct figs *f, const double *measured_kw, size_t n, char *buf, size_t size)
{
    snprintf(buf, size,
             "Mean absolute percentage error of the simulated GPU power against the measured "
             "series, per minute over the replay: ");
    for (size_t k = 0; k < f->n_runs; k++) {
        const struct run_ts *r = &f->runs[k];
        size_t m = r->n < n ? r->n : n, used;
        double e = 0;

        for (size_t i = 0; i < m; i++)
            e += fabs(r->gpu_w[i] / 1e3 - measured_kw[i]) / measured_kw[i];
        used = strlen(buf);
        snprintf(buf + used, size - used, "%s%s %.2f%%", k ? ", " : "", r->policy,
                 m ? 100 * e / (double)m : (double)NAN);
    }
    pfs__strlcpy(buf + strlen(buf), " (docs/validation.md).", size - strlen(buf));
}

/* Figures 4 and 5: power against the limit, and throughput, over time. */
#define LONG_RUN_S (14 * 86400.0) /* longer runs get a panel per DR event */
#define MAX_PANELS 12

/* power and throughput of a long run: a panel per DR event (sp, in units of tscale s), each
 * from an hour before the event to an hour after it, hours from the run's start on x. */
static int
event_panels(struct figs *f, const double (*sp)[2], size_t n_sp, double tscale, const char *dir,
             enum pfs_plot_format format, const char *only, FILE *fp, struct pfs_diag *diag)
{
    static const char *const w_units[] = {"W", "kW", "MW"};
    static const char *const t_units[] = {"tokens/s", "thousand tokens/s", "million tokens/s"};
    size_t n = n_sp < MAX_PANELS ? n_sp : MAX_PANELS, n_series = f->n_runs + 1;
    struct pfs_chart *charts = calloc(n, sizeof *charts);
    struct pfs_series *series = calloc(n * n_series, sizeof *series);
    double *xh[MAX_RUNS] = {0}, *yv[MAX_RUNS + 1] = {0}, (*span_h)[2] = calloc(n, sizeof *span_h);
    char(*titles)[64] = calloc(n, sizeof *titles);
    double max_w = 0, max_tps = 0, wscale, tpscale;
    const char *w_unit, *tp_unit;
    char title[200], ylab[2][64], reading[1024];
    int rc = 0;

    for (size_t k = 0; k < f->n_runs; k++) {
        xh[k] = malloc((f->runs[k].n + 1) * sizeof(double));
        yv[k] = malloc((f->runs[k].n + 1) * sizeof(double));
        rc |= !xh[k] || !yv[k];
        for (size_t i = 0; xh[k] && i < f->runs[k].n; i++) {
            xh[k][i] = f->runs[k].t_s[i] / 3600;
            if (isfinite(f->runs[k].facility_w[i]))
                max_w = fmax(max_w, f->runs[k].facility_w[i]);
            if (isfinite(f->runs[k].throughput[i]))
                max_tps = fmax(max_tps, f->runs[k].throughput[i]);
        }
    }
    yv[f->n_runs] = malloc((f->runs[0].n + 1) * sizeof(double));
    if (rc || !charts || !series || !span_h || !titles || !yv[f->n_runs]) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    wscale = unit(max_w, w_units, &w_unit);
    tpscale = unit(max_tps, t_units, &tp_unit);
    snprintf(ylab[0], sizeof ylab[0], "facility power (%s)", w_unit);
    snprintf(ylab[1], sizeof ylab[1], "throughput (%s)", tp_unit);
    for (int which = 0; which < 2 && rc == 0; which++) {
        if (!wanted(only, which ? "throughput" : "power"))
            continue;
        for (size_t k = 0; k < f->n_runs; k++)
            for (size_t i = 0; i < f->runs[k].n; i++)
                yv[k][i] = (which ? f->runs[k].throughput[i] / tpscale
                                  : f->runs[k].facility_w[i] / wscale);
        for (size_t i = 0; i < f->runs[0].n; i++)
            yv[f->n_runs][i] = f->runs[0].budget_w[i] / wscale;
        for (size_t e = 0; e < n; e++) {
            double t0 = sp[e][0] * tscale - 3600, t1 = sp[e][1] * tscale + 3600;
            struct pfs_series *s = &series[e * n_series];
            size_t m = 0;

            span_h[e][0] = sp[e][0] * tscale / 3600;
            span_h[e][1] = sp[e][1] * tscale / 3600;
            for (size_t k = 0; k < f->n_runs; k++) {
                size_t i0 = 0, i1;

                while (i0 < f->runs[k].n && f->runs[k].t_s[i0] < t0)
                    i0++;
                for (i1 = i0; i1 < f->runs[k].n && f->runs[k].t_s[i1] <= t1; i1++)
                    ;
                s[m++] = line_series(e == 0 ? f->runs[k].policy : NULL, xh[k] + i0, yv[k] + i0,
                                     i1 - i0, PFS_SERIES_LINE, (int)k);
                if (k == 0 && which == 0) /* the limit, drawn inside the panel's frame */
                    s[m++] = line_series(e == 0 ? "facility limit" : NULL, xh[0] + i0,
                                         yv[f->n_runs] + i0, i1 - i0, PFS_SERIES_REFERENCE, 0);
            }
            snprintf(titles[e], sizeof titles[e], "event %zu: hours %.0f-%.0f", e + 1, span_h[e][0],
                     span_h[e][1]);
            charts[e] = (struct pfs_chart){titles[e],   "hours from the start",
                                           ylab[which], s,
                                           m,           (const double(*)[2])(span_h + e),
                                           1,           e == 0 ? "DR event" : NULL,
                                           false};
        }
        snprintf(title, sizeof title, "%s: %s at each DR event%s", f->scenario,
                 which ? "throughput per policy" : "facility power against its limit",
                 n < n_sp ? " (the first 12)" : "");
        if (n < n_sp)
            snprintf(title + strlen(title), sizeof title - strlen(title), " of %zu", n_sp);
        if (which)
            reading_throughput(f, tpscale, tp_unit, reading, sizeof reading);
        else
            reading_power(f, reading, sizeof reading);
        rc = emit_panels(f, title, charts, n, dir, which ? "throughput" : "power", format, fp,
                         reading, diag);
    }
out:
    for (size_t k = 0; k <= f->n_runs; k++) {
        if (k < f->n_runs)
            free(xh[k]);
        free(yv[k]);
    }
    free(charts);
    free(series);
    free(span_h);
    free(titles);
    return rc;
}

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
    char title[160], ylab[64], reading[1024];
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
    if (span_s > 3 * 86400) {
        tscale = 86400;
        t_label = "time (days)";
    } else if (span_s > 12 * 3600) {
        tscale = 3600;
        t_label = "time (hours)";
    } else {
        tscale = 60;
        t_label = "time (minutes)";
    }
    wscale = unit(max_w, w_units, &w_unit);
    tpscale = unit(max_tps, t_units, &tp_unit);
    sp = malloc((f->runs[0].n + 1) * sizeof *sp);
    for (size_t k = 0; k < f->n_runs; k++) {
        x[k] = malloc((f->runs[k].n + 1) * sizeof(double));
        y[k] = malloc((f->runs[k].n + 1) * sizeof(double));
        rc |= !x[k] || !y[k];
    }
    y[f->n_runs] = malloc((f->runs[0].n + 1) * sizeof(double)); /* the limit line */
    if (!sp || !y[f->n_runs] || rc) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    n_sp = spans(&f->runs[0], tscale, sp, f->runs[0].n);
    for (size_t k = 0; k < f->n_runs; k++)
        for (size_t i = 0; i < f->runs[k].n; i++)
            x[k][i] = f->runs[k].t_s[i] / tscale;

    /* A long run with DR events: one panel per event (the first MAX_PANELS), from an hour
     * before it to an hour after, instead of a year drawn solid. */
    if (span_s > LONG_RUN_S && n_sp > 0) {
        rc = event_panels(f, sp, n_sp, tscale, dir, format, only, fp, diag);
        goto out;
    }
    if (wanted(only, "power")) {
        for (size_t k = 0; k < f->n_runs; k++) {
            for (size_t i = 0; i < f->runs[k].n; i++)
                y[k][i] = f->runs[k].facility_w[i] / wscale;
            s[k] =
                line_series(f->runs[k].policy, x[k], y[k], f->runs[k].n, PFS_SERIES_LINE, (int)k);
        }
        for (size_t i = 0; i < f->runs[0].n; i++)
            y[f->n_runs][i] = f->runs[0].budget_w[i] / wscale;
        s[f->n_runs] = line_series("facility limit", x[0], y[f->n_runs], f->runs[0].n,
                                   PFS_SERIES_REFERENCE, 0);
        snprintf(title, sizeof title, "%s: facility power against its limit", f->scenario);
        snprintf(ylab, sizeof ylab, "facility power (%s)", w_unit);
        reading_power(f, reading, sizeof reading);
        rc = emit(f,
                  &(struct pfs_chart){title, t_label, ylab, s, f->n_runs + 1,
                                      (const double(*)[2])sp, n_sp, "DR event", true},
                  dir, "power", format, fp, reading, diag);
    }
    if (rc == 0 && wanted(only, "throughput")) {
        for (size_t k = 0; k < f->n_runs; k++) {
            for (size_t i = 0; i < f->runs[k].n; i++)
                y[k][i] = f->runs[k].throughput[i] / tpscale;
            s[k] =
                line_series(f->runs[k].policy, x[k], y[k], f->runs[k].n, PFS_SERIES_LINE, (int)k);
        }
        snprintf(title, sizeof title, "%s: throughput per policy", f->scenario);
        snprintf(ylab, sizeof ylab, "throughput (%s)", tp_unit);
        reading_throughput(f, tpscale, tp_unit, reading, sizeof reading);
        rc = emit(f,
                  &(struct pfs_chart){title, t_label, ylab, s, f->n_runs, (const double(*)[2])sp,
                                      n_sp, "DR event", true},
                  dir, "throughput", format, fp, reading, diag);
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

/* The curves the first run's jobs ran, with their PFI at 30%: the true PFI where the corpus
 * knows it, else the one the policies were given. Both parameters are that run's id. */
#define CURVES_USED                                                                                \
    " FROM curve WHERE scenario_id = (SELECT scenario_id FROM run WHERE id = ?1) "                 \
    "AND curve.curve_id IN (SELECT DISTINCT curve_id FROM job_result WHERE run_id = ?1) "          \
    "AND coalesce(pfi_30, pfi_30_given) IS NOT NULL "

/* Rows of (group, curve_id, PFI, whether it is the true one), by group and PFI. */
static const char curves_sql[] = "SELECT coalesce(family || ' ' || phase, 'all jobs'), "
                                 "curve.curve_id, coalesce(pfi_30, pfi_30_given), "
                                 "pfi_30 IS NOT NULL" CURVES_USED "ORDER BY 1, 3, 2";

/* Rows of (how many there are, curve_id, PFI), by PFI. */
static const char curves_by_pfi_sql[] =
    "SELECT count(*) OVER (), curve.curve_id, "
    "coalesce(pfi_30, pfi_30_given)" CURVES_USED "ORDER BY 3, 2";

/* Figure 2: the PFI distribution at a 30% cut, one CDF per family and phase. */
static int
pfi_figure(struct figs *f, const char *dir, enum pfs_plot_format format, FILE *fp,
           struct pfs_diag *diag)
{
    enum { MAX_GROUPS = 8 };
    struct pfs_series s[MAX_GROUPS];
    char names[MAX_GROUPS][48], title[160], reading[1024];
    double *x[MAX_GROUPS] = {0}, *y[MAX_GROUPS] = {0};
    size_t n[MAX_GROUPS] = {0}, cap[MAX_GROUPS] = {0}, n_groups = 0, n_true = 0, total = 0;
    sqlite3_stmt *q = NULL;
    int rc = 0;

    if (sqlite3_prepare_v2(f->db, curves_sql, -1, &q, NULL) != SQLITE_OK)
        return db_error(f, diag);
    sqlite3_bind_int64(q, 1, f->runs[0].id);
    while (rc == 0 && sqlite3_step(q) == SQLITE_ROW) {
        const char *g = (const char *)sqlite3_column_text(q, 0);
        size_t k = 0;
        double *v;

        while (k < n_groups && strcmp(names[k], g) != 0)
            k++;
        if (k == n_groups) {
            if (n_groups == MAX_GROUPS)
                continue;
            pfs__strlcpy(names[n_groups++], g, sizeof names[0]);
        }
        if (!(v = pfs__grow(x[k], &cap[k], n[k], sizeof *v, 64))) {
            rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
            break;
        }
        x[k] = v;
        x[k][n[k]++] = sqlite3_column_double(q, 2);
        n_true += sqlite3_column_int(q, 3) != 0;
        total++;
    }
    sqlite3_finalize(q);
    snprintf(reading, sizeof reading, "Median PFI at a 30%% cut: ");
    for (size_t k = 0; k < n_groups && rc == 0; k++) {
        size_t used = strlen(reading);

        if (!(y[k] = malloc((n[k] + 1) * sizeof(double)))) {
            rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
            break;
        }
        for (size_t i = 0; i < n[k]; i++)
            y[k][i] = (double)(i + 1) / (double)n[k];
        s[k] = line_series(names[k], x[k], y[k], n[k], PFS_SERIES_LINE, (int)k);
        snprintf(reading + used, sizeof reading - used, "%s%s %.2f (%zu jobs)", k ? ", " : "",
                 names[k], x[k][(n[k] - 1) / 2], n[k]);
    }
    if (rc == 0 && total > 0) {
        size_t used = strlen(reading);

        snprintf(reading + used, sizeof reading - used,
                 ". %zu of %zu values are the corpus's true PFI%s, the rest what the policies "
                 "were given.",
                 n_true, total, n_true ? " (synthetic corpus: model truth)" : "");
        snprintf(title, sizeof title, "%s: PFI at a 30%% cut of the jobs' curves", f->scenario);
        rc =
            emit(f,
                 &(struct pfs_chart){title,
                                     "PFI at a 30% cut (share of throughput lost / "
                                     "share of power removed)",
                                     "share of the group's jobs", s, n_groups, NULL, 0, NULL, true},
                 dir, "pfi", format, fp, reading, diag);
    }
    for (size_t k = 0; k < n_groups; k++) {
        free(x[k]);
        free(y[k]);
    }
    return rc;
}

#define MAX_POINTS 256

/* Fits the DVFS model to a curve's points (per-GPU caps, whole-job throughput, per-GPU
 * draws) on its GPU profile and samples the fit at 41 caps across them, relative to the
 * measured top, into fx, fy. Returns the samples (0 when it cannot be fitted). */
static size_t
fit_curve(const char *id, const char *gpu_name, int n_gpus, double *cap_w, double *tput,
          double *power_w, size_t np, double *fx, double *fy, double *rmse_max)
{
    struct pfs_gpu g;
    struct pfs_job_curve jc = {0};
    struct pfs_fit fit;
    struct pfs_diag quiet = {0};
    char job_id[40];

    if (np < PFS_FIT_MIN_POINTS || pfs_gpu_find(gpu_name, &g, &quiet) != 0)
        return 0;
    pfs__strlcpy(job_id, id, sizeof job_id);
    jc.job_id = job_id;
    pfs__strlcpy(jc.gpu, gpu_name, sizeof jc.gpu);
    jc.n_gpus = n_gpus;
    jc.n_points = np;
    jc.cap_w = cap_w;
    jc.throughput = tput;
    jc.power_w = power_w;
    if (pfs_fit_job(&g, &jc, &fit, &quiet) != 0)
        return 0;
    for (size_t i = 0; i <= 40; i++) {
        struct pfs_dvfs_point pt;

        fx[i] = cap_w[0] + (cap_w[np - 1] - cap_w[0]) * (double)i / 40;
        pfs_dvfs_eval(&g, &fit.job, fx[i], &pt);
        fy[i] = pt.throughput / tput[np - 1];
    }
    *rmse_max = fmax(*rmse_max, fit.rmse_throughput);
    return 41;
}

/* Figure 1: the power-throughput curves of five jobs, the least and most flexible and the
 * quartiles between, as throughput relative to the top of the curve against the cap, with
 * the DVFS model fitted to each. */
static int
curves_figure(struct figs *f, const char *dir, enum pfs_plot_format format, FILE *fp,
              struct pfs_diag *diag)
{
    static double x[5][MAX_POINTS], y[5][MAX_POINTS], pw[5][MAX_POINTS], fx[5][41], fy[5][41];
    struct pfs_series s[11];
    char ids[5][40], labels[5][80], title[160], reading[1024], gpu[5][32];
    double rmse_max = 0;
    size_t n = 0;
    sqlite3_stmt *q = NULL;
    int m = 0, n_fitted = 0, slot = 0;

    /* The least and most flexible curves and the quartiles between: rows round(s (n-1) / 4),
     * s = 0..4, of the curves ordered by PFI (with fewer than five, a row is taken once). */
    if (sqlite3_prepare_v2(f->db, curves_by_pfi_sql, -1, &q, NULL) != SQLITE_OK)
        return db_error(f, diag);
    sqlite3_bind_int64(q, 1, f->runs[0].id);
    for (size_t row = 0; slot < 5 && sqlite3_step(q) == SQLITE_ROW; row++) {
        n = (size_t)sqlite3_column_int64(q, 0);
        if ((size_t)lround((double)(n - 1) * slot / 4.0) != row)
            continue;
        pfs__strlcpy(ids[m], (const char *)sqlite3_column_text(q, 1), sizeof ids[0]);
        snprintf(labels[m], sizeof labels[0], "%s (PFI %.2f)", ids[m], sqlite3_column_double(q, 2));
        m++;
        while (slot < 5 && (size_t)lround((double)(n - 1) * slot / 4.0) <= row)
            slot++;
    }
    sqlite3_finalize(q);
    if (n == 0)
        return 0;
    if (sqlite3_prepare_v2(f->db,
                           "SELECT cap_w, throughput, power_w, gpu, n_gpus FROM curve_point "
                           "JOIN curve USING (scenario_id, curve_id) WHERE scenario_id = "
                           "(SELECT scenario_id FROM run WHERE id = ?) AND curve_id = ? "
                           "ORDER BY cap_w",
                           -1, &q, NULL) != SQLITE_OK)
        return db_error(f, diag);
    for (int k = 0; k < m; k++) {
        size_t np = 0, nf;
        int gpus = 1;

        sqlite3_reset(q);
        sqlite3_bind_int64(q, 1, f->runs[0].id);
        sqlite3_bind_text(q, 2, ids[k], -1, SQLITE_STATIC);
        gpu[k][0] = '\0';
        while (np < MAX_POINTS && sqlite3_step(q) == SQLITE_ROW) {
            x[k][np] = sqlite3_column_double(q, 0);
            y[k][np] = sqlite3_column_double(q, 1);
            pw[k][np++] = sqlite3_column_double(q, 2);
            pfs__strlcpy(gpu[k], (const char *)sqlite3_column_text(q, 3), sizeof gpu[0]);
            gpus = sqlite3_column_int(q, 4);
        }
        nf = np ? fit_curve(ids[k], gpu[k], gpus, x[k], y[k], pw[k], np, fx[k], fy[k], &rmse_max)
                : 0;
        n_fitted += nf > 0;
        for (size_t i = 0; i < np; i++) /* relative to the top of the curve */
            y[k][i] /= y[k][np - 1];
        s[k] = line_series(labels[k], x[k], y[k], np, PFS_SERIES_LINE, k);
        s[m + k] = line_series(NULL, fx[k], fy[k], nf, PFS_SERIES_FIT, k);
    }
    sqlite3_finalize(q);
    s[2 * m] = line_series("dashed: the DVFS model fitted to each", NULL, NULL, 0,
                           PFS_SERIES_REFERENCE, 0);
    snprintf(reading, sizeof reading,
             "Five of the %zu curves the jobs ran, from the least to the most flexible by PFI at "
             "a 30%% cut, joined through their measured (for the synthetic corpus: tabulated) "
             "points; dashed, the DVFS model fitted to each (pfisim fit): %d of %d fitted, "
             "worst RMSE of throughput relative to the top %.4f.",
             n, n_fitted, m, rmse_max);
    snprintf(title, sizeof title, "%s: power-throughput curves", f->scenario);
    return emit(f,
                &(struct pfs_chart){title, "per-GPU power cap (W)",
                                    "throughput / throughput at the highest cap", s,
                                    (size_t)(2 * m + 1), NULL, 0, NULL, false},
                dir, "curves", format, fp, reading, diag);
}

/* emit() for bar panels. */
static int
emit_bars(struct figs *f, const char *title, const struct pfs_bar_panel *p, size_t n,
          const char *dir, const char *name, enum pfs_plot_format format, FILE *fp,
          const char *reading, struct pfs_diag *diag)
{
    char path[1024];

    if (f->page) {
        double h = pfs__bars_height(p, n);

        page_place(f, h);
        pfs__bars_draw(f->page, title, p, n, 900, h);
        page_done(f, reading);
        return 0;
    }
    figure_path(path, sizeof path, dir, name, format);
    return announced(fp, path, pfs__bars_write(title, p, n, path, format, diag));
}

/* Figure 3: the policy comparison, mean throughput and the gap recovered per policy. */
static int
comparison(struct figs *f, const char *dir, enum pfs_plot_format format, FILE *fp,
           struct pfs_diag *diag)
{
    static const char *const t_units[] = {"tokens/s", "thousand tokens/s", "million tokens/s"};
    const char *labels[MAX_RUNS], *tp_unit;
    double tps[MAX_RUNS], gap[MAX_RUNS], max_tps = 0, scale;
    double tlo[MAX_RUNS], thi[MAX_RUNS], glo[MAX_RUNS], ghi[MAX_RUNS];
    char title[300], ylab[64], reading[1024];
    struct pfs_bar_panel p[2];
    sqlite3_stmt *q = NULL;
    long seeds = 1;

    /* Over every seed of the first scenario: bars are means, whiskers min to max. */
    if (sqlite3_prepare_v2(f->db,
                           "SELECT policy, count(*), avg(mean_tps), min(mean_tps), max(mean_tps), "
                           "avg(gap_recovered), min(gap_recovered), max(gap_recovered), "
                           "count(gap_recovered) FROM run JOIN summary ON summary.run_id = run.id "
                           "WHERE run.scenario_id = (SELECT min(scenario_id) FROM run) "
                           "GROUP BY policy",
                           -1, &q, NULL) != SQLITE_OK)
        return db_error(f, diag);
    for (size_t k = 0; k < f->n_runs; k++)
        f->runs[k].n_seeds = 0;
    while (sqlite3_step(q) == SQLITE_ROW)
        for (size_t k = 0; k < f->n_runs; k++) {
            struct run_ts *r = &f->runs[k];

            if (strcmp(r->policy, (const char *)sqlite3_column_text(q, 0)) != 0)
                continue;
            r->n_seeds = (long)sqlite3_column_int64(q, 1);
            r->tps_mean = pfs__sql_real(q, 2);
            r->tps_lo = pfs__sql_real(q, 3);
            r->tps_hi = pfs__sql_real(q, 4);
            /* A gap only where every seed defines one. */
            r->gap_mean =
                sqlite3_column_int64(q, 8) == r->n_seeds ? pfs__sql_real(q, 5) : (double)NAN;
            r->gap_lo = pfs__sql_real(q, 6);
            r->gap_hi = pfs__sql_real(q, 7);
            seeds = r->n_seeds > seeds ? r->n_seeds : seeds;
        }
    sqlite3_finalize(q);
    for (size_t k = 0; k < f->n_runs; k++)
        max_tps = fmax(max_tps, isfinite(f->runs[k].tps_hi) && seeds > 1 ? f->runs[k].tps_hi
                                : isfinite(f->runs[k].mean_tps)          ? f->runs[k].mean_tps
                                                                         : 0);
    scale = unit(max_tps, t_units, &tp_unit);
    for (size_t k = 0; k < f->n_runs; k++) {
        const struct run_ts *r = &f->runs[k];

        labels[k] = r->policy;
        tps[k] = (seeds > 1 ? r->tps_mean : r->mean_tps) / scale;
        gap[k] = seeds > 1 ? r->gap_mean : r->gap;
        tlo[k] = seeds > 1 ? r->tps_lo / scale : (double)NAN;
        thi[k] = seeds > 1 ? r->tps_hi / scale : (double)NAN;
        glo[k] = seeds > 1 && isfinite(gap[k]) ? r->gap_lo : (double)NAN;
        ghi[k] = seeds > 1 && isfinite(gap[k]) ? r->gap_hi : (double)NAN;
    }
    snprintf(ylab, sizeof ylab, "mean throughput (%s)", tp_unit);
    p[0] = (struct pfs_bar_panel){
        "mean throughput", ylab, labels, tps, f->n_runs, 0, tlo, thi, NULL, 0, 0};
    p[1] = (struct pfs_bar_panel){"share of the equal-to-oracle gap recovered",
                                  "(policy - equal) / (oracle - equal)",
                                  labels,
                                  gap,
                                  f->n_runs,
                                  1,
                                  glo,
                                  ghi,
                                  "not defined",
                                  0,
                                  0};
    /* With several seeds, mean throughputs that differ by less than the seeds' own spread
     * say nothing: that panel is left out, and the title says so (issue 18). */
    {
        double lo_mean = HUGE_VAL, hi_mean = -HUGE_VAL, spread = 0;

        for (size_t k = 0; seeds > 1 && k < f->n_runs; k++)
            if (isfinite(tps[k]) && isfinite(tlo[k]) && isfinite(thi[k])) {
                lo_mean = fmin(lo_mean, tps[k]);
                hi_mean = fmax(hi_mean, tps[k]);
                spread = fmax(spread, thi[k] - tlo[k]);
            }
        if (seeds > 1 && hi_mean - lo_mean < spread) {
            snprintf(title, sizeof title,
                     "%s: the policies compared (%ld seeds; mean throughputs within %.3g%% of "
                     "each other, less than the seeds' spread: not drawn)",
                     f->scenario, seeds, 100 * (hi_mean - lo_mean) / lo_mean);
            reading_throughput(f, scale, tp_unit, reading, sizeof reading);
            return emit_bars(f, title, p + 1, 1, dir, "comparison", format, fp, reading, diag);
        }
    }
    if (seeds > 1)
        snprintf(title, sizeof title, "%s: the policies compared (%ld seeds: means, min-max)",
                 f->scenario, seeds);
    else
        snprintf(title, sizeof title, "%s: the policies compared", f->scenario);
    reading_throughput(f, scale, tp_unit, reading, sizeof reading);
    return emit_bars(f, title, p, 2, dir, "comparison", format, fp, reading, diag);
}

/* The slowdowns of a run's finished jobs, (finish - start) / uncapped duration, sorted. */
static int
slowdowns(struct figs *f, sqlite3_int64 run_id, double **out, size_t *n, struct pfs_diag *diag)
{
    sqlite3_stmt *q = NULL;
    size_t cap = 0;
    int rc = 0;

    *out = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(f->db,
                           "SELECT (finish_s - start_s) / duration_s FROM job_result "
                           "WHERE run_id = ? AND finish_s IS NOT NULL AND duration_s > 0",
                           -1, &q, NULL) != SQLITE_OK)
        return db_error(f, diag);
    sqlite3_bind_int64(q, 1, run_id);
    while (sqlite3_step(q) == SQLITE_ROW) {
        double *v = pfs__grow(*out, &cap, *n, sizeof **out, 256);

        if (!v) {
            rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
            break;
        }
        *out = v;
        (*out)[(*n)++] = sqlite3_column_double(q, 0);
    }
    sqlite3_finalize(q);
    /* sorted here: with SQLite's ORDER BY a year's run took 0.9 s to read, without it 0.3 s
     * (docs/benchmarks.md, "Reading a large database"); by radix, slowdowns being positive */
    if (rc == 0)
        pfs__sort_doubles(*out, *n);
    return rc;
}

/* Figure 6: the distribution of per-job slowdowns, one CDF per policy. */
static int
outcomes(struct figs *f, const char *dir, enum pfs_plot_format format, FILE *fp, bool required,
         struct pfs_diag *diag)
{
    struct pfs_series s[MAX_RUNS];
    double *x[MAX_RUNS] = {0}, *y[MAX_RUNS] = {0};
    size_t n[MAX_RUNS] = {0}, used;
    char title[160], reading[1024];
    double clip = 0, largest = 0;
    int rc = 0;

    snprintf(reading, sizeof reading, "Finished jobs, median and 95th-percentile slowdown: ");
    for (size_t k = 0; k < f->n_runs && rc == 0; k++) {
        if ((rc = slowdowns(f, f->runs[k].id, &x[k], &n[k], diag)))
            break;
        y[k] = malloc((n[k] + 1) * sizeof(double));
        if (!y[k]) {
            rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
            break;
        }
        for (size_t i = 0; i < n[k]; i++)
            y[k][i] = (double)(i + 1) / (double)n[k];
        s[k] = line_series(f->runs[k].policy, x[k], y[k], n[k], PFS_SERIES_LINE, (int)k);
        used = strlen(reading);
        if (n[k])
            snprintf(reading + used, sizeof reading - used, "%s%s %zu jobs, %.3f, %.3f",
                     k ? "; " : "", f->runs[k].policy, n[k], x[k][(n[k] - 1) / 2],
                     x[k][(size_t)ceil(0.95 * (double)n[k]) - 1]);
    }
    /* Most jobs are never slowed: the x axis ends at the largest 99.5th percentile, so that
     * the tail does not squeeze the rest into the left edge; the reading gives the maximum. */
    for (size_t k = 0; rc == 0 && k < f->n_runs; k++)
        if (n[k]) {
            clip = fmax(clip, x[k][(size_t)ceil(0.995 * (double)n[k]) - 1]);
            largest = fmax(largest, x[k][n[k] - 1]);
        }
    for (size_t k = 0; rc == 0 && k < f->n_runs; k++) {
        size_t first = 0; /* the last unslowed job: the curve starts at their share */

        while (s[k].n > 1 && x[k][s[k].n - 1] > clip)
            s[k].n--;
        while (first + 1 < s[k].n && x[k][first + 1] <= 1 + 1e-6)
            first++;
        if (first == 0) /* (a run with no finished job has no points: NULL, not offset) */
            continue;
        s[k].x += first;
        s[k].y += first;
        s[k].n -= first;
    }
    used = strlen(reading);
    snprintf(reading + used, sizeof reading - used,
             ". The x axis ends at the largest 99.5th percentile, %.3f; the largest slowdown is "
             "%.3f. Deadline misses: ",
             clip, largest);
    per_policy(f, reading, sizeof reading, 0, offsetof(struct run_ts, deadline_misses), 1);
    used = strlen(reading);
    snprintf(reading + used, sizeof reading - used, ". Tier violations: ");
    per_policy(f, reading, sizeof reading, 0, offsetof(struct run_ts, tier_violations), 1);
    pfs__strlcpy(reading + strlen(reading), ".", sizeof reading - strlen(reading));
    snprintf(title, sizeof title, "%s: per-job slowdown (finished jobs)", f->scenario);
    if (rc == 0 && !(largest > 0)) { /* no job finished (the Phoenix replay): no figure */
        if (required)
            rc = pfs__diag_set(diag, PFS_EINVAL, f->db_path, 0, 0, NULL,
                               "figure outcomes: no job finished within the runs");
    } else if (rc == 0)
        rc = emit(f,
                  &(struct pfs_chart){title, "slowdown: run time / uncapped run time",
                                      "share of finished jobs", s, f->n_runs, NULL, 0, NULL, false},
                  dir, "outcomes", format, fp, reading, diag);
    for (size_t k = 0; k < f->n_runs; k++) {
        free(x[k]);
        free(y[k]);
    }
    return rc;
}

/* One run's tree_result rows into p (its arrays malloc'd, the names into names): parents
 * found as the nearest node before one a level up (the tree's order is depth first).
 * Returns 0 (p->n 0: none), or an error. */
struct tree_rows {
    int32_t *parent;
    int *level;
    double *width, *ratio, *over;
    char **name;
};

static void
tree_rows_free(struct tree_rows *t, size_t n)
{
    for (size_t v = 0; t->name && v < n; v++)
        free(t->name[v]);
    free(t->parent), free(t->level), free(t->width), free(t->ratio), free(t->over), free(t->name);
    memset(t, 0, sizeof *t);
}

static int
tree_load(struct figs *f, sqlite3_int64 run_id, struct tree_rows *t, size_t *n,
          struct pfs_diag *diag)
{
    sqlite3_stmt *q = NULL;
    size_t rows = 0;
    int rc = 0;

    *n = 0;
    if (sqlite3_prepare_v2(f->db, "SELECT count(*) FROM tree_result WHERE run_id = ?", -1, &q,
                           NULL) != SQLITE_OK)
        return db_error(f, diag);
    sqlite3_bind_int64(q, 1, run_id);
    if (sqlite3_step(q) == SQLITE_ROW)
        rows = (size_t)sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    if (rows == 0)
        return 0;
    t->parent = malloc(rows * sizeof *t->parent);
    t->level = malloc(rows * sizeof *t->level);
    t->width = malloc(rows * sizeof *t->width);
    t->ratio = malloc(rows * sizeof *t->ratio);
    t->over = malloc(rows * sizeof *t->over);
    t->name = calloc(rows, sizeof *t->name);
    if (!t->parent || !t->level || !t->width || !t->ratio || !t->over || !t->name)
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    if (sqlite3_prepare_v2(f->db,
                           "SELECT node, level, limit_w, nameplate_w, peak_w, minutes_over FROM "
                           "tree_result WHERE run_id = ? ORDER BY rowid",
                           -1, &q, NULL) != SQLITE_OK)
        return db_error(f, diag);
    sqlite3_bind_int64(q, 1, run_id);
    while (rc == 0 && *n < rows && sqlite3_step(q) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(q, 0);
        double lim = pfs__sql_real(q, 2);
        int level = sqlite3_column_int(q, 1);

        /* (the database was checked: a node's level is 0 or more; a malformed order is drawn
         * under the root rather than read past the rows) */
        t->level[*n] = level;
        t->parent[*n] = -1;
        for (size_t u = *n; level > 0 && u-- > 0;)
            if (t->level[u] == level - 1) {
                t->parent[*n] = (int32_t)u;
                break;
            }
        if (*n > 0 && t->parent[*n] < 0)
            t->parent[*n] = 0;
        t->width[*n] = pfs__sql_real(q, 3);
        t->ratio[*n] = lim > 0 ? pfs__sql_real(q, 4) / lim : (double)NAN;
        t->over[*n] = pfs__sql_real(q, 5);
        if (!(t->name[*n] = strdup(name ? name : "")))
            rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        else
            (*n)++;
    }
    sqlite3_finalize(q);
    return rc;
}

/* Figure: the power tree, every node's headroom per policy (an icicle each), where the runs
 * held one (required: asked for by name, so an error where none did). */
static int
tree_figure(struct figs *f, const char *dir, enum pfs_plot_format format, FILE *fp, bool required,
            struct pfs_diag *diag)
{
    struct pfs__tree_panel p[MAX_RUNS];
    struct tree_rows rows[MAX_RUNS] = {{0}};
    size_t n[MAX_RUNS] = {0}, used, m = 0;
    char title[160], reading[1024], path[1024];
    int rc = 0;

    snprintf(reading, sizeof reading,
             "Each node's highest minute of IT power over its limit (the root: the feed); "
             "the worst node of each level and the minutes over any limit: ");
    for (size_t k = 0; k < f->n_runs && rc == 0; k++) {
        int top = 0;
        double over = 0;

        if ((rc = tree_load(f, f->runs[k].id, &rows[k], &n[k], diag)) || n[k] == 0)
            continue;
        p[m++] = (struct pfs__tree_panel){f->runs[k].policy,
                                          n[k],
                                          rows[k].parent,
                                          rows[k].level,
                                          rows[k].width,
                                          rows[k].ratio,
                                          (const char *const *)rows[k].name};
        for (size_t v = 0; v < n[k]; v++) {
            top = rows[k].level[v] > top ? rows[k].level[v] : top;
            over += isnan(rows[k].over[v]) ? 0 : rows[k].over[v];
        }
        used = strlen(reading);
        snprintf(reading + used, sizeof reading - used, "%s%s", m > 1 ? "; " : "",
                 f->runs[k].policy);
        for (int l = 0; l <= top; l++) {
            double worst = NAN;

            for (size_t v = 0; v < n[k]; v++)
                if (rows[k].level[v] == l && !(rows[k].ratio[v] <= worst))
                    worst = isnan(worst) || rows[k].ratio[v] > worst ? rows[k].ratio[v] : worst;
            used = strlen(reading);
            if (!isnan(worst))
                snprintf(reading + used, sizeof reading - used, " level %d %.3f", l, worst);
        }
        used = strlen(reading);
        snprintf(reading + used, sizeof reading - used, ", %.0f min over", over);
    }
    if (rc == 0 && m == 0) {
        if (required)
            rc = pfs__diag_set(diag, PFS_EINVAL, f->db_path, 0, 0, NULL,
                               "figure tree: no run held a power tree (scenario.facility.tree)");
    } else if (rc == 0) {
        pfs__strlcpy(reading + strlen(reading), ".", sizeof reading - strlen(reading));
        snprintf(title, sizeof title, "%s: the power tree, each node's peak over its limit",
                 f->scenario);
        if (f->page) {
            double h = pfs__tree_height(p, m);

            page_place(f, h);
            pfs__tree_draw(f->page, title, p, m, 900, h);
            page_done(f, reading);
        } else {
            figure_path(path, sizeof path, dir, "tree", format);
            rc = announced(fp, path, pfs__tree_write(title, p, m, path, format, diag));
        }
    }
    for (size_t k = 0; k < f->n_runs; k++)
        tree_rows_free(&rows[k], n[k]);
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
    char path[1024], reading[1024];
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
        s[k] = line_series(r->policy, x[k], y[k], r->n, PFS_SERIES_LINE, (int)k);
    }
    s[f->n_runs] = line_series("measured (Emerald, Phoenix)", mx, my, n, PFS_SERIES_REFERENCE, 0);
    reading_phoenix(f, my, n, reading, sizeof reading);
    rc = emit(f,
              &(struct pfs_chart){"Phoenix DR event: simulated against measured GPU power",
                                  "minutes from the first measured minute", "GPU power (kW)", s,
                                  f->n_runs + 1, (const double(*)[2])sp, n_sp,
                                  "DR event (simulated limit)", false},
              dir, "phoenix", format, fp, reading, diag);
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

/* ----- a sweep over the GPU count (study 1, docs/results.md) ----- */

struct sweep_pt {
    int gpus;
    double dr_per_year, tokens_per_day, misses, tiers, jobs, over_frac;
    char policy[32];
};

/* Every run of the database as a point: its scenario's GPU count and DR events per year
 * (from the stored configuration), its policy and outcomes. */
static int
sweep_points(struct figs *f, struct sweep_pt **out, size_t *n, struct pfs_diag *diag)
{
    struct pfs_scenario *sc = malloc(sizeof *sc);
    struct sweep_pt *pt = NULL;
    sqlite3_stmt *q = NULL;
    size_t cap = 0;
    int rc = 0;

    *n = 0;
    *out = NULL;
    if (!sc)
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    if (sqlite3_prepare_v2(f->db,
                           "SELECT s.config, r.policy, m.tokens, m.deadline_misses, "
                           "m.tier_violations, m.jobs_submitted, m.dr_minutes_over FROM run r "
                           "JOIN scenario s ON s.id = r.scenario_id JOIN summary m "
                           "ON m.run_id = r.id ORDER BY r.id",
                           -1, &q, NULL) != SQLITE_OK) {
        free(sc);
        return db_error(f, diag);
    }
    while (rc == 0 && sqlite3_step(q) == SQLITE_ROW) {
        struct sweep_pt *p, *grown = pfs__grow(pt, &cap, *n, sizeof *pt, 64);
        double event_min = 0;
        size_t n_ev = 0;

        if (!grown) {
            rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
            break;
        }
        pt = grown;
        p = &pt[*n];
        if ((rc =
                 pfs_scenario_parse((const char *)sqlite3_column_text(q, 0), f->db_path, sc, diag)))
            break;

        for (size_t k = 0; k < sc->n_dr; k++) /* the events within the run */
            if (sc->dr[k].start_s < sc->days * 86400) {
                n_ev++;
                event_min += (fmin(sc->dr[k].end_s, sc->days * 86400) - sc->dr[k].start_s) / 60;
            }
        p->gpus = sc->gpus;
        p->dr_per_year = floor((double)n_ev * 365 / sc->days + 0.5);
        pfs__strlcpy(p->policy, (const char *)sqlite3_column_text(q, 1), sizeof p->policy);
        p->tokens_per_day = pfs__sql_real(q, 2) / sc->days;
        p->misses = pfs__sql_real(q, 3);
        p->tiers = pfs__sql_real(q, 4);
        p->jobs = pfs__sql_real(q, 5);
        p->over_frac = event_min > 0 ? pfs__sql_real(q, 6) / event_min : 0;
        (*n)++;
    }
    sqlite3_finalize(q);
    free(sc);
    if (rc) {
        free(pt);
        *n = 0;
        return rc;
    }
    *out = pt;
    return 0;
}

/* The distinct values of v[0..n) (sorted) into out; returns their number. */
static size_t
distinct(double *v, size_t n, double *out)
{
    size_t m = 0;

    qsort(v, n, sizeof *v, pfs__cmp_double);
    for (size_t i = 0; i < n; i++)
        if (m == 0 || v[i] > out[m - 1])
            out[m++] = v[i];
    return m;
}

/* Tokens per day against installed GPUs, one figure per DR frequency, one line per policy;
 * then deadline misses and tier violations (shares of jobs) at the highest frequency. */
static int
oversub(struct figs *f, const char *dir, enum pfs_plot_format format, FILE *fp, bool required,
        struct pfs_diag *diag)
{
    struct sweep_pt *pt = NULL;
    double *tmp = NULL, *gx = NULL, *fr = NULL, *y = NULL, *ylo = NULL, *yhi = NULL;
    char pol[MAX_RUNS][32];
    size_t n = 0, n_g = 0, n_f = 0, n_p = 0;
    int rc;

    if ((rc = sweep_points(f, &pt, &n, diag)))
        goto out;
    tmp = malloc((n + 1) * sizeof *tmp);
    gx = malloc((n + 1) * sizeof *gx);
    fr = malloc((n + 1) * sizeof *fr);
    if (!tmp || !gx || !fr) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        tmp[i] = pt[i].gpus;
    n_g = distinct(tmp, n, gx);
    for (size_t i = 0; i < n; i++)
        tmp[i] = pt[i].dr_per_year;
    n_f = distinct(tmp, n, fr);
    for (size_t i = 0; i < n; i++) { /* policies in the order first written */
        size_t k = 0;

        while (k < n_p && strcmp(pol[k], pt[i].policy) != 0)
            k++;
        if (k == n_p && n_p == MAX_RUNS) {
            rc = pfs__diag_set(diag, PFS_EINVAL, f->db_path, 0, 0, NULL,
                               "figure oversub draws at most %d policies", MAX_RUNS);
            goto out;
        }
        if (k == n_p)
            pfs__strlcpy(pol[n_p++], pt[i].policy, sizeof pol[0]);
    }
    if (n_g < 2) {
        rc =
            !required
                ? 0
                : pfs__diag_set(diag, PFS_EINVAL, f->db_path, 0, 0, NULL,
                                "figure oversub needs runs at two or more GPU counts (a sweep over "
                                "facility.gpus, configs/sweeps/oversub.cfg)");
        goto out;
    }
    if (!(y = malloc((n_p * n_g + 1) * sizeof *y)) || /* a line per policy over the counts */
        !(ylo = malloc((n_p * n_g + 1) * sizeof *ylo)) ||
        !(yhi = malloc((n_p * n_g + 1) * sizeof *yhi))) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    /* One figure per DR frequency and one per outcome at the highest: 2 + n_f charts. */
    for (size_t c = 0; c < n_f + 2 && rc == 0; c++) {
        double freq = c < n_f ? fr[c] : fr[n_f - 1], scale = 1e9;
        struct pfs_series s[MAX_RUNS];
        char title[160], name[64], reading[1536] = "", ylab[64], label[MAX_RUNS][300];
        size_t used;

        for (size_t k = 0; k < n_p; k++) {
            double best = -1, best_g = 0;
            bool missed = false;
            char missed_at[256] = "";

            for (size_t g = 0; g < n_g; g++) {
                double sum = 0, worst = 0, lo = HUGE_VAL, hi = -HUGE_VAL;
                size_t m = 0;

                /* The mean over the point's seeds; DR met only if met under every seed. */
                for (size_t i = 0; i < n; i++) {
                    const struct sweep_pt *p = &pt[i];

                    if (p->gpus != (int)gx[g] || strcmp(p->policy, pol[k]) != 0 ||
                        p->dr_per_year > freq || p->dr_per_year < freq)
                        continue;
                    double v = c < n_f ? p->tokens_per_day / scale
                                       : 100 * (c == n_f ? p->misses : p->tiers) / p->jobs;

                    sum += v;
                    lo = fmin(lo, v);
                    hi = fmax(hi, v);
                    worst = fmax(worst, p->over_frac);
                    m++;
                }
                y[k * n_g + g] = m ? sum / (double)m : (double)NAN;
                /* the seeds' range as whiskers, where there are several */
                ylo[k * n_g + g] = m > 1 ? lo : (double)NAN;
                yhi[k * n_g + g] = m > 1 ? hi : (double)NAN;
                /* The optimum: most tokens a day where DR targets were met (mean power over
                 * the target in at most 1% of event minutes). */
                if (m && c < n_f && worst <= 0.01 && y[k * n_g + g] > best)
                    best = y[k * n_g + g], best_g = gx[g];
                if (worst > 0.01) {
                    size_t at = strlen(missed_at);

                    missed = true;
                    snprintf(missed_at + at, sizeof missed_at - at, " %.0f", gx[g]);
                }
            }
            /* The legend says where DR targets were missed: the line alone does not. */
            if (c < n_f && missed)
                snprintf(label[k], sizeof label[k], "%.31s (DR missed:%.250s)", pol[k], missed_at);
            else
                snprintf(label[k], sizeof label[k], "%.31s", pol[k]);
            s[k] = (struct pfs_series){label[k], gx,   y + k * n_g,   n_g,          PFS_SERIES_LINE,
                                       (int)k,   true, ylo + k * n_g, yhi + k * n_g};
            if (c < n_f) {
                used = strlen(reading);
                snprintf(reading + used, sizeof reading - used, "%s%s %.0f GPUs (%.1f)",
                         k ? "; " : "Most tokens a day with the DR targets met: ", pol[k], best_g,
                         best);
                if (missed) {
                    used = strlen(reading);
                    snprintf(reading + used, sizeof reading - used, ", DR missed at%s", missed_at);
                }
            }
        }
        if (c < n_f) {
            snprintf(title, sizeof title,
                     "%s: tokens a day under a fixed power cap, %g DR "
                     "events a year",
                     f->study, freq);
            snprintf(name, sizeof name, "oversub-%gdr", freq);
            snprintf(ylab, sizeof ylab, "tokens a day (billions)");
            used = strlen(reading);
            snprintf(reading + used, sizeof reading - used, " (billions a day).");
        } else {
            snprintf(title, sizeof title, "%s: %s, %g DR events a year", f->study,
                     c == n_f ? "deadlines missed" : "tier floors broken", freq);
            snprintf(name, sizeof name, "oversub-%s", c == n_f ? "deadlines" : "tiers");
            snprintf(ylab, sizeof ylab, "%s (%% of jobs)",
                     c == n_f ? "deadlines missed" : "tier floors broken");
            snprintf(reading, sizeof reading, "Per policy at %.0f and %.0f GPUs: ", gx[0],
                     gx[n_g - 1]);
            for (size_t k = 0; k < n_p; k++) {
                used = strlen(reading);
                snprintf(reading + used, sizeof reading - used, "%s%s %.1f%% and %.1f%%",
                         k ? ", " : "", pol[k], y[k * n_g], y[k * n_g + n_g - 1]);
            }
            used = strlen(reading);
            snprintf(reading + used, sizeof reading - used, ".");
        }
        rc =
            emit(f, &(struct pfs_chart){title, "GPUs installed", ylab, s, n_p, NULL, 0, NULL, true},
                 dir, name, format, fp, reading, diag);
    }
out:
    free(pt);
    free(tmp);
    free(gx);
    free(fr);
    free(y);
    free(ylo);
    free(yhi);
    return rc;
}

/* Study 2 (docs/pricing.md): per scenario with Flex jobs, one panel per Flex tier (its fair
 * discount) and one for the operator's break-even discount, a bar per policy, one y scale. */
static int
pricing(struct figs *f, const char *dir, enum pfs_plot_format format, FILE *fp, bool required,
        struct pfs_diag *diag)
{
    static const char *const labels[4] = {"flex1", "flex2", "flex3", "max"}; /* max: break-even */
    struct pfs_price_run *pr = NULL;
    size_t n = 0, drawn = 0;
    struct pfs_diag quiet;
    int rc;

    pfs_diag_clear(&quiet);
    if ((rc = pfs_price_db(f->db_path, &pr, &n, required ? diag : &quiet)))
        return required ? rc : 0; /* nothing to price: no page, and no error left behind */
    for (size_t i = 0; i < n && rc == 0; i++) {
        /* A panel per tier (and the break-even), a bar per policy in every panel's colour
         * order, one y scale for all four: the policies compared at a glance (issue 18:
         * a panel per policy, each with its own scale). */
        struct pfs_bar_panel p[4];
        double v[4][MAX_RUNS], top = 0, dr_pay[MAX_RUNS], compliance_sum[MAX_RUNS];
        const char *pols[MAX_RUNS];
        size_t seeds[MAX_RUNS];
        size_t np = 0, jobs = 0, flex = 0;
        bool first = true;
        char title[200], name[64], reading[1536] = "";

        for (size_t k = 0; k < i && first; k++) /* once per scenario, at its first run */
            first = strcmp(pr[k].hash, pr[i].hash) != 0;
        for (int t = 0; t < PFS_N_TIERS; t++) {
            jobs += pr[i].tier[t].jobs;
            flex += t ? pr[i].tier[t].jobs : 0;
        }
        if (!first || flex == 0)
            continue;
        /* A bar per policy: the mean over the scenario's seeds. */
        for (size_t k = i; k < n; k++) {
            size_t at = 0;

            if (strcmp(pr[k].hash, pr[i].hash) != 0)
                continue;
            while (at < np && strcmp(pols[at], pr[k].policy) != 0)
                at++;
            if (at == np) {
                if (np == MAX_RUNS)
                    continue;
                pols[np] = pr[k].policy;
                seeds[np] = 0;
                dr_pay[np] = compliance_sum[np] = 0;
                for (int t = 0; t < 4; t++)
                    v[t][np] = 0;
                np++;
            }
            for (int t = 1; t < PFS_N_TIERS; t++)
                v[t - 1][at] += 100 * pr[k].tier[t].discount;
            v[3][at] += 100 * pr[k].breakeven_discount;
            dr_pay[at] += pr[k].rev_dr_capacity + pr[k].rev_dr_energy;
            compliance_sum[at] += pr[k].compliance;
            seeds[at]++;
        }
        for (size_t k = 0; k < np; k++)
            for (int t = 0; t < 4; t++) {
                v[t][k] /= (double)seeds[k];
                if (isfinite(v[t][k]))
                    top = fmax(top, v[t][k]);
            }
        {
            /* The caption's conclusion: which policy lets the operator offer the most and
             * the least, where the fair discount is deepest, what DR pays. */
            size_t hi_k = 0, lo_k = 0, deep_k = 0;
            int deep_t = 0;

            for (size_t k = 0; k < np; k++) {
                if (v[3][k] > v[3][hi_k])
                    hi_k = k;
                if (v[3][k] < v[3][lo_k])
                    lo_k = k;
                for (int t = 0; t < 3; t++)
                    if (v[t][k] > v[deep_t][deep_k])
                        deep_k = k, deep_t = t;
            }
            char comp[40] = "no DR event";

            if (!isnan(compliance_sum[hi_k])) /* (NAN: runs without an event) */
                snprintf(comp, sizeof comp, "compliance %.3f",
                         compliance_sum[hi_k] / (double)seeds[hi_k]);
            snprintf(reading, sizeof reading,
                     "The operator breaks even offering Flex GPU-hours up to %.2f%% off under %s, "
                     "and only %.2f%% under %s. The fair discount is deepest for %s under %s "
                     "(%.2f%%): that tier loses the most throughput there. DR pays %.0f $ per "
                     "MW-year under %s (%s)",
                     v[3][hi_k], pols[hi_k], v[3][lo_k], pols[lo_k], labels[deep_t], pols[deep_k],
                     v[deep_t][deep_k], dr_pay[hi_k] / (double)seeds[hi_k], pols[hi_k], comp);
        }
        for (int t = 0; t < 4; t++)
            p[t] = (struct pfs_bar_panel){t < 3 ? labels[t] : "break-even (max)",
                                          "discount (%)",
                                          pols,
                                          v[t],
                                          np,
                                          1,
                                          NULL,
                                          NULL,
                                          NULL,
                                          0,
                                          top};
        pfs__strlcpy(reading + strlen(reading),
                     ". Fair discount: equal tokens per dollar with "
                     "the firm tier; break-even: the operator no worse "
                     "off than without the tier (docs/pricing.md).",
                     sizeof reading - strlen(reading));
        snprintf(title, sizeof title,
                 "%s: %.0f DR events a year, %.0f%% Flex: fair discounts, max (break-even)",
                 pr[i].scenario, (double)pr[i].n_events * 365 / pr[i].days,
                 100.0 * (double)flex / (double)jobs);
        snprintf(name, sizeof name, "pricing-%.8s", pr[i].hash);
        rc = emit_bars(f, title, p, 4, dir, name, format, fp, reading, diag);
        drawn++;
    }
    free(pr);
    if (rc == 0 && drawn == 0 && required)
        rc = pfs__diag_set(diag, PFS_EINVAL, f->db_path, 0, 0, NULL,
                           "figure pricing needs runs with Flex-tier jobs and per-job results");
    return rc;
}

/* Every figure, or only the one named: into files in dir, or onto the report's pages. A
 * figure the data cannot give (no job finished; not the Phoenix replay) is left out, or an
 * error when it was asked for by name. */
/* ----- deadlines met against the cut (study 3, docs/results.md) ----- */

#define DL_MAX 16

/* One figure per deadline slack: the share of deadlines met (means over seeds) against the
 * DR events' cut, one line per policy. The cut and the slack are read from each scenario's
 * canonical text (its events' cut, its workload's slack). */
static int
deadlines_figure(struct figs *f, const char *dir, enum pfs_plot_format format, FILE *fp,
                 struct pfs_diag *diag)
{
    double slack[DL_MAX], cut[DL_MAX], met[DL_MAX][DL_MAX][DL_MAX] = {{{0}}};
    int cnt[DL_MAX][DL_MAX][DL_MAX] = {{{0}}};
    char pol[DL_MAX][32];
    size_t n_s = 0, n_c = 0, n_p = 0;
    sqlite3_stmt *q = NULL;
    int rc = 0;

    if (sqlite3_prepare_v2(f->db,
                           "SELECT scenario.config, run.policy, deadline_misses, jobs_submitted "
                           "FROM run JOIN scenario ON scenario.id = run.scenario_id "
                           "JOIN summary ON summary.run_id = run.id ORDER BY run.id",
                           -1, &q, NULL) != SQLITE_OK)
        return db_error(f, diag);
    while (rc == 0 && sqlite3_step(q) == SQLITE_ROW) {
        const char *cfg = (const char *)sqlite3_column_text(q, 0);
        const char *ev = cfg ? strstr(cfg, "dr_events") : NULL,
                   *sl = cfg ? strstr(cfg, "slack = [") : NULL;
        const char *cu = ev ? strstr(ev, "cut = ") : NULL;
        const char *name = (const char *)sqlite3_column_text(q, 1);
        double vs, vc, jobs = sqlite3_column_double(q, 3);
        size_t a, b, c;

        if (!cu || !sl || !name || !(jobs > 0))
            continue; /* no events, or no slack: not a point of this study */
        vs = strtod(sl + 9, NULL);
        vc = strtod(cu + 6, NULL);
        for (a = 0; a < n_s && !(fabs(slack[a] - vs) < 1e-9); a++)
            ;
        for (b = 0; b < n_c && !(fabs(cut[b] - vc) < 1e-9); b++)
            ;
        for (c = 0; c < n_p && strcmp(pol[c], name) != 0; c++)
            ;
        if ((a == n_s && n_s == DL_MAX) || (b == n_c && n_c == DL_MAX) ||
            (c == n_p && n_p == DL_MAX)) {
            rc = pfs__diag_set(diag, PFS_EINVAL, f->db_path, 0, 0, NULL,
                               "figure deadlines draws at most %d slacks, cuts and policies",
                               DL_MAX);
            break;
        }
        if (a == n_s)
            slack[n_s++] = vs;
        if (b == n_c)
            cut[n_c++] = vc;
        if (c == n_p)
            pfs__strlcpy(pol[n_p++], name, sizeof pol[0]);
        met[a][b][c] += 100 * (1 - sqlite3_column_double(q, 2) / jobs);
        cnt[a][b][c]++;
    }
    sqlite3_finalize(q);
    if (rc == 0 && (n_c < 2 || n_s < 1))
        rc = pfs__diag_set(diag, PFS_EINVAL, f->db_path, 0, 0, NULL,
                           "figure deadlines needs runs at two or more cuts "
                           "(configs/sweeps/deadlines.cfg)");
    for (size_t a = 0; a < n_s && rc == 0; a++) {
        double x[DL_MAX][DL_MAX], y[DL_MAX][DL_MAX], order[DL_MAX];
        struct pfs_series se[DL_MAX];
        char title[160], name[64], reading[1024];
        size_t used;

        memcpy(order, cut, n_c * sizeof *cut);
        qsort(order, n_c, sizeof *order, pfs__cmp_double);
        snprintf(reading, sizeof reading,
                 "Deadlines met (%% of jobs, mean over seeds) at the deepest cut, %.0f%%: ",
                 100 * order[n_c - 1]);
        for (size_t c = 0; c < n_p; c++) {
            for (size_t k = 0; k < n_c; k++) {
                size_t b = 0;

                while (!(fabs(cut[b] - order[k]) < 1e-12))
                    b++;
                x[c][k] = 100 * order[k];
                y[c][k] = cnt[a][b][c] ? met[a][b][c] / cnt[a][b][c] : (double)NAN;
            }
            se[c] = line_series(pol[c], x[c], y[c], n_c, PFS_SERIES_LINE, (int)c);
            used = strlen(reading);
            snprintf(reading + used, sizeof reading - used, "%s%s %.2f", c ? ", " : "", pol[c],
                     y[c][n_c - 1]);
        }
        pfs__strlcpy(reading + strlen(reading), ".", sizeof reading - strlen(reading));
        snprintf(title, sizeof title, "%s: deadlines met against the cut, slack %.3gx",
                 f->study[0] ? f->study : f->scenario, slack[a]);
        snprintf(name, sizeof name, "deadlines-slack%.3g", slack[a]);
        rc = emit(f,
                  &(struct pfs_chart){title, "DR event's cut (% of the facility's power)",
                                      "deadlines met (% of jobs)", se, n_p, NULL, 0, NULL, false},
                  dir, name, format, fp, reading, diag);
    }
    return rc;
}

static int
figures(struct figs *f, const char *dir, enum pfs_plot_format format, const char *only, FILE *fp,
        struct pfs_diag *diag)
{
    int rc = 0;

    if (wanted(only, "curves"))
        rc = curves_figure(f, dir, format, fp, diag);
    if (rc == 0 && wanted(only, "pfi"))
        rc = pfi_figure(f, dir, format, fp, diag);
    if (rc == 0 && (f->runs[0].n > 0 || only))
        rc = timeline(f, dir, format, only, fp, diag); /* not for a sweep without series */
    if (rc == 0 && wanted(only, "comparison"))
        rc = comparison(f, dir, format, fp, diag);
    if (rc == 0 && wanted(only, "outcomes"))
        rc = outcomes(f, dir, format, fp, only != NULL, diag);
    if (rc == 0 && wanted(only, "tree")) /* runs under a power tree */
        rc = tree_figure(f, dir, format, fp, only != NULL, diag);
    if (rc == 0 && wanted(only, "oversub")) /* a sweep over the GPU count: study 1 */
        rc = oversub(f, dir, format, fp, only != NULL, diag);
    /* study 2: by name, and a page of the report wherever there is something to price */
    if (rc == 0 && only && strcmp(only, "pricing") == 0)
        rc = pricing(f, dir, format, fp, true, diag);
    else if (rc == 0 && f->page && !only)
        rc = pricing(f, dir, format, fp, false, diag);
    if (rc == 0 && only && strcmp(only, "deadlines") == 0) /* study 3: by name only */
        rc = deadlines_figure(f, dir, format, fp, diag);
    if (rc == 0 && wanted(only, "phoenix")) {
        if (strncmp(f->scenario, "phoenix-srp", 11) == 0) /* blind or measured */
            rc = phoenix(f, dir, format, fp, diag);
        else if (only)
            rc = pfs__diag_set(diag, PFS_EINVAL, f->db_path, 0, 0, NULL,
                               "figure phoenix needs a run of the phoenix-srp scenario, not '%s'",
                               f->scenario);
    }
    return rc;
}

int
pfs_plot_db(const char *db_path, const char *dir, enum pfs_plot_format format, const char *only,
            FILE *fp, struct pfs_diag *diag)
{
    static const char *const known[] = {"curves",     "pfi",       "power",   "throughput",
                                        "comparison", "outcomes",  "phoenix", "oversub",
                                        "pricing",    "deadlines", "tree"};
    struct pfs_store *st = NULL;
    struct figs f = {.db_path = db_path};
    bool ok = !only;
    bool made = false;
    int rc;

    for (size_t k = 0; only && k < sizeof known / sizeof known[0]; k++)
        ok |= strcmp(only, known[k]) == 0;
    if (!ok)
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "only",
                             "unknown figure '%s' (curves, pfi, power, throughput, comparison, "
                             "outcomes, phoenix, oversub, pricing, deadlines, tree)",
                             only);
    if ((rc = pfs_store_open_read(db_path, &st, diag)))
        return rc;
    f.db = pfs__store_db(st);
    if ((rc = pfs__store_check_table(f.db, db_path, "timeseries", diag))) {
        pfs_store_close(st);
        return rc;
    }
    if ((rc = load(&f, diag)) == 0) {
        if (mkdir(dir, 0777) == 0)
            made = true;
        else if (errno != EEXIST)
            rc =
                pfs__diag_set(diag, PFS_EIO, dir, 0, 0, NULL, "cannot create: %s", strerror(errno));
    }
    if (rc == 0)
        rc = figures(&f, dir, format, only, fp, diag);
    if (rc && made) /* (a folder made for figures none of which was written: gone again) */
        rmdir(dir);
    figs_free(&f);
    pfs_store_close(st);
    return rc;
}

/* The value of setting key ("corpus", "file", "arrivals") in the scenario's canonical
 * text, into buf ("" when absent). */
static void
setting(const char *config, const char *key, char *buf, size_t size)
{
    char pat[64];
    const char *p, *q;

    buf[0] = '\0';
    snprintf(pat, sizeof pat, " %s = \"", key);
    if (!(p = strstr(config, pat)))
        return;
    p += strlen(pat);
    if ((q = strchr(p, '"')) != NULL)
        snprintf(buf, size, "%.*s", (int)(q - p), p);
}

/* Where the scenario's data came from, real or synthetic, in two sentences. */
/* The first number setting called key (" key = N;") of the canonical config, as text. */
static void
setting_value(const char *config, const char *key, char *buf, size_t size)
{
    char pat[64];
    const char *p;
    size_t n;

    snprintf(pat, sizeof pat, " %s = ", key);
    if (!(p = strstr(config, pat)))
        return;
    p += strlen(pat);
    n = strcspn(p, ";\n");
    snprintf(buf, size, "%.*s", (int)n, p);
}

static void
provenance(const char *config, char *corpus_line, char *workload_line, size_t size)
{
    char corpus[300], file[300], arrivals[300];

    setting(config, "corpus", corpus, sizeof corpus);
    setting(config, "file", file, sizeof file);
    setting(config, "arrivals", arrivals, sizeof arrivals);
    if (strncmp(corpus, "import:", 7) == 0)
        snprintf(corpus_line, size,
                 "Curves: REAL measured power-cap curves imported at run time from the data "
                 "directory (%s).",
                 corpus + 7);
    else if (strncmp(corpus, "synth:", 6) == 0)
        snprintf(corpus_line, size,
                 "Curves: SYNTHETIC - the corpus's configurations made by pfisim synth on the "
                 "%s profile at run time (docs/corpus.md); not measurements, and EXTRAPOLATED "
                 "where that profile is (below).",
                 corpus + 6);
    else if (strstr(corpus, "h200-h100"))
        snprintf(corpus_line, size,
                 "Curves: SYNTHETIC - the shipped H200/H100 corpus (%s), generated by pfisim "
                 "synth from the DVFS model and calibrated against real data "
                 "(docs/corpus.md); not measurements.",
                 corpus);
    else
        snprintf(corpus_line, size,
                 "Curves: the corpus in %s (see its files for whether it is real or "
                 "synthetic).",
                 corpus);
    if (file[0])
        snprintf(workload_line, size, "Workload: the file %s.", file);
    else if (strncmp(arrivals, "fitted:", 7) == 0)
        snprintf(workload_line, size,
                 "Workload: SYNTHETIC arrivals drawn from the model fitted to the real %s trace "
                 "(configs/arrivals/), run on the curves above.",
                 arrivals + 7);
    else if (strncmp(arrivals, "poisson:", 8) == 0)
        snprintf(workload_line, size, "Workload: SYNTHETIC Poisson arrivals (%s).", arrivals);
    else
        snprintf(workload_line, size,
                 "Workload: arrivals, sizes and durations of the REAL %s trace from the data "
                 "directory, run on the curves above.",
                 arrivals);
}

static void
title_page(struct figs *f, const char *config)
{
    cairo_t *cr = f->page;
    char line[600], corpus[700], workload[700];
    double y;

    provenance(config, corpus, workload, sizeof corpus);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
    cairo_set_font_size(cr, 26);
    cairo_move_to(cr, 60, 130);
    cairo_show_text(cr, "pfisim report");
    cairo_set_font_size(cr, 16);
    snprintf(line, sizeof line, "study %s: scenario %s, seed %ld", f->study, f->scenario, f->seed);
    cairo_move_to(cr, 60, 170);
    cairo_show_text(cr, line);
    cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, 12);
    snprintf(line, sizeof line, "pfisim %s, from the results database %s", PFS_VERSION, f->db_path);
    y = wrap_text(cr, line, 60, 210, 722, 17);
    {
        /* The facility and the run: GPUs per pool (the first run's pool rows), the cap, the
         * days and the DR events called. */
        const struct run_ts *r0 = &f->runs[0];
        sqlite3_stmt *q = NULL;
        char days[32] = "?", pools[300] = "";
        size_t used = 0;

        setting_value(config, "duration_days", days, sizeof days);
        if (sqlite3_prepare_v2(f->db,
                               "SELECT pool, gpu FROM pool_result WHERE run_id = ? ORDER BY pool",
                               -1, &q, NULL) == SQLITE_OK) {
            sqlite3_bind_int64(q, 1, r0->id);
            while (sqlite3_step(q) == SQLITE_ROW && used < sizeof pools - 80)
                used += (size_t)snprintf(pools + used, sizeof pools - used, "%s%s (%s)",
                                         used ? ", " : "", sqlite3_column_text(q, 0),
                                         sqlite3_column_text(q, 1));
        }
        sqlite3_finalize(q);
        {
            char gpus[32] = "?", cap[40] = "none";

            setting_value(config, "gpus", gpus, sizeof gpus);
            if (isfinite(r0->plan[0]) && r0->plan[0] > 0)
                snprintf(cap, sizeof cap, "%.4g MW", r0->plan[0] / 1e6);
            snprintf(line, sizeof line,
                     "Facility: %s GPUs in %s; cap %s outside DR events; %s days simulated; "
                     "%.0f DR events called (%.0f met under %s).",
                     gpus, pools[0] ? pools : "one pool", cap, days,
                     isfinite(r0->plan[4]) ? r0->plan[4] : 0,
                     isfinite(r0->plan[5]) ? r0->plan[5] : 0, r0->policy);
        }
        y = wrap_text(cr, line, 60, y + 10, 722, 17);
    }
    y = wrap_text(cr, corpus, 60, y + 10, 722, 17);
    y = wrap_text(cr, workload, 60, y + 4, 722, 17);
    {
        /* An extrapolated GPU (Blackwell): what backs its profile's numbers. */
        sqlite3_stmt *q = NULL;

        if (sqlite3_prepare_v2(f->db, "SELECT DISTINCT gpu FROM pool_result WHERE run_id = ?", -1,
                               &q, NULL) == SQLITE_OK) {
            sqlite3_bind_int64(q, 1, f->runs[0].id);
            while (sqlite3_step(q) == SQLITE_ROW) {
                struct pfs_gpu g;
                size_t used;

                if (pfs_gpu_find((const char *)sqlite3_column_text(q, 0), &g, NULL) != 0 ||
                    !g.extrapolated)
                    continue;
                used = (size_t)snprintf(line, sizeof line,
                                        "GPU %s: an EXTRAPOLATED profile (no measurement of this "
                                        "GPU; pfisim gpus %s). Published:",
                                        g.name, g.name);
                for (int pass = 0; pass < 2; pass++) {
                    if (pass == 1)
                        used += (size_t)snprintf(line + used, sizeof line - used,
                                                 ". Assumed (ranges at their midpoints here):");
                    for (size_t k = 0; k < PFS_GPU_N_PARAMS && used < sizeof line - 60; k++) {
                        bool pub = g.kind[k] == PFS_GPU_PUBLISHED || g.kind[k] == PFS_GPU_MEASURED;

                        if (!g.kind[k] || pub != (pass == 0))
                            continue;
                        if (g.hi[k] > g.lo[k])
                            used +=
                                (size_t)snprintf(line + used, sizeof line - used, " %s [%g, %g]",
                                                 pfs_gpu_param_name(k), g.lo[k], g.hi[k]);
                        else
                            used += (size_t)snprintf(line + used, sizeof line - used, " %s %g",
                                                     pfs_gpu_param_name(k), g.lo[k]);
                    }
                }
                if (used < sizeof line - 2)
                    snprintf(line + used, sizeof line - used, ".");
                y = wrap_text(cr, line, 60, y + 4, 722, 17);
            }
        }
        sqlite3_finalize(q);
    }
    if (strstr(config, "variability = {")) { /* (written only when on: sim/scenario.c) */
        char sd[40] = "nan";

        setting_value(config, "eta_sd", sd, sizeof sd);
        snprintf(line, sizeof line,
                 "GPUs: MODEL-DERIVED efficiencies that differ (facility.variability, sd %.3g; "
                 "0.0172 is the value calibrated on Sinha et al., SC'22); each job waits at "
                 "every step for its slowest GPU (docs/model.md section 6).",
                 strtod(sd, NULL));
        y = wrap_text(cr, line, 60, y + 4, 722, 17);
    }
    snprintf(line, sizeof line,
             "Policies compared: %zu, on the same workload. Pages: this one, "
             "a summary table, then one figure per page with its reading.",
             f->n_runs);
    y = wrap_text(cr, line, 60, y + 10, 722, 17);
    {
        /* What the report summarises when the database holds more than one scenario (a
         * sweep's points): the figures over time are its first scenario's, the studies'
         * figures all of them. */
        long n_scen = 0, n_run = 0;
        sqlite3_stmt *q = NULL;

        if (sqlite3_prepare_v2(f->db, "SELECT (SELECT count(*) FROM scenario), count(*) FROM run",
                               -1, &q, NULL) == SQLITE_OK &&
            sqlite3_step(q) == SQLITE_ROW) {
            n_scen = (long)sqlite3_column_int64(q, 0);
            n_run = (long)sqlite3_column_int64(q, 1);
        }
        sqlite3_finalize(q);
        if (n_scen > 1) {
            snprintf(line, sizeof line,
                     "The database holds %ld scenarios (a sweep's points) and %ld runs. The "
                     "summary and the figures over time show the first scenario above and its "
                     "seed; the study figures (oversubscription, pricing, deadlines) draw every "
                     "point.",
                     n_scen, n_run);
            wrap_text(cr, line, 60, y + 10, 722, 17);
        }
    }
    cairo_show_page(cr);
}

static void
summary_page(struct figs *f)
{
    static const char *const head[] = {"policy",          "tokens",     "tokens/s",
                                       "energy (MWh)",    "tokens/J",   "DR min over",
                                       "deadline misses", "tier viol.", "gap"};
    static const double x[] = {60, 190, 265, 340, 430, 500, 585, 685, 760};
    cairo_t *cr = f->page;
    double y = 110;
    char v[9][48];

    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
    cairo_set_font_size(cr, 16);
    cairo_move_to(cr, 60, 70);
    cairo_show_text(cr, "Summary, one row per policy (docs/simulator.md defines the columns)");
    cairo_set_font_size(cr, 10);
    for (size_t c = 0; c < 9; c++) {
        cairo_move_to(cr, x[c], y);
        cairo_show_text(cr, head[c]);
    }
    cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    for (size_t k = 0; k < f->n_runs; k++) {
        const struct run_ts *r = &f->runs[k];

        y += 20;
        snprintf(v[0], sizeof v[0], "%s", r->policy);
        snprintf(v[1], sizeof v[1], "%.4g", r->tokens);
        snprintf(v[2], sizeof v[2], "%.4g", r->mean_tps);
        snprintf(v[3], sizeof v[3], "%.2f", r->energy_j / 3.6e9);
        snprintf(v[4], sizeof v[4], "%.3g", r->tokens_per_j);
        snprintf(v[5], sizeof v[5], "%.0f", r->dr_minutes_over);
        snprintf(v[6], sizeof v[6], "%.0f", r->deadline_misses);
        snprintf(v[7], sizeof v[7], "%.0f", r->tier_violations);
        if (isnan(r->gap))
            snprintf(v[8], sizeof v[8], "-");
        else
            snprintf(v[8], sizeof v[8], "%.2f", r->gap);
        for (size_t c = 0; c < 9; c++) {
            cairo_move_to(cr, x[c], y);
            cairo_show_text(cr, v[c]);
        }
    }
    cairo_set_font_size(cr, 10);
    {
        char note[512];

        snprintf(note, sizeof note,
                 "gap: the share of the equal-to-oracle throughput gap a policy recovers, "
                 "(policy - equal) / (oracle - equal), defined only where the oracle beats equal "
                 "by more than 0.1%%; '-' otherwise%s%s%s.",
                 f->runs[0].gap_note[0] ? " (here: " : "", f->runs[0].gap_note,
                 f->runs[0].gap_note[0] ? ")" : "");
        wrap_text(cr, note, 60, y + 40, 722, 14);
    }
    /* The planner's summary: draw against the cap, events, the cost of DR, the jobs' loss. */
    {
        static const char *const ph[] = {
            "policy",  "peak kW",  "p99 kW",    "cap kW",   "binds (h)", "events (met/missed)",
            "DR cost", "lost/MWh", "loss mean", "loss p95", "loss max"};
        static const double px[] = {60, 150, 210, 270, 330, 395, 515, 575, 655, 715, 770};
        char pv[11][64];

        y += 100;
        cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
        cairo_set_font_size(cr, 13);
        cairo_move_to(cr, 60, y);
        cairo_show_text(cr, "The planner's summary");
        y += 24;
        cairo_set_font_size(cr, 10);
        for (size_t c = 0; c < 11; c++) {
            cairo_move_to(cr, px[c], y);
            cairo_show_text(cr, ph[c]);
        }
        cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                               CAIRO_FONT_WEIGHT_NORMAL);
        for (size_t k = 0; k < f->n_runs; k++) {
            const double *pl = f->runs[k].plan;

            y += 20;
            snprintf(pv[0], sizeof pv[0], "%s", f->runs[k].policy);
            snprintf(pv[1], sizeof pv[1], "%.4g", pl[1] / 1e3);
            snprintf(pv[2], sizeof pv[2], "%.4g", pl[2] / 1e3);
            snprintf(pv[3], sizeof pv[3], isnan(pl[0]) ? "-" : "%.4g", pl[0] / 1e3);
            snprintf(pv[4], sizeof pv[4], "%.3g", pl[3]);
            snprintf(pv[5], sizeof pv[5], "%.0f (%.0f/%.0f)", pl[4], pl[5], pl[6]);
            snprintf(pv[6], sizeof pv[6], isnan(pl[8]) ? "-" : "%.2f%%", 100 * pl[8]);
            snprintf(pv[7], sizeof pv[7], isnan(pl[9]) ? "-" : "%.3g", pl[9]);
            snprintf(pv[8], sizeof pv[8], "%.3f", pl[10]);
            snprintf(pv[9], sizeof pv[9], "%.3f", pl[11]);
            snprintf(pv[10], sizeof pv[10], "%.3f", pl[12]);
            for (size_t c = 0; c < 11; c++) {
                cairo_move_to(cr, px[c], y);
                cairo_show_text(cr, pv[c]);
            }
        }
        {
            char note[1536];
            double unc = 0;

            for (size_t k = 0; k < f->n_runs; k++)
                unc = fmax(unc, f->runs[k].plan[7]);
            snprintf(note, sizeof note,
                     "peak and p99: of the minute means of facility power. binds: hours a limit "
                     "held some job below full power. DR cost: tokens lost against the same "
                     "workload and policy without events; lost/MWh: those tokens per MWh of energy "
                     "shed. loss: "
                     "per started job, 1 - tokens / full-power tokens in its time in the run.%s",
                     unc > 0 ? " Some events could not be met by capping alone (every running "
                               "job at its minimum cap drew more than the target): "
                               "dr_events_uncappable in the database."
                             : "");
            /* the limits' compliance: each policy's minutes over the cap and what holding
             * the limits took (issue 56) */
            for (size_t k = 0, used = 0; k < f->n_runs; k++) {
                const double *pl = f->runs[k].plan;
                int w;

                if (!(pl[13] > 0 || pl[15] > 0 || pl[17] > 0))
                    continue;
                w = snprintf(note + strlen(note), sizeof note - strlen(note),
                             "%s %s: %.0f min over the cap (worst %.3g kW); %.0f jobs held back "
                             "(%.3g h waiting), %.0f paused to hold a limit.",
                             used++ ? "" : " Limits:", f->runs[k].policy,
                             isfinite(pl[13]) ? pl[13] : 0, isfinite(pl[14]) ? pl[14] / 1e3 : 0,
                             isfinite(pl[15]) ? pl[15] : 0, isfinite(pl[16]) ? pl[16] : 0,
                             isfinite(pl[17]) ? pl[17] : 0);
                if (w < 0 || strlen(note) + 1 >= sizeof note)
                    break;
            }
            wrap_text(cr, note, 60, y + 30, 722, 14);
        }
    }
    cairo_show_page(cr);
}

int
pfs_report_db(const char *db_path, const char *out_path, struct pfs_diag *diag)
{
    struct pfs_store *st = NULL;
    struct figs f = {.db_path = db_path};
    cairo_surface_t *surface = NULL;
    sqlite3_stmt *q = NULL;
    char *config = NULL;
    cairo_status_t cs;
    struct pfs__out out;
    int rc;

    if ((rc = pfs_store_open_read(db_path, &st, diag)))
        return rc;
    f.db = pfs__store_db(st);
    if ((rc = pfs__store_check_table(f.db, db_path, "timeseries", diag))) {
        pfs_store_close(st);
        return rc;
    }
    if ((rc = load(&f, diag)))
        goto out;
    if (sqlite3_prepare_v2(f.db,
                           "SELECT config FROM scenario WHERE id = (SELECT min(scenario_id) "
                           "FROM run)",
                           -1, &q, NULL) != SQLITE_OK ||
        sqlite3_step(q) != SQLITE_ROW ||
        !(config = strdup((const char *)sqlite3_column_text(q, 0)))) {
        rc = db_error(&f, diag);
        goto out;
    }
    if ((rc = pfs__out_open(&out, out_path, diag)))
        goto out;
    surface = pfs__pdf_surface(out.fp, 842, 595); /* A4 landscape, points */
    f.page = cairo_create(surface);
    title_page(&f, config);
    summary_page(&f);
    rc = figures(&f, "." /* unused: pages */, PFS_PLOT_PDF, NULL, NULL, diag);
    cs = cairo_status(f.page);
    cairo_destroy(f.page);
    cairo_surface_finish(surface);
    if (cs == CAIRO_STATUS_SUCCESS)
        cs = cairo_surface_status(surface);
    cairo_surface_destroy(surface);
    if (rc == 0 && cs != CAIRO_STATUS_SUCCESS)
        rc = pfs__diag_set(diag, PFS_EIO, out_path, 0, 0, NULL, "cannot write: %s",
                           cairo_status_to_string(cs));
    rc = pfs__out_end(&out, rc, diag);
out:
    sqlite3_finalize(q);
    free(config);
    figs_free(&f);
    pfs_store_close(st);
    return rc;
}
