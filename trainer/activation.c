/* activation.c: elementwise layers (relu, gelu, tanh, dropout, residual add). */
#include <math.h>
#include <stddef.h>

#include "trainer/layers.h"
#include "trainer/rng.h"

void relu_forward(float *restrict out, const float *restrict inp, long n)
{
    for (long i = 0; i < n; i++)
        out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
}

/* uses the output: out > 0 exactly where inp > 0 */
void relu_backward(float *restrict dinp, const float *restrict dout, const float *restrict out,
                   long n)
{
    for (long i = 0; i < n; i++) {
        float d = dout[i]; /* loaded unconditionally, so the select vectorises */
        dinp[i] = out[i] > 0.0f ? d : 0.0f;
    }
}

/* gelu(x) = x * Phi(x), Phi the standard normal CDF */
void gelu_forward(float *out, const float *inp, long n)
{
    for (long i = 0; i < n; i++) {
        float x = inp[i];
        out[i] = 0.5f * x * (1.0f + erff(x * (float)M_SQRT1_2));
    }
}

void gelu_backward(float *dinp, const float *dout, const float *inp, long n)
{
    const float inv_sqrt_2pi = 0.3989422804014327f;
    for (long i = 0; i < n; i++) {
        float x = inp[i];
        float cdf = 0.5f * (1.0f + erff(x * (float)M_SQRT1_2));
        float pdf = inv_sqrt_2pi * expf(-0.5f * x * x);
        dinp[i] = dout[i] * (cdf + x * pdf);
    }
}

void tanh_forward(float *out, const float *inp, long n)
{
    for (long i = 0; i < n; i++)
        out[i] = tanhf(inp[i]);
}

void tanh_backward(float *dinp, const float *dout, const float *out, long n)
{
    for (long i = 0; i < n; i++)
        dinp[i] = dout[i] * (1.0f - out[i] * out[i]);
}

void dropout_forward(float *out, float *mask, const float *inp, long n, float p, uint64_t seed)
{
    float keep = 1.0f / (1.0f - p);
    rng r = rng_at(seed, 0);
    for (long i = 0; i < n; i++) {
        mask[i] = rng_uniform(&r) < p ? 0.0f : keep;
        out[i] = inp[i] * mask[i];
    }
}

void dropout_backward(float *dinp, const float *dout, const float *mask, long n)
{
    for (long i = 0; i < n; i++)
        dinp[i] = dout[i] * mask[i];
}

void add_forward(float *restrict out, const float *restrict a, const float *restrict b, long n)
{
    for (long i = 0; i < n; i++)
        out[i] = a[i] + b[i];
}

void add_relu_forward(float *restrict out, const float *restrict a, const float *restrict b,
                      long n)
{
    for (long i = 0; i < n; i++) {
        float v = a[i] + b[i];
        out[i] = v > 0.0f ? v : 0.0f;
    }
}
