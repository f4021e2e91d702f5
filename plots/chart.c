/*
 * plots/chart.c - line charts with cairo: axes with nice ticks, labelled units, a legend
 * below the plot (never over the data), shaded spans (DR events), a colour-blind-safe
 * palette (Okabe and Ito, 2008), to PNG, SVG or PDF.
 *
 * Output goes through sim/outfile.c: a figure is renamed into place only when cairo and
 * the disk report success, so a failed figure leaves no half-written file.
 */
#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

/* Okabe-Ito, without the yellow (too light on white) and starting with blue; then Paul Tol's
 * "muted" colours that differ from them, so that every policy pfisim has (eleven) gets its
 * own colour in every figure (issue 18: with nine policies colours repeated). */
static const double palette[][3] = {
    {0.000, 0.447, 0.698}, /* blue */
    {0.902, 0.624, 0.000}, /* orange */
    {0.000, 0.620, 0.451}, /* bluish green */
    {0.835, 0.369, 0.000}, /* vermillion */
    {0.800, 0.475, 0.655}, /* reddish purple */
    {0.337, 0.706, 0.914}, /* sky blue */
    {0.200, 0.133, 0.533}, /* indigo */
    {0.600, 0.600, 0.200}, /* olive */
    {0.533, 0.133, 0.333}, /* wine */
    {0.267, 0.667, 0.600}, /* teal */
    {0.467, 0.467, 0.467}, /* grey */
    {0.867, 0.800, 0.467}, /* sand */
};
#define N_PALETTE (sizeof palette / sizeof palette[0])

/* Sets the font size to size, or smaller (down to 9) until text fits width: a long title
 * shrinks rather than run off the figure. */
static void
fit_font(cairo_t *cr, const char *text, double size, double width)
{
    cairo_text_extents_t e;

    for (; size > 9; size -= 0.5) {
        cairo_set_font_size(cr, size);
        cairo_text_extents(cr, text, &e);
        if (e.x_advance <= width)
            return;
    }
    cairo_set_font_size(cr, 9);
}

int
pfs_axis_nice(double lo, double hi, int max_ticks, struct pfs_axis *ax)
{
    double span, raw, mag, step = 0;
    static const double mult[] = {1, 2, 2.5, 5};

    if (!isfinite(lo) || !isfinite(hi) || lo > hi || max_ticks < 3)
        return PFS_EINVAL; /* three ticks always suffice: a range across 0 needs them */
    if (!(hi > lo)) {      /* one value: a unit-wide (or 10%) range around it */
        double pad = fabs(lo) > 0 ? fabs(lo) * 0.1 : 1;
        lo -= pad;
        hi += pad;
    }
    span = hi - lo;
    raw = span / (max_ticks - 1);
    mag = pow(10, floor(log10(raw)));
    for (; mag < 1e300; mag *= 10) { /* the first nice step, smallest first, that fits */
        for (size_t k = 0; k < sizeof mult / sizeof mult[0]; k++) {
            step = mult[k] * mag;
            if (ceil(hi / step - 1e-9) - floor(lo / step + 1e-9) + 1 <= max_ticks)
                goto found;
        }
    }
    return PFS_EINVAL;
found:
    ax->step = step;
    ax->lo = floor(lo / step + 1e-9) * step;
    ax->hi = ceil(hi / step - 1e-9) * step;
    ax->n_ticks = (int)lround((ax->hi - ax->lo) / step) + 1;
    return 0;
}

/* The range of a series set's x (or y) values, finite ones only. */
static void
extent(const struct pfs_chart *c, bool y, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (size_t s = 0; s < c->n_series; s++)
        for (size_t i = 0; i < c->series[s].n; i++) {
            double v = y ? c->series[s].y[i] : c->series[s].x[i];

            if (y && c->series[s].lo && c->series[s].hi && isfinite(c->series[s].lo[i]) &&
                isfinite(c->series[s].hi[i])) {
                *lo = fmin(*lo, c->series[s].lo[i]);
                *hi = fmax(*hi, c->series[s].hi[i]);
            }

            if (isfinite(v)) {
                *lo = fmin(*lo, v);
                *hi = fmax(*hi, v);
            }
        }
}

