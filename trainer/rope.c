/* rope.c: rotary position embeddings (Su et al. 2021) on the query and key
 * heads of a packed qkv row, in the rotate-half pairing of GPT-NeoX, Hugging
 * Face Llama and Megatron (element i with i + hs/2); the value heads pass
 * through. Position t turns pair i by t * theta^(-2i/hs). */
#include <math.h>
#include <string.h>

#include "trainer/layers.h"

/* sign +1 rotates forward, -1 back (the transpose: the backward pass) */
static void rotate(float *out, const float *inp, int B, int T, int W, int nrot, int hs,
                   float theta, float sign)
{
    int half = hs / 2;
    float cs[ROPE_MAX_HEAD_DIM / 2], sn[ROPE_MAX_HEAD_DIM / 2];
    for (int t = 0; t < T; t++) {
        for (int i = 0; i < half; i++) {
            double a = t * pow((double)theta, -2.0 * i / hs);
            cs[i] = (float)cos(a);
            sn[i] = sign * (float)sin(a);
        }
        for (int b = 0; b < B; b++) {
            const float *x = inp + ((long)b * T + t) * W;
            float *y = out + ((long)b * T + t) * W;
            for (int h = 0; h < nrot; h++) {
                const float *xh = x + (long)h * hs;
                float *yh = y + (long)h * hs;
                for (int i = 0; i < half; i++) {
                    float x1 = xh[i], x2 = xh[i + half];
                    yh[i] = x1 * cs[i] - x2 * sn[i];
                    yh[i + half] = x2 * cs[i] + x1 * sn[i];
                }
            }
            memcpy(y + (long)nrot * hs, x + (long)nrot * hs,
                   (size_t)(W - nrot * hs) * sizeof(float));
        }
    }
}

void rope_forward(float *out, const float *inp, int B, int T, int W, int nrot, int hs,
                  float theta)
{
    rotate(out, inp, B, T, W, nrot, hs, theta, 1.0f);
}

void rope_backward(float *dinp, const float *dout, int B, int T, int W, int nrot, int hs,
                   float theta)
{
    rotate(dinp, dout, B, T, W, nrot, hs, theta, -1.0f);
}
