#include "common/datapath.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "ttasim_paths.h"

static int running_from_build_tree(void)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return 0;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    /* Tests live one level below the build tree's top. */
    size_t lb = strlen(TTASIM_BUILDDIR);
    return strncmp(exe, TTASIM_BUILDDIR, lb) == 0 && (exe[lb] == '\0' || exe[lb] == '/');
}

const char *datapath_root(void)
{
    const char *env = getenv("TTASIM_DATA_DIR");
    if (env && *env)
        return env;
    if (running_from_build_tree() && access(TTASIM_SRCDIR "/scenarios", F_OK) == 0)
        return TTASIM_SRCDIR;
    return TTASIM_DATADIR;
}

int datapath_find(const char *rel, char *out, size_t out_bytes)
{
    snprintf(out, out_bytes, "%s/%s", datapath_root(), rel);
    return access(out, R_OK) == 0 ? 0 : -1;
}
