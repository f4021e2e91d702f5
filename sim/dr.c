/*
 * sim/dr.c - the DR signal's arithmetic: each event's target over time (steps and ramps), its
 * baseline by its rule, the facility's limit at a time and the lowest over the period ahead.
 *
 * Pure functions of struct sim's events and the facility's draw: nothing here changes the
 * run. A newcomer changing how a DR baseline is taken starts at pfs__dr_baseline.
 * The engine's room, its files and their layers: docs/simulator.md, "Where each concern lives".
 */
#include "engine.h"

/* ----- the budget timeline ----- */

/* An event's kinks, where its target changes slope or steps: its start, the end of its ramp
 * down, each later step, its end, the end of its ramp up. Writes at most 4 +
 * PFS_MAX_DR_STEPS times, in order; returns their number. */
size_t
pfs__dr_kinks(const struct pfs_dr_event *e, double *out)
{
    size_t n = 0;

    out[n++] = e->start_s;
    out[n++] = e->start_s + e->ramp_s;
    for (size_t i = 1; i < e->n_steps; i++)
        if (e->start_s + e->steps[i].at_s > out[n - 1])
            out[n++] = e->start_s + e->steps[i].at_s;
    out[n++] = e->end_s;
    out[n++] = pfs_dr_over_s(e);
    return n;
}

/* The level event k asks for at t (facility W): its step in force at t (the first during the
 * ramp down), absolute or cut from base; NAN for a cut while base is unknown. */
static double
dr_level(const struct pfs_dr_event *e, double base, double t)
{
    double target = e->target_w, cut = e->cut_frac;

    for (size_t i = 0; i < e->n_steps; i++)
        if (i == 0 || e->start_s + e->steps[i].at_s <= t)
            target = e->steps[i].target_w, cut = e->steps[i].cut_frac;
    if (target > 0)
        return target;
    return base > 0 ? (1 - cut) * base : (double)NAN;
}

/* The DR target of event k at time t (facility W), or +inf outside it. The event is
 * [start, end + ramp up): ramping down over [start, start + ramp down) to its first level,
 * holding its levels (each step from its time on) until end, ramping back up to the baseline
 * over [end, end + ramp up). */
static double
dr_target(const struct sim *s, size_t k, double t)
{
    const struct pfs_dr_event *e = &s->sc->dr[k];
    double base = s->dr_baseline_w[k], target, f, up = pfs_dr_ramp_up_s(e);

    if (t < e->start_s || t >= pfs_dr_over_s(e))
        return HUGE_VAL;
    target = dr_level(e, base, fmin(t, e->end_s));
    if (isnan(target))
        return HUGE_VAL; /* a cut before its baseline is known */
    if (t < e->start_s + e->ramp_s) {
        f = (t - e->start_s) / e->ramp_s;
        return base > 0 ? base + f * (target - base) : target;
    }
    if (t < e->end_s)
        return target;
    f = up > 0 ? (t - e->end_s) / up : 1;
    return base > 0 ? target + f * (base - target) : HUGE_VAL;
}

/* Event k's baseline, taken at the first decision that plans for it (t): the facility's
 * power now (instantaneous); the mean of the minutes of its window before the start that
 * are over by now (average base load; now itself when none is); or the announced value. */
double
pfs__dr_baseline(const struct sim *s, size_t k, double t)
{
    const struct pfs_dr_event *e = &s->sc->dr[k];
    double energy = 0, secs = 0, from = e->start_s - e->baseline_window_s;
    double until = fmin(t, e->start_s), m0 = (double)s->m_start_us / US;

    if (e->baseline == PFS_BASELINE_GIVEN)
        return e->baseline_w;
    if (e->baseline == PFS_BASELINE_AVERAGE) {
        for (size_t i = 0; i < s->n_minutes; i++)
            if (60.0 * (double)i >= from - 1e-9 && 60.0 * (double)(i + 1) <= until + 1e-9)
                energy += 60 * s->minute_w[i], secs += 60;
        /* The minute in progress (its end may be now, its row not yet written). */
        if (m0 >= from - 1e-9 && t <= until + 1e-9 && t > m0)
            energy += s->m_energy, secs += t - m0;
    }
    return secs > 0 ? energy / secs : pfs__power_facility_w(s);
}

/* The length of the DR event in progress at t (start to end of ramp up), 0 if none. */

double
pfs__dr_event_length(const struct sim *s, double t)
{
    long k = pfs__dr_event_at(s, t);

    return k < 0 ? 0 : pfs_dr_over_s(&s->sc->dr[k]) - s->sc->dr[k].start_s;
}

bool
pfs__dr_in_event(const struct sim *s, double t)
{
    return pfs__dr_event_at(s, t) >= 0;
}

