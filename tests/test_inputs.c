/* Hostile inputs (issue 14): each test holds a defect found by fuzzing or by
 * hand-made files; the reproducers are in ../shared/fuzz-findings/. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "config.h"

#include "common/infile.h"
#include "common/jsonx.h"
#include "common/units.h"
#include "platforms/platform.h"
#include "platforms/platform_impl.h"
#include "tests/testutil.h"
#include "trainer/fmnist.h"
#include "trainer/model.h"
#include "trainer/profile.h"

/* ---- units ---- */

START_TEST(units_refuse_overflow)
{
    double x = -1;
    const char *why = NULL;
    /* 1e308 x 1e3 overflows to +inf: was accepted, and --json printed "results": [] */
    ck_assert_int_eq(units_parse_bytes("1e308K", &x, &why), -1);
    ck_assert_ptr_nonnull(strstr(why, "too large"));
    ck_assert_int_eq(units_parse_bytes("1e300Ti", &x, &why), -1);
    ck_assert_int_eq(units_parse_bytes("2e30", &x, &why), -1);
    ck_assert_int_eq(units_parse_bytes("inf", &x, &why), -1);
    ck_assert_int_eq(units_parse_bytes("nan", &x, &why), -1);
    ck_assert_int_eq(units_parse_seconds("1e40ms", &x, &why), -1);
    ck_assert_int_eq(units_parse_bytes("1e18K", &x, &why), 0);
    ck_assert_double_eq(x, 1e21);
}
END_TEST

START_TEST(cli_bytes_inf_is_usage_error)
{
    char out[4096];
    int rc = tu_run_ttasim("collective --platform star --nodes 2 --op allreduce --algo ring "
                           "--bytes 1e308K --json", out, sizeof out);
    ck_assert_int_eq(rc, 2);
    ck_assert_msg(strstr(out, "--bytes: '1e308K' too large"), "%s", out);
}
END_TEST

/* ---- IDX files ---- */

static void write_file(const char *path, const unsigned char *bytes, size_t n, int gz)
{
    if (gz) {
        gzFile g = gzopen(path, "wb");
        ck_assert_ptr_nonnull(g);
        ck_assert_int_eq(gzwrite(g, bytes, (unsigned)n), (int)n);
        gzclose(g);
        return;
    }
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

/* An image IDX header for n images of rows x cols. */
static void idx3_header(unsigned char *h, unsigned n, unsigned rows, unsigned cols)
{
    unsigned v[4] = {0x803, n, rows, cols};
    for (int i = 0; i < 4; i++)
        for (int b = 0; b < 4; b++)
            h[4 * i + b] = (unsigned char)(v[i] >> (24 - 8 * b));
}

/* A Fashion-MNIST-like directory with n images of rows x cols (train and t10k). */
static void make_dataset(const char *dir, unsigned n, unsigned rows, unsigned cols)
{
    size_t px = (size_t)n * rows * cols;
    unsigned char *img = calloc(16 + px, 1), lab[8 + 64] = {0, 0, 8, 1, 0, 0, 0, (unsigned char)n};
    ck_assert_ptr_nonnull(img);
    idx3_header(img, n, rows, cols);
    for (size_t i = 0; i < px; i++)
        img[16 + i] = (unsigned char)(i * 7);
    for (unsigned i = 0; i < n; i++)
        lab[8 + i] = (unsigned char)(i % 10);
    const char *splits[] = {"train", "t10k"};
    for (int s = 0; s < 2; s++) {
        char p[256];
        snprintf(p, sizeof p, "%s/%s-images-idx3-ubyte.gz", dir, splits[s]);
        write_file(p, img, 16 + px, 1);
        snprintf(p, sizeof p, "%s/%s-labels-idx1-ubyte.gz", dir, splits[s]);
        write_file(p, lab, 8 + n, 1);
    }
    free(img);
}

static void remove_dataset(const char *dir)
{
    const char *names[] = {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                           "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"};
    for (int i = 0; i < 4; i++) {
        char p[256];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
}

/* 30x30 and 1000x1000 images into the 784-wide mlp: were copied past the input
 * buffer (heap-buffer-overflow write in fmnist_fill); now refused by name. */
START_TEST(idx_geometry_must_match_model)
{
    char dir[] = "/tmp/ttasim-geom-XXXXXX", args[512], out[4096];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    make_dataset(dir, 4, 30, 30);
    snprintf(args, sizeof args, "train --data-dir %s --max-steps 1 --batch 2", dir);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "train-images-idx3-ubyte.gz: images of 30x30 pixels (900 values), "
                              "but model mlp takes 784 inputs per sample"), "%s", out);
    /* the same images fit an mlp sized to them */
    snprintf(args, sizeof args,
             "train --data-dir %s --max-steps 1 --batch 2 --widths 900,16,10 --target 1", dir);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 1); /* ran; target 1 not reached */
    remove_dataset(dir);

    fmnist d = {.rows = 28, .cols = 28};
    snprintf(d.images_path, sizeof d.images_path, "x.gz");
    model_inputs in = {.x_per_sample = 784, .channels = 1, .height = 28, .width = 28};
    tt_error err = {0};
    ck_assert_int_eq(fmnist_check_input(&d, &in, "cnn", &err), TT_OK);
    in.channels = 3, in.x_per_sample = 3 * 28 * 28;
    ck_assert_int_eq(fmnist_check_input(&d, &in, "cnn", &err), TT_EINPUT);
    ck_assert_msg(strstr(err.msg, "3 channel(s) of 28x28 pixels"), "%s", err.msg);
    d.rows = 14, d.cols = 56; /* same 784 values, wrong shape for an image model */
    in.channels = 1, in.x_per_sample = 784;
    ck_assert_int_eq(fmnist_check_input(&d, &in, "cnn", &err), TT_EINPUT);
}
END_TEST

