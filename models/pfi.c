/*
 * models/pfi.c - the Power Flexibility Index (DESIGN.md section 3).
 *
 *   PFI(c) = (1 - T(P0 (1 - c)) / T(P0)) / c
 *
 * with P0 the job's per-GPU reference power (its GPU's default limit) and c the fraction
 * of power removed. 0: the job loses nothing; 1: throughput falls in proportion to power.
 * PFI depends on c (curves are concave), so callers report it at several cuts.
 *
 * Works on any curve: on a sampled one it is the measured PFI and fails with PFS_ERANGE
 * when P0 or P0 (1 - c) is outside the measured caps; callers then fall back to the fitted
 * model and say so.
 */
#include "internal.h"

int
pfs_pfi(const struct pfs_curve *c, double p0_w, double cut_frac, double *pfi)
{
    struct pfs_curve_point full, cut;
    int rc;

    if (!(cut_frac > 0 && cut_frac < 1) || !(p0_w > 0))
        return PFS_EINVAL;
    if ((rc = pfs_curve_eval(c, p0_w, &full)) != 0 ||
        (rc = pfs_curve_eval(c, p0_w * (1.0 - cut_frac), &cut)) != 0)
        return rc;
    if (!(full.throughput > 0))
        return PFS_EINVAL;
    *pfi = (1.0 - cut.throughput / full.throughput) / cut_frac;
    return 0;
}

/* (here, with PFI, rather than with the corpus files that name their cuts: the models read
 * it too) */
double
pfs_cut(size_t k)
{
    return 0.1 * (double)(k + 1);
}
