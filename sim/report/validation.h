/* validation.h: how well ttasim's predictions match published training runs,
 * as data: scenarios/published-validation.json, the rows of the published
 * validation table (make validation-table writes both from the same runs):
 * each published scenario's model, accelerator, role and predicted /
 * published step and total times. The HTML report shows the rows of the
 * model and the accelerator a run uses. */
#ifndef TT_VALIDATION_H
#define TT_VALIDATION_H

#include <stddef.h>

#include "common/error.h"

/* Under the data directory (common/datapath.h). */
#define VALIDATION_FILE "scenarios/published-validation.json"

typedef struct validation_row {
    char scenario[96], model[64], accelerator[64];
    int calibration;   /* the row fed a device efficiency: it checks nothing */
    double step_ratio; /* predicted / published step time; 0: none published */
    double time_ratio; /* the same for the total time */
} validation_row;

typedef struct validation_set {
    char path[4096]; /* the file read */
    validation_row *rows;
    size_t n;
} validation_set;

/* Reads the built-in VALIDATION_FILE (common/datapath.h); TT_EINPUT when it
 * is missing or does not parse, naming the file. */
int validation_load(validation_set *v, tt_error *err);
void validation_free(validation_set *v);

/* Whether row matches model and accelerator (NULL: any). */
int validation_matches(const validation_row *row, const char *model, const char *accelerator);

/* Over the matching rows of one role with a published step time: their
 * count, and the median and worst |step_ratio - 1|. */
typedef struct validation_summary {
    size_t n;
    double median, worst;
} validation_summary;

void validation_summarise(const validation_set *v, const char *model, const char *accelerator, int calibration,
                          validation_summary *out);

#endif
