/*
 * policies/exec.c - an external program as an allocation policy (pfisim run --policy-exec;
 * docs/policies.md, "The external-process protocol").
 *
 * The program runs under /bin/sh -c with one end of a socket pair as its standard input and
 * output (its standard error is pfisim's). They exchange JSON, one object a line: pfisim's
 * hello, the program's handshake (its policy's name, summary and claims), then for every
 * decision pfisim's view and the program's answer. A socket rather than two pipes so that
 * writing to a program that has died fails with EPIPE (send with MSG_NOSIGNAL) instead of
 * killing pfisim with SIGPIPE, without touching the process's signal dispositions.
 *
 * Every exchange (the view written, the answer read) has one deadline, timeout_s from its
 * start; past it the program is killed. A program that fails (dies, is silent past the
 * deadline, answers with something that is not the answer) is marked dead and every later
 * decision fails at once: a run ends with PFS_EPOLICY, which no caller takes for an
 * infeasible budget, and the message quotes what the program said. An answer is checked
 * here against the view (the limits, pausing, the budget), so that its error can quote it;
 * the dispatcher checks it again, as it checks every policy's.
 *
 * The program is the leader of a process group of its own (the shell and whatever it starts),
 * and every end kills the whole group before the leader is reaped (so that its id cannot be
 * reused meanwhile): with dash as /bin/sh, the program is the shell's child, and killing the
 * shell alone left it running under init with pfisim's standard error open, so that a
 * `$(pfisim ...)` caller waited for it.
 *
 * One program serves every run of the process; a lock makes the exchanges one at a time (the
 * run without events may decide on the second core). Numbers go out with 17 significant
 * digits and come back through strtod, so a program that computes in IEEE doubles, as Python
 * does, decides bit for bit what C would.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "policy.h"

#define PROTOCOL     1
#define MAX_PROGRAMS 8
#define MAX_LINE     (256u << 20) /* an answer longer than 256 MB is not an answer */

extern char **environ;

struct program {
    struct pfs_policy_ops ops; /* first: the registry's descriptor is the program */
    char name[32], summary[200], cmd[512];
    pid_t pid;
    int fd; /* pfisim's end of the socket; -1 once closed */
    double timeout_s;
    pthread_mutex_t lock;
    bool dead;            /* it failed once: every later decision fails at once */
    char why[400];        /* and how */
    unsigned long number; /* decisions asked */
    char *in;             /* bytes read and not yet taken */
    size_t in_len, in_cap;
    char *out; /* the message being written */
    size_t out_len, out_cap;
};

static struct program *programs[MAX_PROGRAMS];
static size_t n_programs;
/* The programs' group ids, for pfs_policy_exec_kill_all in a signal handler, which may take
 * no lock: written before the program can matter, read as plain integers. */
static volatile sig_atomic_t groups[MAX_PROGRAMS];
static volatile sig_atomic_t n_groups;

static void
group_note(pid_t pid)
{
    if (n_groups < MAX_PROGRAMS) {
        groups[n_groups] = (sig_atomic_t)pid;
        n_groups = n_groups + 1;
    }
}

/* The group of pid is gone (its leader reaped): its id may be reused. */
static void
group_forget(pid_t pid)
{
    for (sig_atomic_t k = 0; k < n_groups; k++)
        if (groups[k] == (sig_atomic_t)pid)
            groups[k] = 0;
}

void
pfs_policy_exec_kill_all(void)
{
    for (sig_atomic_t k = 0; k < n_groups; k++)
        if (groups[k] > 0)
            kill(-(pid_t)groups[k], SIGKILL);
}
static pthread_mutex_t programs_lock = PTHREAD_MUTEX_INITIALIZER;

/* ----- the message being written ----- */

static bool
put(struct program *p, const char *s, size_t n)
{
    while (p->out_len + n + 1 > p->out_cap) {
        size_t cap = p->out_cap ? 2 * p->out_cap : 1 << 16;
        char *g = realloc(p->out, cap);

        if (!g)
            return false;
        p->out = g;
        p->out_cap = cap;
    }
    memcpy(p->out + p->out_len, s, n);
    p->out_len += n;
    p->out[p->out_len] = '\0';
    return true;
}

