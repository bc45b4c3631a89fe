#include "trainer/dataparallel.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "trainer/noise_scale.h"
#include "trainer/rng.h"

/* the teacher's test examples come from far along its stream, disjoint from training */
#define TEACHER_TEST_BASE (UINT64_C(1) << 48)
#define AUGMENT_PAD 2

struct dp_trainer {
    int K, nmicro;
    long B, shard, micro;
    model **w;              /* K workers; w[0] is the master */
};

int dp_create(dp_trainer **out, const char *model_name, const model_opts *mo, int workers,
              long global_batch, long micro_max, tt_error *err)
{
    if (workers < 1 || global_batch < 1 || micro_max < 1)
        return tt_error_set(err, TT_EINPUT,
                            "data-parallel: workers (%d), batch (%ld) and micro-batch (%ld) must be positive",
                            workers, global_batch, micro_max);
    if (global_batch % workers)
        return tt_error_set(err, TT_EINPUT,
                            "data-parallel: global batch %ld is not a multiple of %d workers; "
                            "choose a batch divisible by the worker count",
                            global_batch, workers);
    dp_trainer *dp = calloc(1, sizeof *dp);
    if (!dp || !(dp->w = calloc((size_t)workers, sizeof *dp->w))) {
        free(dp);
        return tt_error_set(err, TT_EINTERNAL, "data-parallel: out of memory");
    }
    dp->K = workers;
    dp->B = global_batch;
    dp->shard = global_batch / workers;
    /* equal micro-batches, so accumulated micro-batch means average exactly */
    long J = (dp->shard + micro_max - 1) / micro_max;
    while (dp->shard % J)
        J++;
    dp->nmicro = (int)J;
    dp->micro = dp->shard / J;
    for (int k = 0; k < workers; k++) {
        int rc = model_create(&dp->w[k], model_name, mo, err);
        if (!rc)
            rc = model_alloc(dp->w[k], (int)dp->micro, err);
        if (rc) {
            dp_free(dp);
            return rc;
        }
    }
    *out = dp;
    return TT_OK;
}

void dp_free(dp_trainer *dp)
{
    if (!dp)
        return;
    for (int k = 0; k < dp->K; k++)
        model_free(dp->w[k]);
    free(dp->w);
    free(dp);
}

model *dp_master(dp_trainer *dp) { return dp->w[0]; }
long dp_micro_batch(const dp_trainer *dp) { return dp->micro; }
int dp_micro_steps(const dp_trainer *dp) { return dp->nmicro; }

static double sq_norm(const float *x, size_t n)
{
    double s = optim_norm(x, n);
    return s * s;
}

void dp_gradients(dp_trainer *dp, dp_fill_fn fill, void *ctx, uint64_t first,
                  dp_grad_stats *st)
{
    double loss = 0, worker_sq = 0;
    for (int k = 0; k < dp->K; k++) {
        model *m = dp->w[k];
        model_inputs *in = model_get_inputs(m);
        model_zero_grad(m);
        in->batch = (int)dp->micro;
        for (int j = 0; j < dp->nmicro; j++) {
            fill(ctx, first + (uint64_t)(k * dp->shard + j * dp->micro), in);
            loss += model_forward(m);
            model_backward(m);
        }
        param_set *ps = model_params(m);
        if (dp->nmicro > 1) /* sum of micro-batch means -> shard mean */
            cblas_sscal((int)ps->numel, 1.0f / dp->nmicro, ps->grads, 1);
        worker_sq += sq_norm(ps->grads, ps->numel);
    }
    /* the allreduce: worker 0's buffer becomes the mean of the K shard gradients */
    param_set *g = model_params(dp->w[0]);
    for (int k = 1; k < dp->K; k++)
        cblas_saxpy((int)g->numel, 1.0f, model_params(dp->w[k])->grads, 1, g->grads, 1);
    if (dp->K > 1)
        cblas_sscal((int)g->numel, 1.0f / dp->K, g->grads, 1);
    st->loss = loss / ((double)dp->K * dp->nmicro);
    st->worker_sq = worker_sq / dp->K;
    st->global_sq = sq_norm(g->grads, g->numel);
}

