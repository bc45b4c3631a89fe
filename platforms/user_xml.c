/* A user's own SimGrid platform XML, read as data before SimGrid sees it.
 * SimGrid loads any path ending in .so as a shared library, and its XML can
 * include other files, read profiles from files and set options (tracing
 * writes files): a user's file must be XML with <platform> at its root and
 * only the elements that describe a platform. Its objects are counted for
 * the load estimate, and SimGrid gets a checked copy (plat_user_xml_copy). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/infile.h"
#include "platforms/platform_impl.h"

#define XML_MAX_DEPTH 64
#define XML_NAME_BYTES 32

/* The elements of a platform (SimGrid 3.32's DTD); the others read or
 * write files (include, trace, config), run code (actor, process) or are
 * gone from SimGrid (storage, mount, random). */
static const char *const ALLOWED[] = {"platform", "zone", "AS", "host", "router", "link", "link_ctn", "route",
                                      "zoneRoute", "ASroute", "bypassRoute", "bypassZoneRoute", "bypassASroute",
                                      "cluster", "cabinet", "peer", "backbone", "host_link", "disk", "prop", NULL};

enum { Z_OTHER, Z_FULL, Z_FLOYD, Z_DIJKSTRA };

typedef struct scan {
    const char *file, *text;
    size_t len, pos;
    long line;
    const char *line_start;
    tt_error *err;
    plat_xml_counts *c;
    int depth;
    char stack[XML_MAX_DEPTH][XML_NAME_BYTES];
    int zone_kind[XML_MAX_DEPTH];   /* for a zone on the stack: its routing */
    double netpoints[XML_MAX_DEPTH]; /* hosts, routers and child zones directly in it */
    int in_route;                   /* inside a route element: its link_ctn are route links */
} scan;

static int fail(scan *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(scan *s, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return tt_error_set(s->err, TT_EINPUT, "%s:%ld:%ld: %s; a user platform is SimGrid platform XML (simgrid.dtd, "
                        "version 4.1) with only the elements of a platform", s->file, s->line,
                        (long)(s->text + s->pos - s->line_start) + 1, what);
}

static void advance(scan *s, size_t n)
{
    for (size_t i = 0; i < n && s->pos < s->len; i++, s->pos++)
        if (s->text[s->pos] == '\n') {
            s->line++;
            s->line_start = s->text + s->pos + 1;
        }
}

static int at(const scan *s, const char *word)
{
    size_t n = strlen(word);
    return s->len - s->pos >= n && memcmp(s->text + s->pos, word, n) == 0;
}

/* Skips to just past `end`; fails naming what was left open. */
static int skip_past(scan *s, const char *end, const char *what)
{
    const char *hit = NULL;
    size_t n = strlen(end);
    for (size_t i = s->pos; i + n <= s->len && !hit; i++)
        if (memcmp(s->text + i, end, n) == 0)
            hit = s->text + i;
    if (!hit)
        return fail(s, "%s is never closed (no \"%s\")", what, end);
    advance(s, (size_t)(hit - (s->text + s->pos)) + n);
    return TT_OK;
}

static int is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

static int is_name(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
           ch == '-' || ch == '.' || ch == ':';
}

static void skip_space(scan *s)
{
    while (s->pos < s->len && is_space(s->text[s->pos]))
        advance(s, 1);
}

static int read_name(scan *s, char *out, size_t cap)
{
    size_t n = 0;
    while (s->pos < s->len && is_name(s->text[s->pos])) {
        if (n + 1 < cap)
            out[n++] = s->text[s->pos];
        advance(s, 1);
    }
    out[n] = '\0';
    return n > 0 ? TT_OK : fail(s, "expected a name");
}

/* "0-99,200-299": how many members a radical names (what SimGrid creates). */
static double radical_count(const char *v, size_t n)
{
    double total = 0;
    const char *p = v, *end = v + n;
    while (p < end) {
        char *e;
        double a = strtod(p, &e), b = a;
        if (e == p)
            break;
        p = e;
        if (p < end && *p == '-') {
            b = strtod(p + 1, &e);
            p = e;
        }
        if (a >= 0 && b >= a && b < 1e12) /* SimGrid refuses the others */
            total += b - a + 1;
        while (p < end && *p != ',')
            p++;
        if (p < end)
            p++;
    }
    return total;
}

/* The attributes we look at: routing (zones), radical (clusters, cabinets). */
typedef struct attrs {
    char routing[24], topology[24];
    double members, switches; /* a FAT_TREE cluster's, from topo_parameters */
} attrs;

/* SimGrid's FAT_TREE topo_parameters "L;d1,..,dL;u1,..,uL;p1,..,pL": the
 * switches at level l are d(l+1)...dL x u1...ul (as platform_xml.c counts). */
static double tree_switches(const char *v, size_t n)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s", (int)(n < 255 ? n : 255), v);
    char *save = NULL, *levels = strtok_r(buf, ";", &save), *down = strtok_r(NULL, ";", &save),
         *up = strtok_r(NULL, ";", &save);
    long L = levels ? strtol(levels, NULL, 10) : 0;
    if (L < 1 || L > 16 || !down || !up)
        return 0;
    double d[16] = {0}, u[16] = {0}, total = 0;
    for (long i = 0; i < L; i++) {
        d[i] = down ? strtod(down, &down) : 0;
        u[i] = up ? strtod(up, &up) : 0;
        down += down && *down == ',';
        up += up && *up == ',';
    }
    for (long l = 1; l <= L; l++) {
        double sw = 1;
        for (long i = l; i < L; i++)
            sw *= d[i];
        for (long i = 0; i < l; i++)
            sw *= u[i];
        total += sw > 0 && sw < 1e12 ? sw : 0;
    }
    return total;
}

