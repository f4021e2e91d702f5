/*
 * sim/price.c - interruptible-tier pricing from a results database (docs/pricing.md).
 *
 * Per run and tier: the throughput delivered as a fraction of uncapped, tier-floor
 * violations and deadline misses (the simulator's own definitions), the GPU-hours used, and
 * the discount that leaves a Flex customer's tokens per dollar equal to a firm customer's
 * (firm work is billed at full speed, slowdowns credited). Per run: the operator's revenue
 * per MW-year with the tier (firm work and Flex GPU-hours at the fair discounts, plus DR
 * capacity and energy payments scaled by compliance), without it (every job firm at full speed
 * and price, no DR enrolment: valid while the facility is not saturated, docs/pricing.md), and
 * the largest Flex discount that leaves the operator no worse off.
 */
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The facility's capacity: its cap, else what it draws with every GPU of every pool at its
 * maximum. */
static double
capacity_w(const struct pfs_scenario *sc)
{
    struct pfs_pool pools[PFS_MAX_POOLS];
    size_t n = pfs_scenario_pools(sc, pools);
    double w = 0;

    if (pfs_scenario_cap_w(sc) > 0)
        return pfs_scenario_cap_w(sc);
    for (size_t p = 0; p < n; p++) {
        struct pfs_gpu g;
        double nodes = ceil((double)pools[p].gpus / pools[p].gpus_per_node);

        if (pfs_gpu_find(pools[p].gpu, &g, NULL) != 0)
            return NAN;
        w += pools[p].gpus * g.max_limit_w + nodes * pools[p].node_other_w;
    }
    return sc->pue * w;
}

/* The DR side of a run: the kW committed (each event's cut of the capacity, or the capacity
 * above its absolute target, averaged over events), event hours and MWh committed within
 * the simulated time. */
static void
dr_terms(const struct pfs_scenario *sc, double cap_w, struct pfs_price_run *r)
{
    double end = sc->days * 86400, kw = 0;

    for (size_t k = 0; k < sc->n_dr; k++) {
        const struct pfs_dr_event *e = &sc->dr[k];
        double h = (fmin(e->end_s, end) - fmin(e->start_s, end)) / 3600;
        double c = e->target_w > 0 ? fmax(0, cap_w - e->target_w) : e->cut_frac * cap_w;

        if (!(h > 0))
            continue;
        r->n_events++;
        r->event_hours += h;
        r->committed_mwh += c / 1e6 * h;
        kw += c / 1e3;
    }
    r->committed_kw = r->n_events ? kw / (double)r->n_events : 0;
}

static int
price_run(sqlite3 *db, sqlite3_int64 run_id, const struct pfs_scenario *sc, double minutes_over,
          struct pfs_price_run *r, const char *path, struct pfs_diag *diag)
{
    sqlite3_stmt *q = NULL;
    int rc;
    double end = sc->days * 86400, years = sc->days / 365, cap_w = capacity_w(sc);
    double compute = 0, without = 0, flex_hours = 0, firm_work;
    const double p = sc->price.gpu_hour_usd;

