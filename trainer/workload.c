#include "trainer/workload.h"

void workload_gradient_only(workload *w, double gradient_bytes)
{
    w->gradient_bytes = gradient_bytes;
}
