/*
 * sim/json.c - a strict JSON reader for one line of text (RFC 8259), for the answers of an
 * external policy program (policies/exec.c).
 *
 * The whole text is parsed into a tree of struct pfs__json values allocated from one arena
 * (freed at once). Strict: no trailing commas, no comments, no NaN or Infinity, numbers as
 * the grammar has them (read with strtod, so that a double written with 17 significant digits
 * comes back bit for bit), strings with their escapes (\uXXXX kept to the Basic Multilingual
 * Plane's code points and surrogate pairs, written as UTF-8), nesting at most 64 deep.
 * An error gives the byte offset where the text stops making sense.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct parser {
    const char *s, *end;
    struct pfs__json *pool; /* every value, in parse order */
    size_t n, cap;
    char *strings; /* every string's bytes, each terminated */
    size_t s_len, s_cap;
    const char *err;
    size_t err_at;
    int depth;
};

static bool
fail(struct parser *p, const char *at, const char *why)
{
    if (!p->err) {
        p->err = why;
        p->err_at = (size_t)(at - p->s);
    }
    return false;
}

static void
skip_ws(struct parser *p, const char **c)
{
    while (*c < p->end && (**c == ' ' || **c == '\t' || **c == '\n' || **c == '\r'))
        (*c)++;
}

/* A new value; returns its index (the pool moves as it grows), or SIZE_MAX. */
static size_t
new_value(struct parser *p, int type)
{
    void *g;

    if (!(g = pfs__grow(p->pool, &p->cap, p->n, sizeof *p->pool, 16)))
        return SIZE_MAX;
    p->pool = g;
    memset(&p->pool[p->n], 0, sizeof p->pool[p->n]);
    p->pool[p->n].type = type;
    return p->n++;
}

static bool
put_byte(struct parser *p, char b)
{
    void *g;

    if (!(g = pfs__grow(p->strings, &p->s_cap, p->s_len, 1, 256)))
        return false;
    p->strings = g;
    p->strings[p->s_len++] = b;
    return true;
}

static bool
put_utf8(struct parser *p, unsigned long cp)
{
    if (cp < 0x80)
        return put_byte(p, (char)cp);
    if (cp < 0x800)
        return put_byte(p, (char)(0xC0 | (cp >> 6))) && put_byte(p, (char)(0x80 | (cp & 0x3F)));
    if (cp < 0x10000)
        return put_byte(p, (char)(0xE0 | (cp >> 12))) &&
               put_byte(p, (char)(0x80 | ((cp >> 6) & 0x3F))) &&
               put_byte(p, (char)(0x80 | (cp & 0x3F)));
    return put_byte(p, (char)(0xF0 | (cp >> 18))) &&
           put_byte(p, (char)(0x80 | ((cp >> 12) & 0x3F))) &&
           put_byte(p, (char)(0x80 | ((cp >> 6) & 0x3F))) &&
           put_byte(p, (char)(0x80 | (cp & 0x3F)));
}

static bool
hex4(struct parser *p, const char *c, unsigned long *out)
{
    *out = 0;
    if (p->end - c < 4)
        return fail(p, c, "a \\u escape needs four hex digits");
    for (int k = 0; k < 4; k++) {
        int h = c[k];

        if (!isxdigit((unsigned char)h))
            return fail(p, c + k, "a \\u escape needs four hex digits");
        *out = *out * 16 +
               (unsigned long)(isdigit((unsigned char)h) ? h - '0' : tolower(h) - 'a' + 10);
    }
    return true;
}

/* A string at *c (at its opening quote): its bytes appended to p->strings, terminated; the
 * offset of its first byte into *off. */
