/*
 * sim/cli/workload.c - pfisim workload: workloads from real or fitted arrivals (docs/workload.md).
 */
#include <errno.h>
#include <getopt.h>
#include <gsl/gsl_errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* ---------------------------------------------------------------------------------------
 * pfisim workload
 */

const char pfs_cli_workload_help[] =
    "usage: pfisim workload --arrivals SOURCE [--corpus DIR] [--gpus N] [--days D]\n"
    "                       [--start-day X] [--seed S]\n"
    "                       [--slack LO:HI] [--tiers firm:F,flex1:F,flex2:F,flex3:F]\n"
    "                       [--rescale] [--load L] [--gpu-scale K] [--gpu TYPE]...\n"
    "                       [-o|--output WORKLOAD.csv]\n"
    "       pfisim workload --fit SOURCE [-o MODEL.cfg]\n"
    "\n"
    "Builds a workload (job_id,submit_s,curve_id,n_gpus,tokens,deadline_s,tier) whose\n"
    "arrivals, GPU counts and durations come from SOURCE, each job running the curve of a\n"
    "corpus job of its size (docs/workload.md). SOURCE is one of\n"
    "  kalos, itp:clusterNN (01-10), helios, philly   real traces in the data directory\n"
    "  poisson:RATE                                    RATE jobs per hour\n"
    "  fitted:SOURCE                                   the model fitted to a real trace,\n"
    "                                                  shipped in configs/arrivals/\n"
    "\n"
    "  --corpus DIR   corpus with jobs.csv (default traces/h200-h100, synthetic)\n"
    "  --gpus N       the facility's GPUs (default 1024); a larger job is an error\n"
    "  --gpu TYPE     jobs run curves measured on this GPU (repeatable; default h200-sxm)\n"
    "  --days D       window length in days (default 7)\n"
    "  --start-day X  a real trace's window starts X days after its first job (default 0)\n"
    "  --seed S       seed of the mapping, deadlines, tiers and synthetic arrivals (default 1)\n"
    "  --slack LO:HI  deadline = submit + U(LO, HI) x duration (default 1.5:3)\n"
    "  --tiers MIX    tier shares (default firm:0.4,flex1:0.2,flex2:0.2,flex3:0.2)\n"
    "  --rescale      scale job sizes down to fit the facility instead of failing\n"
    "  --gpu-scale K  every job asks for K times its GPUs (a small cluster's trace on a\n"
    "                 large facility); with --load the rate falls by K\n"
    "  --load L       fitted sources: arrival rate scaled to offer L x the facility's GPU\n"
    "                 time (sizes and durations unchanged)\n"
    "  --fit SOURCE   fit the arrival model to a real trace and print it (libconfig)\n";

static bool
parse_range(const char *s, double *lo, double *hi)
{
    char buf[64], *colon;

    if (!pfs__strlcpy(buf, s, sizeof buf) || !(colon = strchr(buf, ':')))
        return false;
    *colon = '\0';
    return pfs__parse_double(buf, lo) && pfs__parse_double(colon + 1, hi);
}

/* firm:0.4,flex1:0.2,... into mix[]; every tier not named gets 0. */
static bool
parse_tiers(const char *s, double *mix)
{
    char buf[256], *p, *next;

    if (!pfs__strlcpy(buf, s, sizeof buf))
        return false;
    for (int k = 0; k < PFS_N_TIERS; k++)
        mix[k] = 0;
    for (p = buf; p; p = next) {
        char *colon = strchr(p, ':');
        int k;

        next = strchr(p, ',');
        if (next)
            *next++ = '\0';
        if (!colon)
            return false;
        *colon = '\0';
        for (k = 0; k < PFS_N_TIERS && strcmp(p, pfs_tier_name(k)) != 0; k++)
            ;
        if (k == PFS_N_TIERS || !pfs__parse_double(colon + 1, &mix[k]))
            return false;
    }
    return true;
}

static int
write_workload_obj(const void *obj, FILE *fp, struct pfs_diag *d)
{
    return pfs_workload_write(obj, fp, d);
}

static int
write_arrivals_obj(const void *obj, FILE *fp, struct pfs_diag *d)
{
    return pfs_arrival_write(obj, fp, d);
}

