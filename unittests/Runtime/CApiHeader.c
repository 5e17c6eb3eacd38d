/*===- CApiHeader.c - The C API header compiles as C
 * -----------------------===*/

#include "doppler/runtime/CApi.h"

#include <stddef.h>

/* Builds a two-task graph through the C API; returns 1 when the ids are the
 * expected ones. */
int dopplerRtTestBuildGraphInC(void) {
  DopplerRtGraph *graph = dopplerRtGraphCreate();
  int64_t shape[1] = {8};
  DopplerRtValue x = dopplerRtGraphAddInput(graph, 0, DOPPLER_RT_F32, shape, 1);
  DopplerRtValue y =
      dopplerRtGraphAddEinsum(graph, 0, "i->i", "exp", NULL, 0.0, &x, 1);
  DopplerRtValue stash = dopplerRtGraphAddEvict(graph, x);
  DopplerRtValue back = dopplerRtGraphAddReload(graph, stash, 0, &y, 1);
  int ok = x == 0 && y == 1 && stash == 2 && back == 3 &&
           DOPPLER_RT_ORDER_PROGRAM == 2 && DOPPLER_RT_MEMORY_WAIT == 1;
  dopplerRtGraphDestroy(graph);
  return ok;
}
