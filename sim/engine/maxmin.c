/* maxmin.c: CM02's weighted max-min shares by progressive filling, re-solved
 * only where an event reaches (maxmin.h). */
#include "sim/engine/maxmin.h"

#include <math.h>

static double min_of(double a, double b)
{
    return b < a ? b : a;
}

static double pos_part(double a)
{
    return a > 0 ? a : 0;
}

/* Progressive filling of the nsend sending flows: every unfixed flow at one
 * level until a constraint or its own bound stops it. Each level visits only
 * the flows still unfixed and the constraints they use; every sum is taken
 * in flow order. Leaves users[] all 0. */
static void share(const maxmin_comp *c, const double *bound_Bps, maxmin_work *w, int nsend)
{
    int nu = 0, ncons = 0;
    for (int a = 0; a < nsend; a++) {
        int i = w->sending[a];
        w->unfixed[nu++] = i;
        for (int u = c->use_off[i]; u < c->use_off[i + 1]; u++) {
            int k = c->use_c[u];
            if (!w->users[k]) {
                w->left[k] = c->cap[k];
                w->wsum[k] = 0;
                w->cons[ncons++] = k;
            }
            w->wsum[k] += c->use_w[u] / c->penalty[i];
            w->users[k]++;
        }
    }
    while (nu > 0) {
        double level = INFINITY;
        for (int a = 0; a < ncons; a++)
            level = min_of(level, pos_part(w->left[w->cons[a]]) / w->wsum[w->cons[a]]);
        for (int a = 0; a < nu; a++)
            level = min_of(level, bound_Bps[w->unfixed[a]] * c->penalty[w->unfixed[a]]);
        int kept = 0, nfix = 0;
        for (int a = 0; a < nu; a++) {
            int i = w->unfixed[a];
            int fix = bound_Bps[i] * c->penalty[i] <= level * (1 + 1e-12);
            for (int u = c->use_off[i]; !fix && u < c->use_off[i + 1]; u++)
                fix = pos_part(w->left[c->use_c[u]]) <= level * w->wsum[c->use_c[u]] * (1 + 1e-12);
            if (fix) {
                w->rate[i] = level / c->penalty[i];
                w->fixed[nfix++] = i;
            } else {
                w->unfixed[kept++] = i;
            }
        }
        for (int a = 0; a < nfix; a++) { /* out of the sums */
            int i = w->fixed[a];
            for (int u = c->use_off[i]; u < c->use_off[i + 1]; u++) {
                int k = c->use_c[u];
                w->left[k] -= c->use_w[u] * w->rate[i];
                w->wsum[k] -= c->use_w[u] / c->penalty[i];
                w->users[k]--;
            }
        }
        nu = kept;
        int live = 0;
        for (int a = 0; a < ncons; a++)
            if (w->users[w->cons[a]] > 0)
                w->cons[live++] = w->cons[a];
        ncons = live;
    }
}

/* Flows start at start_s (their ends' ready time plus the route's latency).
 * Max-min shares are independent between flows that share no constraint, so
 * an event re-solves only the sending flows it reaches through shared
 * constraints: with staggered starts a component of thousands of flows sees
 * thousands of events, each touching a few. */
void maxmin_solve(const maxmin_comp *c, const double *bytes, const double *start_s, const double *bound_Bps,
                  double *done_s, maxmin_work *w)
{
    int npend = 0, event = 0;
    double t = 0;
    for (int k = 0; k <= c->nc; k++)
        w->con_off[k] = 0;
    for (int u = 0; u < c->use_off[c->nf]; u++)
        w->con_off[c->use_c[u] + 1]++;
    for (int k = 0; k < c->nc; k++) {
        w->con_off[k + 1] += w->con_off[k];
        w->con_seen[k] = w->con_off[k]; /* fill position while building */
    }
    for (int i = 0; i < c->nf; i++)
        for (int u = c->use_off[i]; u < c->use_off[i + 1]; u++)
            w->con_f[w->con_seen[c->use_c[u]]++] = i;
    for (int k = 0; k < c->nc; k++) {
        w->con_seen[k] = 0;
        w->users[k] = 0;
    }
    for (int i = 0; i < c->nf; i++) {
        w->rem[i] = bytes[i];
        w->rate[i] = 0;
        w->state[i] = 0;
        w->seen[i] = 0;
        w->pending[npend++] = i;
    }
    for (;;) {
        /* who starts now, who is done: the event's flows */
        int nq = 0, kept = 0, nsend = 0;
        event++;
        for (int a = 0; a < npend; a++) {
            int i = w->pending[a];
            if (w->state[i] == 0 && start_s[i] <= t * (1 + 1e-12) + 1e-15) {
                w->state[i] = 1;
                w->queue[nq++] = i;
                w->seen[i] = event;
            }
            if (w->state[i] == 1 && w->rem[i] <= 0) {
                w->state[i] = 2;
                done_s[c->flow[i]] = t;
                if (w->seen[i] != event)
                    w->queue[nq++] = i;
                w->seen[i] = event;
                continue;
            }
            w->pending[kept++] = i;
        }
        npend = kept;
        for (int h = 0; h < nq; h++) /* the sending flows coupled to them */
            for (int u = c->use_off[w->queue[h]]; u < c->use_off[w->queue[h] + 1]; u++) {
                int k = c->use_c[u];
                if (w->con_seen[k] == event)
                    continue;
                w->con_seen[k] = event;
                for (int v = w->con_off[k]; v < w->con_off[k + 1]; v++) {
                    int f = w->con_f[v];
                    if (w->state[f] == 1 && w->seen[f] != event) {
                        w->seen[f] = event;
                        w->queue[nq++] = f;
                    }
                }
            }
        for (int a = 0; a < npend; a++) /* in flow order, as the sums want */
            if (w->state[w->pending[a]] == 1 && w->seen[w->pending[a]] == event)
                w->sending[nsend++] = w->pending[a];
        share(c, bound_Bps, w, nsend);
        /* the next event: a flow starts or ends */
        double dt = INFINITY;
        for (int a = 0; a < npend; a++) {
            int i = w->pending[a];
            if (w->state[i] == 0)
                dt = min_of(dt, start_s[i] - t);
            else if (w->rate[i] > 0)
                dt = min_of(dt, w->rem[i] / w->rate[i]);
        }
        if (!isfinite(dt))
            break;
        for (int a = 0; a < npend; a++) {
            int i = w->pending[a];
            if (w->state[i] != 1)
                continue;
            w->rem[i] -= w->rate[i] * dt;
            if (w->rem[i] <= bytes[i] * 1e-12 + 1e-9) /* SimGrid's work precision */
                w->rem[i] = 0;
        }
        t += dt;
    }
}