/* A truncated gzip: the message used gzerror()'s text after gzclose() freed it. */
START_TEST(idx_truncated_gzip_message)
{
    char path[] = "/tmp/ttasim-trunc-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    unsigned char img[16 + 3000];
    idx3_header(img, 3, 40, 25);
    for (int i = 0; i < 3000; i++)
        img[16 + i] = (unsigned char)(i * 131 + (i >> 3)); /* poorly compressible */
    write_file(path, img, sizeof img, 1);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(truncate(path, st.st_size / 2), 0);
    int dims[3];
    unsigned char *data = NULL;
    tt_error err = {0};
    ck_assert_int_eq(idx_read(path, 0x803, dims, &data, &err), TT_EINPUT);
    ck_assert_ptr_null(data);
    ck_assert_msg(strstr(err.msg, "truncated or corrupt gzip data") &&
                      strstr(err.msg, "unexpected end of file)"), "%s", err.msg);
    unlink(path);
}
END_TEST

static int read_header_only(unsigned n, unsigned rows, unsigned cols, tt_error *err)
{
    char path[] = "/tmp/ttasim-hdr-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    unsigned char h[16];
    idx3_header(h, n, rows, cols);
    write_file(path, h, sizeof h, 0); /* uncompressed: gzread passes it through */
    int dims[3];
    unsigned char *data = NULL;
    int rc = idx_read(path, 0x803, dims, &data, err);
    ck_assert_ptr_null(data);
    unlink(path);
    return rc;
}

/* 4096 x 2^26 x 2^26 wrapped size_t to 0 and was read as an empty success. */
START_TEST(idx_dims_wrap_refused)
{
    tt_error err = {0};
    ck_assert_int_eq(read_header_only(4096, 1u << 26, 1u << 26, &err), TT_EINPUT);
    ck_assert_msg(strstr(err.msg, "announce more than 1073741824 data bytes"), "%s", err.msg);
}
END_TEST

/* A 16-byte file announcing 1e10 bytes asked malloc for all of them; one under
 * the cap (1e8 bytes) is read as the data arrives and reports what it holds. */
START_TEST(idx_header_not_trusted_for_memory)
{
    tt_error err = {0};
    ck_assert_int_eq(read_header_only(1, 100000000, 100, &err), TT_EINPUT);
    ck_assert_msg(strstr(err.msg, "announce more than"), "%s", err.msg);
    ck_assert_int_eq(read_header_only(1, 10000, 10000, &err), TT_EINPUT);
    ck_assert_msg(strstr(err.msg, "the header announces 100000000 data bytes, the file has 0"),
                  "%s", err.msg);
}
END_TEST

