/* The SimGrid network models ttasim offers (documented in platforms/README.md). */
#include "platforms/platform.h"

#include "platforms/platform_impl.h"

#include <string.h>

/* ideal: CM02 has no latency or bandwidth factors; without cross-traffic a
 * lone flow takes exactly latency_sum + bytes / bottleneck_bw (alpha-beta);
 * TCP-gamma 0 removes the window bound gamma / (2 latency).
 * calibrated: the same max-min sharing plus acknowledgement cross-traffic on
 * the reverse direction; links deliver their payload rate, which
 * platform_write_xml writes per link kind (NVLink 80 % of line rate, an
 * InfiniBand fabric 96 %: platform_impl.h, the platform files); a user's
 * own XML, whose link kinds are unknown, gets the node links' 80 % on all. */
static const char *const IDEAL[] = {"--cfg=network/model:CM02", "--cfg=network/TCP-gamma:0",
                                    "--cfg=network/crosstraffic:0", NULL};
static const char *const CALIBRATED[] = {"--cfg=network/model:CM02", "--cfg=network/TCP-gamma:0",
                                         "--cfg=network/crosstraffic:1",
                                         "--cfg=network/bandwidth-factor:1", /* user XML: BW_USER */
                                         "--cfg=network/latency-factor:1", NULL};

#define STR(x) #x
#define XSTR(x) STR(x)
static const char BW_USER[] = "--cfg=network/bandwidth-factor:" XSTR(PLAT_NODE_EFFICIENCY);

int network_simgrid_args(const platform *p, network_model m, const char **argv, int max)
{
    const char *const *words = m == NETWORK_IDEAL ? IDEAL : CALIBRATED;
    int n = 0;
    while (words[n] && n < max) {
        argv[n] = strstr(words[n], "bandwidth-factor") && platform_user_xml(p) ? BW_USER : words[n];
        n++;
    }
    return n;
}

const char *network_name(network_model m)
{
    return m == NETWORK_IDEAL ? "ideal" : "calibrated";
}
