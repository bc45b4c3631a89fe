/* loss.c: softmax cross-entropy (with label smoothing) and sigmoid binary
 * cross-entropy, both averaged over the rows. */
#include <math.h>

#include "trainer/layers.h"

/* logits (N,V), labels (N) -> mean loss; probs (N,V) */
float softmax_ce_forward(float *probs, const float *logits, const int *labels, int N, int V,
                         float smoothing)
{
    double total = 0.0;
    for (long n = 0; n < N; n++) {
        const float *z = logits + n * V;
        float *p = probs + n * V, mx = z[0];
        for (int i = 1; i < V; i++)
            mx = z[i] > mx ? z[i] : mx;
        double sum = 0.0, mean_logp = 0.0;
        for (int i = 0; i < V; i++) {
            p[i] = expf(z[i] - mx);
            sum += p[i];
        }
        double lse = log(sum);
        for (int i = 0; i < V; i++) {
            p[i] = (float)(p[i] / sum);
            mean_logp += (z[i] - mx - lse) / V;
        }
        double logp_y = z[labels[n]] - mx - lse;
        total += -(1.0 - smoothing) * logp_y - smoothing * mean_logp;
    }
    return (float)(total / N);
}

/* -> dlogits (N,V) = dloss/N * (probs - target) */
void softmax_ce_backward(float *dlogits, const float *probs, const int *labels, int N, int V,
                         float smoothing, float dloss)
{
    float s = dloss / (float)N, off = smoothing / (float)V;
    for (long n = 0; n < N; n++) {
        const float *p = probs + n * V;
        float *d = dlogits + n * V;
        for (int i = 0; i < V; i++)
            d[i] = s * (p[i] - off);
        d[labels[n]] -= s * (1.0f - smoothing);
    }
}

/* log(1 + exp(-|z|)) form: stable for large logits of either sign */
float bce_forward(const float *logits, const float *targets, int N)
{
    double total = 0.0;
    for (int n = 0; n < N; n++) {
        double z = logits[n], y = targets[n];
        total += (z > 0 ? z : 0) - z * y + log1p(exp(-fabs(z)));
    }
    return (float)(total / N);
}

void bce_backward(float *dlogits, const float *logits, const float *targets, int N, float dloss)
{
    for (int n = 0; n < N; n++) {
        float sig = 1.0f / (1.0f + expf(-logits[n]));
        dlogits[n] = dloss / (float)N * (sig - targets[n]);
    }
}