int
pfs_chart_ranges(const struct pfs_chart *c, struct pfs_axis *x, struct pfs_axis *y)
{
    double xlo, xhi, ylo, yhi;

    extent(c, false, &xlo, &xhi);
    extent(c, true, &ylo, &yhi);
    if (!(xlo <= xhi) || !(ylo <= yhi))
        return PFS_EINVAL; /* nothing finite to draw */
    if (c->y_from_zero && ylo > 0)
        ylo = 0;
    if (pfs_axis_nice(xlo, xhi, 9, x) || pfs_axis_nice(ylo, yhi, 7, y))
        return PFS_EINVAL;
    x->lo = xlo; /* time axes start and end with the data */
    x->hi = xhi > xlo ? xhi : xlo + x->step;
    for (size_t s = 0; s < c->n_series; s++)
        if (c->series[s].markers) { /* points at the ends stay whole inside the frame */
            double pad = 0.03 * (x->hi - x->lo);

            x->lo -= pad;
            x->hi += pad;
            break;
        }
    return 0;
}

static void
tick_label(char *buf, size_t size, double v, double step)
{
    int decimals = 0; /* as many as the step needs: 2.5 needs one, 0.25 two */

    while (decimals < 6 && fabs(step * pow(10, decimals) - round(step * pow(10, decimals))) >
                               1e-6 * step * pow(10, decimals))
        decimals++;

    if (fabs(v) < step * 1e-9)
        v = 0;
    snprintf(buf, size, "%.*f", decimals, v);
}

static void
text_at(cairo_t *cr, const char *s, double x, double y, double ax, double ay)
{
    cairo_text_extents_t e;

    cairo_text_extents(cr, s, &e);
    cairo_move_to(cr, x - e.width * ax - e.x_bearing, y - e.height * ay - e.y_bearing);
    cairo_show_text(cr, s);
}

/* The colour, dash and width a series is drawn (and shown in the legend) with. */
static void
pen_for(cairo_t *cr, const struct pfs_series *se, double width)
{
    static const double dash[] = {6, 4};

    if (se->style == PFS_SERIES_REFERENCE) {
        cairo_set_source_rgb(cr, 0, 0, 0);
        cairo_set_dash(cr, dash, 2, 0);
    } else {
        const double *rgb = palette[se->colour % N_PALETTE];

        cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
        if (se->style == PFS_SERIES_FIT)
            cairo_set_dash(cr, dash, 2, 0);
        else
            cairo_set_dash(cr, NULL, 0, 0);
    }
    cairo_set_line_width(cr, width);
}