void dp_apply(dp_trainer *dp, optimizer *opt, double lr)
{
    param_set *ps = model_params(dp->w[0]);
    optimizer_step(opt, ps, lr);
    for (int k = 1; k < dp->K; k++)
        memcpy(model_params(dp->w[k])->params, ps->params, ps->numel * sizeof(float));
}

/* ---- the training stream ---- */

typedef struct stream {
    const dp_data *data;
    int augment;
    uint64_t seed;
    int *idx;               /* micro-batch indices */
    int *perm[2];           /* shuffles of epochs perm_epoch[0..1] */
    long perm_epoch[2];
    float *tmp;             /* one image, for augmentation */
} stream;

/* Epoch e's order of the training set: a seeded Fisher-Yates shuffle. */
static const int *epoch_perm(stream *s, long e)
{
    int slot = (int)(e & 1), n = s->data->train->n;
    if (s->perm_epoch[slot] != e) {
        int *p = s->perm[slot];
        for (int i = 0; i < n; i++)
            p[i] = i;
        rng r = rng_at(s->seed, (uint64_t)e);
        for (int i = n - 1; i > 0; i--) {
            int j = (int)rng_below(&r, (uint64_t)i + 1), t = p[i];
            p[i] = p[j], p[j] = t;
        }
        s->perm_epoch[slot] = e;
    }
    return s->perm[slot];
}

/* Random crop of the image padded by AUGMENT_PAD zeros, and a horizontal flip with
 * probability 1/2; drawn from (seed, stream position), so reproducible. */
static void augment_image(stream *s, float *img, int rows, int cols, uint64_t pos)
{
    rng r = rng_at(s->seed ^ UINT64_C(0xa5a5f00d), pos);
    int dy = (int)rng_below(&r, 2 * AUGMENT_PAD + 1) - AUGMENT_PAD;
    int dx = (int)rng_below(&r, 2 * AUGMENT_PAD + 1) - AUGMENT_PAD;
    int flip = (int)(rng_u64(&r) >> 63);
    memcpy(s->tmp, img, sizeof(float) * (size_t)rows * cols);
    for (int y = 0; y < rows; y++)
        for (int x = 0; x < cols; x++) {
            int sy = y + dy, sx = (flip ? cols - 1 - x : x) + dx;
            img[y * cols + x] =
                sy >= 0 && sy < rows && sx >= 0 && sx < cols ? s->tmp[sy * cols + sx] : 0.0f;
        }
}

static void fill_train(void *ctx, uint64_t first, model_inputs *in)
{
    stream *s = ctx;
    if (s->data->kind == DP_DATA_TEACHER) {
        teacher_fill(s->data->teacher, first, in->batch, in->x, in->labels);
        return;
    }
    if (s->data->kind == DP_DATA_MARKOV) {
        markov_fill(s->data->markov, s->seed, first, in->batch, in->seq_len, in->tokens, in->labels);
        return;
    }
    const fmnist *d = s->data->train;
    for (int i = 0; i < in->batch; i++) {
        uint64_t p = first + (uint64_t)i;
        s->idx[i] = epoch_perm(s, (long)(p / (uint64_t)d->n))[p % (uint64_t)d->n];
    }
    fmnist_fill(d, s->idx, in->batch, in->x, in->labels);
    if (s->augment)
        for (int i = 0; i < in->batch; i++)
            augment_image(s, in->x + (size_t)i * d->rows * d->cols, d->rows, d->cols,
                          first + (uint64_t)i);
}

/* Test accuracy (a Markov stream: of the next tokens) and mean loss of the
 * master in eval mode, in micro-batch chunks. */
