// cg::reduce and its operators live in <cooperative_groups.h> on the CPU runtime.
#pragma once
#include "../cooperative_groups.h"
