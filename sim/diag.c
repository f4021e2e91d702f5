/*
 * sim/diag.c - error codes, their messages, and the diagnostic record.
 *
 * The first error recorded in a struct pfs_diag wins: a reader that fails deep inside a
 * helper reports the innermost, most precise cause, and callers above it that add context
 * cannot overwrite it.
 */
#define _DEFAULT_SOURCE /* madvise's MADV_HUGEPAGE, beside the build's _POSIX_C_SOURCE */
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

const char *
pfs_strerror(int code)
{
    switch (code) {
    case PFS_OK:
        return "success";
#define PFS__ERR_CASE(name, value, text)                                                           \
    case name:                                                                                     \
        return text;
        PFS_ERRORS(PFS__ERR_CASE)
#undef PFS__ERR_CASE
    }
    return "unknown error";
}

void
pfs_diag_clear(struct pfs_diag *diag)
{
    if (diag)
        memset(diag, 0, sizeof *diag);
}

int
pfs__diag_set(struct pfs_diag *diag, int code, const char *file, long line, long column,
              const char *field, const char *fmt, ...)
{
    va_list ap;

    if (!diag || diag->code != 0)
        return code;
    diag->code = code;
    pfs__strlcpy(diag->file, file ? file : "", sizeof diag->file);
    diag->line = line;
    diag->column = column;
    pfs__strlcpy(diag->field, field ? field : "", sizeof diag->field);
    va_start(ap, fmt);
    vsnprintf(diag->message, sizeof diag->message, fmt, ap);
    va_end(ap);
    return code;
}

int
pfs__diag_oom(struct pfs_diag *diag, int code, const char *file, long line, const char *what)
{
    if (code != PFS_ENOMEM || !diag || diag->file[0])
        return code;
    diag->code = PFS_ENOMEM;
    pfs__strlcpy(diag->file, file ? file : "", sizeof diag->file);
    diag->line = line;
    diag->column = 0;
    snprintf(diag->message, sizeof diag->message, "out of memory %s", what);
    return code;
}

void
pfs__diag_text(struct pfs_diag *diag, const char *text)
{
    if (diag && diag->text[0] == '\0' && text)
        pfs__strlcpy(diag->text, text, sizeof diag->text);
}

bool
pfs__strlcpy(char *dst, const char *src, size_t dst_size)
{
    size_t n = strlen(src);

    if (n >= dst_size) {
        memcpy(dst, src, dst_size - 1);
        dst[dst_size - 1] = '\0';
        return false;
    }
    memcpy(dst, src, n + 1);
    return true;
}

/* s read as a double when the answer can be had from one rounded operation of 64-bit
 * precision: a whole string of the form [+-]digits[.digits][e[+-]digits] with at most 19
 * significant digits and a power of ten within 10^+-27 (exact in 64 bits, as are the
 * digits), its long double product or quotient rounded to double unless it lies within one
 * unit of 64-bit precision of halfway between two doubles. (Exactly halfway, rounding twice
 * can differ from rounding once; the units either side are a margin.) Then *out is what strtod
 * gives, to the bit (test_parse_double holds it to strtod); false (anything else: more digits, hex,
 * inf, a near tie) leaves it to strtod. Most numbers pfisim reads are 17 digits of a double, which
 * strtod reads through its multi-precision path: 35% of a short run's instructions. */
