#include "sim/replay/framework.h"

const char *const FRAMEWORK_NAMES[] = {"none", "hugectr", "pytorch", "tensorflow2", "pytorch_apex", NULL};

int framework_epilogue_passes(framework f, int backward)
{
    if (f == FRAMEWORK_PYTORCH_APEX)
        return backward ? 3 : 2;
    if (f != FRAMEWORK_PYTORCH && f != FRAMEWORK_TENSORFLOW2)
        return 0;
    return backward ? 3 + 1 : 2 + 2;
}

int framework_epilogue_kernels(framework f, int backward)
{
    return f == FRAMEWORK_PYTORCH_APEX ? 1 : framework_epilogue_passes(f, backward);
}

int framework_overlaps_embedding(framework f)
{
    return f == FRAMEWORK_HUGECTR;
}
