/*
 * traces/grid.c - a utility's hourly demand turned into DR events (docs/sweeps.md).
 *
 * The input is the shape of a utility's published system load, as SRP's in the data
 * directory (emerald-phoenix/SRP_0503.csv): a `date` column (YYYY-MM-DD), an `hour` column
 * (1-24, the hour ending, the utilities' convention) and demand columns. Every maximal run of
 * consecutive hours whose demand is above the threshold becomes one event, from the start of
 * its first hour to the end of its last; t = 0 is 00:00 of the first date. The threshold is
 * given, or follows from the number of peak hours wanted (the Nth highest hour's demand,
 * ties included).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static bool
parse_date(const char *s, long *days)
{
    char *end;
    long y = strtol(s, &end, 10), m, d;

    if (end == s || *end != '-')
        return false;
    s = end + 1;
    m = strtol(s, &end, 10);
    if (end == s || *end != '-' || m < 1 || m > 12)
        return false;
    s = end + 1;
    d = strtol(s, &end, 10);
    if (end == s || *end || !pfs__civil_date(y, m, d))
        return false;
    *days = pfs__days_from_civil(y, m, d);
    return true;
}

struct hour {
    double t_s; /* the hour's start */
    double demand;
};

static int
cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x < y) - (x > y);
}

int
pfs_grid_events(const char *path, const struct pfs_grid_options *o, struct pfs_dr_event *out,
                size_t max, size_t *n_out, double *threshold, struct pfs_diag *diag)
{
    const char *names[3] = {"date", "hour", o->column && o->column[0] ? o->column : NULL};
    struct pfs__csv csv;
    struct hour *h = NULL;
    size_t idx[3], n = 0, cap = 0, n_ev = 0;
    long first_day = 0;
    double th = o->threshold, shown;
    int rc;

    *n_out = 0;
    if (!names[2])
        return pfs__diag_set(diag, PFS_EINVAL, path, 0, 0, NULL,
                             "name the demand column (--column, dr_grid.column)");
    if (!(o->threshold > 0) == !(o->top_hours > 0))
        return pfs__diag_set(diag, PFS_EINVAL, path, 0, 0, NULL,
                             "give exactly one of a threshold and a number of peak hours");
    if ((rc = pfs__csv_open(&csv, path, diag)))
        return rc;
    if ((rc = pfs__csv_header(&csv, names, 3, idx)))
        goto out;
    while ((rc = pfs__csv_next(&csv)) == 1) {
        const char *date;
        long day, hr;
        double v;
        struct hour *nh;

        if ((rc = pfs__csv_str(&csv, idx[0], "date", &date)) ||
            (rc = pfs__csv_long(&csv, idx[1], "hour", &hr)) ||
            (rc = pfs__csv_double(&csv, idx[2], names[2], &v)))
            goto out;
        if (!parse_date(date, &day)) {
            rc = pfs__csv_error(&csv, idx[0], "date", PFS_EINVAL,
                                "expected a date YYYY-MM-DD (years 1-9999), got '%s'", date);
            goto out;
        }
        if (hr < 1 || hr > 24) {
            rc = pfs__csv_error(&csv, idx[1], "hour", PFS_EINVAL,
                                "expected 1-24 (the hour ending), got %ld", hr);
            goto out;
        }
        if (v < 0) {
            rc = pfs__csv_error(&csv, idx[2], names[2], PFS_EINVAL, "negative demand %g", v);
            goto out;
        }
        if (n == 0)
            first_day = day;
        if (!(nh = pfs__grow(h, &cap, n, sizeof *h, 64))) {
            rc = pfs__diag_set(diag, PFS_ENOMEM, path, 0, 0, NULL, "out of memory");
            goto out;
        }
        h = nh;
        h[n] = (struct hour){(double)(day - first_day) * 86400 + (double)(hr - 1) * 3600, v};
        if (n > 0 && !(h[n].t_s > h[n - 1].t_s)) {
            rc = pfs__csv_error(&csv, idx[1], "hour", PFS_EINVAL,
                                "hours must increase (this one is not after the row above)");
            goto out;
        }
        n++;
    }
    if (rc < 0 || rc > 1)
        goto out;
    rc = 0;
    if (n == 0) {
        rc = pfs__diag_set(diag, PFS_EINVAL, path, 0, 0, NULL, "no hours of demand");
        goto out;
    }
    shown = th;
    if (o->top_hours > 0) { /* the Nth highest hour's demand */
        double *v = malloc(n * sizeof *v);

        if (!v) {
            rc = pfs__diag_set(diag, PFS_ENOMEM, path, 0, 0, NULL, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < n; i++)
            v[i] = h[i].demand;
        qsort(v, n, sizeof *v, cmp_desc);
        shown = v[(size_t)o->top_hours <= n ? (size_t)o->top_hours - 1 : n - 1];
        th = nextafter(shown, -HUGE_VAL); /* "above" the threshold includes the Nth hour */
        free(v);
    }
    for (size_t i = 0; i < n;) {
        size_t j = i;

        if (!(h[i].demand > th)) {
            i++;
            continue;
        }
        /* A run of consecutive hours above the threshold (a missing hour ends it). */
        while (j + 1 < n && h[j + 1].demand > th && h[j + 1].t_s - h[j].t_s < 3600.5)
            j++;
        if (n_ev == max) {
            rc = pfs__diag_set(diag, PFS_EINVAL, path, 0, 0, NULL, "more than %zu events", max);
            goto out;
        }
        out[n_ev++] = (struct pfs_dr_event){.start_s = h[i].t_s,
                                            .end_s = h[j].t_s + 3600,
                                            .ramp_s = o->ramp_s,
                                            .cut_frac = o->cut,
                                            .notice_s = o->notice_s};
        i = j + 1;
    }
    *n_out = n_ev;
    if (threshold)
        *threshold = shown;
out:
    pfs__diag_oom(diag, rc, path, csv.line, "reading the file"); /* (names it) */
    pfs__csv_close(&csv);
    free(h);
    return rc;
}
