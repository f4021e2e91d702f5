/*
 * traces/csv.c - a strict, line-oriented CSV reader that knows where every field came from.
 *
 * Every reader of pfisim (curves, importers, later jobs and workloads) goes through this one
 * tokenizer, so they all report errors the same way: file:line:column, the field's name,
 * and the offending line for a caret display. Quoting follows RFC 4180 ("a ""b""" is
 * a "b"), but a quoted field may not span lines: no input pfisim reads needs that, and
 * forbidding it keeps line numbers honest. Blank lines are skipped; "\r\n" is accepted.
 * A line whose first byte is '#' is a comment and skipped: synthetic files say so in their
 * first line (pandas reads them with comment='#').
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int
pfs__csv_open(struct pfs__csv *csv, const char *path, struct pfs_diag *diag)
{
    memset(csv, 0, sizeof *csv);
    csv->diag = diag;
    pfs__strlcpy(csv->path, path, sizeof csv->path);
    csv->fp = fopen(path, "r");
    if (!csv->fp)
        return pfs__diag_set(diag, PFS_EIO, path, 0, 0, NULL, "cannot open: %s", strerror(errno));
    return 0;
}

void
pfs__csv_close(struct pfs__csv *csv)
{
    if (csv->fp)
        fclose(csv->fp);
    free(csv->buf);
    free(csv->raw);
    free(csv->fields);
    free(csv->columns);
    memset(csv, 0, sizeof *csv);
}

static int
csv_push_field(struct pfs__csv *csv, char *start, long column)
{
    if (csv->n_fields == csv->fields_cap) {
        size_t cap = csv->fields_cap ? 2 * csv->fields_cap : 16;
        char **f = realloc(csv->fields, cap * sizeof *f);
        long *c;

        if (!f)
            return PFS_ENOMEM;
        csv->fields = f;
        c = realloc(csv->columns, cap * sizeof *c);
        if (!c)
            return PFS_ENOMEM;
        csv->columns = c;
        csv->fields_cap = cap;
    }
    csv->fields[csv->n_fields] = start;
    csv->columns[csv->n_fields] = column;
    csv->n_fields++;
    return 0;
}

/* Splits csv->buf in place into fields. A quoted field is unquoted by copying its bytes
 * leftwards over the quotes; the write pointer never overtakes the read pointer. */
static int
csv_split(struct pfs__csv *csv)
{
    char *r = csv->buf, *w;
    int rc;

    csv->n_fields = 0;
    for (;;) {
        long column = (long)(r - csv->buf) + 1;
        char *start = r;

        w = r;
        if (*r == '"') {
            r++;
            for (;;) {
                if (*r == '\0')
                    return pfs__diag_set(csv->diag, PFS_EINVAL, csv->path, csv->line, column, NULL,
                                         "unterminated quoted field");
                if (*r == '"') {
                    if (r[1] == '"') {
                        *w++ = '"';
                        r += 2;
                        continue;
                    }
                    r++;
                    break;
                }
                *w++ = *r++;
            }
            if (*r != ',' && *r != '\0')
                return pfs__diag_set(csv->diag, PFS_EINVAL, csv->path, csv->line,
                                     (long)(r - csv->buf) + 1, NULL,
                                     "unexpected character after a closing quote");
        } else {
            while (*r != ',' && *r != '\0')
                r++;
            w = r;
        }
        rc = csv_push_field(csv, start, column);
        if (rc)
            return pfs__diag_set(csv->diag, rc, csv->path, csv->line, 0, NULL, "out of memory");
        if (*r == '\0') {
            *w = '\0';
            return 0;
        }
        *w = '\0';
        r++;
    }
}

int
pfs__csv_next(struct pfs__csv *csv)
{
    for (;;) {
        ssize_t len;
        size_t raw_need;

        errno = 0;
        len = getline(&csv->buf, &csv->buf_cap, csv->fp);
        if (len < 0) {
            if (ferror(csv->fp))
                return pfs__diag_set(csv->diag, PFS_EIO, csv->path, csv->line + 1, 0, NULL,
                                     "read error: %s", strerror(errno));
            return 0;
        }
        csv->line++;
        if (csv->line == 1 && len >= 3 && memcmp(csv->buf, "\xEF\xBB\xBF", 3) == 0) {
            /* A UTF-8 byte-order mark (spreadsheets write one) is not data. */
            memmove(csv->buf, csv->buf + 3, (size_t)len - 2);
            len -= 3;
        }
        while (len > 0 && (csv->buf[len - 1] == '\n' || csv->buf[len - 1] == '\r'))
            csv->buf[--len] = '\0';
        if (len == 0 || csv->buf[0] == '#')
            continue;
        if (strlen(csv->buf) != (size_t)len)
            return pfs__diag_set(csv->diag, PFS_EINVAL, csv->path, csv->line,
                                 (long)strlen(csv->buf) + 1, NULL, "NUL byte in a text file");
        {
            /* A carriage return is a line end only at the end of a line (CRLF); inside one
             * it is a file with classic Mac line ends, or a stray byte no writer could
             * write back (fuzz-jobs, fuzz-workload). */
            const char *cr = memchr(csv->buf, '\r', (size_t)len);

            if (cr)
                return pfs__diag_set(csv->diag, PFS_EINVAL, csv->path, csv->line,
                                     (long)(cr - csv->buf) + 1, NULL,
                                     "carriage return inside a line (line ends must be LF or "
                                     "CRLF)");
        }
        raw_need = (size_t)len + 1;
        if (raw_need > csv->raw_cap) {
            char *raw = realloc(csv->raw, raw_need);

            if (!raw)
                return pfs__diag_set(csv->diag, PFS_ENOMEM, csv->path, csv->line, 0, NULL,
                                     "out of memory");
            csv->raw = raw;
            csv->raw_cap = raw_need;
        }
        memcpy(csv->raw, csv->buf, raw_need);
        if (csv_split(csv) < 0) {
            pfs__diag_text(csv->diag, csv->raw);
            return csv->diag ? csv->diag->code : PFS_EINVAL;
        }
        return 1;
    }
}

