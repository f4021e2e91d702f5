/*
 * sim/record.c - what a run records: the per-minute series and the per-job results (kept in
 * memory or spilled to a temporary file, pfs_timeseries_*, pfs_job_results_*), each minute's
 * metrics and DR compliance, a job's result row, and the run's summary at its end.
 *
 * It reads struct sim and writes only its results (the series, the rows, the summary's
 * fields); it never changes a job's state or the queue. Called by the event loop (the minute,
 * the end) and by the scheduler (a refused job's row).
 * The engine's room, its files and their layers: docs/simulator.md, "Where each concern lives".
 */
#include "engine.h"

/* Writes bytes of buf at offset at of fp's file (positioned: the stream's own position and
 * buffer are not used). Returns 0 or PFS_EIO. */
static int
write_at(FILE *fp, const void *buf, size_t bytes, size_t at)
{
    const char *p = buf;

    while (bytes > 0) {
        ssize_t w = pwrite(fileno(fp), p, bytes, (off_t)at);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return PFS_EIO;
        p += w;
        bytes -= (size_t)w;
        at += (size_t)w;
    }
    return 0;
}

/* Reads bytes into buf from offset at of fp's file (positioned, as write_at: threads may
 * read one file at once). Returns 0 or PFS_EIO. */
static int
read_at(FILE *fp, void *buf, size_t bytes, size_t at)
{
    char *p = buf;

    while (bytes > 0) {
        ssize_t r = pread(fileno(fp), p, bytes, (off_t)at);

        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return PFS_EIO;
        p += r;
        bytes -= (size_t)r;
        at += (size_t)r;
    }
    return 0;
}

void
pfs_timeseries_free(struct pfs_timeseries *ts)
{
    if (!ts)
        return;
    free(ts->rows);
    if (ts->spill)
        fclose(ts->spill); /* (tmpfile's: gone with it) */
    ts->rows = NULL;
    ts->spill = NULL;
    ts->n = ts->cap = 0;
}

int
pfs_timeseries_spill(struct pfs_timeseries *ts)
{
    pfs_timeseries_free(ts);
    return (ts->spill = tmpfile()) != NULL ? 0 : PFS_EIO;
}

size_t
pfs_timeseries_read(const struct pfs_timeseries *ts, size_t from, struct pfs_ts_row *buf,
                    size_t max, int *err)
{
    size_t n = from < ts->n ? ts->n - from : 0;

    n = n < max ? n : max;
    if (n == 0)
        return 0;
    if (!ts->spill) {
        memcpy(buf, ts->rows + from, n * sizeof *buf);
        return n;
    }
    if (read_at(ts->spill, buf, n * sizeof *buf, from * sizeof *buf)) {
        *err = PFS_EIO;
        return 0;
    }
    return n;
}

/* Appends a minute's row: to the spill file, or to the rows in memory. */
static int
ts_append(struct pfs_timeseries *ts, const struct pfs_ts_row *row)
{
    if (ts->spill) {
        if (fwrite(row, sizeof *row, 1, ts->spill) != 1)
            return PFS_EIO;
    } else {
        if (ts->n == ts->cap) {
            size_t cap = ts->cap ? 2 * ts->cap : 1024;
            struct pfs_ts_row *r = realloc(ts->rows, cap * sizeof *r);

            if (!r)
                return PFS_ENOMEM;
            ts->rows = r;
            ts->cap = cap;
        }
        ts->rows[ts->n] = *row;
    }
    ts->n++;
    return 0;
}

void
pfs_job_results_free(struct pfs_job_results *jr)
{
    if (!jr)
        return;
    free(jr->rows);
    free(jr->win);
    free(jr->late);
    if (jr->spill)
        fclose(jr->spill); /* (tmpfile's: gone with it) */
    *jr = (struct pfs_job_results){.window = jr->window, .late_max = jr->late_max}; /* (settings) */
}

void
pfs_job_results_spill(struct pfs_job_results *jr)
{
    pfs_job_results_free(jr);
    jr->to_spill = true;
}

size_t
pfs_job_results_read(const struct pfs_job_results *jr, size_t from, struct pfs_job_result *buf,
                     size_t max, int *err)
{
    size_t n = from < jr->n ? jr->n - from : 0;

    n = n < max ? n : max;
    if (n == 0)
        return 0;
    if (jr->rows) {
        memcpy(buf, jr->rows + from, n * sizeof *buf);
        return n;
    }
    if (!jr->spill || jr->err || read_at(jr->spill, buf, n * sizeof *buf, from * sizeof *buf)) {
        *err = PFS_EIO;
        return 0;
    }
    if (jr->n_late > 0) { /* the late results in [from, from + n), in their places */
        size_t lo = 0, hi = jr->n_late;

        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;

            if (jr->late[mid].j < from)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (; lo < jr->n_late && jr->late[lo].j < from + n; lo++)
            buf[jr->late[lo].j - from] = jr->late[lo].r;
    }
    return n;
}