static void evaluate(dp_trainer *dp, stream *s, double *accuracy, double *loss)
{
    model *m = dp->w[0];
    model_inputs *in = model_get_inputs(m);
    const dp_data *d = s->data;
    long n = d->kind == DP_DATA_FMNIST ? d->test->n : d->stream_test;
    int rows_per_sample = d->kind == DP_DATA_MARKOV ? in->seq_len : 1;
    long correct = 0;
    double loss_sum = 0;
    model_set_training(m, 0);
    for (long i = 0; i < n; i += dp->micro) {
        int b = (int)(n - i < dp->micro ? n - i : dp->micro);
        in->batch = b;
        if (d->kind == DP_DATA_TEACHER) {
            teacher_fill(d->teacher, TEACHER_TEST_BASE + (uint64_t)i, b, in->x, in->labels);
        } else if (d->kind == DP_DATA_MARKOV) {
            markov_fill(d->markov, DP_MARKOV_HELDOUT, (uint64_t)i, b, in->seq_len, in->tokens,
                        in->labels);
        } else {
            for (int j = 0; j < b; j++)
                s->idx[j] = (int)(i + j);
            fmnist_fill(d->test, s->idx, b, in->x, in->labels);
        }
        loss_sum += (double)model_forward(m) * b;
        int cols;
        const float *logits = model_logits(m, &cols);
        for (long j = 0; j < (long)b * rows_per_sample; j++) {
            const float *row = logits + (size_t)j * cols;
            int best = 0;
            for (int c = 1; c < cols; c++)
                if (row[c] > row[best])
                    best = c;
            correct += best == in->labels[j];
        }
    }
    model_set_training(m, 1);
    in->batch = (int)dp->micro;
    *accuracy = (double)correct / ((double)n * rows_per_sample);
    *loss = loss_sum / (double)n;
}

/* The Markov stream feeds a decoder whose vocabulary is the source's and whose
 * sequences hold a full context. */
static int check_markov_model(const markov *mk, const model_inputs *in, const char *name,
                              tt_error *err)
{
    if (!in->tokens || !in->next_token)
        return tt_error_set(err, TT_EINPUT, "the Markov stream trains a decoder (gpt, llama, moe), "
                            "not %s; choose one with --model", name);
    if (in->vocab != mk->vocab || in->seq_len < mk->order)
        return tt_error_set(err, TT_EINPUT, "%s reads %d tokens of a %d-token vocabulary; the "
                            "Markov source has %d tokens and contexts of %d: set --vocab %d and "
                            "--seq-len %d or more", name, in->seq_len, in->vocab, mk->vocab,
                            mk->order, mk->vocab, mk->order);
    return TT_OK;
}

/* Marks the loss targets this evaluation meets for the first time; whether all are met. */
static int losses_met(const dp_options *o, const dp_eval *ev, dp_result *r)
{
    int met = 0;
    for (int i = 0; i < o->ntarget_loss; i++) {
        if (r->target_steps[i] < 0 && ev->test_loss <= r->optimal_loss + o->target_loss[i])
            r->target_steps[i] = ev->step;
        met += r->target_steps[i] >= 0;
    }
    return met == o->ntarget_loss;
}

static int check_options(const dp_options *o, const dp_data *data, long train_n, tt_error *err)
{
    if (data->kind == DP_DATA_MARKOV) {
        if (o->ntarget_loss < 1 || o->ntarget_loss > DP_MAX_TARGETS)
            return tt_error_set(err, TT_EINPUT, "a Markov stream trains to 1 to %d target losses "
                                "(nats/token above the optimum), not %d", DP_MAX_TARGETS,
                                o->ntarget_loss);
        for (int i = 0; i < o->ntarget_loss; i++)
            if (!(o->target_loss[i] > 0))
                return tt_error_set(err, TT_EINPUT, "target loss %g: give a positive number of "
                                    "nats/token above the optimal loss", o->target_loss[i]);
    } else if (o->ntarget_loss) {
        return tt_error_set(err, TT_EINPUT, "target losses apply to the Markov stream; use a "
                            "target accuracy for %s", data->kind == DP_DATA_TEACHER ? "the teacher" : "Fashion-MNIST");
    } else if (!(o->target > 0 && o->target <= 1))
        return tt_error_set(err, TT_EINPUT, "target accuracy must be in (0, 1] (got %g); "
                            "write 85%% as 0.85", o->target);
    if (o->max_epochs <= 0 && o->max_steps <= 0)
        return tt_error_set(err, TT_EINPUT, "no budget: give a maximum number of epochs or steps");
    if (train_n <= 0)
        return tt_error_set(err, TT_EINPUT, "the training set is empty");
    if (data->kind != DP_DATA_FMNIST && o->augment == 1)
        return tt_error_set(err, TT_EINPUT,
                            "augmentation applies to Fashion-MNIST images, not a synthetic stream");
    return TT_OK;
}