/* ---- JSON files ---- */

START_TEST(json_empty_directory_bom)
{
    json_t *root = NULL;
    tt_error err = {0};
    char path[64];
    tu_write_temp("", path, sizeof path);
    ck_assert_int_eq(jx_load_file(path, &root, &err), TT_EINPUT);
    ck_assert_msg(strstr(err.msg, ": the file is empty; expected a JSON document"), "%s", err.msg);
    ck_assert_int_eq(jx_load_file("/tmp", &root, &err), TT_EINPUT);
    ck_assert_str_eq(err.msg, "/tmp: cannot read: Is a directory; expected a file");
    tu_write_temp("\xEF\xBB\xBF{\"a\": 1}", path, sizeof path);
    ck_assert_int_eq(jx_load_file(path, &root, &err), TT_OK);
    ck_assert_int_eq(json_integer_value(json_object_get(root, "a")), 1);
    json_decref(root);
    tu_write_temp("\xEF\xBB\xBF{\"a\": 1,}", path, sizeof path);
    ck_assert_int_eq(jx_load_file(path, &root, &err), TT_EINPUT);
    ck_assert_msg(strstr(err.msg, ":1:9: invalid JSON"), "%s", err.msg); /* BOM not counted */
    unlink(path);
}
END_TEST

START_TEST(trace_that_is_empty_names_its_role)
{
    char sc[1024], path[64], out[4096], args[128];
    snprintf(sc, sizeof sc,
             "{\"version\": 1, \"name\": \"t\", \"platform\": {\"name\": \"star\", \"nodes\": 2},\n"
             " \"workload\": {\"trace\": \"/dev/null\", \"global_batch\": 64},\n"
             " \"convergence\": {\"steps\": 10}}\n");
    tu_write_temp(sc, path, sizeof path);
    snprintf(args, sizeof args, "run %s", path);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "workload trace /dev/null: not a regular file (a character device)"), "%s", out);
    unlink(path);
}
END_TEST

/* F01 (round 3): an input is a regular file within a size limit, read
 * before any parser sees it: /dev/zero was read until memory ran out (exit
 * 3), a FIFO blocked the run. */