static int read_attrs(scan *s, attrs *a, int *self_closing)
{
    for (;;) {
        skip_space(s);
        if (s->pos >= s->len)
            return fail(s, "unterminated tag");
        if (at(s, "/>")) {
            advance(s, 2);
            *self_closing = 1;
            return TT_OK;
        }
        if (at(s, ">")) {
            advance(s, 1);
            *self_closing = 0;
            return TT_OK;
        }
        char name[XML_NAME_BYTES];
        if (read_name(s, name, sizeof name))
            return s->err->code;
        skip_space(s);
        if (!at(s, "="))
            return fail(s, "attribute \"%s\" has no value", name);
        advance(s, 1);
        skip_space(s);
        char q = s->pos < s->len ? s->text[s->pos] : 0;
        if (q != '"' && q != '\'')
            return fail(s, "attribute \"%s\": expected a quoted value", name);
        advance(s, 1);
        const char *v = s->text + s->pos;
        const char *close = memchr(v, q, s->len - s->pos);
        if (!close)
            return fail(s, "attribute \"%s\": its value is never closed", name);
        size_t vn = (size_t)(close - v);
        size_t nl = strlen(name);
        if (nl > 5 && strcmp(name + nl - 5, "_file") == 0)
            return fail(s, "attribute \"%s\" names a file SimGrid would read; give the values in the XML", name);
        if (strcmp(name, "routing") == 0)
            snprintf(a->routing, sizeof a->routing, "%.*s", (int)(vn < 23 ? vn : 23), v);
        else if (strcmp(name, "topology") == 0)
            snprintf(a->topology, sizeof a->topology, "%.*s", (int)(vn < 23 ? vn : 23), v);
        else if (strcmp(name, "topo_parameters") == 0)
            a->switches = tree_switches(v, vn);
        else if (strcmp(name, "radical") == 0)
            a->members = radical_count(v, vn);
        advance(s, vn + 1);
    }
}

static int routing_kind(const char *r)
{
    return strcmp(r, "Full") == 0 ? Z_FULL : strcmp(r, "Floyd") == 0 ? Z_FLOYD
         : strncmp(r, "Dijkstra", 8) == 0 ? Z_DIJKSTRA : Z_OTHER;
}

/* A zone closes: its route tables, by its routing and its netpoints. */
static void close_zone(scan *s, int d)
{
    double v = s->netpoints[d];
    if (s->zone_kind[d] == Z_FULL)
        s->c->full_cells += v * v;
    else if (s->zone_kind[d] == Z_FLOYD) {
        s->c->floyd_cells += 3 * v * v;
        s->c->floyd_steps += v * v * v;
    }
}

/* The zone enclosing depth d (the innermost zone at or above it), or -1. */
static int zone_of(const scan *s, int d)
{
    while (d >= 0 && strcmp(s->stack[d], "zone") != 0 && strcmp(s->stack[d], "AS") != 0)
        d--;
    return d;
}

static void count_netpoint(scan *s, double n)
{
    int z = zone_of(s, s->depth - 1);
    if (z >= 0)
        s->netpoints[z] += n;
}

