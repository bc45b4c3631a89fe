/* Output paths (common/outfile.c): the input names up to two outputs of one
 * run inside a sandbox, where an input file, a symbolic link to it, a
 * dangling link, a directory, a link to /dev/null and stale temporary files
 * wait. Whatever the paths, the input is never changed, nothing but a
 * regular file is replaced, and no temporary file is left. The first byte
 * says how the outputs end (committed one by one, as a batch, or dropped). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/infile.h"
#include "common/outfile.h"
#include "tests/fuzz/fuzz_input.h"

#define INPUT_TEXT "{\"input\": true}\n"

static char box[64];

static void sandbox(void)
{
    char p[128];
    snprintf(box, sizeof box, "/tmp/ttasim-fuzz-out-XXXXXX");
    if (!mkdtemp(box))
        abort();
    snprintf(p, sizeof p, "%s/in.json", box);
    FILE *f = fopen(p, "w");
    if (!f || fputs(INPUT_TEXT, f) < 0 || fclose(f) != 0)
        abort();
    char *text;
    size_t len;
    tt_error err = {0};
    if (infile_read(p, 1024, &text, &len, &err) != TT_OK) /* read by the run: never an output */
        abort();
    free(text);
    snprintf(p, sizeof p, "%s/dir", box);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/link", box);
    if (symlink("in.json", p) != 0)
        abort();
    snprintf(p, sizeof p, "%s/dangling", box);
    if (symlink("nowhere", p) != 0)
        abort();
    snprintf(p, sizeof p, "%s/null", box);
    if (symlink("/dev/null", p) != 0)
        abort();
}

/* The fuzzed name as a path inside the sandbox: no "..", no NUL, no leading "/". */
static void inside(const uint8_t *data, size_t n, char *out, size_t cap)
{
    size_t k = (size_t)snprintf(out, cap, "%s/", box);
    for (size_t i = 0; i < n && k + 1 < cap; i++) {
        char c = (char)data[i];
        if (c == '\0' || (c == '.' && k > 0 && out[k - 1] == '.'))
            continue;
        out[k++] = c;
    }
    out[k] = '\0';
}

static void check_sandbox(void)
{
    char p[128], buf[64] = "";
    snprintf(p, sizeof p, "%s/in.json", box);
    FILE *f = fopen(p, "r");
    if (!f || !fgets(buf, sizeof buf, f) || strcmp(buf, INPUT_TEXT) != 0)
        abort(); /* the input was replaced or changed */
    fclose(f);
    struct stat st;
    snprintf(p, sizeof p, "%s/dir", box);
    if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode))
        abort();
    if (stat("/dev/null", &st) != 0 || !S_ISCHR(st.st_mode))
        abort();
    snprintf(p, sizeof p, "%s/link", box);
    if (lstat(p, &st) != 0 || !S_ISLNK(st.st_mode))
        abort();
    DIR *d = opendir(box);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".ttasim-"))
            abort(); /* a temporary output left behind */
    if (d)
        closedir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!box[0])
        sandbox();
    if (size < 1)
        return 0;
    int how = data[0] % 3; /* 0: one by one, 1: a batch, 2: dropped */
    const uint8_t *rest = data + 1, *split = memchr(rest, '\n', size - 1);
    size_t n1 = split ? (size_t)(split - rest) : size - 1;
    char path[2][512];
    inside(rest, n1, path[0], sizeof path[0]);
    inside(split ? split + 1 : rest, split ? size - 1 - n1 - 1 : 0, path[1], sizeof path[1]);
    int outs = split ? 2 : 1;
    /* A name like a temporary output's is left to the check below; tested on the
     * path as built, since dropping NULs and ".." can join one out of the input. */
    if (strstr(path[0], ".ttasim-") || strstr(path[1], ".ttasim-"))
        return 0;
    tt_error err = {0};
    if (how == 1)
        outfile_batch_begin();
    int rc = TT_OK;
    for (int i = 0; i < outs; i++) {
        outfile *o;
        FILE *f;
        if (outfile_open(path[i], "the fuzzed output", &o, &f, &err) != TT_OK) {
            rc = TT_EINPUT;
            continue;
        }
        fputs("written\n", f);
        if (how == 2)
            outfile_discard(o);
        else if (outfile_commit(o, &err) != TT_OK)
            rc = TT_EINPUT;
    }
    if (how == 1)
        outfile_batch_end(rc == TT_OK, &err);
    check_sandbox();
    return 0;
}