static void
draw(cairo_t *cr, const struct pfs_chart *c, const struct pfs_axis *ax, const struct pfs_axis *ay,
     double w, double h)
{
    /* Layout: title on top, y label on the left, x label and legend below. */
    const double left = 78, right = 24, top = 44, bottom = 96;
    double pw = w - left - right, ph = h - top - bottom;
    size_t n_items = c->n_series + (c->n_spans > 0);
    double lx, ly;
    char buf[64];

#define PX(v) (left + ((v)-ax->lo) / (ax->hi - ax->lo) * pw)
#define PY(v) (top + ph - ((v)-ay->lo) / (ay->hi - ay->lo) * ph)
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_rectangle(cr, 0, 0, w, h); /* this chart's area only: it may be one panel of many */
    cairo_fill(cr);
    cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
    fit_font(cr, c->title, 15, w - 20);
    cairo_set_source_rgb(cr, 0, 0, 0);
    text_at(cr, c->title, w / 2, 14, 0.5, 0);
    cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);

    /* Shaded spans under everything. */
    cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
    for (size_t k = 0; k < c->n_spans; k++) {
        double a = fmax(c->spans[k][0], ax->lo), b = fmin(c->spans[k][1], ax->hi);

        if (b > a) {
            cairo_rectangle(cr, PX(a), top, PX(b) - PX(a), ph);
            cairo_fill(cr);
        }
    }
    /* Grid and ticks. */
    cairo_set_font_size(cr, 11);
    cairo_set_line_width(cr, 1);
    for (int i = 0; i < ay->n_ticks; i++) {
        double v = ay->lo + i * ay->step, y = round(PY(v)) + 0.5;

        cairo_set_source_rgb(cr, 0.82, 0.82, 0.82);
        cairo_move_to(cr, left, y);
        cairo_line_to(cr, left + pw, y);
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        tick_label(buf, sizeof buf, v, ay->step);
        text_at(cr, buf, left - 6, y, 1, 0.5);
    }
    {
        struct pfs_axis xt;
        double last_right = -INFINITY;

        pfs_axis_nice(ax->lo, ax->hi, 9, &xt);
        for (int i = 0; i < xt.n_ticks; i++) {
            double v = xt.lo + i * xt.step, x = round(PX(v)) + 0.5;
            cairo_text_extents_t e;

            if (v < ax->lo - 1e-9 * xt.step || v > ax->hi + 1e-9 * xt.step)
                continue;
            cairo_set_source_rgb(cr, 0, 0, 0);
            cairo_move_to(cr, x, top + ph);
            cairo_line_to(cr, x, top + ph + 5);
            cairo_stroke(cr);
            tick_label(buf, sizeof buf, v, xt.step);
            cairo_text_extents(cr, buf, &e);
            if (x - e.width / 2 > last_right + 6) { /* never overlap two labels */
                text_at(cr, buf, x, top + ph + 8, 0.5, 0);
                last_right = x + e.width / 2;
            }
        }
    }
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_rectangle(cr, left + 0.5, top + 0.5, pw, ph);
    cairo_stroke(cr);
    cairo_set_font_size(cr, 12);
    text_at(cr, c->x_label, left + pw / 2, top + ph + 28, 0.5, 0);
    cairo_save(cr);
    cairo_translate(cr, 16, top + ph / 2);
    cairo_rotate(cr, -2 * atan(1.0)); /* a quarter turn back */
    text_at(cr, c->y_label, 0, 0, 0.5, 0);
    cairo_restore(cr);

    /* The series, clipped to the plot area. */
    cairo_save(cr);
    cairo_rectangle(cr, left, top, pw, ph);
    cairo_clip(cr);
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    for (size_t s = 0; s < c->n_series; s++) {
        const struct pfs_series *se = &c->series[s];
        bool pen = false;

        pen_for(cr, se, se->style == PFS_SERIES_REFERENCE ? 1.5 : 1.8);
        for (size_t i = 0; i < se->n; i++) {
            if (!isfinite(se->x[i]) || !isfinite(se->y[i])) { /* a gap */
                pen = false;
                continue;
            }
            if (pen)
                cairo_line_to(cr, PX(se->x[i]), PY(se->y[i]));
            else
                cairo_move_to(cr, PX(se->x[i]), PY(se->y[i]));
            pen = true;
        }
        cairo_stroke(cr);
        for (size_t i = 0; i < se->n; i++) {
            double px, py;

            if (!isfinite(se->x[i]) || !isfinite(se->y[i]))
                continue;
            px = PX(se->x[i]);
            py = PY(se->y[i]);
            if (se->lo && se->hi && isfinite(se->lo[i]) && isfinite(se->hi[i])) {
                cairo_set_dash(cr, NULL, 0, 0);
                cairo_set_line_width(cr, 1);
                cairo_move_to(cr, px, PY(se->lo[i]));
                cairo_line_to(cr, px, PY(se->hi[i]));
                cairo_move_to(cr, px - 3, PY(se->lo[i]));
                cairo_line_to(cr, px + 3, PY(se->lo[i]));
                cairo_move_to(cr, px - 3, PY(se->hi[i]));
                cairo_line_to(cr, px + 3, PY(se->hi[i]));
                cairo_stroke(cr);
            }
            if (se->markers) {
                cairo_new_sub_path(cr);
                cairo_arc(cr, px, py, 3.2, 0, 8 * atan(1.0));
                cairo_fill(cr);
            }
        }
    }
    cairo_restore(cr);
    cairo_set_dash(cr, NULL, 0, 0);

    /* Legend: one row below the x label, items spread evenly. */
    cairo_set_font_size(cr, 11);
    ly = top + ph + 60;
    lx = left;
    for (size_t k = 0; k < n_items; k++) {
        const char *label = k < c->n_series ? c->series[k].label : c->span_label;
        cairo_text_extents_t e;

        if (!label) /* a series without a legend entry */
            continue;
        cairo_text_extents(cr, label ? label : "", &e);
        if (lx > left && lx + 30 + e.x_advance > w - right) { /* wrap to a second row */
            lx = left;
            ly += 18;
        }

        if (k < c->n_series) {
            const struct pfs_series *se = &c->series[k];

            pen_for(cr, se, 2.5);
            cairo_move_to(cr, lx, ly);
            cairo_line_to(cr, lx + 24, ly);
            cairo_stroke(cr);
            cairo_set_dash(cr, NULL, 0, 0);
        } else {
            cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
            cairo_rectangle(cr, lx, ly - 6, 24, 12);
            cairo_fill(cr);
        }
        cairo_set_source_rgb(cr, 0, 0, 0);
        text_at(cr, label ? label : "", lx + 30, ly, 0, 0.5);
        lx += 30 + e.x_advance + 22;
    }
