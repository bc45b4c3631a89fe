#include "sim/replay/resilience.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/replay/cost.h"

const char *const RESILIENCE_COMPONENT_NAMES[] = {"gpu", "hbm", "nic", "link", "host", "software", "planned", NULL};

/* The calibration: Kokolis et al. 2024 (arXiv 2410.21680), Meta's RSC-1
 * (16k A100, 2,000 nodes) 6.50 and RSC-2 (8k A100, 1,000 nodes) 2.34
 * failures per 1000 node-days, pooled by node count; split by cause as the
 * Llama 3 paper's Table 5 counts its 466 interruptions (Dubey et al. 2024,
 * arXiv 2407.21783), on nodes of 8 GPUs and 8 NICs. Llama 3's total rate is
 * the held-out check (scenarios/published/interruptions-*.json). */
#define CAL_NODE_DAY ((2000 * 6.50 + 1000 * 2.34) / 3000 / 1000)
#define CAL_GPUS_PER_NODE 8.0
#define CAL_NICS_PER_NODE 8.0
static const struct {
    double count; /* of Llama 3's 466 */
    double per_node; /* units a calibration node holds */
} CAUSES[RES_COMPONENTS] = {
    [RES_GPU] = {148 + 19 + 17 + 6 + 6, CAL_GPUS_PER_NODE}, /* faulty GPU, SRAM, GSP, SDC, thermal */
    [RES_HBM] = {72, CAL_GPUS_PER_NODE},
    [RES_NIC] = {7, CAL_NICS_PER_NODE},
    [RES_LINK] = {35, CAL_NICS_PER_NODE},                   /* network switch and cable */
    [RES_HOST] = {32 + 3 + 3 + 2 + 2 + 2 + 2, 1},           /* maintenance, SSD, PSU, chassis, IO board, CPU, DRAM */
    [RES_SOFTWARE] = {54 + 7 + 2, 1},                       /* software bug, NCCL watchdog, dependency */
    [RES_PLANNED] = {47, 1},
};
#define CAL_CAUSES 466.0

/* 10th / 90th percentile of a normal: mean -/+ Z10 sd */
#define Z10 1.2815515655446004

/* The q-quantile (0.1 or 0.9) of a Poisson count of mean n: the smallest k
 * whose CDF reaches q, summed exactly up to a mean of 100, a normal with a
 * continuity correction beyond. */
static double poisson_quantile(double n, double q)
{
    if (n > 100)
        return fmax(0, ceil(n + (q < 0.5 ? -Z10 : Z10) * sqrt(n) - 0.5));
    double pmf = exp(-n), cdf = pmf;
    int k = 0;
    while (cdf < q && k < 1000) {
        pmf *= n / ++k;
        cdf += pmf;
    }
    return k;
}

double resilience_default_rate(resilience_component c)
{
    return CAUSES[c].count / CAL_CAUSES * CAL_NODE_DAY / CAUSES[c].per_node;
}

void resilience_options_default(resilience_options *o)
{
    memset(o, 0, sizeof *o);
    o->failures = 1;
    o->restart_s = RESILIENCE_RESTART_S;
    for (int c = 0; c < RES_COMPONENTS; c++)
        o->rate_per_day[c] = resilience_default_rate((resilience_component)c);
}

double resilience_interval_s(double checkpoint_s, double mtbf_s)
{
    return sqrt(2 * checkpoint_s * mtbf_s);
}

/* Checkpoints' share of the work (none without an interval). */
static double checkpoint_overhead(double checkpoint_s, double interval_s)
{
    return interval_s > 0 ? checkpoint_s / interval_s : 0;
}

/* What one interruption costs on average: the down time, then half an
 * interval of work and half a checkpoint done again. */
static double loss_s(double checkpoint_s, double interval_s, double down_s)
{
    return down_s + (isfinite(interval_s) ? (interval_s + checkpoint_s) / 2 : 0);
}

double resilience_goodput(double mtbf_s, double checkpoint_s, double interval_s, double down_s)
{
    double left = isfinite(mtbf_s) ? 1 - loss_s(checkpoint_s, interval_s, down_s) / mtbf_s : 1;
    return left > 0 ? left / (1 + checkpoint_overhead(checkpoint_s, interval_s)) : 0;
}

