/*
 * sim/inputs.c - the files a scenario reads, and what they hold, for the run key.
 *
 * A stored run is keyed by its scenario's text, but the text names files (the corpus, a
 * workload, a predictor, a real trace) whose content can change under the same name. So
 * the key also covers each file's bytes: pfs__scenario_inputs lists the files the
 * simulation will read with a hash of each, and the store hashes that list with the text
 * (issue 17: after editing the corpus, --resume skipped every run). Files are found as
 * pfs_sim_inputs_new finds them; one that is missing is listed as missing, so that its
 * appearing later changes the key too.
 *
 * Hashing reads every byte (FNV-1a, 64 bits): a few milliseconds for the largest real
 * trace. A sweep asks for the same files at every point, so the hashes are kept per
 * process, keyed by path, size, modification time and inode.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define CACHE_SLOTS 64

struct cached {
    char path[600];
    off_t size;
    struct timespec mtime;
    ino_t ino;
    uint64_t hash;
};

static struct cached cache[CACHE_SLOTS];
static size_t cache_next;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static bool
same_stat(const struct cached *c, const struct stat *st)
{
    return c->size == st->st_size && c->ino == st->st_ino &&
           c->mtime.tv_sec == st->st_mtim.tv_sec && c->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/* The FNV-1a hash of the file's bytes into *hash. Returns false when it cannot be read. */
static bool
hash_file(const char *path, const struct stat *st, uint64_t *hash)
{
    unsigned char buf[65536];
    uint64_t h = PFS__FNV_OFFSET;
    FILE *fp;
    size_t n;
    bool ok;

    pthread_mutex_lock(&cache_lock);
    for (size_t i = 0; i < CACHE_SLOTS; i++)
        if (strcmp(cache[i].path, path) == 0 && same_stat(&cache[i], st)) {
            *hash = cache[i].hash;
            pthread_mutex_unlock(&cache_lock);
            return true;
        }
    pthread_mutex_unlock(&cache_lock);
    if (!(fp = fopen(path, "rb")))
        return false;
    while ((n = fread(buf, 1, sizeof buf, fp)) > 0)
        h = pfs__fnv1a(h, buf, n);
    ok = !ferror(fp);
    fclose(fp);
    if (!ok)
        return false;
    *hash = h;
    pthread_mutex_lock(&cache_lock);
    {
        struct cached *c = &cache[cache_next++ % CACHE_SLOTS];

        pfs__strlcpy(c->path, path, sizeof c->path);
        c->size = st->st_size;
        c->mtime = st->st_mtim;
        c->ino = st->st_ino;
        c->hash = h;
    }
    pthread_mutex_unlock(&cache_lock);
    return true;
}

static int
by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

/* Adds "HASH PATH" for path to fp: a regular file, or each regular file of a folder in name
 * order (the importers read folders). */
static void
add(FILE *fp, const char *path)
{
    struct stat st;
    uint64_t h;

    if (stat(path, &st) != 0) {
        fprintf(fp, "missing %s\n", path);
    } else if (S_ISDIR(st.st_mode)) {
        struct dirent **names = NULL;
        int n = scandir(path, &names, NULL, by_name);

        for (int i = 0; i < n; i++) {
            char sub[900];

            if (names[i]->d_name[0] != '.') {
                snprintf(sub, sizeof sub, "%s/%s", path, names[i]->d_name);
                if (stat(sub, &st) == 0 && S_ISREG(st.st_mode))
                    add(fp, sub);
            }
            free(names[i]);
        }
        free(names);
    } else if (hash_file(path, &st, &h)) {
        fprintf(fp, "%016llx %s\n", (unsigned long long)h, path);
    } else {
        fprintf(fp, "unreadable %s\n", path);
    }
}

char *
pfs__scenario_inputs(const struct pfs_scenario *sc)
{
    char *text = NULL, path[900];
    size_t len = 0;
    FILE *fp = open_memstream(&text, &len);

    if (!fp)
        return NULL;
    if (strncmp(sc->corpus, "import:", 7) == 0) {
        /* import:FORMAT:GPU:PATH, PATH in the data directory */
        const char *rel = strchr(sc->corpus + 7, ':');

        rel = rel ? strchr(rel + 1, ':') : NULL;
        if (rel) {
            snprintf(path, sizeof path, "%s/%s", pfs_data_dir(), rel + 1);
            add(fp, path);
        }
    } else if (strncmp(sc->corpus, "synth:", 6) != 0) { /* (synth: is made by the code) */
        snprintf(path, sizeof path, "%s/curves.csv", sc->corpus);
        add(fp, path);
        snprintf(path, sizeof path, "%s/jobs.csv", sc->corpus);
        add(fp, path);
    }
    if (sc->predictor[0]) {
        add(fp, sc->predictor);
    } else if (strncmp(sc->corpus, "synth:", 6) == 0) {
        if (pfs__resolve_path("", "traces/h200-h100/predictor.cfg", path, sizeof path) == 0)
            add(fp, path);
    } else {
        snprintf(path, sizeof path, "%s/predictor.cfg", sc->corpus);
        if (access(path, R_OK) == 0)
            add(fp, path);
    }
    for (size_t k = 0; k < sc->n_policy_libs; k++) /* their policies' code */
        add(fp, sc->policy_libs[k]);
    if (sc->workload[0])
        add(fp, sc->workload);
    else if (pfs__trace_path(sc->arrivals_source, path, sizeof path))
        add(fp, path);
    fclose(fp);
    return text;
}
