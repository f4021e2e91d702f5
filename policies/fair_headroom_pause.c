/*
 * policies/fair-headroom-pause - Emerald's "DVFS + Job Pausing, Fair": fair headroom while
 * the tier floors fit; beyond that, staggered pauses of the pause-eligible jobs.
 *
 * While the floors fit the budget this is fair-headroom. When they do not, every job runs at
 * its floor and the interruptible (Flex) jobs are paused for one common fraction p of the
 * time, each at most its allowance (10/25/50%): the smallest p whose savings cover the
 * deficit, found by bisection. In the simulator the pauses are staggered so that the
 * facility's draw stays flat; here p is the steady-state duty cycle.
 */
#include <math.h>
#include <stdlib.h>

#include "policy.h"

static double
saved(const struct pfs_alloc_view *v, const double *floor, double p)
{
    double s = 0;

    for (size_t i = 0; i < v->n_jobs; i++) {
        const struct pfs_alloc_job *j = &v->jobs[i];

        if (j->tier != PFS_TIER_FIRM)
            s += j->n_gpus * (floor[i] - j->idle_w) * fmin(p, j->max_loss);
    }
    return s;
}

static int
fhp_allocate(void *state, const struct pfs_alloc_view *v, struct pfs_alloc_decision *out,
             struct pfs_diag *diag)
{
    double *floor = pfs__scratch(0, v->n_jobs * sizeof *floor), need = 0;
    int rc;

    (void)state;
    if (!floor)
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    if ((rc = pfs__fair_headroom(v, "fair-headroom-pause", floor, out, &need, diag)) != 0)
        return rc;
    if (need > v->budget_w) { /* else the floors fit: fair headroom, as written */
        double p;

        if ((rc = pfs__shed_fraction(v, floor, need, 0.5, saved, "fair-headroom-pause",
                                     "the tier floors with every Flex job paused for its allowance",
                                     &p, diag)) != 0)
            return rc;
        for (size_t i = 0; i < v->n_jobs; i++)
            out[i] = (struct pfs_alloc_decision){
                .cap_w = floor[i],
                .pause_frac = v->jobs[i].tier == PFS_TIER_FIRM ? 0 : fmin(p, v->jobs[i].max_loss)};
    }
    return 0;
}

const struct pfs_policy_ops pfs_policy_fair_headroom_pause = {
    .name = "fair-headroom-pause",
    .summary = "Emerald's DVFS + Job Pausing, Fair: floors, then staggered Flex pauses",
    .state_size = 0,
    .may_pause = true,
    .memoryless = true,
    .allocate = fhp_allocate,
};
