/*
 * sim/cli/draws.c - what run and alloc print under --uncertainty N (issue 21): each metric's
 * median and range over the draws of the uncertain GPU profiles, and how often each ranking
 * of the policies holds (docs/model.md, "Profiles as ranges").
 *
 * Two values are tied when they differ by at most 1e-9 of the larger: a ranking writes them
 * with '=', and neither is counted above the other.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static bool
above(double a, double b)
{
    return a > b && !(a - b <= 1e-9 * fmax(fabs(a), fabs(b)));
}

/* The ranking of draw d by metric values v (n_pol per draw), highest first, into buf. */
static void
ranking(const double *v, const char *const *pol, size_t n_pol, char *buf, size_t size)
{
    size_t order[64], n = 0, used = 0;

    for (size_t k = 0; k < n_pol && k < 64; k++) /* those without an answer: not ranked */
        if (isfinite(v[k]))
            order[n++] = k;
    for (size_t i = 1; i < n; i++) /* insertion sort: stable, policy order among ties */
        for (size_t j = i; j > 0 && above(v[order[j]], v[order[j - 1]]); j--) {
            size_t t = order[j];

            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    buf[0] = '\0';
    for (size_t i = 0; i < n && used < size; i++) {
        int w = snprintf(buf + used, size - used, "%s%s",
                         i == 0                                ? ""
                         : above(v[order[i - 1]], v[order[i]]) ? " > "
                                                               : " = ",
                         pol[order[i]]);

        if (w < 0)
            break;
        used += (size_t)w;
    }
}

void
pfs_cli_draws_report(const char *const *pol, size_t n_pol, size_t n_draws,
                     const struct pfs_cli_draw_metric *m, size_t n_m, size_t rank_by, bool csv)
{
    double *v = malloc((n_draws + 1) * sizeof *v);
    char(*orders)[400] = calloc(n_draws + 1, sizeof *orders);
    double med;
    int width = 6;

    if (!v || !orders) {
        free(v);
        free(orders);
        return;
    }
    for (size_t k = 0; k < n_pol; k++)
        if ((int)strlen(pol[k]) > width)
            width = (int)strlen(pol[k]);
    if (csv)
        puts("policy,metric,n_draws,median,min,max");
    else
        printf("%-*s %-22s %6s %13s %13s %13s\n", width, "policy", "metric", "draws", "median",
               "min", "max");
    for (size_t k = 0; k < n_pol; k++)
        for (size_t i = 0; i < n_m; i++) {
            size_t n = 0;

            for (size_t d = 0; d < n_draws; d++)
                if (isfinite(m[i].v[d * n_pol + k]))
                    v[n++] = m[i].v[d * n_pol + k];
            qsort(v, n, sizeof *v, pfs__cmp_double);
            med = n == 0 ? (double)NAN : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
            if (csv) {
                printf("%s,%s,%zu,", pol[k], m[i].name, n);
                if (n)
                    printf("%.6g,%.6g,%.6g\n", med, v[0], v[n - 1]);
                else
                    puts(",,");
            } else if (n) {
                printf("%-*s %-22s %6zu %13.5g %13.5g %13.5g\n", width, pol[k], m[i].name, n, med,
                       v[0], v[n - 1]);
            } else {
                printf("%-*s %-22s %6zu %13s %13s %13s\n", width, pol[k], m[i].name, n, "-", "-",
                       "-");
            }
        }
    if (csv || n_pol < 2)
        goto out;
    /* The rankings by the chosen metric, most frequent first. */
    for (size_t d = 0; d < n_draws; d++)
        ranking(m[rank_by].v + d * n_pol, pol, n_pol, orders[d], sizeof orders[d]);
    printf("\nranking by %s (share of the %zu draws):\n", m[rank_by].name, n_draws);
    for (size_t shown = 0; shown < 8;) {
        size_t best = SIZE_MAX, best_n = 0;

        for (size_t d = 0; d < n_draws; d++) {
            size_t c = 0;

            if (!orders[d][0])
                continue;
            for (size_t e = 0; e < n_draws; e++)
                c += strcmp(orders[e], orders[d]) == 0;
            if (c > best_n) {
                best = d;
                best_n = c;
            }
        }
        if (best == SIZE_MAX)
            break;
        printf("  %5.1f%%  %s\n", 100.0 * (double)best_n / (double)n_draws, orders[best]);
        shown++;
        for (size_t e = n_draws; e-- > 0;) /* counted: cleared */
            if (e != best && strcmp(orders[e], orders[best]) == 0)
                orders[e][0] = '\0';
        orders[best][0] = '\0';
    }
    /* Pairwise: how often the row's policy is above the column's (a matrix for a few
     * policies; for more, each against the first, equal in pfisim's order). */
    if (n_pol > 6) {
        printf("\nabove %s (share of draws):", pol[0]);
        for (size_t a = 1; a < n_pol; a++) {
            size_t c = 0;

            for (size_t d = 0; d < n_draws; d++)
                c += above(m[rank_by].v[d * n_pol + a], m[rank_by].v[d * n_pol]);
            printf("%s %s %.2f", a > 1 ? "," : "", pol[a], (double)c / (double)n_draws);
        }
        putchar('\n');
        goto out;
    }
    printf("\n%-22s", "above (share of draws)");
    for (size_t k = 0; k < n_pol; k++)
        printf(" %*s", width, pol[k]);
    putchar('\n');
    for (size_t a = 0; a < n_pol; a++) {
        printf("%-22s", pol[a]);
        for (size_t b = 0; b < n_pol; b++) {
            size_t c = 0;

            for (size_t d = 0; d < n_draws; d++)
                c += above(m[rank_by].v[d * n_pol + a], m[rank_by].v[d * n_pol + b]);
            if (a == b)
                printf(" %*s", width, "-");
            else
                printf(" %*.2f", width, (double)c / (double)n_draws);
        }
        putchar('\n');
    }
out:
    free(v);
    free(orders);
}

/* The uncertain profiles' ranges, one line each. */
void
pfs_cli_draws_header(const struct pfs_gpu *unc, size_t n_unc, size_t n_draws, unsigned long seed)
{
    printf("uncertainty: %zu draws (centred Latin hypercube, seed %lu) of", n_draws, seed);
    for (size_t u = 0; u < n_unc; u++) {
        printf("%s %s%s:", u ? ";" : "", unc[u].name, unc[u].extrapolated ? " (EXTRAPOLATED)" : "");
        for (size_t k = 0; k < PFS_GPU_N_PARAMS; k++)
            if (unc[u].hi[k] > unc[u].lo[k])
                printf(" %s [%g, %g]", pfs_gpu_param_name(k), unc[u].lo[k], unc[u].hi[k]);
    }
    printf("\n\n");
}

/* The corpus generator's uncertain inputs and their ranges, on one line. */
void
pfs_cli_corpus_draws_header(size_t n_draws, unsigned long seed)
{
    double def, lo, hi;
    const char *name;

    size_t col;

    printf("uncertainty: %zu draws (centred Latin hypercube, seed %lu) of the SYNTHETIC corpus's "
           "inputs:\n ",
           n_draws, seed);
    col = 1;
    for (size_t i = 0; (name = pfs_synth_mix_param(i, &def, &lo, &hi)) != NULL; i++) {
        char item[80];

        snprintf(item, sizeof item, " %s [%g, %g]", name, lo, hi);
        pfs_cli_put_wrapped(item, &col, 100, "  ");
    }
    printf("\n\n");
}