static bool
decimal_fast(const char *s, double *out)
{
#if LDBL_MANT_DIG == 64 && FLT_EVAL_METHOD == 0
    static const long double pow10[28] = {1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,
                                          1e7L,  1e8L,  1e9L,  1e10L, 1e11L, 1e12L, 1e13L,
                                          1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L, 1e20L,
                                          1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L};
    uint64_t m = 0, low;
    int digits = 0, scale = 0, ex = 0, any = 0;
    bool neg = false, eneg = false;
    long double y;
    double d;

    if (*s == '+' || *s == '-')
        neg = *s++ == '-';
    for (; *s >= '0' && *s <= '9'; s++, any = 1)
        if (m || *s != '0') { /* (leading zeros are not significant) */
            if (++digits > 19)
                return false;
            m = m * 10 + (uint64_t)(*s - '0');
        }
    if (*s == '.')
        for (s++; *s >= '0' && *s <= '9'; s++, any = 1) {
            scale--;
            if (m || *s != '0') {
                if (++digits > 19)
                    return false;
                m = m * 10 + (uint64_t)(*s - '0');
            }
        }
    if (!any)
        return false;
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-')
            eneg = *s++ == '-';
        if (!(*s >= '0' && *s <= '9'))
            return false;
        for (; *s >= '0' && *s <= '9'; s++)
            if ((ex = ex * 10 + (*s - '0')) > 1000)
                return false;
    }
    if (*s != '\0')
        return false;
    scale += eneg ? -ex : ex;
    if (m == 0) {
        *out = neg ? -0.0 : 0.0;
        return true;
    }
    if (scale < -27 || scale > 27)
        return false;
    y = scale < 0 ? (long double)m / pow10[-scale] : (long double)m * pow10[scale];
    {
        unsigned char bytes[sizeof y];

        memcpy(bytes, &y, sizeof y); /* x87: the 64-bit significand first, little-endian */
        memcpy(&low, bytes, sizeof low);
    }
    if (((low & 0x7ff) - 0x3ff) <= 2) /* 0x3ff, 0x400, 0x401: at a tie, or next to one */
        return false;
    d = (double)y;
    *out = neg ? -d : d;
    return true;
#else
    (void)s;
    (void)out;
    return false;
#endif
}

double
pfs__strtod(const char *s)
{
    double v;

    return decimal_fast(s, &v) ? v : strtod(s, NULL);
}

bool
pfs__parse_double(const char *s, double *out)
{
    char *end;
    double v;

    if (!s || *s == '\0' || *s == ' ' || *s == '\t')
        return false;
    if (decimal_fast(s, out))
        return true;
    errno = 0;
    v = strtod(s, &end);
    /* ERANGE on underflow still gives a usable (tiny) value; overflow gives HUGE_VAL, which
     * the isfinite check rejects. NaN and "inf" parse but are rejected here too. */
    if (end == s || *end != '\0' || !isfinite(v))
        return false;
    *out = v;
    return true;
}

int
pfs__cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* The bits of v[i] (a copy: no double read through an integer pointer). */
static uint64_t
bits_of(const double *v, size_t i)
{
    uint64_t u;

    memcpy(&u, &v[i], sizeof u);
    return u;
}

void
pfs__sort_doubles(double *v, size_t n)
{
    size_t count[8][256] = {{0}};
    uint64_t *t;
    bool radix = n >= 4096, in_t = false;

    if (n < 2) /* (sorted; v may be NULL: no job lost anything) */
        return;
    for (size_t i = 0; i < n && radix; i++)
        radix = v[i] >= 0 && !signbit(v[i]); /* (not NaN, negative or -0) */
    /* one array beside v, not two: the losses of a 100,000-GPU year are 20 M values */
    if (!radix || !(t = pfs__lazy_calloc(n, sizeof *t))) {
        qsort(v, n, sizeof *v, pfs__cmp_double);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t u = bits_of(v, i);

        for (int d = 0; d < 8; d++)
            count[d][u >> (8 * d) & 0xff]++;
    }
    /* least significant byte first, each pass stable, from v into t or back; a byte all
     * values share is skipped */
    for (int d = 0; d < 8; d++) {
        size_t sum = 0;

        if (count[d][bits_of(v, 0) >> (8 * d) & 0xff] == n)
            continue;
        for (int k = 0; k < 256; k++) {
            size_t c = count[d][k];

            count[d][k] = sum;
            sum += c;
        }
        if (!in_t)
            for (size_t i = 0; i < n; i++) {
                uint64_t u = bits_of(v, i);

                t[count[d][u >> (8 * d) & 0xff]++] = u;
            }
        else
            for (size_t i = 0; i < n; i++)
                memcpy(&v[count[d][t[i] >> (8 * d) & 0xff]++], &t[i], sizeof t[i]);
        in_t = !in_t;
    }
    if (in_t)
        memcpy(v, t, n * sizeof *v);
    pfs__lazy_free(t);
}

