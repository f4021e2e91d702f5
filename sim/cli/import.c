/*
 * sim/cli/import.c - pfisim import: real power-cap data into curves, telemetry logs into jobs.
 */
#include <errno.h>
#include <getopt.h>
#include <gsl/gsl_errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char pfs_cli_import_help[] =
    "usage: pfisim import FORMAT FILE... [--gpu NAME] [--job-id ID] [-o|--output OUT.csv]\n"
    "\n"
    "Converts real power-cap measurements into a curves CSV (docs/formats.md); without -o\n"
    "it writes to standard output. FORMAT is one of:\n";

static const char help_import_tail[] =
    "\n"
    "Telemetry of an operator's own job, one jobs.csv row per log (docs/formats.md):\n"
    "  nvidia-smi  nvidia-smi --query-gpu=timestamp,index,power.draw,power.limit,clocks.sm,\n"
    "              utilization.gpu,utilization.memory --format=csv[,nounits]\n"
    "  dcgm        dcgmi dmon -e 155,150,1002,1003,1004,1005,1011,1012\n"
    "\n"
    "  --gpu NAME   GPU profile of the measurements (see 'pfisim gpus'); required where the\n"
    "               file does not say it (perseus, emerald, nvidia-smi, dcgm)\n"
    "  --job-id ID  job id of a telemetry import of one log (default: the log's file name)\n"
    "  -o, --output FILE  write here (whole or not at all: nothing if any input is bad)\n"
    "\n"
    "Real data lives in the data directory: $PFISIM_DATA, default ../shared/data.\n";

static int
write_jobs_obj(const void *obj, FILE *fp, struct pfs_diag *d)
{
    return pfs_jobset_write(obj, fp, d);
}