int dp_train(const dp_options *o, const dp_data *data, dp_result *r, tt_error *err)
{
    memset(r, 0, sizeof *r);
    r->steps_to_target = -1;
    for (int i = 0; i < DP_MAX_TARGETS; i++)
        r->target_steps[i] = -1;
    r->noise_scale = NAN;
    r->optimal_loss = NAN;
    long train_n = data->kind == DP_DATA_FMNIST ? data->train->n : data->stream_epoch;
    int rc = check_options(o, data, train_n, err);
    if (rc)
        return rc;
    double t0 = clock_monotonic_s();
    double steps_per_epoch = (double)train_n / (double)o->batch;
    long max_steps = o->max_steps > 0 ? o->max_steps : LONG_MAX;
    if (o->max_epochs > 0) {
        long s = (long)floor(o->max_epochs * steps_per_epoch + 1e-9); /* never past the budget */
        max_steps = s < max_steps ? s : max_steps;
    }
    if (max_steps < 1)
        max_steps = 1;

    lr_schedule lr = o->lr;
    lr.batch = (double)o->batch;
    lr.total_steps = max_steps;
    long warmup_from_epochs = lround(o->warmup_epochs * steps_per_epoch);
    if (lr.warmup_steps < 0 || (o->warmup_epochs > 0 && warmup_from_epochs < lr.warmup_steps))
        lr.warmup_steps = warmup_from_epochs; /* both given: the shorter */
    if (lr.cooldown_steps < 0)
        lr.cooldown_steps = lround(o->cooldown_epochs * steps_per_epoch);
    r->peak_lr = lr_schedule_peak(&lr);
    r->warmup_steps = lr.warmup_steps;
    /* a language stream's steps to target are few at large batches and its test set small: finer */
    double eval_examples = data->kind == DP_DATA_MARKOV ? 512.0 : 6000.0;
    r->eval_every = o->eval_every > 0 ? o->eval_every : lround(eval_examples / (double)o->batch);
    if (r->eval_every < 1)
        r->eval_every = 1;

    stream s = {.data = data, .seed = o->seed, .perm_epoch = {-1, -1}};
    if (data->kind == DP_DATA_TEACHER) {
        snprintf(r->data, sizeof r->data, "teacher");
        snprintf(r->data_note, sizeof r->data_note,
                 "synthetic teacher stream (%d inputs, %d hidden, %d classes; epoch = %ld examples)",
                 data->teacher->in_dim, data->teacher->hidden, data->teacher->classes, train_n);
    } else if (data->kind == DP_DATA_MARKOV) {
        const markov *mk = data->markov;
        snprintf(r->data, sizeof r->data, "markov");
        snprintf(r->data_note, sizeof r->data_note,
                 "order-%d Markov source over %d tokens, entropy rate %.6f nats/token "
                 "(epoch = %ld sequences, test %ld held-out sequences)",
                 mk->order, mk->vocab, mk->entropy_rate, train_n, data->stream_test);
    } else {
        s.augment = o->augment == 1 || (o->augment < 0 && o->batch > train_n);
        snprintf(r->data, sizeof r->data, "%s", s.augment ? "fashion-mnist+augment" : "fashion-mnist");
        snprintf(r->data_note, sizeof r->data_note, "%s",
                 s.augment ? "Fashion-MNIST 60k train with seeded augmentation (random crop, "
                             "padding 2, horizontal flip); 10k test"
                           : "Fashion-MNIST 60k train, 10k test");
    }

    dp_trainer *dp = NULL;
    optimizer *opt = NULL;
    if ((rc = dp_create(&dp, o->model, &o->mo, o->workers, o->batch, o->micro_max, err)))
        return rc;
    r->micro_batch = dp->micro;
    if (data->kind == DP_DATA_MARKOV &&
        (rc = check_markov_model(data->markov, model_get_inputs(dp->w[0]), o->model, err)))
        goto done;
    if (data->kind == DP_DATA_MARKOV)
        r->optimal_loss = markov_optimal_loss(data->markov, model_get_inputs(dp->w[0])->seq_len);
    if (data->kind == DP_DATA_FMNIST &&
        ((rc = fmnist_check_input(data->train, model_get_inputs(dp->w[0]), o->model, err)) ||
         (rc = fmnist_check_input(data->test, model_get_inputs(dp->w[0]), o->model, err))))
        goto done;
    if ((rc = optimizer_create(&o->opt, model_params(dp->w[0]), &opt, err)))
        goto done;
    size_t idx_n = (size_t)(dp->micro > 1 ? dp->micro : 1);
    int need_perm = data->kind == DP_DATA_FMNIST;
    s.idx = malloc(idx_n * sizeof(int));
    s.perm[0] = need_perm ? malloc((size_t)train_n * sizeof(int)) : NULL;
    s.perm[1] = need_perm ? malloc((size_t)train_n * sizeof(int)) : NULL;
    s.tmp = need_perm ? malloc(sizeof(float) * (size_t)data->train->rows * data->train->cols) : NULL;
    int curve_cap = 64;
    r->curve = malloc((size_t)curve_cap * sizeof *r->curve);
    if (!s.idx || (need_perm && (!s.perm[0] || !s.perm[1] || !s.tmp)) || !r->curve) {
        rc = tt_error_set(err, TT_EINTERNAL, "training: out of memory");
        goto done;
    }

    noise_scale ns;
    noise_scale_init(&ns, o->noise_alpha > 0 ? o->noise_alpha : 0.02);
    for (long step = 0; step < max_steps; step++) {
        dp_grad_stats st;
        double rate = lr_schedule_at(&lr, step);
        dp_gradients(dp, fill_train, &s, (uint64_t)step * (uint64_t)o->batch, &st);
        if (!isfinite(st.loss) || !isfinite(st.global_sq)) {
            r->diverged = 1;
            r->steps_run = step + 1;
            break;
        }
        if (o->workers > 1)
            noise_scale_add(&ns, st.worker_sq, (double)dp->shard, st.global_sq, (double)o->batch);
        dp_apply(dp, opt, rate);
        r->steps_run = step + 1;
        if ((step + 1) % r->eval_every && step + 1 != max_steps)
            continue;
        dp_eval ev = {.step = step + 1, .epoch = (double)(step + 1) / steps_per_epoch,
                      .train_loss = st.loss, .lr = rate, .noise_scale = noise_scale_value(&ns)};
        evaluate(dp, &s, &ev.test_accuracy, &ev.test_loss);
        if (r->ncurve == curve_cap) {
            dp_eval *c = realloc(r->curve, (size_t)(curve_cap *= 2) * sizeof *c);
            if (!c) {
                rc = tt_error_set(err, TT_EINTERNAL, "training: out of memory");
                goto done;
            }
            r->curve = c;
        }
        r->curve[r->ncurve++] = ev;
        if (o->progress)
            o->progress(o->progress_ctx, ev.step, max_steps, ev.epoch, ev.test_accuracy,
                        st.loss);
        if (!isfinite(ev.test_loss)) { /* the update itself overflowed */
            r->diverged = 1;
            break;
        }
        if (data->kind == DP_DATA_MARKOV ? losses_met(o, &ev, r) : ev.test_accuracy >= o->target) {
            r->reached = 1;
            r->steps_to_target = ev.step;
            r->epochs_to_target = ev.epoch;
            r->examples_to_target = (double)ev.step * (double)o->batch;
            break;
        }
    }
    r->epochs_run = (double)r->steps_run / steps_per_epoch;
    r->final_test_accuracy = r->ncurve ? r->curve[r->ncurve - 1].test_accuracy : 0;
    r->noise_scale = noise_scale_value(&ns);
done:
    free(s.idx);
    free(s.perm[0]);
    free(s.perm[1]);
    free(s.tmp);
    optimizer_free(opt);
    dp_free(dp);
    r->wall_s = clock_monotonic_s() - t0;
    if (rc)
        dp_result_free(r);
    return rc;
}

void dp_result_free(dp_result *r)
{
    free(r->curve);
    r->curve = NULL;
    r->ncurve = 0;
}