START_TEST(input_must_be_a_regular_file)
{
    json_t *root = NULL;
    tt_error err = {0};
    ck_assert_int_eq(jx_load_file("/dev/zero", &root, &err), TT_EINPUT);
    ck_assert_str_eq(err.msg, "/dev/zero: not a regular file (a character device); give a file");
    char dir[] = "/tmp/ttasim-fifo-XXXXXX", fifo[64], big[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(fifo, sizeof fifo, "%s/f", dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    ck_assert_int_eq(jx_load_file(fifo, &root, &err), TT_EINPUT); /* no writer: must not block */
    ck_assert_msg(strstr(err.msg, "not a regular file (a FIFO (named pipe))"), "%s", err.msg);
    int dims[3];
    unsigned char *data = NULL;
    ck_assert_int_eq(idx_read("/dev/zero", 0x801, dims, &data, &err), TT_EINPUT); /* gzread of zeros forever */
    ck_assert_msg(strstr(err.msg, "/dev/zero: not a regular file"), "%s", err.msg);
    /* one byte past the limit, as a sparse file: refused by its size, not read */
    snprintf(big, sizeof big, "%s/big.json", dir);
    FILE *f = fopen(big, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(ftruncate(fileno(f), (off_t)INFILE_JSON_MAX_BYTES + 1), 0);
    fclose(f);
    ck_assert_int_eq(jx_load_file(big, &root, &err), TT_EINPUT);
    ck_assert_msg(strstr(err.msg, "file too large (67108865 bytes; an input of this kind may have at most 67108864)"),
                  "%s", err.msg);
    unlink(big);
    unlink(fifo);
    rmdir(dir);
}
END_TEST

/* F10: a subnormal latency passed validation and SimGrid's parser aborted
 * the simulation (exit 3); now 0 or at least a femtosecond. */
START_TEST(subnormal_and_femtosecond)
{
    double x = -1;
    const char *why = NULL;
    ck_assert_int_eq(units_parse_seconds("1e-310", &x, &why), -1);
    ck_assert_str_eq(why, "too small (0, or at least 1e-15 seconds)");
    ck_assert_int_eq(units_parse_seconds("0.5fs", &x, &why), -1);
    ck_assert_int_eq(units_parse_seconds("1e-6ns", &x, &why), 0);
    ck_assert_double_eq(x, 1e-15);
    ck_assert_int_eq(units_parse_seconds("0", &x, &why), 0);
    ck_assert_double_eq(x, 0);
    ck_assert_int_eq(units_parse_bytes("4e-320", &x, &why), -1);
    json_t *doc = json_loads("{\"lat\": 5e-324, \"n\": 1e-310, \"ok\": 1e-15}", 0, NULL);
    tt_error err = {0};
    jx_obj o;
    ck_assert_int_eq(jx_root(&o, "f.json", doc, &err), TT_OK);
    ck_assert_int_eq(jx_seconds(&o, "lat", 1, 0, 1, &x), TT_EINPUT);
    ck_assert_str_eq(err.msg, "f.json: $.lat: expected 0 or a value of at least 1e-15, found 4.94066e-324");
    ck_assert_int_eq(jx_number(&o, "n", 1, 0, 1, &x), TT_EINPUT);
    ck_assert_int_eq(jx_seconds(&o, "ok", 1, 0, 1, &x), TT_OK);
    json_decref(doc);
    char out[4096];
    ck_assert_int_eq(tu_run_ttasim("collective --platform torus2d --nodes 8 --link-bw 50Gi --link-latency 1e-310 "
                                   "--bytes 1M", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "--link-latency: '1e-310' too small"), "%s", out);
}
END_TEST

/* F05: a user's SimGrid XML is read as data: SimGrid loads a path ending in
 * .so as code, and <include>, <config>, <trace> and *_file attributes read or
 * write other files. Only XML with the elements of a platform passes, and
 * its objects are counted for the load estimate (F04). */
static int scan(const char *text, plat_xml_counts *c, tt_error *err)
{
    return plat_user_xml_scan("u.xml", text, strlen(text), c, err);
}

START_TEST(user_xml_is_data)
{
    plat_xml_counts c;
    tt_error err = {0};
    static const char elf[] = "\x7f" "ELF\x02\x01\x01";
    ck_assert_int_eq(plat_user_xml_scan("evil.so", elf, sizeof elf, &c, &err), TT_EINPUT);
    ck_assert_msg(strstr(err.msg, "evil.so:1:1: the file holds NUL bytes"), "%s", err.msg);
    static const char *const refused[][2] = {
        {"garbage", "not an XML file"},
        {"<platform><include file=\"/etc/x.xml\"/></platform>", "element <include> is not accepted"},
        {"<platform><config><prop id=\"tracing\" value=\"yes\"/></config></platform>", "element <config>"},
        {"<platform><zone id=\"z\" routing=\"Full\"><host id=\"h\" speed=\"1f\" state_file=\"/dev/zero\"/></zone>"
         "</platform>", "attribute \"state_file\" names a file"},
        {"<!DOCTYPE platform [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><platform/>", "DOCTYPE with its own"},
        {"<zone id=\"z\"/>", "the root element is <zone>, expected <platform>"},
        {"<platform><zone id=\"z\"></platform>", "</platform> closes zone"},
        {"<platform/><platform/>", "a second root element"},
        {"<platform><actor host=\"h\" function=\"f\"/></platform>", "element <actor>"},
        {"<platform><!-- open", "a comment is never closed"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        ck_assert_msg(scan(refused[i][0], &c, &err) == TT_EINPUT, "accepted: %s", refused[i][0]);
        ck_assert_msg(strstr(err.msg, refused[i][1]) && strstr(err.msg, "u.xml:1:"), "%s: %s", refused[i][0],
                      err.msg);
    }
    /* a Full zone of 3 hosts and a router in a Floyd world with one more zone */
    const char *ok = "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                     "<platform version=\"4.1\"><!-- <include> in a comment is text -->\n"
                     "<zone id=\"w\" routing=\"Floyd\">\n"
                     " <zone id=\"a\" routing=\"Full\"><host id=\"h0\" speed=\"1f\"/><host id=\"h1\" speed=\"1f\"/>\n"
                     "  <host id=\"h2\" speed=\"1f\"/><router id=\"r\"/><link id=\"l\" bandwidth=\"1Bps\" "
                     "latency=\"0s\"/>\n  <route src=\"h0\" dst=\"h1\"><link_ctn id=\"l\"/></route></zone>\n"
                     " <cluster id=\"c\" prefix=\"c-\" suffix=\"\" radical=\"0-9,20-29\" speed=\"1f\" bw=\"1Bps\" "
                     "lat=\"0s\" topology=\"FAT_TREE\" topo_parameters=\"2;4,5;1,2;1,1\"/>\n"
                     " <zoneRoute src=\"a\" dst=\"c\" gw_src=\"r\" gw_dst=\"c-c_router\"><link_ctn id=\"l\"/>"
                     "</zoneRoute>\n</zone></platform>\n";
    ck_assert_msg(scan(ok, &c, &err) == TT_OK, "%s", err.msg);
    ck_assert_double_eq(c.hosts, 3);
    ck_assert_double_eq(c.routers, 1 + 5 + 2);   /* r, the tree's 5 leaves (4 x 5 members) and 2 spines */
    ck_assert_double_eq(c.zones, 3);             /* w, a and the cluster's */
    ck_assert_double_eq(c.cluster_members, 20);
    ck_assert_double_eq(c.tree_pairs, 20 * 7);
    ck_assert_double_eq(c.routes, 2);
    ck_assert_double_eq(c.route_links, 2);
    ck_assert_double_eq(c.full_cells, 16);       /* 4 netpoints in a */
    ck_assert_double_eq(c.floyd_cells, 3 * 2 * 2); /* a and c in w */
    ck_assert_double_eq(c.floyd_steps, 8);
}
END_TEST

/* F04: a user's XML entered the estimate as 4 bytes per file byte and 0 CPU
 * seconds: a Full zone of 16,000 hosts (500 KB) took 2 GB under
 * --max-memory 100M. Its table (V x V cells of 8 bytes) is estimated now. */
START_TEST(user_xml_estimate)
{
    size_t cap = 64 << 10;
    char *xml = malloc(cap);
    size_t n = (size_t)snprintf(xml, cap, "<platform version=\"4.1\"><zone id=\"w\" routing=\"%s\">\n", _i ? "Floyd" : "Full");
    for (int h = 0; h < 1500; h++)
        n += (size_t)snprintf(xml + n, cap - n, "<host id=\"h%d\" speed=\"1f\"/>\n", h);
    snprintf(xml + n, cap - n, "<link id=\"l\" bandwidth=\"1GBps\" latency=\"1us\"/><route src=\"h0\" dst=\"h1\">"
             "<link_ctn id=\"l\"/></route></zone></platform>\n");
    tu_user_platform u;
    tu_user_platform_write(&u, xml, "h0\nh1\n", "v100-sxm2");
    free(xml);
    tt_error err = {0};
    platform *p = platform_load(u.json, NULL, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    platform_load_cost c;
    platform_estimate(p, platform_nodes(p), 0, &c);
    ck_assert_double_eq(c.hosts, 1500);
    /* Full: 1500^2 cells of 8 bytes; Floyd three tables and 1500^3 steps */
    ck_assert_double_ge(c.memory_bytes, (_i ? 3 : 1) * 1500.0 * 1500 * 8);
    if (_i)
        ck_assert_double_ge(c.cpu_s, 1500.0 * 1500 * 1500 * 4e-10);
    char args[256], out[4096];
    snprintf(args, sizeof args, "platform check %s %s", u.json, _i ? "--max-time 1" : "--max-memory 10M");
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, _i ? "more than --max-time 1" : "more than the 10MB this run's simulations may use"), "%s", out);
    platform_free(p);
    tu_user_platform_remove(&u);
}
END_TEST

/* F19: rank_hosts was read with fgets into 512 bytes: a longer line became
 * two ranks. Lines have no length limit; a host name is refused past 255. */
START_TEST(rank_hosts_lines)
{
    tt_error err = {0};
    char name[300], text[700];
    memset(name, 'x', sizeof name);
    name[sizeof name - 1] = '\0';
    snprintf(text, sizeof text, "# ranks\nh0\r\n\n%.255s\n", name);
    platform *p = platform_load("star", NULL, &err);
    long ranks = 0;
    ck_assert_int_eq(plat_parse_rank_hosts(p, "r.hosts", text, strlen(text), &ranks, &err), TT_OK);
    ck_assert_int_eq(ranks, 2);
    snprintf(text, sizeof text, "h0\n%s\n", name);
    ck_assert_int_eq(plat_parse_rank_hosts(p, "r.hosts", text, strlen(text), &ranks, &err), TT_EINPUT);
    ck_assert_str_eq(err.msg, "r.hosts:2: a host name of 299 bytes; at most 255");
    ck_assert_int_eq(plat_parse_rank_hosts(p, "r.hosts", "a b\n", 4, &ranks, &err), TT_EINPUT);
    ck_assert_str_eq(err.msg, "r.hosts:1: expected one SimGrid host name per line, found \"a b\"");
    platform_free(p);
}
END_TEST

/* F11: an automatic micro-batch was the per-rank batch cast to int
 * (2^31 on one rank gave -2^31, exit 0). */
START_TEST(samples_per_rank_bounded)
{
    char sc[1024], path[64], out[4096], args[128];
    snprintf(sc, sizeof sc, "{\"version\": 1, \"name\": \"gb\", \"platform\": {\"name\": \"star\", \"nodes\": 1},\n"
             " \"workload\": {\"model\": \"mlp\", \"global_batch\": %s}, \"convergence\": {\"steps\": 10}}\n",
             _i ? "4294967296" : "2147483648");
    tu_write_temp(sc, path, sizeof path);
    snprintf(args, sizeof args, "run %s", path);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "$.workload.global_batch: ") && strstr(out, "samples per rank") &&
                  strstr(out, path), "%s", out);
    unlink(path);
}
END_TEST

/* The same node limit in every entry point (a scenario took 100,000). */
START_TEST(node_limit_everywhere)
{
    char sc[512], path[64], out[4096], args[160];
    snprintf(sc, sizeof sc, "{\"version\": 1, \"name\": \"n\", \"platform\": {\"name\": \"star\", \"nodes\": 65537},"
             " \"workload\": {\"model\": \"mlp\"}, \"convergence\": {\"steps\": 10}}\n");
    tu_write_temp(sc, path, sizeof path);
    snprintf(args, sizeof args, "run %s", path);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "$.platform.nodes: expected a value in [1, 65536], found 65537"), "%s", out);
    unlink(path);
    ck_assert_int_eq(tu_run_ttasim("platform show star --nodes 65537", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "--nodes: expected a whole number from 1 to 65536, got '65537'"), "%s", out);
    ck_assert_int_eq(tu_run_ttasim("platform show star --nodes 4294967297", out, sizeof out), 2);
    ck_assert_int_eq(tu_run_ttasim("collective --platform star --nodes 65537 --op allreduce --algo ring --bytes 1M",
                                   out, sizeof out), 2);
    ck_assert_msg(strstr(out, "--nodes: expected a whole number from 1 to 65536, got '65537'"), "%s", out);
}
END_TEST