/* ln Phi(x), accurate in both tails. */
static double log_phi(double x)
{
    return x > 0 ? log1p(-0.5 * erfc(x / sqrt(2))) : log(0.5 * erfc(-x / sqrt(2)));
}

/* Simpson's rule over x n phi(x) Phi(x)^(n-1) on [-10, 10]: the density of
 * the maximum has no mass outside for any n up to 2^40. */
double resilience_normal_max(long n)
{
    if (n <= 1)
        return 0;
    const int steps = 20000;
    const double a = -10, h = 20.0 / steps;
    double sum = 0;
    for (int i = 0; i <= steps; i++) {
        double x = a + i * h;
        double f = x * exp(log((double)n) - x * x / 2 - 0.5 * log(2 * M_PI) + (double)(n - 1) * log_phi(x));
        sum += f * (i == 0 || i == steps ? 1 : i % 2 ? 4 : 2);
    }
    return sum * h / 3;
}

double resilience_straggler_s(const resilience_options *o, double compute_s, long group)
{
    return o->straggler_cv > 0 ? o->straggler_cv * compute_s * resilience_normal_max(group) : 0;
}

void resilience_of(const resilience_options *o, const resilience_inputs *in, const struct cost_rates *rates,
                   resilience_result *out)
{
    memset(out, 0, sizeof *out);
    if (!o->failures)
        return;
    out->on = 1;
    const double units[RES_COMPONENTS] = {in->gpus, in->gpus, in->nics, in->nics, in->nodes, in->nodes, in->nodes};
    for (int c = 0; c < RES_COMPONENTS; c++) {
        out->per_day[c] = o->rate_per_day[c] * units[c];
        out->interruptions_per_day += out->per_day[c];
    }
    double m = out->mtbf_s = out->interruptions_per_day > 0 ? 86400 / out->interruptions_per_day : INFINITY;
    out->checkpoint_bytes = o->checkpoint_bytes > 0 ? o->checkpoint_bytes : in->state_bytes;
    out->write_Bps = o->storage_write_Bps > 0    ? o->storage_write_Bps
                     : in->platform_write_Bps > 0 ? in->platform_write_Bps
                                                  : in->nodes * RESILIENCE_NODE_WRITE_BPS;
    out->read_Bps = o->storage_read_Bps > 0    ? o->storage_read_Bps
                    : in->platform_read_Bps > 0 ? in->platform_read_Bps
                                                : in->nodes * RESILIENCE_NODE_READ_BPS;
    double c = out->checkpoint_write_s = o->checkpoint_s > 0 ? o->checkpoint_s : out->checkpoint_bytes / out->write_Bps;
    out->checkpoint_read_s = out->checkpoint_bytes / out->read_Bps;
    out->restart_s = o->restart_s;
    double tau = out->checkpoint_interval_s = o->checkpoint_interval_s > 0 ? o->checkpoint_interval_s
                                                                            : resilience_interval_s(c, m);
    double down = o->restart_s + out->checkpoint_read_s;
    double g = out->goodput = resilience_goodput(m, c, tau, down);
    double w = in->time_s, free_s = w * (1 + checkpoint_overhead(c, tau));
    if (g <= 0) { /* interruptions come faster than the work between them */
        out->time_s = out->time_p10_s = out->time_p90_s = out->interruptions = INFINITY;
        out->lost_usd = out->lost_energy_j = out->lost_owned_usd = INFINITY;
        return;
    }
    double wall = out->time_s = w / g;
    double n = out->interruptions = isfinite(m) ? wall / m : 0;
    /* the run's 10th and 90th percentile interruptions, each costing the mean loss */
    double each = loss_s(c, tau, down);
    double fast = free_s + poisson_quantile(n, 0.1) * each, slow = free_s + poisson_quantile(n, 0.9) * each;
    out->goodput_p10 = w / slow;
    out->goodput_p90 = w / fast;
    double conv_lo = wall - in->time_p10_s / g, conv_hi = in->time_p90_s / g - wall;
    double fail_lo = fmax(wall - fast, 0), fail_hi = fmax(slow - wall, 0);
    out->time_p10_s = wall - sqrt(conv_lo * conv_lo + fail_lo * fail_lo);
    out->time_p90_s = wall + sqrt(conv_hi * conv_hi + fail_hi * fail_hi);
    /* work done again runs at the step's busy share; restarts, reads and checkpoints idle */
    double redo_s = isfinite(tau) ? n * tau / 2 : 0;
    cost lost = cost_of(rates, wall - w, redo_s * in->busy_share);
    out->lost_usd = lost.usd;
    out->lost_energy_j = lost.energy_j;
    out->lost_owned_usd = lost.owned_usd;
}