bool
pfs__parse_long(const char *s, long *out)
{
    char *end;
    long v;

    if (!s || *s == '\0' || *s == ' ' || *s == '\t')
        return false;
    errno = 0;
    v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno == ERANGE)
        return false;
    *out = v;
    return true;
}

const char *
pfs_data_dir(void)
{
    const char *d = getenv("PFISIM_DATA");

    return (d && *d) ? d : "../shared/data";
}

/* Whether dir holds the shipped corpus (the mark of a folder of pfisim's shipped files). */
static bool
has_shipped(const char *dir)
{
    char p[PATH_MAX + 64];

    snprintf(p, sizeof p, "%s/traces/h200-h100/curves.csv", dir);
    return access(p, R_OK) == 0;
}

static char share_dir[PATH_MAX];

/* $PFISIM_SHARE; else, from the executable's own path (links resolved): an installed tree
 * (BIN/../share/pfisim) or the source tree it was built in (build/pfisim, build/asan/pfisim);
 * else none. */
static void
find_share_dir(void)
{
    const char *env = getenv("PFISIM_SHARE");
    char exe[PATH_MAX], cand[PATH_MAX + 32];
    ssize_t n;

    if (env && *env) {
        pfs__strlcpy(share_dir, env, sizeof share_dir);
        return;
    }
    if ((n = readlink("/proc/self/exe", exe, sizeof exe - 1)) <= 0)
        return;
    exe[n] = '\0';
    /* exe becomes the folder of the binary, then each folder above it in turn */
    for (int up = 0; up < 3; up++) {
        char *slash = strrchr(exe, '/');

        if (!slash || slash == exe)
            return;
        *slash = '\0';
        if (up == 1) { /* BIN's parent: an installed tree */
            snprintf(cand, sizeof cand, "%s/share/pfisim", exe);
            if (has_shipped(cand)) {
                pfs__strlcpy(share_dir, cand, sizeof share_dir);
                return;
            }
        }
        if (up > 0 && has_shipped(exe)) { /* the source tree: build/pfisim, build/asan/pfisim */
            pfs__strlcpy(share_dir, exe, sizeof share_dir);
            return;
        }
    }
}

const char *
pfs_share_dir(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;

    pthread_once(&once, find_share_dir);
    return share_dir[0] ? share_dir : NULL;
}

void *
pfs__grow_to(void *v, size_t *cap, size_t n, size_t elem, size_t first)
{
    size_t want;
    void *p;

    if (n < *cap)
        return v;
    want = *cap ? 2 * *cap : first;
    while (want <= n) { /* (n may jump: doubled until it fits) */
        if (want > SIZE_MAX / 2)
            return NULL;
        want *= 2;
    }
    if (want > SIZE_MAX / elem)
        return NULL;
    p = realloc(v, want * elem);
    if (p) {
        *cap = want;
        pfs__huge(p, want * elem);
    }
    return p;
}

void
pfs__huge(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t from = ((uintptr_t)p + huge - 1) & ~(huge - 1),
              to = ((uintptr_t)p + bytes) & ~(huge - 1);

    if (p && bytes >= 2 * huge && to > from)
        (void)madvise((void *)from, to - from, MADV_HUGEPAGE); /* advice: a refusal is no error */
#else
    (void)p;
    (void)bytes;
#endif
}

/* pfs__huge_malloc: huge pages from 1.5 MB, where a huge page the kernel must first clear
 * (3.7 ms here; one it freed not long before, 130 us) costs no more than the 384 small pages
 * it stands for (4 ms); a last part of 2 MB shorter than that stays on small pages. */
#define HUGE_FROM ((size_t)3 << 19)
/* Below it, an array written whole is faulted in at once (MADV_POPULATE_WRITE): here 0.65 us
 * a page and 4.5-5 us at its first write, against 10.5 us a page faulted one at a time (a
 * week's set-up, its 1 MB of jobs among them: 7.26 -> 5.79 ms); pages malloc had in use
 * already cost only the call. */
#define POPULATE_FROM ((size_t)64 << 10)