#undef PX
#undef PY
}

int
pfs__chart_draw(cairo_t *cr, const struct pfs_chart *c, double w, double h)
{
    struct pfs_axis ax, ay;

    if (pfs_chart_ranges(c, &ax, &ay))
        return PFS_EINVAL;
    draw(cr, c, &ax, &ay, w, h);
    return 0;
}

/* cairo's write callback: a short write is an error cairo then reports. */
int
pfs__cairo_write(void *closure, const unsigned char *data, unsigned int length)
{
    return fwrite(data, 1, length, closure) == length ? CAIRO_STATUS_SUCCESS
                                                      : CAIRO_STATUS_WRITE_ERROR;
}

static cairo_status_t
stream_write(void *closure, const unsigned char *data, unsigned int length)
{
    return (cairo_status_t)pfs__cairo_write(closure, data, length);
}

cairo_surface_t *
pfs__pdf_surface(FILE *fp, double w, double h)
{
    /* Through our own checked stream, not cairo's file: cairo does not check the close of
     * the file it opens, so a disk that fills at the last flush left a truncated PDF and
     * success (issue 17). */
    cairo_surface_t *s = cairo_pdf_surface_create_for_stream(stream_write, fp, w, h);
    const char *epoch = getenv("SOURCE_DATE_EPOCH");
    char date[32] = "1970-01-01T00:00:00Z";
    long secs;

    /* cairo stamps a PDF with the time it was made; the same inputs must give the same
     * bytes, so the date is SOURCE_DATE_EPOCH's (the reproducible-builds convention) or the
     * epoch itself. */
    if (epoch && pfs__parse_long(epoch, &secs) && secs >= 0) {
        time_t t = (time_t)secs;
        struct tm tm;

        if (gmtime_r(&t, &tm))
            strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    }
    cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_CREATE_DATE, date);
    return s;
}

/* Draws with fn(cr, arg, w, h) into path (format), whole or not at all (sim/outfile.c). */
static int
write_sized(const char *path, enum pfs_plot_format format,
            void (*fn)(cairo_t *, const void *, double, double), const void *arg, double w,
            double h, struct pfs_diag *diag)
{
    cairo_surface_t *surface;
    cairo_t *cr;
    cairo_status_t st;
    struct pfs__out out;
    int rc;

    if ((rc = pfs__out_open(&out, path, diag)))
        return rc;
    if (format == PFS_PLOT_SVG)
        surface = cairo_svg_surface_create_for_stream(stream_write, out.fp, w, h);
    else if (format == PFS_PLOT_PDF)
        surface = pfs__pdf_surface(out.fp, w, h);
    else
        surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)w, (int)h);
    cr = cairo_create(surface);
    fn(cr, arg, w, h);
    st = cairo_status(cr);
    cairo_destroy(cr);
    if (st == CAIRO_STATUS_SUCCESS && format == PFS_PLOT_PNG)
        st = cairo_surface_write_to_png_stream(surface, stream_write, out.fp);
    cairo_surface_finish(surface);
    if (st == CAIRO_STATUS_SUCCESS)
        st = cairo_surface_status(surface);
    cairo_surface_destroy(surface);
    if (st != CAIRO_STATUS_SUCCESS) {
        pfs__out_abort(&out);
        return pfs__diag_set(diag, PFS_EIO, path, 0, 0, NULL, "cannot write: %s",
                             cairo_status_to_string(st));
    }
    return pfs__out_end(&out, 0, diag);
}

