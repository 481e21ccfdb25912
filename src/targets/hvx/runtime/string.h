/* harrow Hexagon runtime: everything lives in hv_rt.h. */
#include "hv_rt.h"