/* pfisim import nvidia-smi|dcgm LOG...: one jobs.csv row per log. */
static int
import_telemetry(const struct pfs_telemetry_ops *imp, int n_logs, char **logs, const char *gpu_name,
                 const char *job_id, const char *output)
{
    struct pfs_jobset js = {.n_jobs = 0};
    struct pfs_diag d = {0};
    struct pfs_gpu g;
    int rc = 0;

    if (!gpu_name) {
        fprintf(stderr,
                "pfisim import %s: a log does not say which GPU it came from; give "
                "--gpu NAME (see 'pfisim gpus')\n",
                imp->name);
        return EXIT_USAGE;
    }
    if (job_id && n_logs != 1)
        return pfs_cli_usage("import", "%s", "--job-id names the job of a single log");
    if (pfs_gpu_find(gpu_name, &g, &d) != 0) {
        fprintf(stderr, "pfisim import: %s\n", d.message);
        return EXIT_USAGE;
    }
    js.jobs = calloc((size_t)n_logs, sizeof *js.jobs);
    if (!js.jobs)
        return pfs_cli_report(&d, pfs__diag_set(&d, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory"));
    for (int i = 0; i < n_logs && rc == 0; i++) {
        struct pfs_corpus_job *j = &js.jobs[i];
        const char *base = strrchr(logs[i], '/');
        char *dot;

        char id[512];

        memset(j, 0, sizeof *j);
        pfs__strlcpy(id, job_id ? job_id : (base ? base + 1 : logs[i]), sizeof id);
        if (!job_id && (dot = strrchr(id, '.')) != NULL && dot != id)
            *dot = '\0';
        /* An id jobs.csv cannot hold is refused, not cut or mangled (issue 17): the
         * import's output must read back as the same jobs. */
        if (!id[0] || strpbrk(id, "\n\r") || !pfs__strlcpy(j->job_id, id, sizeof j->job_id)) {
            rc = pfs__diag_set(&d, PFS_EINVAL, logs[i], 0, 0, "job_id",
                               "job id '%.60s' %s (give --job-id)", id,
                               !id[0]                ? "is empty"
                               : strpbrk(id, "\n\r") ? "holds a line break"
                                                     : "is longer than 31 bytes");
            break;
        }
        for (size_t k = 0; k < js.n_jobs && rc == 0; k++)
            if (strcmp(js.jobs[k].job_id, j->job_id) == 0)
                rc = pfs__diag_set(&d, PFS_EINVAL, logs[i], 0, 0, "job_id",
                                   "gives job id '%s', as %s does: one id per job (rename one "
                                   "log, or import them one at a time with --job-id)",
                                   j->job_id, logs[k]);
        if (rc)
            break;
        pfs__strlcpy(j->gpu, g.name, sizeof j->gpu);
        rc = imp->read(logs[i], &g, j, &d);
        js.n_jobs++;
    }
    if (rc == 0)
        rc = pfs_cli_write_output(output, write_jobs_obj, &js, &d);
    free(js.jobs);
    return rc ? pfs_cli_report(&d, rc) : EXIT_OK;
}

int
pfs_cli_import(int argc, char **argv)
{
    static const struct option opts[] = {{"gpu", required_argument, 0, 'g'},
                                         {"output", required_argument, 0, 'o'},
                                         {"job-id", required_argument, 0, 'j'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *gpu_opt = NULL, *output = NULL, *job_id = NULL;
    const struct pfs_importer_ops *imp;
    struct pfs_curveset *cs = NULL;
    struct pfs_diag d = {0};
    int c, rc;

    while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        if (c == 'g')
            gpu_opt = optarg;
        else if (c == 'o')
            output = optarg;
        else if (c == 'j')
            job_id = optarg;
        else if (c == 'h') {
            fputs(pfs_cli_import_help, stdout);
            for (size_t i = 0; pfs_importers[i]; i++)
                printf("  %-9s %s\n", pfs_importers[i]->name, pfs_importers[i]->summary);
            fputs(help_import_tail, stdout);
            return EXIT_OK;
        } else
            return pfs_cli_usage("import", "%s", "bad option");
    }
    if (argc - optind < 2)
        return pfs_cli_usage("import", "%s", "expected FORMAT and at least one FILE");
    if ((rc = pfs_cli_not_over("import", "-o", output, (const char *const *)&argv[optind + 1],
                               (size_t)(argc - optind - 1))))
        return rc;
    if (pfs_telemetry_find(argv[optind]))
        return import_telemetry(pfs_telemetry_find(argv[optind]), argc - optind - 1,
                                argv + optind + 1, gpu_opt, job_id, output);
    imp = pfs_importer_find(argv[optind]);
    if (!imp) {
        fprintf(stderr, "pfisim import: unknown format '%s' (known:", argv[optind]);
        for (size_t i = 0; pfs_importers[i]; i++)
            fprintf(stderr, " %s", pfs_importers[i]->name);
        for (size_t i = 0; pfs_telemetry_importers[i]; i++)
            fprintf(stderr, " %s", pfs_telemetry_importers[i]->name);
        fprintf(stderr, ")\n");
        return EXIT_USAGE;
    }
    if (job_id) /* (ignored: a curves file names its own jobs) */
        return pfs_cli_usage("import",
                             "--job-id names the job of a telemetry import (%s files "
                             "name their own jobs)",
                             imp->name);
    if (gpu_opt) {
        struct pfs_gpu g;

        if ((rc = pfs_gpu_find(gpu_opt, &g, &d)) != 0) {
            fprintf(stderr, "pfisim import: %s\n", d.message);
            return EXIT_USAGE;
        }
    }
    if ((rc = pfs_curveset_new(&cs)) != 0)
        return pfs_cli_report(&d, rc);
    for (int i = optind + 1; i < argc; i++) {
        const char *gpu = gpu_opt;

        if (!gpu && imp->gpu_from_path)
            gpu = imp->gpu_from_path(argv[i]);
        if (!gpu) {
            pfs_curveset_free(cs);
            fprintf(stderr,
                    "pfisim import: %s: the file does not say which GPU it measured; "
                    "give --gpu NAME (see 'pfisim gpus')\n",
                    argv[i]);
            return EXIT_USAGE;
        }
        if ((rc = pfs_import_read(imp, argv[i], gpu, cs, &d)) != 0) {
            pfs_curveset_free(cs);
            return pfs_cli_report(&d, rc);
        }
    }
    if (cs->n_jobs == 0) {
        pfs_curveset_free(cs);
        fprintf(stderr, "pfisim import: no data rows in the input\n");
        return EXIT_INPUT;
    }
    rc = pfs_curveset_write_path(cs, output ? output : "-", &d);
    pfs_curveset_free(cs);
    return rc ? pfs_cli_report(&d, rc) : EXIT_OK;
}