/* The usual figure: 900 x 520. */
static int
write_file(const char *path, enum pfs_plot_format format,
           void (*fn)(cairo_t *, const void *, double, double), const void *arg,
           struct pfs_diag *diag)
{
    return write_sized(path, format, fn, arg, 900, 520, diag);
}

struct panels {
    const char *title;
    const struct pfs_chart *charts;
    size_t n;
};

/* Panels across: one, two (up to four panels) or three. */
static size_t
panel_cols(size_t n)
{
    return n <= 1 ? 1 : n <= 4 ? 2 : 3;
}

double
pfs__charts_height(size_t n)
{
    size_t cols = panel_cols(n);

    return 34 + 330 * (double)((n + cols - 1) / cols);
}

void
pfs__charts_draw(cairo_t *cr, const char *title, const struct pfs_chart *charts, size_t n, double w,
                 double h)
{
    size_t cols = panel_cols(n), rows = (n + cols - 1) / cols;
    double top = 34, pw = w / (double)cols, ph = (h - top) / (double)(rows ? rows : 1);

    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_rectangle(cr, 0, 0, w, h);
    cairo_fill(cr);
    cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
    cairo_set_font_size(cr, 16);
    cairo_set_source_rgb(cr, 0, 0, 0);
    text_at(cr, title, w / 2, 10, 0.5, 0);
    for (size_t i = 0; i < n; i++) {
        cairo_save(cr);
        cairo_translate(cr, (double)(i % cols) * pw, top + (double)(i / cols) * ph);
        pfs__chart_draw(cr, &charts[i], pw, ph);
        cairo_restore(cr);
    }
}

static void
panels_fn(cairo_t *cr, const void *arg, double w, double h)
{
    const struct panels *p = arg;

    pfs__charts_draw(cr, p->title, p->charts, p->n, w, h);
}

int
pfs__charts_write(const char *title, const struct pfs_chart *charts, size_t n, const char *path,
                  enum pfs_plot_format format, struct pfs_diag *diag)
{
    struct panels p = {title, charts, n};

    for (size_t i = 0; i < n; i++) {
        struct pfs_axis ax, ay;

        if (pfs_chart_ranges(&charts[i], &ax, &ay))
            return pfs__diag_set(diag, PFS_EINVAL, path, 0, 0, NULL, "%s: no finite data to plot",
                                 charts[i].title);
    }
    /* panels of about 300 x 330 (450 x 330 two across): each keeps its axes and legend */
    return write_sized(path, format, panels_fn, &p, 900, pfs__charts_height(n), diag);
}

static void
chart_fn(cairo_t *cr, const void *arg, double w, double h)
{
    pfs__chart_draw(cr, arg, w, h);
}

int
pfs_chart_write(const struct pfs_chart *c, const char *path, enum pfs_plot_format format,
                struct pfs_diag *diag)
{
    struct pfs_axis ax, ay;

    if (pfs_chart_ranges(c, &ax, &ay))
        return pfs__diag_set(diag, PFS_EINVAL, path, 0, 0, NULL, "%s: no finite data to plot",
                             c->title);
    return write_file(path, format, chart_fn, c, diag);
}

/* One bar panel in the box (x0, y0, w, h): a nice y axis over the values and zero, one
 * bar per value in palette order, its value printed above (or below, when negative). */
static void
bar_panel(cairo_t *cr, const struct pfs_bar_panel *p, double x0, double y0, double w, double h)
{
    const double left = 70, right = 10, top = 30;
    double pw = w - left - right, bottom = 50, ph, lo = 0, hi = 0, slot, bw, widest = 0;
    bool slanted, narrow;
    struct pfs_axis ay;
    char buf[64];

    /* Labels wider than their slot (eleven policies, "fair-headroom-pause") are set at 45
     * degrees, ending under their bar, with the room they need below the panel; values
     * above narrow bars in a smaller type. */
    cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, 11);
    for (size_t i = 0; i < p->n; i++) {
        cairo_text_extents_t e;

        cairo_text_extents(cr, p->labels[i], &e);
        widest = fmax(widest, e.x_advance);
    }
    slot = pw / (double)(p->n ? p->n : 1);
    slanted = widest > slot - 6;
    narrow = slot < 48;
    if (slanted)
        bottom = 24 + 0.72 * widest;
    ph = h - top - bottom;

    for (size_t i = 0; i < p->n; i++) {
        if (isfinite(p->values[i])) {
            lo = fmin(lo, p->values[i]);
            hi = fmax(hi, p->values[i]);
        }
        if (p->lo && p->hi && isfinite(p->lo[i]) && isfinite(p->hi[i])) {
            lo = fmin(lo, p->lo[i]);
            hi = fmax(hi, p->hi[i]);
        }
    }
    if (p->y_hi > p->y_lo) { /* a scale shared with the other panels */
        lo = fmin(lo, p->y_lo);
        hi = fmax(hi, p->y_hi);
    }
    if (!(hi > lo))
        hi = lo + 1;
    /* Room for the value labels above the highest bar and below the lowest. */
    if (pfs_axis_nice(lo < 0 ? lo - 0.1 * (hi - lo) : lo, hi > 0 ? hi + 0.1 * (hi - lo) : hi, 7,
                      &ay))
        return;
