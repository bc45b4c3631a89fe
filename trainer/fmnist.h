/* fmnist.h: Fashion-MNIST from the gzipped IDX files of Debian's
 * dataset-fashion-mnist (/usr/share/datasets/fashion-mnist). */
#ifndef TT_FMNIST_H
#define TT_FMNIST_H

#include "common/error.h"
#include "trainer/model.h"

#define FMNIST_DEFAULT_DIR "/usr/share/datasets/fashion-mnist"

typedef struct fmnist {
    int n, rows, cols;        /* images of rows x cols pixels */
    float *images;            /* (n, rows*cols), pixels / 255 */
    int *labels;              /* (n) in 0..9 */
    char images_path[4096];   /* the images file, for messages */
} fmnist;

/* Loads split "train" or "t10k" from dir (NULL: the default directory).
 * Checks magic numbers, dimensions and lengths; errors name the file and
 * the package to install. */
int fmnist_load(const char *dir, const char *split, fmnist *out, tt_error *err);
void fmnist_free(fmnist *d);

/* Checks that the images fit the model's input (rows x cols values, and the
 * height and width of an image model with one channel); the error names the file. */
int fmnist_check_input(const fmnist *d, const model_inputs *in, const char *model_name,
                       tt_error *err);

/* Copies samples idx[0..B) into x (B, rows*cols) and labels (B). */
void fmnist_fill(const fmnist *d, const int *idx, int B, float *x, int *labels);

/* Reads one gzipped IDX file with the expected magic (0x803 images, 0x801
 * labels); returns the dimensions in dims (up to 3) and the payload bytes
 * (malloc'ed) in *data. Memory follows the bytes the stream delivers, never
 * only the header's claim; a payload above 1 GiB is refused. */
int idx_read(const char *path, unsigned expect_magic, int *dims, unsigned char **data,
             tt_error *err);

#endif