static int
cmp_late(const void *a, const void *b)
{
    size_t x = ((const struct pfs_job_late *)a)->j, y = ((const struct pfs_job_late *)b)->j;

    return (x > y) - (x < y);
}

/* Makes jr ready for a run of n jobs: their rows in memory, or, to be spilled with more jobs
 * than its window, that window and the file (one from an earlier run is written over: the
 * run writes all n records). Returns 0 or PFS_ENOMEM. */
int
pfs__record_jr_begin(struct pfs_job_results *jr, size_t n)
{
    size_t w = jr->window ? jr->window + (jr->window & 1) : PFS_JOB_WINDOW;

    free(jr->rows);
    free(jr->win);
    free(jr->late);
    jr->rows = jr->win = NULL;
    jr->late = NULL;
    jr->n = n;
    jr->base = jr->late_total = jr->n_late = jr->late_cap = 0;
    jr->err = 0;
    if (jr->to_spill && n > w && (jr->spill || (jr->spill = tmpfile()) != NULL)) {
        jr->window = w;
        jr->win = calloc(w, sizeof *jr->win);
        return jr->win ? 0 : PFS_ENOMEM;
    }
    if (jr->spill) { /* (from an earlier run) */
        fclose(jr->spill);
        jr->spill = NULL;
    }
    return (jr->rows = calloc(n + 1, sizeof *jr->rows)) != NULL ? 0 : PFS_ENOMEM;
}

/* Writes the window's first half, jobs [base, base + window / 2) (those of the workload), to
 * the spill in one write, and moves the window on past it. The entries of jobs not yet over
 * hold what an earlier lap left there: their late results are put in their places later
 * (pfs_job_results_read, jr_late_write). One write a half: writing only the entries set, a
 * write for each stretch between the jobs not over, made the 100,000-GPU year's 307 halves
 * some 740,000 writes (docs/benchmarks.md, "Late job results"). */
static void
jr_write_half(struct pfs_job_results *jr)
{
    size_t half = jr->window / 2, at = jr->base % jr->window;
    size_t m = jr->base >= jr->n ? 0 : jr->n - jr->base < half ? jr->n - jr->base : half;

    if (m > 0 && jr->err == 0)
        jr->err =
            write_at(jr->spill, jr->win + at, m * sizeof *jr->win, jr->base * sizeof *jr->win);
    jr->base += half;
}

/* Writes the late results held to their places in the spill, in job order, one write each,
 * and lets them go: where more than late_max would be held. */
static void
jr_late_write(struct pfs_job_results *jr)
{
    qsort(jr->late, jr->n_late, sizeof *jr->late, cmp_late);
    for (size_t k = 0; k < jr->n_late && jr->err == 0; k++)
        jr->err = write_at(jr->spill, &jr->late[k].r, sizeof jr->late[k].r,
                           jr->late[k].j * sizeof jr->late[k].r);
    jr->n_late = 0;
}

/* Job j's result r: into its row, or into the window (moved on until it holds j), or, its
 * half already written, held as late (written to its place at once where no memory is to
 * be had: 768,893 such writes, one a late job, took some 7 s of the 100,000-GPU year). */
static void
jr_put(struct pfs_job_results *jr, size_t j, const struct pfs_job_result *r)
{
    if (jr->rows) {
        jr->rows[j] = *r;
        return;
    }
    if (j < jr->base) {
        struct pfs_job_late *l;

        jr->late_total++;
        if (jr->n_late == (jr->late_max ? jr->late_max : PFS_JOB_LATE))
            jr_late_write(jr);
        l = pfs__grow(jr->late, &jr->late_cap, jr->n_late, sizeof *l, 1024);
        if (!l) {
            if (jr->err == 0)
                jr->err = write_at(jr->spill, r, sizeof *r, j * sizeof *r);
            return;
        }
        jr->late = l;
        l[jr->n_late].j = j;
        memcpy(&l[jr->n_late++].r, r, sizeof *r); /* (its zeroed padding too: jr_late_write) */
        return;
    }
    while (j >= jr->base + jr->window)
        jr_write_half(jr);
    memcpy(&jr->win[j % jr->window], r, sizeof *r);
}