#define BY(v) (y0 + top + ph - ((v)-ay.lo) / (ay.hi - ay.lo) * ph)
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
    cairo_set_font_size(cr, 12);
    text_at(cr, p->title, x0 + left + pw / 2, y0 + 6, 0.5, 0);
    cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, 11);
    cairo_set_line_width(cr, 1);
    for (int i = 0; i < ay.n_ticks; i++) {
        double v = ay.lo + i * ay.step, y = round(BY(v)) + 0.5;

        cairo_set_source_rgb(cr, 0.82, 0.82, 0.82);
        cairo_move_to(cr, x0 + left, y);
        cairo_line_to(cr, x0 + left + pw, y);
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        tick_label(buf, sizeof buf, v, ay.step);
        text_at(cr, buf, x0 + left - 6, y, 1, 0.5);
    }
    bw = fmin(slot * 0.6, 90);
    for (size_t i = 0; i < p->n; i++) {
        const double *rgb = palette[i % N_PALETTE];
        double cx = x0 + left + slot * ((double)i + 0.5), v = p->values[i];

        cairo_set_source_rgb(cr, 0, 0, 0);
        cairo_set_font_size(cr, 11);
        if (slanted) {
            cairo_save(cr);
            cairo_translate(cr, cx + 4, y0 + top + ph + 6);
            cairo_rotate(cr, -atan(1.0)); /* 45 degrees */
            text_at(cr, p->labels[i], 0, 0, 1, 0);
            cairo_restore(cr);
        } else {
            text_at(cr, p->labels[i], cx, y0 + top + ph + 8, 0.5, 0);
        }
        if (!isfinite(v)) {
            text_at(cr, p->missing ? p->missing : "n/a", cx, BY(0) - 4, 0.5, 1);
            continue;
        }
        cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
        cairo_rectangle(cr, cx - bw / 2, fmin(BY(v), BY(0)), bw, fabs(BY(v) - BY(0)));
        cairo_fill(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        {
            /* The whisker (min to max over seeds), the label beyond it. */
            double top_v = v, bot_v = v;

            if (p->lo && p->hi && isfinite(p->lo[i]) && isfinite(p->hi[i])) {
                double yl = BY(p->lo[i]), yh = BY(p->hi[i]);

                cairo_move_to(cr, round(cx) + 0.5, yl);
                cairo_line_to(cr, round(cx) + 0.5, yh);
                cairo_move_to(cr, cx - bw / 6, round(yl) + 0.5);
                cairo_line_to(cr, cx + bw / 6, round(yl) + 0.5);
                cairo_move_to(cr, cx - bw / 6, round(yh) + 0.5);
                cairo_line_to(cr, cx + bw / 6, round(yh) + 0.5);
                cairo_stroke(cr);
                top_v = fmax(v, p->hi[i]);
                bot_v = fmin(v, p->lo[i]);
            }
            snprintf(buf, sizeof buf, p->value_format == 1 ? "%.2f" : narrow ? "%.3g" : "%.4g", v);
            cairo_set_font_size(cr, narrow ? 9 : 11);
            if (v >= 0)
                text_at(cr, buf, cx, BY(top_v) - 4, 0.5, 1);
            else
                text_at(cr, buf, cx, BY(bot_v) + 4, 0.5, 0);
        }
    }
    cairo_set_source_rgb(cr, 0, 0, 0); /* the zero line and the frame */
    cairo_move_to(cr, x0 + left, round(BY(0)) + 0.5);
    cairo_line_to(cr, x0 + left + pw, round(BY(0)) + 0.5);
    cairo_stroke(cr);
    cairo_rectangle(cr, x0 + left + 0.5, y0 + top + 0.5, pw, ph);
    cairo_stroke(cr);
    cairo_save(cr);
    cairo_translate(cr, x0 + 16, y0 + top + ph / 2);
    cairo_rotate(cr, -2 * atan(1.0));
    text_at(cr, p->y_label, 0, 0, 0.5, 0);
    cairo_restore(cr);
#undef BY
}