static bool
string_at(struct parser *p, const char **c, size_t *off)
{
    const char *q = *c + 1;

    *off = p->s_len;
    for (;;) {
        unsigned char b;

        if (q >= p->end)
            return fail(p, q, "unterminated string");
        b = (unsigned char)*q;
        if (b == '"')
            break;
        if (b < 0x20)
            return fail(p, q, "a control character in a string");
        if (b != '\\') {
            if (!put_byte(p, (char)b))
                return fail(p, q, "out of memory");
            q++;
            continue;
        }
        if (++q >= p->end)
            return fail(p, q, "unterminated string");
        switch (*q) {
        case '"':
        case '\\':
        case '/':
            b = (unsigned char)*q;
            break;
        case 'b':
            b = '\b';
            break;
        case 'f':
            b = '\f';
            break;
        case 'n':
            b = '\n';
            break;
        case 'r':
            b = '\r';
            break;
        case 't':
            b = '\t';
            break;
        case 'u': {
            unsigned long cp, lo;

            if (!hex4(p, q + 1, &cp))
                return false;
            q += 4;
            if (cp >= 0xD800 && cp < 0xDC00) { /* a surrogate pair */
                if (p->end - q < 7 || q[1] != '\\' || q[2] != 'u' || !hex4(p, q + 3, &lo) ||
                    lo < 0xDC00 || lo > 0xDFFF)
                    return fail(p, q, "an unpaired surrogate in a \\u escape");
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                q += 6;
            } else if (cp >= 0xDC00 && cp < 0xE000) {
                return fail(p, q, "an unpaired surrogate in a \\u escape");
            }
            if (cp == 0)
                return fail(p, q, "a NUL character in a string");
            if (!put_utf8(p, cp))
                return fail(p, q, "out of memory");
            q++;
            continue;
        }
        default:
            return fail(p, q, "an unknown escape in a string");
        }
        if (!put_byte(p, (char)b))
            return fail(p, q, "out of memory");
        q++;
    }
    if (!put_byte(p, '\0'))
        return fail(p, q, "out of memory");
    *c = q + 1;
    return true;
}

static bool
number_at(struct parser *p, const char **c, double *out)
{
    const char *q = *c, *start = q;
    char buf[64], *endp;

    if (q < p->end && *q == '-')
        q++;
    if (q < p->end && *q == '0')
        q++;
    else if (q < p->end && *q >= '1' && *q <= '9')
        while (q < p->end && isdigit((unsigned char)*q))
            q++;
    else
        return fail(p, start, "expected a value");
    if (q < p->end && *q == '.') {
        if (++q >= p->end || !isdigit((unsigned char)*q))
            return fail(p, q, "expected a digit after the decimal point");
        while (q < p->end && isdigit((unsigned char)*q))
            q++;
    }
    if (q < p->end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < p->end && (*q == '+' || *q == '-'))
            q++;
        if (q >= p->end || !isdigit((unsigned char)*q))
            return fail(p, q, "expected a digit in the exponent");
        while (q < p->end && isdigit((unsigned char)*q))
            q++;
    }
    if ((size_t)(q - start) >= sizeof buf)
        return fail(p, start, "a number of more than 63 characters");
    memcpy(buf, start, (size_t)(q - start));
    buf[q - start] = '\0';
    errno = 0;
    *out = strtod(buf, &endp);
    if (*endp != '\0' || !isfinite(*out))
        return fail(p, start, "a number out of range");
    *c = q;
    return true;
}

static bool value_at(struct parser *p, const char **c, size_t *out);

/* The strings' arena, for sorting member names by their text. */
static _Thread_local const char *names_of;

static int
by_name(const void *a, const void *b)
{
    return strcmp(names_of + *(const size_t *)a, names_of + *(const size_t *)b);
}

/* Whether object v (its members parsed, at offset at) names no member twice: RFC 8259 leaves
 * a repeated name's meaning open (this reader took the first, Python's the last), so that
 * {"name":"evil","name":"equal"} read as one thing here and another elsewhere. Sorted, not
 * compared pairwise, so that an answer of many members costs n log n. */
static bool
names_once(struct parser *p, size_t v, const char *at)
{
    size_t n = p->pool[v].n, k = 0, *keys;
    bool ok = true;

    if (n < 2)
        return true;
    if (!(keys = malloc(n * sizeof *keys)))
        return fail(p, at, "out of memory");
    for (size_t m = p->pool[v].first; m && k < n; m = p->pool[m - 1].next)
        keys[k++] = p->pool[m - 1].key_off - 1;
    names_of = p->strings; /* (per thread: two programs may answer at once) */
    qsort(keys, k, sizeof *keys, by_name);
    for (size_t i = 1; i < k && ok; i++)
        if (strcmp(p->strings + keys[i - 1], p->strings + keys[i]) == 0)
            ok = fail(p, at, "an object names a member twice");
    free(keys);
    return ok;
}