/* ---- platform files ---- */

#define NODE_JSON                                                                                  \
    " \"node\": {\"components\": [{\"name\": \"gpu\", \"device\": \"v100-sxm2\", \"count\": 2},"   \
    "                          {\"name\": \"nic\", \"device\": \"ib-edr\"}],"                      \
    "   \"links\": [{\"a\": \"gpu0\", \"b\": \"gpu1\", \"bandwidth_Bps\": \"25G\", \"latency_s\": 0}," \
    "             {\"a\": \"gpu\", \"b\": \"nic0\", \"bandwidth_Bps\": \"16G\", \"latency_s\": 0}%s]},\n"

static int load_platform(const char *extra_link, const char *fabric, char *msg, size_t n)
{
    char text[4096], node[1024], path[64];
    snprintf(node, sizeof node, NODE_JSON, extra_link);
    snprintf(text, sizeof text,
             "{\"format\": \"ttasim-platform\", \"version\": 1, \"name\": \"m\", \"sources\": [],"
             " \"assumptions\": [],\n%s \"fabric\": %s}\n", node, fabric);
    tu_write_temp(text, path, sizeof path);
    tt_error err = {0};
    platform *p = platform_load(path, NULL, &err);
    unlink(path);
    snprintf(msg, n, "%s", p ? "" : err.msg);
    ck_assert_msg(p || strstr(err.msg, path), "no file in: %s", err.msg);
    if (p)
        platform_free(p);
    return p ? TT_OK : err.code;
}

