#include "sim/replay/framework.h"

const char *const FRAMEWORK_NAMES[] = {"none", "hugectr", "pytorch", "tensorflow2", NULL};

int framework_epilogue_passes(framework f, int backward)
{
    if (f != FRAMEWORK_PYTORCH && f != FRAMEWORK_TENSORFLOW2)
        return 0;
    return backward ? 3 + 1 : 2 + 2;
}