void
pfs__bars_draw(cairo_t *cr, const char *title, const struct pfs_bar_panel *panels, size_t n,
               double w, double h)
{
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_rectangle(cr, 0, 0, w, h);
    cairo_fill(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
    fit_font(cr, title, 15, w - 20);
    text_at(cr, title, w / 2, 14, 0.5, 0);
    {
        size_t rows = pfs__bars_rows(panels, n), cols = (n + rows - 1) / rows;
        double ph = (h - 44) / (double)rows, pw = w / (double)cols;

        for (size_t k = 0; k < n; k++)
            bar_panel(cr, &panels[k], pw * (double)(k % cols), 44 + ph * (double)(k / cols), pw,
                      ph);
    }
}

double
pfs__bars_height(const struct pfs_bar_panel *panels, size_t n)
{
    return pfs__bars_rows(panels, n) > 1 ? 820 : 520;
}

size_t
pfs__bars_rows(const struct pfs_bar_panel *panels, size_t n)
{
    size_t bars = 0;

    for (size_t k = 0; k < n; k++)
        bars += panels[k].n;
    /* more than 24 bars side by side leave each too narrow for its label: two rows */
    return bars > 24 && n >= 4 ? 2 : 1;
}

struct bars_arg {
    const char *title;
    const struct pfs_bar_panel *panels;
    size_t n;
};

static void
bars_fn(cairo_t *cr, const void *arg, double w, double h)
{
    const struct bars_arg *b = arg;

    pfs__bars_draw(cr, b->title, b->panels, b->n, w, h);
}

int
pfs__bars_write(const char *title, const struct pfs_bar_panel *panels, size_t n, const char *path,
                enum pfs_plot_format format, struct pfs_diag *diag)
{
    struct bars_arg b = {title, panels, n};

    return write_sized(path, format, bars_fn, &b, 900, pfs__bars_height(panels, n), diag);
}

/* ----- the power tree (issue 58): each node's headroom, an icicle per run ----- */

/* A node's colour by its peak minute over its limit: blue where it kept 10% or more,
 * orange within 10%, vermillion at it (1% or less), wine over it; grey with no limit. */
static const double *
tree_colour(double ratio)
{
    static const double none[3] = {0.85, 0.85, 0.85}, over[3] = {0.533, 0.133, 0.333};

    if (isnan(ratio))
        return none;
    return ratio > 1 + 1e-9 ? over
           : ratio >= 0.99  ? palette[3]
           : ratio >= 0.9   ? palette[1]
                            : palette[0];
}

static int
tree_levels(const struct pfs__tree_panel *p)
{
    int top = 0;

    for (size_t v = 0; v < p->n; v++)
        top = p->level[v] > top ? p->level[v] : top;
    return top + 1;
}

double
pfs__tree_height(const struct pfs__tree_panel *panels, size_t n)
{
    double h = 70;

    for (size_t k = 0; k < n; k++)
        h += 26 + 26.0 * tree_levels(&panels[k]);
    return h;
}

static void
tree_panel(cairo_t *cr, const struct pfs__tree_panel *p, double x0, double y0, double w)
{
    double *lo = malloc((p->n + 1) * sizeof *lo), *hi = malloc((p->n + 1) * sizeof *hi);
    double *next = malloc((p->n + 1) * sizeof *next);
    char buf[160];

    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
    cairo_set_font_size(cr, 12);
    text_at(cr, p->label, x0, y0 + 4, 0, 0);
    cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    if (!lo || !hi || !next) {
        free(lo), free(hi), free(next);
        return;
    }
    /* each node its share of its parent's span, in order (parents come first) */
    for (size_t v = 0; v < p->n; v++) {
        int32_t u = p->parent[v];
        double span = u < 0 ? w : hi[u] - lo[u], share;

        if (u < 0) {
            lo[v] = x0;
        } else {
            lo[v] = next[u];
        }
        share = u < 0 ? 1 : p->width[u] > 0 ? p->width[v] / p->width[u] : 0;
        hi[v] = lo[v] + span * share;
        next[v] = lo[v];
        if (u >= 0)
            next[u] = hi[v];
    }
    for (size_t v = 0; v < p->n; v++) {
        double y = y0 + 20 + 26.0 * p->level[v], bw = hi[v] - lo[v];
        const double *rgb = tree_colour(p->ratio[v]);
        const char *leaf = strrchr(p->name[v], '/');

        cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
        cairo_rectangle(cr, lo[v], y, bw, 22);
        cairo_fill(cr);
        cairo_set_source_rgb(cr, 1, 1, 1);
        cairo_set_line_width(cr, bw > 3 ? 1 : 0.3);
        cairo_rectangle(cr, lo[v], y, bw, 22);
        cairo_stroke(cr);
        /* its name and peak/limit where they fit */
        if (isnan(p->ratio[v]))
            snprintf(buf, sizeof buf, "%s", leaf ? leaf + 1 : p->name[v]);
        else
            snprintf(buf, sizeof buf, "%s %.3f", leaf ? leaf + 1 : p->name[v], p->ratio[v]);
        cairo_set_font_size(cr, 10);
        {
            cairo_text_extents_t e;

            cairo_text_extents(cr, buf, &e);
            if (e.x_advance + 6 > bw) { /* the ratio alone, else nothing */
                if (isnan(p->ratio[v]))
                    buf[0] = '\0';
                else
                    snprintf(buf, sizeof buf, "%.2f", p->ratio[v]);
                cairo_text_extents(cr, buf, &e);
            }
            if (e.x_advance + 6 <= bw) {
                cairo_set_source_rgb(cr, isnan(p->ratio[v]) ? 0 : 1, isnan(p->ratio[v]) ? 0 : 1,
                                     isnan(p->ratio[v]) ? 0 : 1);
                text_at(cr, buf, lo[v] + bw / 2, y + 11, 0.5, 0.5);
            }
        }
    }
    free(lo), free(hi), free(next);
}

void
pfs__tree_draw(cairo_t *cr, const char *title, const struct pfs__tree_panel *panels, size_t n,
               double w, double h)
{
    static const char *const legend[] = {"10% or more below its limit", "within 10%",
                                         "within 1% (at it)", "over it", "no limit"};
    static const double ratios[] = {0.5, 0.95, 0.995, 1.5, NAN};
    double y = 40, x = 20;

    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_rectangle(cr, 0, 0, w, h);
    cairo_fill(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
    fit_font(cr, title, 15, w - 20);
    text_at(cr, title, w / 2, 14, 0.5, 0);
    for (size_t k = 0; k < n; k++) {
        tree_panel(cr, &panels[k], 20, y, w - 40);
        y += 26 + 26.0 * tree_levels(&panels[k]);
    }
    /* the legend: each node's peak minute against its limit */
    cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, 11);
    for (size_t i = 0; i < sizeof legend / sizeof legend[0]; i++) {
        const double *rgb = tree_colour(ratios[i]);
        cairo_text_extents_t e;

        cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
        cairo_rectangle(cr, x, h - 24, 14, 12);
        cairo_fill(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        text_at(cr, legend[i], x + 18, h - 18, 0, 0.5);
        cairo_text_extents(cr, legend[i], &e);
        x += 18 + e.x_advance + 18;
    }
}

struct tree_arg {
    const char *title;
    const struct pfs__tree_panel *panels;
    size_t n;
};

static void
tree_fn(cairo_t *cr, const void *arg, double w, double h)
{
    const struct tree_arg *a = arg;

    pfs__tree_draw(cr, a->title, a->panels, a->n, w, h);
}

int
pfs__tree_write(const char *title, const struct pfs__tree_panel *panels, size_t n, const char *path,
                enum pfs_plot_format format, struct pfs_diag *diag)
{
    struct tree_arg a = {title, panels, n};

    return write_sized(path, format, tree_fn, &a, 900, pfs__tree_height(panels, n), diag);
}
