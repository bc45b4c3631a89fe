/* swiglu.c: the gated unit of SwiGLU feed-forward layers (Shazeer 2020;
 * Llama, Mixtral): silu(gate) * up, silu(g) = g sigmoid(g). The gate and up
 * projections and the down projection around it are linear layers. */
#include <math.h>

#include "trainer/layers.h"

void swiglu_forward(float *out, const float *gate, const float *up, long n)
{
    for (long i = 0; i < n; i++) {
        float g = gate[i];
        out[i] = g / (1.0f + expf(-g)) * up[i];
    }
}

/* d silu(g)/dg = s (1 + g (1 - s)), s = sigmoid(g); dup may alias dout */
void swiglu_backward(float *dgate, float *dup, const float *dout, const float *gate,
                     const float *up, long n)
{
    for (long i = 0; i < n; i++) {
        float g = gate[i], s = 1.0f / (1.0f + expf(-g)), d = dout[i];
        dgate[i] = d * up[i] * s * (1.0f + g * (1.0f - s));
        dup[i] = d * g * s;
    }
}
