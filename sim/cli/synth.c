/*
 * sim/cli/synth.c - pfisim synth: the SYNTHETIC corpus (docs/corpus.md).
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
 * pfisim synth
 */

const char pfs_cli_synth_help[] =
    "usage: pfisim synth [--seed S] -o|--output DIR [--train N] [--validation N] [--transfer N]\n"
    "                    [--gpu NAME]\n"
    "\n"
    "Generates the SYNTHETIC H100/H200 LLM-training corpus of docs/corpus.md into DIR:\n"
    "curves.csv (cap sweeps 200-700 W), jobs.csv (configuration, telemetry at the default\n"
    "limit, true PFI labels) and README.md (seed, generator version, calibration summary).\n"
    "The same seed gives byte-identical files.\n"
    "\n"
    "  --seed S         random seed (default 7, the shipped traces/h200-h100 corpus)\n"
    "  -o, --output DIR where to write (created if missing)\n"
    "  --train N        H200 jobs in split train (default 131)\n"
    "  --validation N   H200 jobs in split validation (default 24)\n"
    "  --transfer N     H100 twins of H200 configurations (default 34)\n"
    "  --unseen-scale X scale the variation telemetry cannot see (default 1; 0 removes it):\n"
    "                   for measuring how well any predictor could do (docs/predictor.md)\n"
    "  --telemetry-noise L  multiply every error of the telemetry columns (default 1;\n"
    "                   0 reads the counters exactly); curves and labels stay the same\n"
    "  --telemetry-window S  one reading averages S seconds of the run (default 0: the\n"
    "                   whole run; 1 an nvidia-smi reading, 30 a dcgm-exporter interval)\n"
    "  --draw D/N       the generator's uncertain inputs (job sizes, model and phase mix,\n"
    "                   parallelism, curve shapes) at draw D of N of their ranges, a\n"
    "                   centred Latin hypercube (--draw-seed S, default 1)\n"
    "  --gpu NAME       the same configurations measured on that GPU profile alone (no\n"
    "                   twins), caps in ten steps over its limits: a corpus on a GPU no data\n"
    "                   covers (b200, gb200, b100: EXTRAPOLATED, labelled so)\n";

int
pfs_cli_synth(int argc, char **argv)
{
    static const struct option opts[] = {{"seed", required_argument, 0, 's'},
                                         {"output", required_argument, 0, 'o'},
                                         {"train", required_argument, 0, 't'},
                                         {"validation", required_argument, 0, 'v'},
                                         {"transfer", required_argument, 0, 'x'},
                                         {"unseen-scale", required_argument, 0, 'u'},
                                         {"gpu", required_argument, 0, 'g'},
                                         {"telemetry-noise", required_argument, 0, 'N'},
                                         {"telemetry-window", required_argument, 0, 'W'},
                                         {"draw", required_argument, 0, 'D'},
                                         {"draw-seed", required_argument, 0, 'S'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    struct pfs_synth_options o;
    struct pfs_gpu gpu;
    struct pfs_jobset *js = NULL;
    struct pfs_curveset *cs = NULL;
    struct pfs_diag d = {0};
    const char *dir = NULL;
    unsigned long v, draw_seed = 1;
    size_t draw = 0, n_draws = 0;
    char extra;
    bool transfer_given = false;
    int c, rc;

    pfs_synth_defaults(&o, 7);
    while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            dir = optarg;
            break;
        case 'g':
            if ((rc = pfs_gpu_find(optarg, &gpu, &d)) != 0)
                return pfs_cli_report(&d, rc);
            o.gpu = &gpu;
            break;
        case 'u':
        case 'N':
        case 'W':
            if (!pfs__parse_double(optarg, c == 'u'   ? &o.unseen_scale
                                           : c == 'N' ? &o.telemetry_noise
                                                      : &o.telemetry_window_s))
                return pfs_cli_usage("synth", "expected a number, got '%s'", optarg);
            break;
        case 'D':
            if (sscanf(optarg, "%zu/%zu%c", &draw, &n_draws, &extra) != 2 || draw < 1 ||
                draw > n_draws || n_draws > 10000)
                return pfs_cli_usage("synth", "--draw takes D/N, 1 <= D <= N <= 10000, got '%s'",
                                     optarg);
            break;
        case 'S':
            if (!pfs_cli_parse_count(optarg, &draw_seed))
                return pfs_cli_usage("synth", "expected a non-negative integer, got '%s'", optarg);
            break;
        case 's':
        case 't':
        case 'v':
        case 'x':
            if (!pfs_cli_parse_count(optarg, &v))
                return pfs_cli_usage("synth", "expected a non-negative integer, got '%s'", optarg);
            if (c == 's')
                o.seed = v;
            else if (c == 't')
                o.n_train = v;
            else if (c == 'v')
                o.n_validation = v;
            else {
                o.n_transfer = v;
                transfer_given = true;
            }
            break;
        case 'h':
            return fputs(pfs_cli_synth_help, stdout), EXIT_OK;
        default:
            return pfs_cli_usage("synth", "%s", "bad option");
        }
    }
    if (!dir || optind != argc)
        return pfs_cli_usage("synth", "%s", "expected -o DIR and no other arguments");
    if (transfer_given && o.gpu) /* (it made none, without a word) */
        return pfs_cli_usage("synth", "%s",
                             "--transfer makes H100 twins; --gpu makes its configurations on "
                             "that GPU alone: not both");
    if (n_draws > 0 && (rc = pfs_synth_draw(&o, n_draws, draw - 1, draw_seed, &d)) != 0)
        return pfs_cli_report(&d, rc);
    if ((rc = pfs_synth(&o, &js, &cs, &d)) != 0 || (rc = pfs_corpus_write(dir, &o, js, cs, &d)))
        rc = pfs_cli_report(&d, rc);
    else
        fprintf(stderr,
                "pfisim synth: wrote %s/{curves.csv,jobs.csv,README.md} (%zu jobs, "
                "synthetic%s, seed %lu)\n",
                dir, js->n_jobs,
                o.gpu && o.gpu->extrapolated ? ", on an extrapolated GPU profile" : "", o.seed);
    pfs_jobset_free(js);
    pfs_curveset_free(cs);
    return rc;
}
