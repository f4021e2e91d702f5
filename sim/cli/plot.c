/*
 * sim/cli/plot.c - pfisim plot and report: figures and the PDF report of a results database.
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
 * pfisim plot
 */

const char pfs_cli_plot_help[] =
    "usage: pfisim plot DB [-o|--output DIR] [--format png|svg|pdf] [--only NAME]\n"
    "\n"
    "Draws figures from a results database (pfisim run --db) into DIR (default\n"
    "results/plots), one file per figure, and prints their paths (docs/plots.md):\n"
    "  curves      five of the jobs' power-throughput curves, least to most flexible\n"
    "  pfi         PFI at a 30% cut by model family and phase (CDFs)\n"
    "  power       facility power against its limit over time, DR events shaded\n"
    "  throughput  throughput over time, one line per policy\n"
    "  comparison  mean throughput and gap recovered per policy (bars)\n"
    "  outcomes    per-job slowdown of the finished jobs, one CDF per policy\n"
    "  phoenix     the Phoenix replay's GPU power against the measured series (a run of\n"
    "              configs/phoenix-srp.cfg, with the data directory present)\n"
    "The first scenario in the database and its lowest seed are drawn.\n"
    "\n"
    "  -o, --output DIR  output directory (created if missing)\n"
    "  --format F       png (900 x 520 pixels, the default), svg or pdf\n"
    "  --only NAME      one figure\n";

int
pfs_cli_plot(int argc, char **argv)
{
    static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                         {"format", required_argument, 0, 'f'},
                                         {"only", required_argument, 0, 'n'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    enum pfs_plot_format format = PFS_PLOT_PNG;
    const char *dir = "results/plots", *only = NULL;
    struct pfs_diag d = {0};
    int c, rc;

    while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            dir = optarg;
            break;
        case 'f':
            if (strcmp(optarg, "png") == 0)
                format = PFS_PLOT_PNG;
            else if (strcmp(optarg, "svg") == 0)
                format = PFS_PLOT_SVG;
            else if (strcmp(optarg, "pdf") == 0)
                format = PFS_PLOT_PDF;
            else
                return pfs_cli_usage("plot", "--format is png, svg or pdf, not '%s'", optarg);
            break;
        case 'n':
            only = optarg;
            break;
        case 'h':
            return fputs(pfs_cli_plot_help, stdout), EXIT_OK;
        default:
            return pfs_cli_usage("plot", "%s", "bad option");
        }
    }
    if (argc - optind != 1)
        return pfs_cli_usage("plot", "%s", "expected one results database");
    rc = pfs_plot_db(argv[optind], dir, format, only, stdout, &d);
    return rc ? pfs_cli_report(&d, rc) : EXIT_OK;
}

/* ---------------------------------------------------------------------------------------
 * pfisim report
 */

const char pfs_cli_report_cmd_help[] =
    "usage: pfisim report DB [-o|--output REPORT.pdf]\n"
    "\n"
    "Writes a multi-page PDF (A4 landscape) from a results database: a title page naming\n"
    "the scenario, the pfisim version and whether its curves and workload are real or\n"
    "synthetic; a summary table; then each figure of pfisim plot on its own page with a\n"
    "one-line reading (docs/plots.md). Default output: results/report.pdf.\n";

int
pfs_cli_report_cmd(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *output = "results/report.pdf";
    struct pfs_diag d = {0};
    int c, rc;

    while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        if (c == 'o')
            output = optarg;
        else if (c == 'h')
            return fputs(pfs_cli_report_cmd_help, stdout), EXIT_OK;
        else
            return pfs_cli_usage("report", "%s", "bad option");
    }
    if (argc - optind != 1)
        return pfs_cli_usage("report", "%s", "expected one results database");
    if ((rc = pfs_cli_not_over("report", "-o", output, (const char *const *)&argv[optind], 1)))
        return rc;
    if ((rc = pfs_report_db(argv[optind], output, &d)) != 0)
        return pfs_cli_report(&d, rc);
    if (strcmp(output, "-") != 0) /* (after a PDF on standard output, its name was a line more) */
        printf("%s\n", output);
    return EXIT_OK;
}