    /* The run's jobs in the order they were stored (rowid), which is the workload's. A run's
     * rows are stored in one transaction, so they lie in one range of rowids: the range from
     * the key's index, then the table read along it, which needs no sort (a year's 826,000
     * rows: 0.35 s, where reading them by the index and sorting them took 0.9 s;
     * docs/benchmarks.md, "Reading a large database"). The "+" keeps SQLite from reading by
     * the index instead. */
    if (sqlite3_prepare_v2(db,
                           "SELECT tier, n_gpus, deadline_s, tokens, start_s, finish_s, "
                           "tokens_done, duration_s FROM job_result WHERE +run_id = ?1 AND "
                           "rowid BETWEEN (SELECT min(rowid) FROM job_result WHERE run_id = ?1) "
                           "AND (SELECT max(rowid) FROM job_result WHERE run_id = ?1) "
                           "ORDER BY rowid",
                           -1, &q, NULL) != SQLITE_OK)
        return pfs__diag_set(diag, PFS_EINVAL, path, 0, 0, NULL, "cannot read: %s",
                             sqlite3_errmsg(db));
    sqlite3_bind_int64(q, 1, run_id);
    while (sqlite3_step(q) == SQLITE_ROW) {
        const char *tier = (const char *)sqlite3_column_text(q, 0);
        double n = pfs__sql_real(q, 1), deadline = pfs__sql_real(q, 2),
               tokens = pfs__sql_real(q, 3), start = pfs__sql_real(q, 4);
        double finish = pfs__sql_real(q, 5), tokens_done = pfs__sql_real(q, 6),
               dur = pfs__sql_real(q, 7), until;
        int t = 0;

        while (t < PFS_N_TIERS && strcmp(pfs_tier_name(t), tier ? tier : "") != 0)
            t++;
        if (t == PFS_N_TIERS) { /* (the message first: tier is the statement's row) */
            rc = pfs__diag_set(diag, PFS_EINVAL, path, 0, 0, "tier",
                               "run %lld: unknown tier '%.40s'", (long long)run_id,
                               tier ? tier : "NULL");
            sqlite3_finalize(q);
            return rc;
        }
        r->tier[t].jobs++;
        if ((isnan(finish) && deadline < end) || finish > deadline)
            r->tier[t].deadline_misses++;
        if (isnan(start))
            continue;
        r->tier[t].started++;
        until = isnan(finish) ? end : finish;
        r->tier[t].gpu_hours += n * (until - start) / 3600;
        r->tier[t].gpu_hours_uncapped += n * fmin(dur, end - start) / 3600;
        r->tier[t].work_hours += n * tokens_done / (tokens / dur) / 3600;
        if (!isnan(finish)) { /* the simulator's test: slowdown over the whole run */
            double took = finish - start, loss = took > 0 ? 1 - dur / took : 0;

            r->tier[t].finished++;
            if (loss > pfs_tier_max_loss(t) + 1e-9)
                r->tier[t].floor_violations++;
        }
    }
    sqlite3_finalize(q);
    firm_work = r->tier[0].work_hours * p;
    /* Firm customers are billed for their work at full speed (a slowdown is credited): their
     * tokens per dollar are the uncapped ones. A Flex tier delivering a fraction f of
     * uncapped per GPU-hour it is billed for matches them at a discount of 1 - f. */
    for (int t = 0; t < PFS_N_TIERS; t++) {
        struct pfs_price_tier *pt = &r->tier[t];

        /* Per GPU-hour billed, what full speed would have taken for the tokens done: the
         * GPU-hour-weighted mean of the tier's jobs' fractions, each its fair discount. */
        pt->delivered = pt->gpu_hours > 0 ? pt->work_hours / pt->gpu_hours : (double)NAN;
        /* No job does more than full speed in its GPU-hours: above 1 by a sum's rounding
         * only (1 + 2.2e-16 in half a day of the default scenario), whose discount read
         * "-0.0%", a surcharge to the eye. */
        if (pt->delivered > 1 && pt->delivered < 1 + 1e-12)
            pt->delivered = 1;
        pt->discount = t == 0 || isnan(pt->delivered) ? 0 : 1 - pt->delivered;
        compute += t == 0 ? pt->work_hours * p : pt->gpu_hours * p * (1 - pt->discount);
        without += pt->gpu_hours_uncapped * p;
        if (t > 0)
            flex_hours += pt->gpu_hours;
    }
    dr_terms(sc, cap_w, r);
    r->days = sc->days;
    r->capacity_w = cap_w;
    /* (no event: nothing to comply with, NAN, where 0 read as every minute over) */
    r->compliance =
        r->event_hours > 0 ? fmax(0, 1 - minutes_over / (60 * r->event_hours)) : (double)NAN;
    /* Per MW of capacity, per year. */
    {
        double per = cap_w / 1e6 * years, dr, paid = isnan(r->compliance) ? 0 : r->compliance;

        r->rev_compute = compute / per;
        r->rev_dr_capacity = r->committed_kw * sc->price.capacity_usd_kw_year * years * paid / per;
        r->rev_dr_energy = r->committed_mwh * sc->price.energy_usd_mwh * paid / per;
        dr = r->rev_dr_capacity + r->rev_dr_energy;
        r->rev_with = r->rev_compute + dr;
        r->rev_without = without / per;
        /* The largest discount on every Flex GPU-hour that leaves the operator no worse off
         * than without the tier: what the Flex hours at the fair discounts bring, plus the
         * DR payments, less what was lost, spread over the Flex hours. */
        r->breakeven_discount =
            flex_hours > 0 ? 1 - (r->rev_without - r->rev_with + (compute - firm_work) / per) /
                                     (flex_hours * p / per)
                           : (double)NAN;
    }
    return 0;
}

