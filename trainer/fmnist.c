/* fmnist.c: the IDX reader (big-endian header: magic, then one 32-bit size per
 * dimension, then unsigned bytes) over zlib's gzread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "common/infile.h"
#include "trainer/fmnist.h"

/* Fashion-MNIST's largest file holds 47 MB; 1 GiB leaves room for bigger
 * image sets while a wrapped or absurd header is refused. */
#define IDX_MAX_BYTES ((size_t)1 << 30)
#define IDX_MAX_FILE_BYTES (IDX_MAX_BYTES + 16) /* a plain IDX file: the data and its header */

static unsigned be32(const unsigned char *b)
{
    return (unsigned)b[0] << 24 | (unsigned)b[1] << 16 | (unsigned)b[2] << 8 | b[3];
}

int idx_read(const char *path, unsigned expect_magic, int *dims, unsigned char **data,
             tt_error *err)
{
    *data = NULL;
    /* a regular file of a sane size (not a FIFO or /dev/zero), read through its descriptor */
    int fd = infile_open(path, IDX_MAX_FILE_BYTES, err);
    if (fd < 0) {
        char why[TT_ERROR_MSG_BYTES];
        snprintf(why, sizeof why, "%s", err->msg);
        return tt_error_set(err, TT_EINPUT,
                            "%s; Fashion-MNIST comes with the Debian package "
                            "dataset-fashion-mnist (apt-get install dataset-fashion-mnist), or "
                            "pass --data-dir DIR holding the four *-ubyte.gz files", why);
    }
    gzFile gz = gzdopen(fd, "rb");
    if (!gz) {
        close(fd);
        return tt_error_set(err, TT_EINPUT, "%s: cannot open as gzip", path);
    }
    unsigned char hdr[16];
    int ndim = (expect_magic & 0xff) == 3 ? 3 : 1, hbytes = 4 + 4 * ndim;
    int got = gzread(gz, hdr, 4);
    unsigned magic = got == 4 ? be32(hdr) : 0;
    if (got == 4 && magic != expect_magic) {
        gzclose(gz);
        return tt_error_set(err, TT_EINPUT,
                            "%s: IDX magic number 0x%08x, expected 0x%08x (%s); is this the "
                            "right file?",
                            path, magic, expect_magic, ndim == 3 ? "images" : "labels");
    }
    if (got == 4)
        got += gzread(gz, hdr + 4, (unsigned)hbytes - 4);
    if (got != hbytes) {
        gzclose(gz);
        return tt_error_set(err, TT_EINPUT,
                            "%s: truncated IDX header (%d of %d bytes); the file is damaged, "
                            "reinstall dataset-fashion-mnist",
                            path, got < 0 ? 0 : got, hbytes);
    }
    size_t total = 1;
    for (int i = 0; i < ndim; i++) {
        unsigned d = be32(hdr + 4 + 4 * i);
        if (d == 0 || d > 100000000u) {
            gzclose(gz);
            return tt_error_set(err, TT_EINPUT, "%s: dimension %d is %u, expected 1..1e8", path,
                                i, d);
        }
        dims[i] = (int)d;
        if (total > IDX_MAX_BYTES / d) {
            gzclose(gz);
            return tt_error_set(err, TT_EINPUT,
                                "%s: the header's dimensions announce more than %llu data bytes "
                                "(the most ttasim reads); the file is damaged or not a dataset",
                                path, (unsigned long long)IDX_MAX_BYTES);
        }
        total *= d;
    }
    /* Grow with what the stream delivers, not what the header claims: a
     * 16-byte file must not cost gigabytes. */
    size_t cap = 0, have = 0;
    unsigned char *buf = NULL;
    for (;;) {
        if (have == cap) {
            size_t grown = cap ? 2 * cap : 1u << 16;
            if (grown > total + 1)
                grown = total + 1; /* one spare byte detects trailing data */
            if (grown == cap)
                break;
            unsigned char *nb = realloc(buf, grown);
            if (!nb) {
                free(buf);
                gzclose(gz);
                return tt_error_set(err, TT_EINTERNAL, "%s: out of memory for %zu bytes", path,
                                    grown);
            }
            buf = nb;
            cap = grown;
        }
        size_t want = cap - have;
        int n = gzread(gz, buf + have, want > (1u << 30) ? (1u << 30) : (unsigned)want);
        if (n <= 0)
            break;
        have += (size_t)n;
    }
    int zerr = 0;
    char zmsg[256]; /* gzerror's text lives in the gzFile: copy it before gzclose */
    snprintf(zmsg, sizeof zmsg, "%s", gzerror(gz, &zerr));
    gzclose(gz);
    if (zerr != Z_OK && zerr != Z_STREAM_END && have < total) {
        free(buf);
        return tt_error_set(err, TT_EINPUT, "%s: truncated or corrupt gzip data after %zu of %zu "
                                            "bytes (%s)", path, have, total, zmsg);
    }
    if (have != total) {
        free(buf);
        return tt_error_set(err, TT_EINPUT, "%s: the header announces %zu data bytes, the file "
                                            "has %s%zu",
                            path, total, have > total ? "more than " : "", have > total ? total : have);
    }
    *data = buf;
    return TT_OK;
}