static int open_element(scan *s, const char *name, const attrs *a)
{
    int known = 0;
    for (int i = 0; ALLOWED[i] && !known; i++)
        known = strcmp(name, ALLOWED[i]) == 0;
    if (!known)
        return fail(s, "element <%s> is not accepted in a user platform (it reads or writes other files, runs code, "
                    "or is not in SimGrid 3.32's platform DTD)", name);
    if (s->depth == 0 && strcmp(name, "platform") != 0)
        return fail(s, "the root element is <%s>, expected <platform>", name);
    if (s->depth > 0 && strcmp(name, "platform") == 0)
        return fail(s, "<platform> inside <platform>");
    plat_xml_counts *c = s->c;
    if (!strcmp(name, "zone") || !strcmp(name, "AS")) {
        c->zones++;
        count_netpoint(s, 1);
    } else if (!strcmp(name, "host") || !strcmp(name, "router")) {
        *(name[0] == 'h' ? &c->hosts : &c->routers) += 1;
        count_netpoint(s, 1);
    } else if (!strcmp(name, "peer")) {
        c->hosts++;
        c->routers++;
        c->links += 2;
        count_netpoint(s, 2);
    } else if (!strcmp(name, "cluster") || !strcmp(name, "cabinet")) {
        c->cluster_members += a->members;
        if (!strcmp(name, "cluster") && !strcmp(a->topology, "FAT_TREE")) {
            c->routers += a->switches;
            c->tree_pairs += a->switches * a->members;
        }
        c->zones += name[1] == 'l';
        count_netpoint(s, name[1] == 'l' ? 1 : a->members);
    } else if (!strcmp(name, "link") || !strcmp(name, "backbone")) {
        c->links++;
    } else if (!strcmp(name, "link_ctn")) {
        c->route_links += s->in_route > 0;
    } else if (strstr(name, "oute")) { /* route, zoneRoute, ASroute and the bypass ones */
        int z = zone_of(s, s->depth - 1);
        if (!strncmp(name, "bypass", 6))
            c->bypass_routes++;
        else if (z >= 0 && s->zone_kind[z] == Z_DIJKSTRA)
            c->edges++;
        else
            c->routes++;
    }
    return TT_OK;
}

/* The innermost element closes: a zone's tables are counted. */
static void pop(scan *s)
{
    int d = --s->depth;
    s->in_route -= strstr(s->stack[d], "oute") != NULL;
    if (!strcmp(s->stack[d], "zone") || !strcmp(s->stack[d], "AS"))
        close_zone(s, d);
}

static int element(scan *s)
{
    advance(s, 1); /* '<' */
    char name[XML_NAME_BYTES];
    if (read_name(s, name, sizeof name))
        return s->err->code;
    attrs a = {"", "", 0, 0};
    int self_closing = 0;
    if (read_attrs(s, &a, &self_closing))
        return s->err->code;
    if (open_element(s, name, &a))
        return s->err->code;
    if (s->depth == XML_MAX_DEPTH)
        return fail(s, "elements nested more than 64 deep");
    int d = s->depth++;
    snprintf(s->stack[d], sizeof s->stack[d], "%s", name);
    s->zone_kind[d] = routing_kind(a.routing);
    s->netpoints[d] = 0;
    s->in_route += strstr(name, "oute") != NULL;
    if (self_closing)
        pop(s);
    return TT_OK;
}

static int end_element(scan *s)
{
    advance(s, 2); /* "</" */
    char name[XML_NAME_BYTES];
    if (read_name(s, name, sizeof name))
        return s->err->code;
    skip_space(s);
    if (!at(s, ">"))
        return fail(s, "</%s: expected \">\"", name);
    advance(s, 1);
    if (s->depth == 0 || strcmp(s->stack[s->depth - 1], name) != 0)
        return fail(s, "</%s> closes %s", name, s->depth ? s->stack[s->depth - 1] : "nothing");
    pop(s);
    return TT_OK;
}