void *
pfs__huge_malloc(size_t bytes)
{
    const size_t huge = (size_t)2 << 20;
    size_t whole = bytes & ~(huge - 1), len;
    void *p;

    if (bytes < HUGE_FROM) {
        p = malloc(bytes);
        if (p && bytes >= POPULATE_FROM)
            pfs__populate(p, bytes);
        return p;
    }
    if (bytes - whole >= HUGE_FROM && whole <= SIZE_MAX - huge)
        whole += huge;
    len = whole > bytes ? whole : bytes;
    if (posix_memalign(&p, huge, len) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, whole, MADV_HUGEPAGE); /* advice: a refusal is no error */
#endif
    return p;
}

void *
pfs__huge_calloc(size_t n, size_t elem)
{
    void *p;

    if (elem && n > SIZE_MAX / elem)
        return NULL;
    if ((p = pfs__huge_malloc(n * elem)) != NULL)
        memset(p, 0, n * elem);
    return p;
}

/* pfs__lazy_calloc's header: the mapping's length (0: from calloc) and the array's bytes, in
 * a 64-byte line right before the array, so that the array keeps any alignment malloc
 * gives. A mapping starts at the header's page (the header and the array share the first
 * page of a small one; a huge one's array starts on a 2 MB boundary, the header on the small
 * page before it). */
#define LAZY_HEAD  64
#define LAZY_MIN   ((size_t)16 << 10)
#define LAZY_ALIGN ((size_t)2 << 20)
#define LAZY_HUGE  (2 * LAZY_ALIGN) /* (pfs__huge's least) */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

/* Mappings freed, kept for the next array of the same size: a run's arrays are the sizes
 * of the run's before it (four policies, the run that prices them, a sweep's seeds), and a
 * page this process has already touched costs nothing to touch again, where a fresh one
 * costs its fault, some 11 us here (bench/page-faults.sh; the 28-day cap-4k window faulted
 * 3,604 times, 1,700 of them the five runs' arrays each faulting in anew). Process-wide,
 * the latest KEPT_MAX and at most KEPT_BYTES; the oldest unmapped first. */
#define KEPT_MAX   64
#define KEPT_BYTES ((size_t)256 << 20)
static struct kept {
    char *base;
    size_t len, bytes; /* the mapping's length; its array's bytes (the header's) */
} kept[KEPT_MAX];      /* oldest first */
static size_t n_kept, kept_bytes;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

/* Where the mapping of the header at base starts: its page. */
static char *
map_start(char *base)
{
    return (char *)((uintptr_t)base & ~((uintptr_t)sysconf(_SC_PAGESIZE) - 1));
}

/* Zeroes [p, p + bytes) of a kept mapping (p a page's start): its pages in memory written
 * over (mincore), the others (never touched, or swapped out) dropped, for the kernel to
 * zero when next touched. */
static void
kept_clear(char *p, size_t bytes)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t pages = (bytes + page - 1) / page;
    unsigned char *in = malloc(pages);

    if (!in || mincore(p, pages * page, in) != 0) {
        memset(p, 0, bytes); /* (every page, then) */
        free(in);
        return;
    }
    for (size_t a = 0, b; a < pages; a = b) {
        bool resident = in[a] & 1;
        size_t to;

        for (b = a + 1; b < pages && (in[b] & 1) == resident; b++)
            ;
        to = b < pages ? b * page : bytes;
        if (resident)
            memset(p + a * page, 0, to - a * page);
        else
            (void)madvise(p + a * page, (b - a) * page, MADV_DONTNEED);
    }
    free(in);
}

/* A kept mapping made for an array of `bytes`, zeroed, its length in *len; or NULL. */
static char *
kept_take(size_t bytes, size_t *len)
{
    char *p = NULL;

    pthread_mutex_lock(&kept_lock);
    for (size_t i = n_kept; i-- > 0;)
        if (kept[i].bytes == bytes) {
            p = kept[i].base;
            *len = kept[i].len;
            kept_bytes -= kept[i].len;
            memmove(&kept[i], &kept[i + 1], (--n_kept - i) * sizeof *kept);
            break;
        }
    pthread_mutex_unlock(&kept_lock);
    if (p)
        kept_clear(map_start(p), (size_t)(p - map_start(p)) + LAZY_HEAD + bytes);
    return p;
}