int resilience_notes(const resilience_options *o, const resilience_result *r, const char *storage_why,
                     char (*notes)[640], int max)
{
    int n = 0, given = 0;
    if (o->straggler_cv > 0 && max > 0)
        snprintf(notes[n++], sizeof notes[0],
                 "resilience.stragglers = each device's compute time normal with sd %.3g of its mean (the scenario's), "
                 "the synchronous step waiting for the slowest of %ld devices (E[max] %.4g sd): +%.4g s a step",
                 o->straggler_cv, r->straggler_group, resilience_normal_max(r->straggler_group), r->straggler_s);
    if (!r->on || max - n < 4)
        return n;
    for (int c = 0; c < RES_COMPONENTS; c++)
        given |= o->rate_per_day[c] != resilience_default_rate((resilience_component)c);
    const double *k = o->rate_per_day;
    snprintf(notes[n++], sizeof notes[0],
             "resilience.rates = interruptions per day: GPU %.3g and HBM %.3g per accelerator, NIC %.3g and fabric "
             "link %.3g per NIC, host %.3g, software %.3g and planned maintenance %.3g per node (%s)",
             k[RES_GPU], k[RES_HBM], k[RES_NIC], k[RES_LINK], k[RES_HOST], k[RES_SOFTWARE], k[RES_PLANNED],
             given ? "some set by the scenario's resilience.rates"
                   : "Kokolis et al. 2024, arXiv 2410.21680: Meta's A100 clusters RSC-1 6.50 and RSC-2 2.34 failures "
                     "per 1000 node-days, pooled over their 2,000 and 1,000 nodes; split by cause as Llama 3's "
                     "Table 5 counts its 466 interruptions (arXiv 2407.21783); U for other accelerators");
    char storage[400];
    if (o->storage_write_Bps > 0 || o->storage_read_Bps > 0)
        snprintf(storage, sizeof storage, "the scenario's storage");
    else if (storage_why)
        snprintf(storage, sizeof storage, "the platform's storage: %s", storage_why);
    else
        snprintf(storage, sizeof storage, "U: 1 GB/s write and 3.4 GB/s read per node, Llama 3's Tectonic (2 TB/s "
                 "sustained, 7 TB/s peak) over its 2,048 nodes");
    snprintf(notes[n++], sizeof notes[0],
             "resilience.checkpoint = %.4g GB (%s), written in %.4g s at %.4g GB/s and read in %.4g s at %.4g GB/s "
             "(%s), every %.4g s of work (%s)",
             r->checkpoint_bytes / 1e9,
             o->checkpoint_bytes > 0 ? "the scenario's" : "parameters, fp32 master weights under a 16-bit precision, optimizer moments",
             r->checkpoint_write_s, r->write_Bps / 1e9, r->checkpoint_read_s, r->read_Bps / 1e9, storage,
             r->checkpoint_interval_s,
             o->checkpoint_interval_s > 0 ? "the scenario's" : "Young 1974: sqrt(2 x checkpoint x MTBF)");
    snprintf(notes[n++], sizeof notes[0],
             "resilience.restart = %.4g s from an interruption to training again, before the checkpoint is read "
             "(%s)", r->restart_s,
             o->restart_s != RESILIENCE_RESTART_S ? "the scenario's"
                                                  : "U: detection, rescheduling and start; MegaScale reports "
                                                    "diagnosis within 10 minutes");
    snprintf(notes[n++], sizeof notes[0],
             "resilience.model = interruptions a Poisson process; each loses the restart, the read and on average "
             "half an interval of work and half a checkpoint; goodput's band: the 10th and 90th percentile of the "
             "Poisson count, each at that mean loss, added to the convergence band in quadrature; work done again "
             "draws busy power, restarts and checkpoints idle power");
    return n;
}