int plat_user_xml_scan(const char *file, const char *text, size_t len, plat_xml_counts *out, tt_error *err)
{
    memset(out, 0, sizeof *out);
    scan s = {.file = file, .text = text, .len = len, .line = 1, .line_start = text, .err = err, .c = out};
    if (memchr(text, '\0', len))
        return fail(&s, "the file holds NUL bytes: not an XML text file");
    if (at(&s, "\xEF\xBB\xBF"))
        advance(&s, 3);
    skip_space(&s);
    if (!at(&s, "<"))
        return fail(&s, "not an XML file (it does not start with \"<\")");
    int seen_root = 0;
    while (s.pos < s.len) {
        const char *lt = memchr(s.text + s.pos, '<', s.len - s.pos);
        if (!lt) {
            advance(&s, s.len - s.pos);
            break;
        }
        if (s.depth == 0 && seen_root) { /* only comments and space after the root */
            for (const char *p = s.text + s.pos; p < lt; p++)
                if (!is_space(*p))
                    return fail(&s, "text after the root element");
        }
        advance(&s, (size_t)(lt - (s.text + s.pos)));
        int rc;
        if (at(&s, "<!--"))
            rc = skip_past(&s, "-->", "a comment");
        else if (at(&s, "<![CDATA["))
            rc = s.depth ? skip_past(&s, "]]>", "a CDATA section") : fail(&s, "CDATA outside the root");
        else if (at(&s, "<?"))
            rc = skip_past(&s, "?>", "a processing instruction");
        else if (at(&s, "<!DOCTYPE")) {
            const char *gt = memchr(s.text + s.pos, '>', s.len - s.pos);
            const char *br = memchr(s.text + s.pos, '[', s.len - s.pos);
            rc = br && (!gt || br < gt) ? fail(&s, "a DOCTYPE with its own declarations (entities) is not accepted")
                                        : skip_past(&s, ">", "the DOCTYPE");
        } else if (at(&s, "<!"))
            rc = fail(&s, "unexpected markup \"<!\"");
        else if (at(&s, "</"))
            rc = end_element(&s);
        else if (s.depth == 0 && seen_root)
            rc = fail(&s, "a second root element");
        else {
            rc = element(&s);
            seen_root = 1;
        }
        if (rc)
            return rc;
    }
    if (!seen_root)
        return fail(&s, "no <platform> element");
    if (s.depth > 0)
        return fail(&s, "<%s> is never closed", s.stack[s.depth - 1]);
    return TT_OK;
}

/* The last file scanned, by identity: a point loads its platform several
 * times, a big XML is read once. */
static struct {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime, ctime;
    plat_xml_counts counts;
    uint64_t fnv;
} last;

int plat_user_xml_load(platform *p, const char *path, tt_error *err)
{
    struct stat st;
    if (stat(path, &st) == 0 && st.st_dev == last.dev && st.st_ino == last.ino && st.st_size == last.size &&
        st.st_mtim.tv_sec == last.mtime.tv_sec && st.st_mtim.tv_nsec == last.mtime.tv_nsec &&
        st.st_ctim.tv_sec == last.ctime.tv_sec && st.st_ctim.tv_nsec == last.ctime.tv_nsec && last.fnv) {
        p->user_counts = last.counts;
        p->user_fnv = last.fnv;
        p->user_bytes = (double)st.st_size;
        return TT_OK;
    }
    char *text;
    size_t len;
    int rc = infile_read(path, PLAT_USER_XML_MAX_BYTES, &text, &len, err);
    if (rc)
        return rc;
    rc = plat_user_xml_scan(path, text, len, &p->user_counts, err);
    p->user_fnv = infile_fnv(INFILE_FNV_START, text, len);
    p->user_bytes = (double)len;
    free(text);
    if (rc == TT_OK && stat(path, &st) == 0 && (size_t)st.st_size == len) {
        last.dev = st.st_dev;
        last.ino = st.st_ino;
        last.size = st.st_size;
        last.mtime = st.st_mtim;
        last.ctime = st.st_ctim;
        last.counts = p->user_counts;
        last.fnv = p->user_fnv;
    }
    return rc;
}

int plat_user_xml_copy(const platform *p, FILE *out, tt_error *err)
{
    int fd = infile_open(p->user_xml, PLAT_USER_XML_MAX_BYTES, err);
    if (fd < 0)
        return err->code;
    char buf[65536];
    uint64_t h = INFILE_FNV_START;
    ssize_t n;
    int rc = TT_OK;
    while ((n = read(fd, buf, sizeof buf)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = tt_error_set(err, TT_EINPUT, "%s: cannot read: %s", p->user_xml, strerror(errno));
            break;
        }
        h = infile_fnv(h, buf, (size_t)n);
        if (fwrite(buf, 1, (size_t)n, out) != (size_t)n) {
            rc = tt_error_set(err, TT_EINPUT, "cannot copy %s: %s", p->user_xml, strerror(errno));
            break;
        }
    }
    close(fd);
    if (rc == TT_OK && h != p->user_fnv)
        rc = tt_error_set(err, TT_EINPUT, "%s: the file changed since ttasim checked it; run again on a file "
                          "that does not change", p->user_xml);
    return rc;
}