static bool
puts_(struct program *p, const char *s)
{
    return put(p, s, strlen(s));
}

/* A number with 17 significant digits (it reads back bit for bit), null when not finite. */
static bool
put_num(struct program *p, double x)
{
    char buf[40];

    if (!isfinite(x))
        return puts_(p, "null");
    snprintf(buf, sizeof buf, "%.17g", x);
    return puts_(p, buf);
}

static bool
put_str(struct program *p, const char *s)
{
    bool ok = put(p, "\"", 1);

    for (; ok && *s; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[8];

        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            ok = put(p, esc, 2);
        } else if (c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            ok = puts_(p, esc);
        } else {
            ok = put(p, s, 1);
        }
    }
    return ok && put(p, "\"", 1);
}

static bool
put_field_num(struct program *p, const char *key, double x)
{
    return puts_(p, ",\"") && puts_(p, key) && puts_(p, "\":") && put_num(p, x);
}

static bool
put_field_str(struct program *p, const char *key, const char *s)
{
    return puts_(p, ",\"") && puts_(p, key) && puts_(p, "\":") && put_str(p, s);
}

/* The decision's view: what pfi sees, the truth never (the view has none for a policy added
 * at run time). */
static bool
put_view(struct program *p, const struct pfs_alloc_view *v)
{
    bool ok = puts_(p, "{\"decision\":") && put_num(p, (double)p->number) &&
              put_field_num(p, "budget_w", v->budget_w) && puts_(p, ",\"jobs\":[");

    for (size_t i = 0; ok && i < v->n_jobs; i++) {
        const struct pfs_alloc_job *j = &v->jobs[i];
        double pfi[PFS_N_CUTS];

        ok = puts_(p, i ? ",{\"id\":" : "{\"id\":") && put_str(p, j->job_id) &&
             put_field_num(p, "n_gpus", j->n_gpus) && put_field_num(p, "min_w", j->min_w) &&
             put_field_num(p, "max_w", j->max_w) && put_field_num(p, "ref_w", j->ref_w) &&
             put_field_num(p, "idle_w", j->idle_w) &&
             put_field_str(p, "tier", pfs_tier_name(j->tier)) &&
             put_field_num(p, "max_loss", j->max_loss) &&
             put_field_num(p, "deadline_s", j->deadline_s) &&
             put_field_num(p, "remaining_tokens", j->remaining_tokens) &&
             put_field_num(p, "now_s", j->now_s) &&
             put_field_num(p, "limit_until_s", j->limit_until_s) &&
             put_field_num(p, "restart_s", j->restart_s);
        if (ok && v->telemetry) {
            const struct pfs_telemetry *t = &v->telemetry[i];

            pfs__view_pfi(v, i, pfi);
            ok = put_field_str(p, "gpu", t->gpu) && put_field_str(p, "family", t->family) &&
                 put_field_str(p, "phase", t->phase) && put_field_num(p, "power_w", t->power_w) &&
                 put_field_num(p, "power_frac", t->power_frac) &&
                 put_field_num(p, "sm_clock_mhz", t->sm_clock_mhz) &&
                 put_field_num(p, "sm_active", t->sm_active) &&
                 put_field_num(p, "tensor_active", t->tensor_active) &&
                 put_field_num(p, "dram_active", t->dram_active) &&
                 put_field_num(p, "nvlink_gbps", t->nvlink_gbps) &&
                 put_field_num(p, "net_gbps", t->net_gbps) &&
                 put_field_num(p, "tokens_per_s", t->tokens_per_s) && puts_(p, ",\"pfi\":[");
            for (size_t k = 0; ok && k < PFS_N_CUTS; k++)
                ok = (k == 0 || puts_(p, ",")) && put_num(p, pfi[k]);
            ok = ok && puts_(p, "]");
        }
        ok = ok && puts_(p, "}");
    }
    return ok && puts_(p, "]}\n");
}

/* The tree of limits into the decision just written: ,"tree":{...} before its closing brace
 * (parent, limit_w with null for none, job_node, name). */