int
pfs__csv_error(struct pfs__csv *csv, size_t idx, const char *name, int code, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    long column = idx < csv->n_fields ? csv->columns[idx] : 0;

    /* A missing trailing field points just past the end of the line. */
    if (idx >= csv->n_fields && csv->raw)
        column = (long)strlen(csv->raw) + 1;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pfs__diag_set(csv->diag, code, csv->path, csv->line, column, name, "field %zu (%s): %s",
                  idx + 1, name, msg);
    pfs__diag_text(csv->diag, csv->raw);
    return code;
}

int
pfs__csv_header(struct pfs__csv *csv, const char *const *names, size_t n, size_t *idx)
{
    int rc = pfs__csv_next(csv);

    if (rc < 0)
        return rc;
    if (rc == 0)
        return pfs__diag_set(csv->diag, PFS_EINVAL, csv->path, 1, 0, NULL,
                             "empty file: expected a header row");
    for (size_t i = 0; i < n; i++) {
        idx[i] = (size_t)-1;
        for (size_t f = 0; f < csv->n_fields; f++) {
            if (strcmp(csv->fields[f], names[i]) != 0)
                continue;
            if (idx[i] != (size_t)-1) {
                pfs__diag_set(csv->diag, PFS_EINVAL, csv->path, csv->line, csv->columns[f],
                              names[i], "column '%s' appears twice in the header", names[i]);
                pfs__diag_text(csv->diag, csv->raw);
                return PFS_EINVAL;
            }
            idx[i] = f;
        }
        if (idx[i] == (size_t)-1) {
            pfs__diag_set(csv->diag, PFS_EINVAL, csv->path, csv->line, 1, names[i],
                          "missing column '%s' in the header", names[i]);
            pfs__diag_text(csv->diag, csv->raw);
            return PFS_EINVAL;
        }
    }
    return 0;
}

int
pfs__csv_str(struct pfs__csv *csv, size_t idx, const char *name, const char **out)
{
    if (idx >= csv->n_fields)
        return pfs__csv_error(csv, idx, name, PFS_EINVAL, "missing (the row has %zu fields)",
                              csv->n_fields);
    *out = csv->fields[idx];
    return 0;
}

int
pfs__csv_double(struct pfs__csv *csv, size_t idx, const char *name, double *out)
{
    const char *s = NULL;
    int rc = pfs__csv_str(csv, idx, name, &s);

    if (rc)
        return rc;
    if (!pfs__parse_double(s, out))
        return pfs__csv_error(csv, idx, name, PFS_EINVAL, "expected a finite number, got '%s'", s);
    return 0;
}

int
pfs__csv_long(struct pfs__csv *csv, size_t idx, const char *name, long *out)
{
    const char *s = NULL;
    int rc = pfs__csv_str(csv, idx, name, &s);

    if (rc)
        return rc;
    if (!pfs__parse_long(s, out))
        return pfs__csv_error(csv, idx, name, PFS_EINVAL, "expected an integer, got '%s'", s);
    return 0;
}

void
pfs__csv_put_text(FILE *fp, const char *s)
{
    /* Quoted when a reader would split or skip it: a comma, a quote, a line end, or a '#'
     * that would make the line a comment. */
    if (strpbrk(s, ",\"\n\r") == NULL && s[0] != '#') {
        fputs(s, fp);
        return;
    }
    fputc('"', fp);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', fp);
        fputc(*s, fp);
    }
    fputc('"', fp);
}

void
pfs__csv_put_num(FILE *fp, double v)
{
    char buf[40];

    /* The shortest of 15, 16 or 17 significant digits that reads back to v exactly. */
    for (int digits = 15; digits <= 17; digits++) {
        double back;

        snprintf(buf, sizeof buf, "%.*g", digits, v);
        back = pfs__strtod(buf);
        if (!(back < v || back > v))
            break;
    }
    fputs(buf, fp);
}