int fmnist_load(const char *dir, const char *split, fmnist *out, tt_error *err)
{
    memset(out, 0, sizeof *out);
    if (!dir)
        dir = FMNIST_DEFAULT_DIR;
    char ipath[4096], lpath[4096];
    snprintf(ipath, sizeof ipath, "%s/%s-images-idx3-ubyte.gz", dir, split);
    snprintf(lpath, sizeof lpath, "%s/%s-labels-idx1-ubyte.gz", dir, split);
    int idims[3], ldims[1];
    unsigned char *pix, *lab;
    int rc = idx_read(ipath, 0x803, idims, &pix, err);
    if (rc)
        return rc;
    rc = idx_read(lpath, 0x801, ldims, &lab, err);
    if (rc) {
        free(pix);
        return rc;
    }
    if (idims[0] != ldims[0]) {
        free(pix);
        free(lab);
        return tt_error_set(err, TT_EINPUT, "%s has %d images but %s has %d labels", ipath,
                            idims[0], lpath, ldims[0]);
    }
    size_t npix = (size_t)idims[0] * idims[1] * idims[2];
    out->images = malloc(npix * sizeof(float));
    out->labels = malloc((size_t)idims[0] * sizeof(int));
    if (!out->images || !out->labels) {
        free(pix);
        free(lab);
        fmnist_free(out);
        return tt_error_set(err, TT_EINTERNAL, "out of memory loading %s", ipath);
    }
    for (size_t i = 0; i < npix; i++)
        out->images[i] = (float)pix[i] / 255.0f;
    for (int i = 0; i < idims[0]; i++) {
        if (lab[i] > 9) {
            rc = tt_error_set(err, TT_EINPUT, "%s: label %d of sample %d, expected 0..9", lpath,
                              lab[i], i);
            free(pix);
            free(lab);
            fmnist_free(out);
            return rc;
        }
        out->labels[i] = lab[i];
    }
    out->n = idims[0];
    out->rows = idims[1];
    out->cols = idims[2];
    snprintf(out->images_path, sizeof out->images_path, "%s", ipath);
    free(pix);
    free(lab);
    return TT_OK;
}

void fmnist_free(fmnist *d)
{
    free(d->images);
    free(d->labels);
    memset(d, 0, sizeof *d);
}

int fmnist_check_input(const fmnist *d, const model_inputs *in, const char *model_name,
                       tt_error *err)
{
    long px = (long)d->rows * d->cols;
    int image_model = in->height > 0;
    if (px == in->x_per_sample && (!image_model || (in->channels == 1 && in->height == d->rows &&
                                                    in->width == d->cols)))
        return TT_OK;
    char want[96];
    if (image_model)
        snprintf(want, sizeof want, "%d channel(s) of %dx%d pixels", in->channels, in->height,
                 in->width);
    else
        snprintf(want, sizeof want, "%ld inputs per sample", in->x_per_sample);
    return tt_error_set(err, TT_EINPUT,
                        "%s: images of %dx%d pixels (%ld values), but model %s takes %s; give "
                        "images of the model's size (Fashion-MNIST's are 28x28) or an mlp whose "
                        "first --widths value is rows x cols",
                        d->images_path, d->rows, d->cols, px, model_name, want);
}

void fmnist_fill(const fmnist *d, const int *idx, int B, float *x, int *labels)
{
    size_t px = (size_t)d->rows * d->cols;
    for (int b = 0; b < B; b++) {
        memcpy(x + b * px, d->images + (size_t)idx[b] * px, px * sizeof(float));
        labels[b] = d->labels[idx[b]];
    }
}