static bool
put_tree(struct program *p, const struct pfs_alloc_tree *t, size_t n_jobs)
{
    bool ok;

    p->out_len -= 2; /* "}\n" */
    ok = puts_(p, ",\"tree\":{\"parent\":[");
    for (size_t u = 0; ok && u < t->n_nodes; u++)
        ok = (u == 0 || puts_(p, ",")) && put_num(p, t->parent[u]);
    ok = ok && puts_(p, "],\"limit_w\":[");
    for (size_t u = 0; ok && u < t->n_nodes; u++)
        ok = (u == 0 || puts_(p, ",")) && put_num(p, t->limit_w[u]);
    ok = ok && puts_(p, "],\"job_node\":[");
    for (size_t i = 0; ok && i < n_jobs; i++)
        ok = (i == 0 || puts_(p, ",")) && put_num(p, t->job_node[i]);
    ok = ok && puts_(p, "],\"name\":[");
    for (size_t u = 0; ok && u < t->n_nodes; u++)
        ok = (u == 0 || puts_(p, ",")) && put_str(p, t->name ? t->name[u] : "");
    return ok && puts_(p, "]}}\n");
}

/* ----- the socket ----- */

static double
now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Marks p dead, killing it, with why (formatted) as every later decision's error; returns
 * PFS_EPOLICY with the same into diag. */
static int die(struct program *p, struct pfs_diag *diag, const char *fmt, ...) PFS__PRINTF(3, 4);

/* Kills the program's process group (if its leader is not yet reaped), reaps the leader and
 * closes the socket. */
static void
stop(struct program *p)
{
    if (p->pid > 0) {
        kill(-p->pid, SIGKILL);
        waitpid(p->pid, NULL, 0);
        group_forget(p->pid);
        p->pid = -1;
    }
    if (p->fd >= 0) {
        close(p->fd);
        p->fd = -1;
    }
}

static int
die(struct program *p, struct pfs_diag *diag, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(p->why, sizeof p->why, fmt, ap);
    va_end(ap);
    p->dead = true;
    stop(p);
    return pfs__diag_set(diag, PFS_EPOLICY, NULL, 0, 0, "policy", "policy program '%s': %s", p->cmd,
                         p->why);
}

/* Whether the group's leader (the shell) has exited: p->pid with *status once it has, after
 * killing what is left of its group and reaping it; 0 while it runs; -1 on error. */