/* The members of an array or object (at its opening bracket): linked through next. */
static bool
members_at(struct parser *p, const char **c, size_t v, bool object)
{
    const char close = object ? '}' : ']', *open = *c;
    size_t last = SIZE_MAX;

    if (++p->depth > 64)
        return fail(p, *c, "nested more than 64 deep");
    (*c)++;
    skip_ws(p, c);
    if (*c < p->end && **c == close) {
        (*c)++;
        p->depth--;
        return true;
    }
    for (;;) {
        size_t key = 0, m;

        skip_ws(p, c);
        if (object) {
            if (*c >= p->end || **c != '"')
                return fail(p, *c, "expected a member name in quotes");
            if (!string_at(p, c, &key))
                return false;
            skip_ws(p, c);
            if (*c >= p->end || **c != ':')
                return fail(p, *c, "expected ':' after a member name");
            (*c)++;
        }
        if (!value_at(p, c, &m))
            return false;
        p->pool[m].key_off = object ? key + 1 : 0; /* 0: none */
        if (last == SIZE_MAX)
            p->pool[v].first = m + 1;
        else
            p->pool[last].next = m + 1;
        last = m;
        p->pool[v].n++;
        skip_ws(p, c);
        if (*c < p->end && **c == ',') {
            (*c)++;
            continue;
        }
        if (*c < p->end && **c == close) {
            (*c)++;
            p->depth--;
            return !object || names_once(p, v, open);
        }
        return fail(p, *c, object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static bool
value_at(struct parser *p, const char **c, size_t *out)
{
    size_t v;

    skip_ws(p, c);
    if (*c >= p->end)
        return fail(p, *c, "expected a value");
    switch (**c) {
    case '{':
    case '[':
        if ((v = new_value(p, **c == '{' ? PFS__JSON_OBJECT : PFS__JSON_ARRAY)) == SIZE_MAX)
            return fail(p, *c, "out of memory");
        *out = v;
        return members_at(p, c, v, **c == '{');
    case '"': {
        size_t off;

        if ((v = new_value(p, PFS__JSON_STRING)) == SIZE_MAX)
            return fail(p, *c, "out of memory");
        if (!string_at(p, c, &off))
            return false;
        p->pool[v].str_off = off;
        *out = v;
        return true;
    }
    case 't':
    case 'f':
    case 'n': {
        static const char *const words[] = {"true", "false", "null"};
        int k = **c == 't' ? 0 : **c == 'f' ? 1 : 2;
        size_t len = strlen(words[k]);

        if ((size_t)(p->end - *c) < len || memcmp(*c, words[k], len) != 0)
            return fail(p, *c, "expected a value");
        if ((v = new_value(p, k == 2 ? PFS__JSON_NULL : PFS__JSON_BOOL)) == SIZE_MAX)
            return fail(p, *c, "out of memory");
        p->pool[v].num = k == 0;
        *c += len;
        *out = v;
        return true;
    }
    default: {
        double x;

        if (!number_at(p, c, &x))
            return false;
        if ((v = new_value(p, PFS__JSON_NUMBER)) == SIZE_MAX)
            return fail(p, *c, "out of memory");
        p->pool[v].num = x;
        *out = v;
        return true;
    }
    }
}

int
pfs__json_parse(const char *text, size_t len, struct pfs__json_doc *doc, size_t *err_at,
                const char **why)
{
    struct parser p = {.s = text, .end = text + len};
    const char *c = text;
    size_t root;

    memset(doc, 0, sizeof *doc);
    if (value_at(&p, &c, &root)) {
        skip_ws(&p, &c);
        if (c < p.end)
            fail(&p, c, "text after the value");
    }
    if (p.err) {
        free(p.pool);
        free(p.strings);
        if (err_at)
            *err_at = p.err_at;
        if (why)
            *why = p.err;
        return strcmp(p.err, "out of memory") == 0 ? PFS_ENOMEM : PFS_EINVAL;
    }
    doc->pool = p.pool;
    doc->n = p.n;
    doc->strings = p.strings;
    doc->root = doc->pool + root;
    return 0;
}

void
pfs__json_free(struct pfs__json_doc *doc)
{
    free(doc->pool);
    free(doc->strings);
    memset(doc, 0, sizeof *doc);
}

const struct pfs__json *
pfs__json_first(const struct pfs__json_doc *doc, const struct pfs__json *v)
{
    return v && v->first ? &doc->pool[v->first - 1] : NULL;
}

const struct pfs__json *
pfs__json_next(const struct pfs__json_doc *doc, const struct pfs__json *v)
{
    return v && v->next ? &doc->pool[v->next - 1] : NULL;
}

const char *
pfs__json_key(const struct pfs__json_doc *doc, const struct pfs__json *v)
{
    return v && v->key_off ? doc->strings + v->key_off - 1 : NULL;
}

const char *
pfs__json_str(const struct pfs__json_doc *doc, const struct pfs__json *v)
{
    return v && v->type == PFS__JSON_STRING ? doc->strings + v->str_off : NULL;
}

const struct pfs__json *
pfs__json_get(const struct pfs__json_doc *doc, const struct pfs__json *obj, const char *key)
{
    if (!obj || obj->type != PFS__JSON_OBJECT)
        return NULL;
    for (const struct pfs__json *m = pfs__json_first(doc, obj); m; m = pfs__json_next(doc, m))
        if (strcmp(pfs__json_key(doc, m), key) == 0)
            return m;
    return NULL;
}