/* The DR event in progress at t (start to the end of its ramp up), -1 if none. */
long
pfs__dr_event_at(const struct sim *s, double t)
{
    long at = -1;

    for (size_t q = s->dr_live; q < s->sc->n_dr; q++) {
        size_t k = s->dr_by_start[q];
        const struct pfs_dr_event *e = &s->sc->dr[k];

        if (e->start_s > t)
            break;
        if (t < pfs_dr_over_s(e) && (at < 0 || (long)k < at))
            at = (long)k; /* the first in index order, where events overlap */
    }
    return at;
}

/* When the limit a decision at t plans for is announced to lift: the end of the ramp up of
 * the DR event on at t or starting within the hour ahead (what a decision plans into), and
 * of every announced event that starts before that end (they chain); INFINITY under a base
 * cap, which does not lift, or when no such event is known. */
double
pfs__dr_limit_lifts(const struct sim *s, double t)
{
    double until = -HUGE_VAL;
    bool more = true;

    if (s->cap_w > 0)
        return HUGE_VAL;
    while (more) {
        more = false;
        for (size_t q = s->dr_live; q < s->sc->n_dr; q++) {
            const struct pfs_dr_event *e = &s->sc->dr[s->dr_by_start[q]];
            double end = pfs_dr_over_s(e);
            bool starts = isfinite(until) ? e->start_s <= until : e->start_s < t + 3600;

            if (t >= e->start_s - e->notice_s && end > t && end > until && starts) {
                until = end;
                more = true;
            }
        }
    }
    return isfinite(until) ? until : HUGE_VAL;
}

/* The facility's power limit at t: the base cap and every event's target. */
double
pfs__dr_facility_budget(const struct sim *s, double t)
{
    double b = s->cap_w > 0 ? s->cap_w : HUGE_VAL;

    for (size_t q = s->dr_live; q < s->sc->n_dr; q++) {
        size_t k = s->dr_by_start[q];

        if (s->sc->dr[k].start_s > t)
            break; /* it and every later one: no limit yet */
        b = fmin(b, dr_target(s, k, t));
    }
    return b;
}

/* The lowest limit over [lo, hi) as known at t (the events announced by then), each event's
 * target control.margin below it. Each limit is piecewise linear in time between its kinks
 * (steps included), so its lowest value on [lo, hi) is at lo, just before hi, or at a kink in
 * between: exact, and O(events). */
static double
lowest(const struct sim *s, double t, double lo, double hi)
{
    double b = s->cap_w > 0 ? s->cap_w : HUGE_VAL;

    for (size_t i = s->dr_live; i < s->sc->n_dr; i++) {
        size_t k = s->dr_by_start[i];
        const struct pfs_dr_event *e = &s->sc->dr[k];
        double kinks[4 + PFS_MAX_DR_STEPS];
        size_t nk;

        if (hi <= e->start_s)
            break; /* it and every later one start after the window */
        if (lo >= pfs_dr_over_s(e) || t < e->start_s - e->notice_s)
            continue; /* no overlap, or not announced yet */
        nk = pfs__dr_kinks(e, kinks);
        /* The controller aims control.margin below an event's target. */
        b = fmin(b, dr_target(s, k, lo) * (1 - s->sc->margin));
        b = fmin(b, dr_target(s, k, fmax(lo, hi - 1e-6)) * (1 - s->sc->margin));
        for (size_t q = 0; q < nk; q++)
            if (kinks[q] > lo && kinks[q] < hi)
                b = fmin(b, dr_target(s, k, kinks[q]) * (1 - s->sc->margin));
    }
    return b;
}

/* The lowest limit while a decision made at t is in effect: from t + actuation until the
 * next decision takes effect, at the next control step (t + period, or the next kink of a DR
 * event, each of which has its own step) plus the actuation delay. The window is half-open:
 * the limit at its end is the next decision's business. Sampled every second and just
 * before its end. */
double
pfs__dr_budget_ahead(const struct sim *s, double t, double period, double actuation)
{
    double next = t + period;

    for (size_t i = s->dr_live; i < s->sc->n_dr; i++) {
        const struct pfs_dr_event *e = &s->sc->dr[s->dr_by_start[i]];
        double kinks[4 + PFS_MAX_DR_STEPS];
        size_t nk;

        if (e->start_s >= next)
            break; /* its kinks, and every later event's, are all at or after next */
        if (t < e->start_s - e->notice_s)
            continue; /* not announced yet */
        nk = pfs__dr_kinks(e, kinks);
        for (size_t q = 0; q < nk; q++)
            if (kinks[q] > t && kinks[q] < next)
                next = kinks[q];
    }
    return lowest(s, t, t + actuation, next + actuation);
}
