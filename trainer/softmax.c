/* softmax.c: the softmax of one row and the gradient through it, shared by
 * attention's scores and the MoE router. */
#include <math.h>

#include "trainer/layers.h"

void softmax_row_forward(float *row, int n)
{
    float mx = -INFINITY, sum = 0.0f;
    for (int j = 0; j < n; j++)
        mx = row[j] > mx ? row[j] : mx;
    for (int j = 0; j < n; j++) {
        row[j] = expf(row[j] - mx);
        sum += row[j];
    }
    for (int j = 0; j < n; j++)
        row[j] /= sum;
}

void softmax_row_backward(float *d, const float *p, int n)
{
    float dot = 0.0f;
    for (int j = 0; j < n; j++)
        dot += p[j] * d[j];
    for (int j = 0; j < n; j++)
        d[j] = p[j] * (d[j] - dot);
}