/* Keeps a freed mapping for kept_take, the oldest unmapped to make room. */
static void
kept_put(char *base, size_t len, size_t bytes)
{
    struct kept old[KEPT_MAX];
    size_t n_old = 0;

    pthread_mutex_lock(&kept_lock);
    if (len <= KEPT_BYTES) {
        while (n_kept == KEPT_MAX || len > KEPT_BYTES - kept_bytes) {
            old[n_old++] = kept[0];
            kept_bytes -= kept[0].len;
            memmove(&kept[0], &kept[1], --n_kept * sizeof *kept);
        }
        kept[n_kept++] = (struct kept){base, len, bytes};
        kept_bytes += len;
    } else {
        old[n_old++] = (struct kept){base, len, bytes};
    }
    pthread_mutex_unlock(&kept_lock);
    for (size_t i = 0; i < n_old; i++) /* (outside the lock) */
        (void)munmap(map_start(old[i].base), old[i].len);
}

/* (lazy_map's choice, and the queue's: sim/queue.c keeps no page bits for a tree on huge
 * pages; the sanitizer's calloc never is) */
bool
pfs__lazy_huge(size_t bytes)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);

    return !SANITIZED && bytes <= SIZE_MAX - LAZY_HEAD - LAZY_HUGE - page &&
           LAZY_HEAD + bytes >= LAZY_HUGE;
}

/* A fresh mapping for the header and an array of `bytes` after it, its length in *len; the
 * header's place, or NULL. */
static char *
lazy_map(size_t bytes, size_t *len)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    char *raw, *p, *start;
    size_t total;

    *len = LAZY_HEAD + bytes;
    if (!pfs__lazy_huge(bytes)) {
        p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        return p == MAP_FAILED ? NULL : p;
    }
    /* The array on a 2 MB boundary, advised huge: the slots in use lie at its start, and one
     * huge page's fault stands for 512 small ones (the views of the first decision under a
     * limit faulted 1,500 times in a 28-day cap-4k run). The header on the small page before
     * it: written at once, it would fault the array's first huge page in even for a run that
     * never reaches it (a run whose cap never binds fills no policy view), some 3.5 ms where
     * the kernel must find a new one. The slack before given back; the slack after kept,
     * never touched (all page multiples whatever the page size). */
    total = page + bytes + LAZY_ALIGN;
    raw = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    p = (char *)(((uintptr_t)raw + page + LAZY_ALIGN - 1) & ~(uintptr_t)(LAZY_ALIGN - 1));
    start = p - page;
    if (start > raw)
        (void)munmap(raw, (size_t)(start - raw));
    *len = (size_t)(raw + total - start);
#ifdef MADV_HUGEPAGE
    (void)madvise(p, (size_t)(raw + total - p), MADV_HUGEPAGE); /* a refusal is no error */
#endif
    return p - LAZY_HEAD;
}

/* calloc's memory below LAZY_MIN (and under the sanitizer, which guards what malloc gives);
 * above, a kept mapping or a fresh one */
void *
pfs__lazy_calloc(size_t n, size_t elem)
{
    size_t bytes, len = 0;
    char *p;

    if (elem && n > (SIZE_MAX - LAZY_HEAD) / elem)
        return NULL;
    bytes = n * elem;
    if (bytes < LAZY_MIN || SANITIZED)
        p = calloc(1, LAZY_HEAD + bytes);
    else if (!(p = kept_take(bytes, &len)))
        p = lazy_map(bytes, &len);
    if (!p)
        return NULL;
    memcpy(p, &len, sizeof len);
    memcpy(p + sizeof len, &bytes, sizeof bytes);
    return p + LAZY_HEAD;
}

void
pfs__lazy_free(void *p)
{
    char *base;
    size_t len;

    if (!p)
        return;
    base = (char *)p - LAZY_HEAD;
    memcpy(&len, base, sizeof len);
    if (len) {
        size_t bytes;

        memcpy(&bytes, base + sizeof len, sizeof bytes);
        kept_put(base, len, bytes);
    } else {
        free(base);
    }
}

