/* A user's own SimGrid platform (platforms/user_xml.c, platform_json.c): the
 * XML read as data before SimGrid sees it (checks and the estimate's counts),
 * and the same bytes as its rank_hosts file. */
#include <math.h>
#include <stdlib.h>

#include "platforms/platform_impl.h"
#include "tests/fuzz/fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_input_text(data, size);
    tt_error err = {0};
    plat_xml_counts c;
    if (plat_user_xml_scan("user.xml", text, size, &c, &err) == TT_OK) {
        /* counts the estimate multiplies: never negative or NaN */
        const double *v = &c.hosts;
        for (size_t i = 0; i < sizeof c / sizeof c.hosts; i++)
            if (!(v[i] >= 0))
                abort();
    }
    static platform *p; /* loaded once: the device library is most of a load */
    if (!p && !(p = platform_load("star", NULL, &err)))
        abort();
    long ranks = 0;
    if (plat_parse_rank_hosts(p, "user.hosts", text, size, &ranks, &err) == TT_OK &&
        (ranks < 1 || ranks != p->n_rank_hosts))
        abort();
    free(text);
    return 0;
}