static const char *FATTREE =
    "{\"topology\": \"fattree\", \"nodes\": 2, \"attach\": \"nic\","
    " \"link\": {\"bandwidth_Bps\": \"12.5G\", \"latency_s\": \"1us\"}}";

START_TEST(platform_self_loop_names_path)
{
    char msg[TT_ERROR_MSG_BYTES];
    ck_assert_int_eq(load_platform("", FATTREE, msg, sizeof msg), TT_OK);
    ck_assert_int_eq(load_platform(", {\"a\": \"gpu1\", \"b\": \"gpu1\", \"bandwidth_Bps\": 1e9, "
                                   "\"latency_s\": 0}", FATTREE, msg, sizeof msg), TT_EINPUT);
    ck_assert_msg(strstr(msg, ": $.node.links[2]: a link from \"gpu1\" to itself"), "%s", msg);
}
END_TEST

START_TEST(platform_torus_dims_must_match)
{
    char msg[TT_ERROR_MSG_BYTES];
    const char *torus = "{\"topology\": \"torus2d\", \"nodes\": 8,"
                        " \"link\": {\"bandwidth_Bps\": \"1G\", \"latency_s\": 0}, \"dims\": [%d, %d]}";
    char fab[256];
    snprintf(fab, sizeof fab, torus, 4, 4); /* 8 nodes x 2 chips */
    ck_assert_int_eq(load_platform("", fab, msg, sizeof msg), TT_OK);
    snprintf(fab, sizeof fab, torus, 4, 8); /* was silently reshaped to 4 x 4 */
    ck_assert_int_eq(load_platform("", fab, msg, sizeof msg), TT_EINPUT);
    ck_assert_msg(strstr(msg, ": $.fabric.dims: the torus holds 32 chips, but 8 nodes of 2 "
                              "accelerators are 16"), "%s", msg);
    /* --nodes takes a slice of the pod: reshaped, as documented */
    tt_error err = {0};
    platform_options opt = {.nodes = 2};
    platform *p = platform_load("tpu-v3-pod", &opt, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    platform_free(p);
}
END_TEST

START_TEST(platform_oversubscription_checked_at_any_size)
{
    char msg[TT_ERROR_MSG_BYTES], fab[256];
    /* 2 nodes fit one leaf: the invalid 3 (does not divide 16) passed unchecked */
    snprintf(fab, sizeof fab,
             "{\"topology\": \"fattree\", \"nodes\": 2, \"attach\": \"nic\", \"oversubscription\": 3,"
             " \"link\": {\"bandwidth_Bps\": \"12.5G\", \"latency_s\": \"1us\"}}");
    ck_assert_int_eq(load_platform("", fab, msg, sizeof msg), TT_EINPUT);
    ck_assert_msg(strstr(msg, "$.fabric.oversubscription: 3 must divide the 16 nodes per leaf"),
                  "%s", msg);
}
END_TEST

/* ---- profiles ---- */

/* Points given in descending batch (the worst case of the old sorted insert,
 * quadratic) come back sorted and found. How fast is not a unit test's to
 * time: a timeout here failed on loaded machines. */
START_TEST(profile_load_sorts_descending)
{
    enum { N = 20000 };
    char path[] = "/tmp/ttasim-prof-XXXXXX.json";
    int fd = mkstemps(path, 5);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "{\"format\": \"ttasim-convergence-profile\", \"version\": 1, \"workload\": \"w\","
               " \"optimizer\": \"o\", \"target\": {\"metric\": \"acc\", \"value\": 0.9},"
               " \"points\": [");
    for (int i = 0; i < N; i++) /* descending: the worst case of the old sorted insert */
        fprintf(f, "%s{\"batch\": %d, \"steps\": %d, \"epochs\": 1, \"examples\": 1,"
                   " \"reached\": true}", i ? "," : "", N - i, 1000 + 100000 / (N - i));
    fprintf(f, "]}\n");
    fclose(f);
    conv_profile p;
    tt_error err = {0};
    ck_assert_msg(profile_load(path, &p, &err) == TT_OK, "%s", err.msg);
    ck_assert_int_eq(p.npoints, N);
    for (int i = 1; i < N; i++)
        ck_assert_int_lt(p.points[i - 1].batch, p.points[i].batch);
    ck_assert_int_eq(profile_find(&p, 7)->steps, 1000 + 100000 / 7);
    profile_free(&p);
    unlink(path);
}
END_TEST