int
pfs_cli_workload(int argc, char **argv)
{
    static const struct option opts[] = {{"arrivals", required_argument, 0, 'a'},
                                         {"corpus", required_argument, 0, 'c'},
                                         {"gpus", required_argument, 0, 'g'},
                                         {"days", required_argument, 0, 'd'},
                                         {"seed", required_argument, 0, 's'},
                                         {"slack", required_argument, 0, 'k'},
                                         {"tiers", required_argument, 0, 't'},
                                         {"rescale", no_argument, 0, 'r'},
                                         {"fit", required_argument, 0, 'f'},
                                         {"output", required_argument, 0, 'o'},
                                         {"start-day", required_argument, 0, 'S'},
                                         {"load", required_argument, 0, 'L'},
                                         {"gpu-scale", required_argument, 0, 'G'},
                                         {"gpu", required_argument, 0, 'P'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    struct pfs_workload_options o;
    struct pfs_gpu gpu;
    const char *corpus_dir = pfs_cli_shipped("traces/h200-h100"), *output = NULL, *fit = NULL;
    char jobs_path[600];
    struct pfs_jobset *js = NULL;
    struct pfs_workload *w = NULL;
    struct pfs_diag d = {0};
    unsigned long v;
    int c, rc;
    /* what was given, for the options that only some sources read (each was ignored
     * without a word elsewhere) */
    bool load_given = false, start_given = false;
    const char *made_with = NULL; /* an option that builds a workload, which --fit does not */

    pfs_workload_defaults(&o);
    o.arrivals = NULL;
    for (int li = -1; (c = getopt_long(argc, argv, "ho:", opts, &li)) != -1; li = -1) {
        if (li >= 0 && c != 'f' && c != 'o')
            made_with = opts[li].name;
        load_given = load_given || c == 'L';
        start_given = start_given || c == 'S';
        switch (c) {
        case 'a':
            o.arrivals = optarg;
            break;
        case 'c':
            corpus_dir = optarg;
            break;
        case 'g':
        case 's':
        case 'G':
            if (!pfs_cli_parse_count(optarg, &v) || v > 100000000)
                return pfs_cli_usage("workload", "expected a non-negative integer, got '%s'",
                                     optarg);
            if (c == 'g')
                o.facility_gpus = (int)v;
            else if (c == 'G')
                o.gpu_scale = (int)v;
            else
                o.seed = v;
            break;
        case 'd':
        case 'S':
        case 'L':
            if (!pfs__parse_double(optarg, c == 'd' ? &o.days : c == 'S' ? &o.start_day : &o.load))
                return pfs_cli_usage("workload", "expected a number for --%s, got '%s'",
                                     c == 'd'   ? "days"
                                     : c == 'S' ? "start-day"
                                                : "load",
                                     optarg);
            break;
        case 'k':
            if (!parse_range(optarg, &o.slack_lo, &o.slack_hi))
                return pfs_cli_usage("workload", "expected --slack LO:HI, got '%s'", optarg);
            break;
        case 't':
            if (!parse_tiers(optarg, o.tier_mix))
                return pfs_cli_usage("workload",
                                     "expected --tiers firm:F,flex1:F,flex2:F,flex3:F, got '%s'",
                                     optarg);
            break;
        case 'r':
            o.rescale = true;
            break;
        case 'P':
            if (o.n_gpu_types == PFS_MAX_POOLS || strlen(optarg) >= sizeof o.gpu_types[0] ||
                pfs_gpu_find(optarg, &gpu, NULL) != 0)
                return pfs_cli_usage("workload",
                                     "--gpu: unknown GPU profile '%s' (pfisim gpus), "
                                     "or more than 8",
                                     optarg);
            pfs__strlcpy(o.gpu_types[o.n_gpu_types++], optarg, sizeof o.gpu_types[0]);
            break;
        case 'f':
            fit = optarg;
            break;
        case 'o':
            output = optarg;
            break;
        case 'h':
            return fputs(pfs_cli_workload_help, stdout), EXIT_OK;
        default:
            return pfs_cli_usage("workload", "%s", "bad option");
        }
    }
    if (optind != argc)
        return pfs_cli_usage("workload", "unexpected argument '%s'", argv[optind]);
    if (fit && made_with)
        return pfs_cli_usage("workload", "--fit SOURCE takes only -o (not --%s)", made_with);
    if (fit) {
        struct pfs_trace *t = NULL;
        struct pfs_arrival_model m;

        if ((rc = pfs_cli_not_over("workload", "-o", output, &fit, 1)))
            return rc;
        if ((rc = pfs_trace_read(fit, &t, &d)) == 0 && (rc = pfs_arrival_fit(t, &m, &d)) == 0)
            rc = pfs_cli_write_output(output, write_arrivals_obj, &m, &d);
        pfs_trace_free(t);
        return rc ? pfs_cli_report(&d, rc) : EXIT_OK;
    }
    if (!o.arrivals)
        return pfs_cli_usage("workload", "%s", "expected --arrivals SOURCE (or --fit SOURCE)");
    if (load_given && strncmp(o.arrivals, "fitted:", 7) != 0)
        return pfs_cli_usage("workload", "--load goes with fitted:SOURCE arrivals, not '%s'",
                             o.arrivals);
    if (start_given &&
        (strncmp(o.arrivals, "fitted:", 7) == 0 || strncmp(o.arrivals, "poisson:", 8) == 0))
        return pfs_cli_usage("workload", "--start-day goes with a real trace, not '%s'",
                             o.arrivals);
    snprintf(jobs_path, sizeof jobs_path, "%s/jobs.csv", corpus_dir);
    {
        char curves_path[sizeof jobs_path];
        const char *inputs[2] = {jobs_path, curves_path};

        snprintf(curves_path, sizeof curves_path, "%s/curves.csv", corpus_dir);
        if ((rc = pfs_cli_not_over("workload", "-o", output, inputs, 2)))
            return rc;
    }
    if ((rc = pfs_jobset_read(jobs_path, &js, &d)) == 0 &&
        (rc = pfs_workload_generate(&o, js, &w, &d)) == 0)
        rc = pfs_cli_write_output(output, write_workload_obj, w, &d);
    pfs_workload_free(w);
    pfs_jobset_free(js);
    return rc ? pfs_cli_report(&d, rc) : EXIT_OK;
}
