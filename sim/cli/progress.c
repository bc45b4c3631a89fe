#include "sim/cli/progress.h"

#include <stdio.h>
#include <unistd.h>

#include "common/clock.h"
#include "sim/engine/engine.h"

/* A plain line at most this often, besides the first and the last. */
#define PROGRESS_LINE_PERIOD_S 10.0
#define PROGRESS_BAR_CELLS 30

static struct {
    char what[160], units[16];
    int quiet, tty;
    double start_s, last_line_s;
    size_t last_done;
} st;

void progress_start(const char *what, const char *units, int quiet)
{
    snprintf(st.what, sizeof st.what, "%s", what);
    snprintf(st.units, sizeof st.units, "%s", units);
    st.quiet = quiet;
    sim_set_quiet(quiet); /* the simulations' estimate lines too */
    st.tty = isatty(STDERR_FILENO);
    st.start_s = clock_monotonic_s();
    st.last_line_s = -1;
    st.last_done = (size_t)-1;
}

static void duration(double s, char *buf, size_t n)
{
    if (s < 120)
        snprintf(buf, n, "%.0f s", s);
    else if (s < 7200)
        snprintf(buf, n, "%.0f min", s / 60);
    else
        snprintf(buf, n, "%.1f h", s / 3600);
}

void progress_update(size_t done, size_t total)
{
    if (st.quiet || total == 0 || done == st.last_done)
        return;
    double now = clock_monotonic_s(), elapsed = now - st.start_s;
    char el[32], rem[32] = "?";
    duration(elapsed, el, sizeof el);
    if (done > 0)
        duration(elapsed / (double)done * (double)(total - done), rem, sizeof rem);
    st.last_done = done;
    if (st.tty) {
        int cells = (int)(PROGRESS_BAR_CELLS * done / total);
        fprintf(stderr, "\r%s [%-*.*s] %zu/%zu %s, %s elapsed, %s remaining%s", st.what, PROGRESS_BAR_CELLS,
                cells, "##############################", done, total, st.units, el, rem, done == total ? "\n" : "");
    } else if (done == 0 || done == total || now - st.last_line_s >= PROGRESS_LINE_PERIOD_S) {
        fprintf(stderr, "progress: %s: %zu/%zu %s done, %s elapsed, %s remaining\n", st.what, done, total,
                st.units, el, done == total ? "0 s" : rem);
        st.last_line_s = now;
    }
    fflush(stderr);
}