START_TEST(profile_duplicate_batch_named)
{
    char path[64];
    tu_write_temp("{\"format\": \"ttasim-convergence-profile\", \"version\": 1, \"workload\": \"w\","
                  " \"optimizer\": \"o\", \"target\": {\"metric\": \"acc\", \"value\": 0.9},"
                  " \"points\": [{\"batch\": 64, \"steps\": 10, \"epochs\": 1, \"examples\": 1,"
                  " \"reached\": true}, {\"batch\": 32, \"steps\": 20, \"epochs\": 1, \"examples\": 1,"
                  " \"reached\": true}, {\"batch\": 64, \"steps\": 11, \"epochs\": 1, \"examples\": 1,"
                  " \"reached\": true}]}", path, sizeof path);
    conv_profile p;
    tt_error err = {0};
    ck_assert_int_eq(profile_load(path, &p, &err), TT_EINPUT);
    ck_assert_msg(strstr(err.msg, ": $.points[2]: batch 64 appears twice"), "%s", err.msg);
    unlink(path);
}
END_TEST

#ifdef TT_SANITIZERS
/* ASan's default exit status 1 read as "an expectation failed": now 86. */
START_TEST(sanitizer_report_exit_status)
{
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(STDERR_FILENO); /* the report is expected */
        volatile char *p = malloc(8);
        p[8] = 1; /* heap-buffer-overflow */
        _exit(0);
    }
    int st = 0;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(WIFEXITED(st));
    ck_assert_int_eq(WEXITSTATUS(st), TT_SANITIZER_EXIT);
}
END_TEST
#endif

