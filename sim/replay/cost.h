/* cost.h: money and energy of a step and of a run, from the devices' price
 * per hour and power. An accelerator draws its busy power while it runs
 * kernels (compute, optimizer) and its idle power otherwise (waiting on
 * communication or the host), so energy follows utilisation. */
#ifndef TT_COST_H
#define TT_COST_H

typedef struct cost_rates {
    int ranks;
    double price_per_h_usd; /* per accelerator (with its share of the node) */
    double busy_w;          /* per accelerator running kernels (TDP) */
    double idle_w;          /* per accelerator waiting */
} cost_rates;

typedef struct cost {
    double usd;
    double energy_j;
} cost;

/* A span of time_s in which each accelerator was busy for busy_s. */
cost cost_of(const cost_rates *r, double time_s, double busy_s);

#endif