static void *
prefault_run(void *arg)
{
#ifdef MADV_POPULATE_WRITE
    struct pfs__prefault *pf = arg;
    const size_t chunk = (size_t)16 << 20;

    for (size_t at = 0; at < pf->bytes && !__atomic_load_n(&pf->stop, __ATOMIC_RELAXED);
         at += chunk) {
        size_t n = pf->bytes - at < chunk ? pf->bytes - at : chunk;

        if (madvise(pf->p + at, n, MADV_POPULATE_WRITE) != 0)
            break; /* (an older kernel: the writes fault as they would have) */
    }
#else
    (void)arg;
#endif
    return NULL;
}

/* The whole pages of [p, p + bytes): their start in *from, their length (0: none). */
static size_t
whole_pages(const void *p, size_t bytes, char **from)
{
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1), b = ((uintptr_t)p + bytes) & ~(page - 1);

    *from = (char *)a;
    return p && b > a ? (size_t)(b - a) : 0;
}

void
pfs__populate(void *p, size_t bytes)
{
#ifdef MADV_POPULATE_WRITE
    char *from;
    size_t len = whole_pages(p, bytes, &from);

    if (len)
        (void)madvise(from, len, MADV_POPULATE_WRITE); /* (else: faults) */
#else
    (void)p;
    (void)bytes;
#endif
}

void
pfs__prefault_start(struct pfs__prefault *pf, void *p, size_t bytes)
{
    pf->on = false;
    pf->stop = 0;
    if (bytes < ((size_t)64 << 20) || (pf->bytes = whole_pages(p, bytes, &pf->p)) == 0)
        return; /* (not worth a thread) */
    pf->on = pthread_create(&pf->th, NULL, prefault_run, pf) == 0;
}

void
pfs__prefault_stop(struct pfs__prefault *pf)
{
    if (!pf->on)
        return;
    __atomic_store_n(&pf->stop, 1, __ATOMIC_RELAXED);
    pthread_join(pf->th, NULL);
    pf->on = false;
}

int
pfs__mkdir_parents(const char *path)
{
    char buf[512];

    if (!pfs__strlcpy(buf, path, sizeof buf))
        return -1;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return 0;
}

int
pfs__resolve_path(const char *base_dir, const char *path, char *out, size_t size)
{
    const char *share = pfs_share_dir();
    char cand[3][PATH_MAX + 600];
    int n = 0;

    if (!path[0] || path[0] == '/' || strncmp(path, "import:", 7) == 0 ||
        strncmp(path, "synth:", 6) == 0)
        return pfs__strlcpy(out, path, size) ? 0 : -1;
    /* In order: beside the file that names it, the current folder, the shipped files. */
    if (base_dir && base_dir[0] && strcmp(base_dir, ".") != 0)
        snprintf(cand[n++], sizeof cand[0], "%s/%s", base_dir, path);
    snprintf(cand[n++], sizeof cand[0], "%s", path);
    if (share)
        snprintf(cand[n++], sizeof cand[0], "%s/%s", share, path);
    for (int i = 0; i < n; i++)
        if (access(cand[i], F_OK) == 0)
            return pfs__strlcpy(out, cand[i], size) ? 0 : -1;
    /* Nowhere: the first place looked, which the reader's error will then name. */
    return pfs__strlcpy(out, cand[0], size) ? 0 : -1;
}

/* Levenshtein distance of a and b, capped at 9 (names are short). */
static int
edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    int row[64];

    if (la > 62 || lb > 62)
        return 9;
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];

        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j], best = diag + (a[i - 1] != b[j - 1]);

            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[lb] > 9 ? 9 : row[lb];
}

const char *
pfs__did_you_mean(const char *near, char *buf, size_t size)
{
    if (!near)
        return "";
    snprintf(buf, size, "; did you mean '%s'?", near);
    return buf;
}