int main(void)
{
    Suite *s = suite_create("inputs");
    TCase *t = tcase_create("inputs");
    tcase_set_timeout(t, 30);
    tcase_add_test(t, units_refuse_overflow);
    tcase_add_test(t, cli_bytes_inf_is_usage_error);
    tcase_add_test(t, idx_geometry_must_match_model);
    tcase_add_test(t, idx_truncated_gzip_message);
    tcase_add_test(t, idx_dims_wrap_refused);
    tcase_add_test(t, idx_header_not_trusted_for_memory);
    tcase_add_test(t, json_empty_directory_bom);
    tcase_add_test(t, trace_that_is_empty_names_its_role);
    tcase_add_test(t, input_must_be_a_regular_file);
    tcase_add_test(t, subnormal_and_femtosecond);
    tcase_add_test(t, user_xml_is_data);
    tcase_add_loop_test(t, user_xml_estimate, 0, 2);
    tcase_add_test(t, rank_hosts_lines);
    tcase_add_loop_test(t, samples_per_rank_bounded, 0, 2);
    tcase_add_test(t, node_limit_everywhere);
    tcase_add_test(t, platform_self_loop_names_path);
    tcase_add_test(t, platform_torus_dims_must_match);
    tcase_add_test(t, platform_oversubscription_checked_at_any_size);
    tcase_add_test(t, profile_load_sorts_descending);
    tcase_add_test(t, profile_duplicate_batch_named);
#ifdef TT_SANITIZERS
    tcase_add_test(t, sanitizer_report_exit_status);
#endif
    suite_add_tcase(s, t);
    return tu_run_suite(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