/* The run is over (every job's result put): what the window holds is written. Returns 0 or
 * PFS_EIO. */
int
pfs__record_jr_end(struct pfs_job_results *jr)
{
    if (!jr->rows) {
        jr_write_half(jr);
        jr_write_half(jr);
        free(jr->win);
        jr->win = NULL;
        if (jr->n_late > 1) /* in job order, for pfs_job_results_read to find */
            qsort(jr->late, jr->n_late, sizeof *jr->late, cmp_late);
    }
    return jr->err;
}

/* ----- metrics ----- */

int
pfs__record_minute(struct sim *s)
{
    double t1 = (double)s->now_us / US, t0 = (double)s->m_start_us / US, len = t1 - t0;
    double p = len > 0 ? s->m_energy / len : pfs__power_facility_w(s);
    double target = pfs__dr_facility_budget(s, t0 + len / 2);
    long ev = pfs__dr_event_at(s, t0 + len / 2);

    if (ev >= 0 && isfinite(target)) {
        /* Capping alone cannot go below every running job at its minimum cap: a target
         * under that floor needs pausing (or is missed). */
        double floor = s->sc->pue * (s->floor_gpu_w + pfs__power_free_idle_w(s) + s->in->other_w);

        if (floor > target * (1 + 1e-9))
            s->ev_floor_over[ev] = fmax(s->ev_floor_over[ev], floor - target);
        if (p > target * (1 + 1e-9)) {
            s->res->dr_minutes_over += len / 60;
            s->res->dr_worst_excess_w = fmax(s->res->dr_worst_excess_w, p - target);
            s->res->dr_energy_over_j += (p - target) * len;
            s->ev_over_min[ev] += len / 60;
        }
    }
    /* the standing cap's compliance, as DR's (the mean excess made at the summary) */
    if (len > 0 && s->cap_w > 0 && p > s->cap_w * (1 + 1e-9)) {
        s->res->cap_minutes_over += len / 60;
        s->res->cap_worst_excess_w = fmax(s->res->cap_worst_excess_w, p - s->cap_w);
        s->res->cap_energy_over_j += (p - s->cap_w) * len;
    }
    if (len > 0)
        s->minute_w[s->n_minutes++] = p;
    if (len > 0 && s->nd)
        pfs__nodes_minute(s, len);
    if (s->ts && len > 0) {
        int paused = 0, rc;

        /* (none where no job is reduced, a paused one being reduced: most minutes, outside
         * events, skip the pass over the running jobs, 15% of a year's run with its time
         * series) */
        for (size_t r = 0; s->n_reduced > 0 && r < s->n_running; r++)
            paused += job_rec(s, s->running[r])->pause >= 1;
        rc = ts_append(s->ts,
                       &(struct pfs_ts_row){t0, p, s->m_gpu_energy / len,
                                            isfinite(target) ? target : (double)NAN,
                                            s->m_tokens / len, (int)s->n_running - paused, paused});
        if (rc == PFS_EIO)
            return pfs__diag_set(s->diag, rc, NULL, 0, 0, NULL,
                                 "the time series' temporary file: %s", strerror(errno));
        if (rc)
            return pfs__diag_set(s->diag, rc, NULL, 0, 0, NULL, "out of memory");
    }
    s->m_energy = s->m_gpu_energy = s->m_tokens = 0;
    s->m_start_us = s->now_us;
    return 0;
}

/* Job j's row of the per-job results, now, into the run's results (a finished or refused
 * job's is final): from its record while it has one (running, or finishing now), from the
 * workload if it never started. */
void
pfs__record_put_result(struct sim *s, size_t j)
{
    enum job_state st = job_state(s, j);
    struct pfs_job_result r;

    memset(&r, 0, sizeof r); /* (its padding too: the bytes go to the spill) */
    if (st == QUEUED || st == REFUSED) {
        r.start_s = r.finish_s = NAN;
        r.pool = -1;
        r.curve = s->in->job_curve[j];
        r.duration_s = s->in->wl->jobs[j].duration_s;
        r.refused = st == REFUSED;
    } else {
        const struct job *jb = job_rec(s, j);

        r.start_s = (double)jb->start_us / US;
        r.finish_s = jb->state == DONE ? (double)jb->finish_us / US : (double)NAN;
        r.tokens_done = jb->done;
        r.pool = jb->pool;
        r.curve = jb->curve;
        r.duration_s = jb->dur_s;
        r.given_up = jb->given_up;
    }
    jr_put(s->jobs, j, &r);
}