const char *
pfs__nearest(const char *name, const char *const *names, size_t n)
{
    const char *best = NULL;
    size_t len = strlen(name);
    /* In half edits: a prefix counts as half of one (h100 suggests h100-sxm before b100,
     * one edit away); short names may be one edit away, longer ones two (so that r200
     * suggests nothing rather than p100). */
    int best_d = len >= 6 ? 6 : 4;

    for (size_t i = 0; i < n; i++) {
        int dist =
            len >= 2 && strncmp(names[i], name, len) == 0 ? 1 : 2 * edit_distance(name, names[i]);

        if (dist < best_d && strcmp(name, names[i]) != 0) {
            best_d = dist;
            best = names[i];
        }
    }
    return best;
}

/* The kind of quantity a setting holds, from its name. */
enum quantity { Q_NONE, Q_WATTS, Q_HOURS, Q_MINUTES, Q_SECONDS, Q_DAYS, Q_FRACTION };

static enum quantity
quantity_of(const char *name)
{
    static const char *const fractions[] = {"cut",   "load",  "margin", "firm",
                                            "flex1", "flex2", "flex3",  NULL};
    size_t n = strlen(name);

    for (size_t k = 0; fractions[k]; k++)
        if (strcmp(name, fractions[k]) == 0)
            return Q_FRACTION;
    if (n > 2 && strcmp(name + n - 2, "_w") == 0)
        return Q_WATTS;
    if (n > 2 && strcmp(name + n - 2, "_h") == 0)
        return Q_HOURS;
    if (n > 4 && strcmp(name + n - 4, "_min") == 0)
        return Q_MINUTES;
    if (n > 2 && strcmp(name + n - 2, "_s") == 0)
        return Q_SECONDS;
    if (n > 5 && strcmp(name + n - 5, "_days") == 0)
        return Q_DAYS;
    return Q_NONE;
}

bool
pfs__parse_quantity(const char *text, const char *setting, double *out, char *why, size_t size)
{
    static const struct {
        const char *unit;
        int kind;     /* 0 power, 1 time, 2 fraction */
        double scale; /* to W, to s, to a fraction */
    } units[] = {
        {"W", 0, 1},        {"kW", 0, 1e3},     {"MW", 0, 1e6},  {"GW", 0, 1e9},
        {"s", 1, 1},        {"sec", 1, 1},      {"min", 1, 60},  {"h", 1, 3600},
        {"hour", 1, 3600},  {"hours", 1, 3600}, {"d", 1, 86400}, {"day", 1, 86400},
        {"days", 1, 86400}, {"%", 2, 0.01},
    };
    static const double per_setting[] = {0, 1, 3600, 60, 1, 86400, 1}; /* s per unit */
    enum quantity q = quantity_of(setting);
    char *end;
    double v;

    if (q == Q_NONE) {
        snprintf(why, size, "expected a number (this setting takes no unit)");
        return false;
    }
    errno = 0;
    v = strtod(text, &end);
    if (end == text || errno == ERANGE || !isfinite(v)) {
        snprintf(why, size, "expected a number and a unit");
        return false;
    }
    while (*end == ' ')
        end++;
    for (size_t k = 0; k < sizeof units / sizeof units[0]; k++) {
        int want = q == Q_WATTS ? 0 : q == Q_FRACTION ? 2 : 1;

        if (strcmp(end, units[k].unit) != 0)
            continue;
        if (units[k].kind != want)
            break;
        v *= units[k].scale;
        if (want == 1)
            v /= per_setting[q];
        *out = v;
        return true;
    }
    snprintf(why, size, "%s",
             q == Q_WATTS      ? "expected watts: a number, or with W, kW, MW or GW"
             : q == Q_FRACTION ? "expected a fraction (0.3) or a percent (30%)"
                               : "expected a time: a number, or with s, min, h or d");
    return false;
}

/* Whether y-m-d is a real date, years 1-9999 (internal.h). */
bool
pfs__civil_date(long y, long m, long d)
{
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

    if (y < 1 || y > 9999 || m < 1 || m > 12 || d < 1)
        return false;
    return d <= mdays[m - 1] + (m == 2 && leap);
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm). */
long
pfs__days_from_civil(long y, long m, long d)
{
    long era, yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}
