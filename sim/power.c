/*
 * sim/power.c - the jobs' progress and power: tokens and energy integrated to now, a job's
 * rate and draw under its cap and pause, its finish time, the facility's draw.
 *
 * It changes a job's progress, rate and finish key and the run's integrals; it never decides
 * a cap (control), starts or ends a job (schedule, the event loop).
 * The engine's room, its files and their layers: docs/simulator.md, "Where each concern lives".
 */
#include "engine.h"

/* ----- progress and power ----- */

/* The curve the job of record jb runs on: its own on its GPUs (facility.variability), else
 * the corpus's. */
const struct corpus_curve *
pfs__power_rec_curve(const struct sim *s, const struct job *jb)
{
    return jb->own ? &s->own[jb->own - 1].cc : &s->in->curves[jb->curve];
}

const struct corpus_curve *
pfs__power_job_curve(const struct sim *s, size_t j)
{
    return pfs__power_rec_curve(s, job_rec(s, j));
}

const struct pfs_gpu *
pfs__power_rec_gpu(const struct sim *s, const struct job *jb)
{
    return &s->in->gpu[jb->pool];
}

const struct pfs_gpu *
pfs__power_job_gpu(const struct sim *s, size_t j)
{
    return pfs__power_rec_gpu(s, job_rec(s, j));
}

/* Job jb's curve c at cap, per GPU: its throughput on the curve's GPUs (*env) and a GPU's draw
 * (*power). A decision by class gives one cap to every job of a class: each corpus curve's
 * last cap and values are kept, and a job on a curve at the cap last asked of it costs no
 * evaluation (a job's own curves are rewritten in place when it goes: never kept). */
void
pfs__power_curve_at(struct sim *s, const struct job *jb, const struct corpus_curve *c, double cap,
                    double *env, double *power)
{
    struct curve_memo *m = s->memo && !jb->own ? &s->memo[jb->curve] : NULL;

    if (m && !(m->cap < cap) && !(m->cap > cap)) { /* (caps are finite; none kept: -inf) */
        *env = m->env;
        *power = m->power;
        return;
    }
    if (!m) {
        *env = pfs_pwl_eval(&c->env, cap);
        *power = pfs_pwl_eval(&c->power, cap);
        return;
    }
    /* (the last cap's segments first: a level moves a little from one decision to the next) */
    *env = pfs__pwl_eval_near(&c->env, cap, &m->k_env);
    *power = pfs__pwl_eval_near(&c->power, cap, &m->k_power);
    m->cap = cap;
    m->env = *env;
    m->power = *power;
}

/* What the free GPUs of every pool draw, W. */
double
pfs__power_free_idle_w(const struct sim *s)
{
    double w = 0;

    for (size_t p = 0; p < s->in->n_pools; p++)
        w += s->free_gpus[p] * s->in->gpu[p].idle_w;
    return w;
}

double
pfs__power_facility_w(const struct sim *s)
{
    return s->sc->pue * (s->gpu_w_total + pfs__power_free_idle_w(s) + s->in->other_w);
}

/* Integrates the facility up to now (tokens and energy, with the minute's share; per pool). */
void
pfs__power_advance(struct sim *s, int64_t to_us)
{
    double dt = (double)(to_us - s->now_us) / US, p = pfs__power_facility_w(s);

    if (dt <= 0)
        return;
    s->tokens += s->total_rate * dt;
    s->energy_j += p * dt;
    s->m_energy += p * dt;
    s->m_gpu_energy += (s->gpu_w_total + pfs__power_free_idle_w(s)) * dt;
    s->m_tokens += s->total_rate * dt;
    if (s->n_reduced > 0)
        s->res->cap_binding_h += dt / 3600;
    for (size_t q = 0; q < s->in->n_pools; q++) {
        struct pfs_pool_result *pr = &s->res->pool[q];

        pr->tokens += s->pool_rate[q] * dt;
        pr->energy_j += s->sc->pue *
                        (s->pool_gpu_w[q] + s->free_gpus[q] * s->in->gpu[q].idle_w +
                         s->in->nodes[q] * s->in->pools[q].node_other_w) *
                        dt;
        pr->busy_gpu_h += (s->in->pools[q].gpus - s->free_gpus[q]) * dt / 3600;
    }
    s->now_us = to_us;
}