static pid_t
leader_exited(struct program *p, int *status)
{
    siginfo_t info = {0};

    if (waitid(P_PID, (id_t)p->pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0)
        return -1;
    if (info.si_pid != p->pid)
        return 0;
    kill(-p->pid, SIGKILL); /* (the leader a zombie still: its id is not reused) */
    group_forget(p->pid);
    return waitpid(p->pid, status, 0);
}

/* How the program ended, once its end of the socket closed: "exited with status N" or "was
 * killed by signal N" (reaped), into buf. */
static const char *
how_it_ended(struct program *p, char *buf, size_t size)
{
    int status = 0;
    pid_t r = -1;

    /* The socket closes as the program exits; give it a moment to be reaped, and its group
     * (what it left running) killed first. */
    for (int k = 0; k < 100 && (r = leader_exited(p, &status)) == 0; k++)
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    if (r == p->pid) {
        p->pid = -1;
        if (WIFEXITED(status))
            snprintf(buf, size, "exited with status %d", WEXITSTATUS(status));
        else if (WIFSIGNALED(status))
            snprintf(buf, size, "was killed by signal %d", WTERMSIG(status));
        else
            snprintf(buf, size, "ended");
    } else {
        snprintf(buf, size, "closed its output");
    }
    return buf;
}

/* Writes the message whole by the deadline. Returns 0, or -1 (timed out), or -2 (the
 * program closed the socket). */
static int
send_all(struct program *p, double deadline)
{
    size_t done = 0;

    while (done < p->out_len) {
        struct pollfd pf = {p->fd, POLLOUT, 0};
        double left = deadline - now_s();
        ssize_t w;

        if (left <= 0)
            return -1;
        if (poll(&pf, 1, (int)ceil(left * 1000)) <= 0)
            continue; /* the deadline is checked above */
        w = send(p->fd, p->out + done, p->out_len - done, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            continue;
        if (w <= 0)
            return -2;
        done += (size_t)w;
    }
    return 0;
}

/* Reads one line (without its newline) into p->in[0..*len) by the deadline, the rest kept
 * for the next. Returns 0, or -1 (timed out), -2 (the program closed the socket first), -3
 * (a line longer than MAX_LINE), -4 (out of memory). */
static int
read_line(struct program *p, double deadline, size_t *len)
{
    size_t scanned = 0;

    for (;;) {
        char *nl = p->in_len > scanned ? memchr(p->in + scanned, '\n', p->in_len - scanned) : NULL;
        struct pollfd pf = {p->fd, POLLIN, 0};
        double left;
        ssize_t r;

        if (nl) {
            *len = (size_t)(nl - p->in);
            return 0;
        }
        scanned = p->in_len;
        if (p->in_len >= MAX_LINE)
            return -3;
        if (p->in_cap - p->in_len < 65536) {
            size_t cap = p->in_cap ? 2 * p->in_cap : 1 << 17;
            char *g = realloc(p->in, cap);

            if (!g)
                return -4;
            p->in = g;
            p->in_cap = cap;
        }
        if ((left = deadline - now_s()) <= 0)
            return -1;
        if (poll(&pf, 1, (int)ceil(left * 1000)) <= 0)
            continue;
        r = recv(p->fd, p->in + p->in_len, p->in_cap - p->in_len, MSG_DONTWAIT);
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            continue;
        if (r <= 0)
            return -2;
        p->in_len += (size_t)r;
    }
}

/* Drops the line of len bytes (and its newline) that read_line found. */
static void
take_line(struct program *p, size_t len)
{
    memmove(p->in, p->in + len + 1, p->in_len - len - 1);
    p->in_len -= len + 1;
}

/* A line as the program wrote it, cut to fit an error message. */
static const char *
quote(const char *line, size_t len, char *buf, size_t size)
{
    size_t n = len < size - 4 ? len : size - 4;

    memcpy(buf, line, n);
    buf[n] = '\0';
    if (n < len)
        pfs__strlcpy(buf + n, "...", size - n);
    for (char *c = buf; *c; c++)
        if ((unsigned char)*c < 0x20)
            *c = '?';
    return buf;
}

/* One exchange: p->out written, one line read and parsed into doc (its text at *line). The
 * program is marked dead on any failure. what names the exchange in messages. */
static int
exchange(struct program *p, const char *what, struct pfs__json_doc *doc, size_t *len,
         struct pfs_diag *diag)
{
    double deadline = now_s() + p->timeout_s;
    char ended[64], q[200];
    size_t at = 0;
    const char *why = NULL;
    int r = send_all(p, deadline);

    if (r == 0)
        r = read_line(p, deadline, len);
    if (r == -1)
        return die(p, diag, "no answer to %s within %g s (killed; --policy-timeout)", what,
                   p->timeout_s);
    if (r == -2)
        return die(p, diag, "%s before answering %s", how_it_ended(p, ended, sizeof ended), what);
    if (r == -3)
        return die(p, diag, "an answer to %s longer than %u bytes", what, MAX_LINE);
    if (r == -4)
        return die(p, diag, "out of memory reading the answer to %s", what);
    if ((r = pfs__json_parse(p->in, *len, doc, &at, &why)) != 0)
        return die(p, diag, "the answer to %s is not JSON (byte %zu: %s): %s", what, at + 1,
                   why ? why : "out of memory", quote(p->in, *len, q, sizeof q));
    return 0;
}

/* ----- the protocol's answers, read (fuzzed as such: tests/fuzz/fuzz.c, exec_answer) ----- */

#define BAD(...)                                                                                   \
    do {                                                                                           \
        snprintf(why, why_size, __VA_ARGS__);                                                      \
        return -1;                                                                                 \
    } while (0)

int
pfs__exec_answer(const struct pfs__json_doc *doc, unsigned long number, bool may_pause,
                 const struct pfs_alloc_view *v, struct pfs_alloc_decision *out, char *why,
                 size_t why_size)
{
    const struct pfs__json *cap, *pause, *no, *num;
    double total = 0;

    if (doc->root->type != PFS__JSON_OBJECT)
        BAD("the answer is not an object");
    no = pfs__json_get(doc, doc->root, "decision");
    if (!no || no->type != PFS__JSON_NUMBER || no->num < (double)number || no->num > (double)number)
        BAD("the answer's \"decision\" is not %lu", number);
    if ((num = pfs__json_get(doc, doc->root, "infeasible")) != NULL) {
        snprintf(why, why_size, "%.200s",
                 pfs__json_str(doc, num) ? pfs__json_str(doc, num) : "(no reason)");
        return 1;
    }
    cap = pfs__json_get(doc, doc->root, "cap_w");
    pause = pfs__json_get(doc, doc->root, "pause_frac");
    if (!cap || cap->type != PFS__JSON_ARRAY || cap->n != v->n_jobs)
        BAD("expected \"cap_w\": an array of %zu numbers, one a job", v->n_jobs);
    if (pause && (pause->type != PFS__JSON_ARRAY || pause->n != v->n_jobs))
        BAD("expected \"pause_frac\" (optional): an array of %zu numbers", v->n_jobs);
    num = pfs__json_first(doc, cap);
    for (size_t i = 0; i < v->n_jobs; i++, num = pfs__json_next(doc, num)) {
        const struct pfs_alloc_job *j = &v->jobs[i];

        if (num->type != PFS__JSON_NUMBER)
            BAD("cap_w[%zu] is not a number", i);
        out[i].cap_w = num->num;
        if (!(num->num >= j->min_w * (1 - 1e-12) && num->num <= j->max_w * (1 + 1e-12)))
            BAD("cap_w[%zu] = %g W for job '%.40s': outside its limits [%g, %g] W", i, num->num,
                j->job_id, j->min_w, j->max_w);
    }
    if (pause) {
        num = pfs__json_first(doc, pause);
        for (size_t i = 0; i < v->n_jobs; i++, num = pfs__json_next(doc, num)) {
            if (num->type != PFS__JSON_NUMBER || !(num->num >= 0 && num->num <= 1))
                BAD("pause_frac[%zu] is not a number in [0, 1]", i);
            if (num->num > 0 && !may_pause)
                BAD("pause_frac[%zu] = %g, but the handshake said may_pause false", i, num->num);
            out[i].pause_frac = num->num;
        }
    }
    for (size_t i = 0; i < v->n_jobs; i++)
        total += pfs_alloc_power_w(&v->jobs[i], &out[i]);
    if (total > v->budget_w * (1 + 1e-9))
        BAD("the caps commit %.3f W of a %.3f W budget", total, v->budget_w);
    return 0;
}

int
pfs__exec_hello(const struct pfs__json_doc *doc, struct pfs__exec_hello *h, char *why,
                size_t why_size)
{
    const struct pfs__json *v, *r = doc->root;

    if (r->type != PFS__JSON_OBJECT)
        BAD("expected an object");
    v = pfs__json_get(doc, r, "protocol");
    if (!v || v->type != PFS__JSON_NUMBER)
        BAD("expected \"protocol\": %d", PROTOCOL);
    if (v->num < PROTOCOL || v->num > PROTOCOL)
        BAD("it speaks protocol %g; this pfisim speaks protocol %d", v->num, PROTOCOL);
    if (!(v = pfs__json_get(doc, r, "name")) || !pfs__json_str(doc, v) ||
        !pfs__json_str(doc, v)[0]) /* ("" was taken, and refused only as it registered) */
        BAD("expected \"name\": the policy's name");
    if (!pfs__strlcpy(h->name, pfs__json_str(doc, v), sizeof h->name))
        BAD("the name is longer than 31 characters");
    v = pfs__json_get(doc, r, "summary");
    pfs__strlcpy(h->summary,
                 v && pfs__json_str(doc, v) ? pfs__json_str(doc, v) : "an external program",
                 sizeof h->summary);
    for (int k = 0; k < 3; k++) {
        static const char *const keys[] = {"may_pause", "memoryless", "tree"};
        bool *into[] = {&h->may_pause, &h->memoryless, &h->tree};

        v = pfs__json_get(doc, r, keys[k]);
        if (v && v->type != PFS__JSON_BOOL)
            BAD("\"%s\" is not true or false", keys[k]);
        *into[k] = v && v->num > 0;
    }
    return 0;
}

#undef BAD

/* ----- the policy ----- */

static int
exec_init(void *state, const struct pfs_params *params, struct pfs_diag *diag)
{
    (void)diag;
    /* The descriptor is the first member of its program. */
    *(struct program **)state = (struct program *)(void *)(uintptr_t)params->ops;
    return 0;
}

/* One decision: the view (and the tree, under one) out, the answer in. */
static int
exec_decide(void *state, const struct pfs_alloc_view *v, const struct pfs_alloc_tree *t,
            struct pfs_alloc_decision *out, struct pfs_diag *diag)
{
    struct program *p = *(struct program **)state;
    struct pfs__json_doc doc = {0};
    char what[64], q[200], why[240];
    size_t len = 0;
    bool got = false; /* a line was read: taken at the end */
    int rc = 0;

    pthread_mutex_lock(&p->lock);
    if (p->dead) {
        rc = pfs__diag_set(diag, PFS_EPOLICY, NULL, 0, 0, "policy", "policy program '%s': %s",
                           p->cmd, p->why);
        goto out;
    }
    p->number++;
    snprintf(what, sizeof what, "decision %lu", p->number);
    p->out_len = 0;
    if (!put_view(p, v) || (t && !put_tree(p, t, v->n_jobs))) {
        rc = pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto out;
    }
    if ((rc = exchange(p, what, &doc, &len, diag)) != 0)
        goto out;
    got = true;
    switch (pfs__exec_answer(&doc, p->number, p->ops.may_pause, v, out, why, sizeof why)) {
    case 0:
        break;
    case 1: /* the program says the budget cannot be met: as any policy does (the simulator
             * puts every job at its minimum cap; policy-check expects it below the minimum
             * caps) */
        rc = pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "budget", "infeasible for %s: %s", p->name,
                           why);
        break;
    default:
        rc = die(p, diag, "%s: %s: %s", what, why, quote(p->in, len, q, sizeof q));
        break;
    }
out:
    pfs__json_free(&doc);
    if (got && p->fd >= 0)
        take_line(p, len);
    pthread_mutex_unlock(&p->lock);
    return rc;
}

static int
exec_allocate(void *state, const struct pfs_alloc_view *v, struct pfs_alloc_decision *out,
              struct pfs_diag *diag)
{
    return exec_decide(state, v, NULL, out, diag);
}

static int
exec_allocate_tree(void *state, const struct pfs_alloc_view *v, const struct pfs_alloc_tree *t,
                   struct pfs_alloc_decision *out, struct pfs_diag *diag)
{
    return exec_decide(state, v, t, out, diag);
}

/* ----- start and end ----- */

static int
spawn(struct program *p, struct pfs_diag *diag)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none;
    int sv[2], rc;
    char *argv[] = {"sh", "-c", p->cmd, NULL};

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return pfs__diag_set(diag, PFS_EPOLICY, NULL, 0, 0, "policy",
                             "policy program '%s': socketpair: %s", p->cmd, strerror(errno));
    posix_spawn_file_actions_init(&fa);
    /* dup2 clears close-on-exec on the copies, so the child keeps 0 and 1 only. */
    posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
    posix_spawn_file_actions_adddup2(&fa, sv[1], 1);
    posix_spawnattr_init(&attr);
    posix_spawnattr_setpgroup(&attr, 0); /* a group of its own, led by the shell */
    /* and no signal blocked that pfisim's command line blocks for its own watcher */
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
    rc = posix_spawn(&p->pid, "/bin/sh", &fa, &attr, argv, environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    if (rc == 0)
        group_note(p->pid);
    close(sv[1]);
    if (rc != 0) {
        close(sv[0]);
        p->pid = -1;
        return pfs__diag_set(diag, PFS_EPOLICY, NULL, 0, 0, "policy",
                             "policy program '%s': cannot start /bin/sh: %s", p->cmd, strerror(rc));
    }
    p->fd = sv[0];
    return 0;
}

/* The handshake: pfisim's hello, the program's name and claims. */
static int
handshake(struct program *p, struct pfs_diag *diag)
{
    struct pfs__json_doc doc = {0};
    struct pfs__exec_hello h = {"", "", false, false, false};
    char q[200], hello[160], why[240];
    size_t len = 0;
    int rc;

    snprintf(hello, sizeof hello,
             "{\"pfisim\":\"%s\",\"protocol\":%d,\"cuts\":[0.1,0.2,0.3,0.4,0.5]}\n", PFS_VERSION,
             PROTOCOL);
    p->out_len = 0;
    if (!puts_(p, hello))
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    if ((rc = exchange(p, "the handshake", &doc, &len, diag)) != 0)
        return rc;
    if (pfs__exec_hello(&doc, &h, why, sizeof why) != 0) {
        rc = die(p, diag, "the handshake: %s: %s", why, quote(p->in, len, q, sizeof q));
        goto out;
    }
    pfs__strlcpy(p->name, h.name, sizeof p->name);
    pfs__strlcpy(p->summary, h.summary, sizeof p->summary);
    p->ops.may_pause = h.may_pause;
    p->ops.memoryless = h.memoryless;
    p->ops.allocate_tree = h.tree ? exec_allocate_tree : NULL;
out:
    pfs__json_free(&doc);
    if (rc == 0)
        take_line(p, len);
    return rc;
}

int
pfs_policy_exec_start(const char *cmd, double timeout_s, const struct pfs_policy_ops **out,
                      struct pfs_diag *diag)
{
    struct program *p;
    const struct pfs_policy_ops *one[1];
    int rc;

    *out = NULL;
    if (!(timeout_s > 0))
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "timeout",
                             "the policy program's timeout must be above 0 s");
    if (!(p = calloc(1, sizeof *p)))
        return pfs__diag_set(diag, PFS_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    if (!pfs__strlcpy(p->cmd, cmd, sizeof p->cmd)) {
        free(p);
        return pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "policy",
                             "the policy program's command is longer than %zu bytes",
                             sizeof p->cmd - 1);
    }
    p->fd = -1;
    p->pid = -1;
    p->timeout_s = timeout_s;
    pthread_mutex_init(&p->lock, NULL);
    pthread_mutex_lock(&programs_lock);
    if (n_programs == MAX_PROGRAMS) {
        rc = pfs__diag_set(diag, PFS_EINVAL, NULL, 0, 0, "policy", "more than %d policy programs",
                           MAX_PROGRAMS);
        goto fail;
    }
    if ((rc = spawn(p, diag)) != 0 || (rc = handshake(p, diag)) != 0)
        goto fail;
    /* A bad handshake (a taken name, say) is the program's input, not a failure of it. */
    p->ops = (struct pfs_policy_ops){
        .name = p->name,
        .summary = p->summary,
        .state_size = sizeof(struct program *),
        .may_pause = p->ops.may_pause,
        .memoryless = p->ops.memoryless,
        .init = exec_init,
        .allocate = exec_allocate,
        .allocate_tree = p->ops.allocate_tree,
    };
    one[0] = &p->ops;
    if ((rc = pfs__policy_add(one, 1, p->cmd, diag)) != 0)
        goto fail;
    programs[n_programs++] = p;
    pthread_mutex_unlock(&programs_lock);
    *out = &p->ops;
    return 0;
fail:
    pthread_mutex_unlock(&programs_lock);
    stop(p);
    pthread_mutex_destroy(&p->lock);
    free(p->in);
    free(p->out);
    free(p);
    return rc;
}

void
pfs_policy_exec_close_all(void)
{
    pthread_mutex_lock(&programs_lock);
    for (size_t k = 0; k < n_programs; k++) {
        struct program *p = programs[k];
        int status;

        pthread_mutex_lock(&p->lock);
        if (p->fd >= 0)
            shutdown(p->fd, SHUT_WR); /* end of its input: it should exit */
        for (int t = 0; p->pid > 0 && t < 100; t++) {
            if (leader_exited(p, &status) == p->pid) {
                p->pid = -1;
                break;
            }
            nanosleep(&(struct timespec){0, 10000000}, NULL);
        }
        stop(p); /* not exited within the second */
        if (!p->dead) {
            p->dead = true;
            pfs__strlcpy(p->why, "closed", sizeof p->why);
        }
        free(p->in);
        free(p->out);
        p->in = p->out = NULL;
        p->in_len = p->in_cap = p->out_len = p->out_cap = 0;
        pthread_mutex_unlock(&p->lock);
    }
    pthread_mutex_unlock(&programs_lock);
}
