#include "sim/replay/cost.h"

#include <stdio.h>
#include <string.h>

cost cost_of(const cost_rates *r, double time_s, double busy_s)
{
    if (busy_s > time_s)
        busy_s = time_s;
    double pue = r->pue > 1 ? r->pue : 1;
    cost c;
    c.usd = r->ranks * r->price_per_h_usd * time_s / 3600.0;
    c.energy_j = pue * (r->ranks * (r->busy_w * busy_s + r->idle_w * (time_s - busy_s)) + r->other_w * time_s);
    c.capex_usd = r->lifetime_s > 0 ? r->capex_usd * time_s / r->lifetime_s : 0;
    c.energy_usd = c.energy_j * r->usd_per_j;
    c.owned_usd = c.capex_usd + c.energy_usd;
    return c;
}

static void note_missing(cost_bill *b, const char *name)
{
    size_t used = strlen(b->missing);
    if (!strstr(b->missing, name))
        snprintf(b->missing + used, sizeof b->missing - used, "%s%s", used ? ", " : "", name);
}

void cost_bill_of(const platform *p, const platform_summary *sum, cost_bill *b)
{
    memset(b, 0, sizeof *b);
    device_kind ranks = platform_rank_kind(p);
    for (int i = 0; i < sum->n_devices; i++) {
        const device_info *d = sum->devices[i].dev;
        double n = (double)sum->devices[i].count;
        if (!d->has_purchase)
            note_missing(b, d->name);
        switch (d->kind) {
        case DEVICE_ACCELERATOR: b->accelerators_usd += n * d->price_usd; break;
        case DEVICE_NIC: b->nics_usd += n * d->price_usd; break;
        default: b->servers_usd += n * d->price_usd; break; /* CPUs with their server share, node switches */
        }
        /* the ranks draw through cost_rates; accelerators beside CPU ranks idle */
        if (d->kind != ranks)
            b->other_w += n * (d->kind == DEVICE_ACCELERATOR ? d->idle_w : d->power_w);
    }
    platform_fabric_bom bom;
    platform_fabric_bom_of(p, 0, &bom);
    b->fabric_switch_ports = bom.switch_ports;
    b->fabric_switches = bom.switches;
    b->fabric_cables = bom.cables;
    if (bom.priced_by) {
        const device_info *f = bom.priced_by;
        if (!f->has_purchase || (bom.switch_ports > 0 && f->switch_port_usd <= 0) || f->cable_usd <= 0)
            note_missing(b, f->name); /* a fabric end without port or cable prices */
        /* a switch is bought and powered whole, its spare ports too */
        double ports = bom.switches > 0 ? (double)bom.switches * (f->switch_radix > 0 ? f->switch_radix : 64) : 0;
        b->switches_usd = ports * f->switch_port_usd;
        b->cables_usd = (double)bom.cables * f->cable_usd;
        b->other_w += ports * f->switch_port_w + (double)bom.cables * f->cable_w;
    }
    if (!b->missing[0])
        b->total_usd = b->accelerators_usd + b->servers_usd + b->nics_usd + b->switches_usd + b->cables_usd;
}