/* Records started job j's throughput loss for pfs__record_summarise(): 1 - its tokens over what
 * full power on its pool would have given it in its time in the run, up to its finish or, still
 * running, the end (pauses, caps and restarts all count). A finished job's record goes at
 * its finish, so the loss is kept as it finishes. Returns 0 or PFS_ENOMEM. */
int
pfs__record_loss(struct sim *s, size_t j)
{
    const struct job *jb = job_rec(s, j);
    double from = (double)jb->start_us / US, loss, *g;
    double until = jb->state == DONE ? (double)jb->finish_us / US : (double)s->end_us / US;

    if (!(until > from))
        return 0;
    loss = 1 - jb->done / (s->in->wl->jobs[j].tokens / jb->dur_s * (until - from));
    loss = fabs(loss) < 1e-9 ? 0 : fmax(0, loss); /* rounding, not loss */
    if (!(loss > 0)) {                            /* most jobs: counted, not kept */
        s->n_loss_zero++;
        return 0;
    }
    if (!(g = pfs__grow(s->loss, &s->loss_cap, s->n_loss, sizeof *s->loss, 4096)))
        return PFS_ENOMEM;
    s->loss = g;
    s->loss[s->n_loss++] = loss;
    return 0;
}

/* The q-quantile of `zeros` zeros followed by the n sorted values v (linear between order
 * statistics, as GSL's gsl_stats_quantile_from_sorted_data over all of them). */
static double
quantile(const double *v, size_t zeros, size_t n, double q)
{
    double h = (double)(zeros + n - 1) * q, a, b;
    size_t i = (size_t)floor(h);

    if (zeros + n == 0)
        return NAN;
    a = i < zeros ? 0 : v[i - zeros];
    if (i + 1 >= zeros + n)
        return a;
    b = i + 1 < zeros ? 0 : v[i + 1 - zeros];
    return a + (h - (double)i) * (b - a);
}

/* The planner's summary of a finished run (docs/results.md): peak and p99 facility draw,
 * each event met or missed and whether capping alone could meet it, and the distribution
 * of the jobs' throughput loss. Sorts s->minute_w. */
int
pfs__record_summarise(struct sim *s)
{
    struct pfs_run_result *out = s->res;
    double end_s = (double)s->end_us / US, *loss;
    size_t n = 0, zeros;

    out->cap_w = s->cap_w > 0 ? s->cap_w : (double)NAN;
    /* (over its minutes over: the energy over per second over) */
    out->cap_mean_excess_w =
        out->cap_minutes_over > 0 ? out->cap_energy_over_j / (out->cap_minutes_over * 60) : 0;
    pfs__sort_doubles(s->minute_w, s->n_minutes);
    out->peak_facility_w = s->n_minutes ? s->minute_w[s->n_minutes - 1] : (double)NAN;
    out->p99_facility_w = quantile(s->minute_w, 0, s->n_minutes, 0.99);
    for (size_t k = 0; k < s->sc->n_dr; k++) {
        if (!(s->sc->dr[k].start_s < end_s))
            continue;
        out->dr_events++;
        if (s->ev_over_min[k] > 0)
            out->dr_events_missed++;
        else
            out->dr_events_met++;
        if (s->ev_floor_over[k] > 0) {
            out->dr_events_uncappable++;
            out->dr_floor_excess_w = fmax(out->dr_floor_excess_w, s->ev_floor_over[k]);
        }
    }
    /* the jobs still running (the finished ones' went in at their finish) */
    for (size_t r = 0; r < s->n_running; r++) {
        int rc = pfs__record_loss(s, s->running[r]);

        if (rc)
            return rc;
    }
    /* In order: the zeros first (each adds nothing to the mean), then the losses kept. */
    loss = s->loss;
    n = s->n_loss;
    zeros = s->n_loss_zero;
    pfs__sort_doubles(loss, n);
    out->job_loss_mean = 0;
    for (size_t i = 0; i < n; i++)
        out->job_loss_mean += loss[i] / (double)(zeros + n);
    if (zeros + n == 0)
        out->job_loss_mean = NAN;
    out->job_loss_p50 = quantile(loss, zeros, n, 0.5);
    out->job_loss_p95 = quantile(loss, zeros, n, 0.95);
    out->job_loss_max = n ? loss[n - 1] : zeros ? 0 : (double)NAN;
    return 0;
}
