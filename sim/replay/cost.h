/* cost.h: money and energy of a step and of a run. Renting: the
 * accelerators' price per hour. Owning: the capital cost of every component
 * the platform counts (accelerators, servers, NICs, fabric switches, cables;
 * the devices' "purchase" blocks) spread over a lifetime, plus electricity
 * for every powered component at the facility's PUE. An accelerator draws
 * its busy power while it runs kernels and its idle power otherwise, so
 * energy follows utilisation; other components draw their power throughout. */
#ifndef TT_COST_H
#define TT_COST_H

#include "platforms/platform.h"

/* Defaults of a scenario's "cost" block, named in every run's assumptions. */
#define COST_LIFETIME_YEARS 4.0
#define COST_PUE 1.3
#define COST_USD_PER_KWH 0.10
#define COST_DEFAULTS_WHY                                                                                   \
    "4 years (U: servers are commonly depreciated over 4 to 6 years), PUE 1.3 (U: new AI halls 1.2-1.4; " \
    "Uptime Institute 2023 fleet average 1.58), $0.10/kWh (U: US industrial average about $0.08 in 2023, EIA)"

typedef struct cost_rates {
    int ranks;
    double price_per_h_usd; /* rental, per accelerator (with its share of the node) */
    double busy_w;          /* per accelerator running kernels (TDP) */
    double idle_w;          /* per accelerator waiting */
    double other_w;         /* the rest of the cluster (CPUs, NICs, switches, optics), always on */
    double pue;             /* facility power over IT power; below 1 counts as 1 */
    double capex_usd;       /* the whole cluster; 0 when unknown */
    double lifetime_s;      /* over which capex is spread */
    double usd_per_j;       /* electricity */
} cost_rates;

typedef struct cost {
    double usd;        /* rental: ranks x price per hour x time */
    double energy_j;   /* at the facility's meter: IT energy x PUE */
    double capex_usd;  /* the span's share of the capital cost */
    double energy_usd; /* energy_j at the electricity price */
    double owned_usd;  /* capex share + energy: what the span costs an owner */
} cost;

/* A span of time_s in which each accelerator was busy for busy_s. */
cost cost_of(const cost_rates *r, double time_s, double busy_s);

/* The cluster's bill of materials, priced. */
typedef struct cost_bill {
    double accelerators_usd, servers_usd, nics_usd, switches_usd, cables_usd, total_usd;
    long fabric_switch_ports, fabric_switches, fabric_cables;
    double other_w;        /* everything but the accelerators, always on */
    char missing[256];     /* devices without a "purchase" block ("" when all are priced) */
} cost_bill;

/* Prices the platform: its devices by count (CPU sockets carry their share
 * of the server), the fabric's switches (whole, at the port price times the
 * radix) and cables by the device that attaches to it. total_usd is 0 when a
 * device has no price. sum: the platform's (platform_summarize). */
void cost_bill_of(const platform *p, const platform_summary *sum, cost_bill *out);

#endif