int
pfs_price_db(const char *path, struct pfs_price_run **out, size_t *n_out, struct pfs_diag *diag)
{
    struct pfs_store *st = NULL;
    struct pfs_price_run *runs = NULL;
    struct pfs_scenario *sc = malloc(sizeof *sc);
    sqlite3_stmt *q = NULL;
    size_t n = 0, cap = 0;
    int rc;

    *out = NULL;
    *n_out = 0;
    if (!sc)
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    if ((rc = pfs_store_open_read(path, &st, diag))) {
        free(sc);
        return rc;
    }
    if (sqlite3_prepare_v2(pfs__store_db(st),
                           "SELECT r.id, s.name, s.hash, s.config, r.policy, r.seed, "
                           "m.dr_minutes_over, (SELECT count(*) FROM job_result j "
                           "WHERE j.run_id = r.id) FROM run r JOIN scenario s "
                           "ON s.id = r.scenario_id JOIN summary m ON m.run_id = r.id "
                           "ORDER BY r.id",
                           -1, &q, NULL) != SQLITE_OK) {
        rc = pfs__diag_set(diag, PFS_EINVAL, path, 0, 0, NULL, "cannot read: %s",
                           sqlite3_errmsg(pfs__store_db(st)));
        goto out;
    }
    while (rc == 0 && sqlite3_step(q) == SQLITE_ROW) {
        struct pfs_price_run *r, *nr;
        const char *config = (const char *)sqlite3_column_text(q, 3);

        if (sqlite3_column_int64(q, 7) == 0)
            continue; /* no per-job rows (a sweep with jobs = false) */
        if (!(nr = pfs__grow(runs, &cap, n, sizeof *runs, 16))) {
            rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
            break;
        }
        runs = nr;
        r = memset(&runs[n], 0, sizeof *r);
        pfs__strlcpy(r->scenario, (const char *)sqlite3_column_text(q, 1), sizeof r->scenario);
        pfs__strlcpy(r->hash, (const char *)sqlite3_column_text(q, 2), sizeof r->hash);
        pfs__strlcpy(r->policy, (const char *)sqlite3_column_text(q, 4), sizeof r->policy);
        r->seed = sqlite3_column_int64(q, 5);
        if ((rc = pfs_scenario_parse(config ? config : "", path, sc, diag)) == 0)
            rc = price_run(pfs__store_db(st), sqlite3_column_int64(q, 0), sc, pfs__sql_real(q, 6),
                           r, path, diag);
        n += rc == 0;
    }
    if (rc == 0 && n == 0)
        rc = pfs__diag_set(diag, PFS_EINVAL, path, 0, 0, NULL,
                           "no run with per-job results to price (pfisim run --db, or a sweep "
                           "with jobs = true)");
out:
    sqlite3_finalize(q);
    pfs_store_close(st);
    free(sc);
    if (rc) {
        free(runs);
        return rc;
    }
    *out = runs;
    *n_out = n;
    return 0;
}
