#include "sim/replay/cost.h"

cost cost_of(const cost_rates *r, double time_s, double busy_s)
{
    if (busy_s > time_s)
        busy_s = time_s;
    cost c;
    c.usd = r->ranks * r->price_per_h_usd * time_s / 3600.0;
    c.energy_j = r->ranks * (r->busy_w * busy_s + r->idle_w * (time_s - busy_s));
    return c;
}