/* Brings job j's progress up to now. */
void
pfs__power_touch(struct sim *s, size_t j)
{
    touch_rec(s, job_rec(s, j));
}

double
pfs__power_finish_key(const struct sim *s, size_t j)
{
    const struct job *jb = job_rec(s, j);

    return finish_key_left(s, j, jb, tokens_left(s, jb));
}

/* A running job's throughput on curve c at envelope env, under its pause on active of its
 * n_gpus GPUs. */
double
pfs__power_rate_of(const struct corpus_curve *c, double env, double pause, int active, int n_gpus)
{
    return (1 - pause) * env * n_gpus / c->n_gpus * active / n_gpus;
}

/* Its draw, all its GPUs, at per-GPU draw power and GPU idle draw idle_w: a resized job's
 * GPUs set free idle (docs/policies.md, resize-fair). */
double
pfs__power_draw_of(double power, double idle_w, double pause, int active, int n_gpus)
{
    return (pause * idle_w + (1 - pause) * power) * active + (n_gpus - active) * idle_w;
}

/* Sets job j's (of record jb) rate and draw from its decision and reschedules its finish. */
int
pfs__power_set_rate_rec(struct sim *s, size_t j, struct job *jb)
{
    const struct corpus_curve *c = pfs__power_rec_curve(s, jb);
    const int64_t now = s->now_us;
    const double idle_w = pfs__power_rec_gpu(s, jb)->idle_w;
    bool ckpt = now < jb->ckpt_until_us, launch = now < jb->launch_until_us;
    double env = 0, power = 0, rate, gw, pause = jb->pause;

    if (!ckpt) /* (checkpointing: no progress, the draw it had) */
        pfs__power_curve_at(s, jb, c, jb->cap_w, &env, &power);
    rate = now < jb->resume_until_us || ckpt || launch
               ? 0
               : pfs__power_rate_of(c, env, pause, jb->active, jb->n_gpus);
    gw = ckpt     ? jb->ckpt_gpu_w
         : launch ? idle_w * jb->n_gpus /* (launching: idle until its decision lands) */
                  : pfs__power_draw_of(power, idle_w, pause, jb->active, jb->n_gpus);
    return pfs__power_rate_commit(s, j, jb, rate, gw);
}

/* Sets job j's rate and draw from its decision and reschedules its finish. */
int
pfs__power_set_rate(struct sim *s, size_t j)
{
    return pfs__power_set_rate_rec(s, j, job_rec(s, j));
}

/* Job j's draw, all its GPUs, at full power. */
double
pfs__power_full_draw_w(const struct sim *s, size_t j)
{
    const struct job *jb = job_rec(s, j);
    const struct corpus_curve *c = pfs__power_job_curve(s, j);

    return c->top_w[jb->pool] * jb->n_gpus;
}

/* Job j's draw, all its GPUs, at its minimum cap: what capping alone cannot go below. */
double
pfs__power_floor_draw_w(const struct sim *s, size_t j)
{
    const struct job *jb = job_rec(s, j);
    const struct corpus_curve *c = pfs__power_job_curve(s, j);

    return c->floor_w[jb->pool] * jb->n_gpus;
}

/* The job of record jb marked reduced or not, the count of reduced jobs kept in step. */
void
pfs__power_set_reduced(struct sim *s, struct job *jb, bool reduced)
{
    if (reduced != jb->reduced) {
        s->n_reduced += reduced ? 1 : (size_t)-1;
        jb->reduced = reduced;
    }
}

/* Keeps the count of reduced jobs in step with the decision of the job of record jb. */
void
pfs__power_mark_rec(struct sim *s, struct job *jb)
{
    pfs__power_set_reduced(
        s, jb,
        jb->state == RUNNING &&
            (jb->cap_w < pfs__power_rec_gpu(s, jb)->max_limit_w || jb->pause > 0));
}

/* Keeps the count of reduced jobs in step with job j's decision. */
void
pfs__power_mark(struct sim *s, size_t j)
{
    pfs__power_mark_rec(s, job_rec(s, j));
}
