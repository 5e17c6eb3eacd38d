/*===- CApi.h - Plain C interface to the runtime ----------------*- C -*-===*/
/*
 * The target of the MLIR lowering (doppler-lower-to-runtime): build a task
 * graph, run it on an executor, read times and outputs back. Handles are
 * opaque; nothing here throws or aborts.
 *
 *   DopplerRtGraph *g = dopplerRtGraphCreate();
 *   int64_t shape[2] = {64, 64};
 *   DopplerRtValue ab[2];
 *   ab[0] = dopplerRtGraphAddInput(g, 0, DOPPLER_RT_F32, shape, 2);
 *   ab[1] = dopplerRtGraphAddInput(g, 0, DOPPLER_RT_F32, shape, 2);
 *   DopplerRtValue c =
 *       dopplerRtGraphAddEinsum(g, 0, "ij,jk->ik", "mul", "add", 0.0, ab, 2);
 *   dopplerRtGraphMarkOutput(g, c);
 *   DopplerRtExecutor *e = dopplerRtCpuExecutorCreate(1, 0.0, 0.0);
 *   const void *data[2] = {aData, bData};
 *   DopplerRtRun *r = dopplerRtExecutorRun(e, g, ab, data, 2);
 *   if (!dopplerRtRunError(r))
 *     dopplerRtRunReadOutput(r, c, cData, 64 * 64 * sizeof(float));
 *   dopplerRtRunDestroy(r);
 *   dopplerRtExecutorDestroy(e);
 *   dopplerRtGraphDestroy(g);
 */
/*===----------------------------------------------------------------------===*/
#ifndef DOPPLER_RUNTIME_CAPI_H
#define DOPPLER_RUNTIME_CAPI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct DopplerRtGraph DopplerRtGraph;
typedef struct DopplerRtExecutor DopplerRtExecutor;
typedef struct DopplerRtRun DopplerRtRun;

/* A value (buffer) of a graph; the task producing it has the same id.
 * Builders return a negative id on failure: see dopplerRtGraphError. */
typedef int64_t DopplerRtValue;

enum {
  DOPPLER_RT_F32 = 0,
  DOPPLER_RT_F64 = 1,
  DOPPLER_RT_F16 = 2,
  DOPPLER_RT_I32 = 3,
  DOPPLER_RT_I64 = 4,
};

/*===-- Graphs
 * -------------------------------------------------------------===*/

DopplerRtGraph *dopplerRtGraphCreate(void);
void dopplerRtGraphDestroy(DopplerRtGraph *graph);
/* Message of the last failed call on `graph`; "" after a successful one. */
const char *dopplerRtGraphError(const DopplerRtGraph *graph);

DopplerRtValue dopplerRtGraphAddInput(DopplerRtGraph *graph, int32_t device,
                                      int32_t elementType, const int64_t *shape,
                                      int32_t rank);
/* `join`: an EinsumSpec join name ("mul", "exp", "scale", ...).
 * `aggregation`: "add", "mul", "max", "min", or NULL/"" for none.
 * `scalar` feeds the scale and shift joins. */
DopplerRtValue dopplerRtGraphAddEinsum(DopplerRtGraph *graph, int32_t device,
                                       const char *spec, const char *join,
                                       const char *aggregation, double scalar,
                                       const DopplerRtValue *inputs,
                                       int32_t numInputs);
/* A fused elementwise chain: `spec` an elementwise einsum spec (broadcasts
 * allowed, e.g. "bh,h->bh"), `program` a join program such as
 * "add(in0, in1); gelu(s0)" (steps over inputs inN and earlier results sN;
 * see TaskGraph::addFused). */
DopplerRtValue dopplerRtGraphAddFused(DopplerRtGraph *graph, int32_t device,
                                      const char *spec, const char *program,
                                      const DopplerRtValue *inputs,
                                      int32_t numInputs);
DopplerRtValue dopplerRtGraphAddTransfer(DopplerRtGraph *graph,
                                         DopplerRtValue input, int32_t device);
DopplerRtValue dopplerRtGraphAddFill(DopplerRtGraph *graph, int32_t device,
                                     int32_t elementType, const int64_t *shape,
                                     int32_t rank, double value);
DopplerRtValue dopplerRtGraphAddSlice(DopplerRtGraph *graph, int32_t device,
                                      DopplerRtValue input,
                                      const int64_t *offsets,
                                      const int64_t *sizes, int32_t rank);
/* `input`'s elements in row-major order as a tensor of `shape` (`rank`
 * extents, the input's element count). */
DopplerRtValue dopplerRtGraphAddReshape(DopplerRtGraph *graph, int32_t device,
                                        DopplerRtValue input,
                                        const int64_t *shape, int32_t rank);
/* A convolution (channels first, Doppler/Support/Window.h) of `input`
 * [N, C, S1..Sk] with `weight` [F, C/groups, K1..Kk], k = `spatialDims`
 * (1 to 3): `strides`, `dilations`, `paddingLow` and `paddingHigh` have k
 * entries each; the kernel is the weight's spatial extents. Result
 * [N, F, O1..Ok]. */
DopplerRtValue dopplerRtGraphAddConvolution(
    DopplerRtGraph *graph, int32_t device, DopplerRtValue input,
    DopplerRtValue weight, int64_t groups, const int64_t *strides,
    const int64_t *dilations, const int64_t *paddingLow,
    const int64_t *paddingHigh, int32_t spatialDims);
/* Pooling of `input` [N, C, S1..Sk]: `kind` "max" (padding is -inf, NaN
 * propagates) or "avg" (the window's sum over the kernel volume, padding
 * included); `kernel`, `strides`, `dilations`, `paddingLow` and
 * `paddingHigh` have k = `spatialDims` entries each. */
DopplerRtValue dopplerRtGraphAddPool(DopplerRtGraph *graph, int32_t device,
                                     const char *kind, DopplerRtValue input,
                                     const int64_t *kernel,
                                     const int64_t *strides,
                                     const int64_t *dilations,
                                     const int64_t *paddingLow,
                                     const int64_t *paddingHigh,
                                     int32_t spatialDims);
/* `table` [P.., V, Q..] gathered along `axis` (V's position) at `indices`
 * (an i32 or i64 value of shape I..): [P.., I.., Q..]. An index outside
 * [0, V) fails the run with an error naming the task. */
DopplerRtValue dopplerRtGraphAddGather(DopplerRtGraph *graph, int32_t device,
                                       DopplerRtValue table,
                                       DopplerRtValue indices, int64_t axis);
/* `gridShape[d]` blocks along dimension d; `blockExtents` lists the extents
 * of dimension 0's grid coordinates, then dimension 1's, and so on
 * (sum of gridShape entries). `blocks` are in row-major grid order. */
DopplerRtValue dopplerRtGraphAddAssemble(DopplerRtGraph *graph, int32_t device,
                                         const int64_t *gridShape, int32_t rank,
                                         const int64_t *blockExtents,
                                         const DopplerRtValue *blocks,
                                         int32_t numBlocks);
/* Busies `device` for `seconds` after `inputs`; its output holds no data. */
DopplerRtValue dopplerRtGraphAddDelay(DopplerRtGraph *graph, int32_t device,
                                      double seconds,
                                      const DopplerRtValue *inputs,
                                      int32_t numInputs);
/* A copy of device value `input` in host memory (a host value, made by the
 * copy worker of `input`'s device). Only dopplerRtGraphAddReload may read
 * a host value. */
DopplerRtValue dopplerRtGraphAddEvict(DopplerRtGraph *graph,
                                      DopplerRtValue input);
/* A copy of host value `stash` on `device`, started once `stash` and the
 * `numAfter` values of `after` (control dependencies: not read, so they do
 * not keep buffers alive) are available. `after` may be NULL when
 * `numAfter` is 0. */
DopplerRtValue dopplerRtGraphAddReload(DopplerRtGraph *graph,
                                       DopplerRtValue stash, int32_t device,
                                       const DopplerRtValue *after,
                                       int32_t numAfter);
/* These return 0 on success, -1 on failure. */
int32_t dopplerRtGraphMarkOutput(DopplerRtGraph *graph, DopplerRtValue value);
int32_t dopplerRtGraphSetPriority(DopplerRtGraph *graph, DopplerRtValue value,
                                  int64_t priority);

/*===-- Function signatures, plans and seeded runs
 * -------------------------===*/
/* What doppler-lower-to-runtime emits besides the tasks, so that a lowered
 * program can be run like `doppler-run` runs the function (same seeded
 * inputs, same output lines) and exported as a plan for doppler-run-plan.
 * Functions returning int32_t give 0 on success and -1 on failure (message:
 * dopplerRtGraphError). */

/* Declares the next function argument; returns its index, or -1. */
int32_t dopplerRtGraphAddArgument(DopplerRtGraph *graph, int32_t elementType,
                                  const int64_t *shape, int32_t rank);
/* Graph input `input` holds argument `argument` (same type and shape). */
int32_t dopplerRtGraphBindArgument(DopplerRtGraph *graph, DopplerRtValue input,
                                   int32_t argument);
/* Appends a function result; marks it as a graph output. */
int32_t dopplerRtGraphAddResult(DopplerRtGraph *graph, DopplerRtValue value);
/* The function's name and predicted makespan in seconds (negative or not finite:
 * none), recorded in plans and reports. `name` may be NULL. */
void dopplerRtGraphSetFunction(DopplerRtGraph *graph, const char *name,
                               double predictedMakespan);
/* A transfer that takes `seconds` whatever its size (cost-only graphs). */
DopplerRtValue dopplerRtGraphAddTimedTransfer(DopplerRtGraph *graph,
                                              DopplerRtValue input,
                                              int32_t device, double seconds);
/* Writes the graph and its signature as a plan (format: Plan.h). */
int32_t dopplerRtGraphWritePlan(DopplerRtGraph *graph, const char *path);
/* Runs the graph once on `numDevices` CPU devices with the arguments that
 * doppler-run and doppler-interpret use for `seed`, prints one line per
 * result to stdout ("output 0: f32[4x8] sum ... l2 ..."), and writes the
 * results as JSON to `outputsPath` unless it is NULL or "". On failure the
 * message goes to stderr too. */
int32_t dopplerRtGraphRunSeeded(DopplerRtGraph *graph, int32_t numDevices,
                                uint64_t seed, const char *outputsPath);

/*===-- Executors
 * ----------------------------------------------------------===*/

/* `numDevices` virtual CPU devices; transfers between them take
 * linkLatency + bytes / linkBandwidth seconds (0 disables either).
 * NULL on invalid arguments. */
DopplerRtExecutor *dopplerRtCpuExecutorCreate(int32_t numDevices,
                                              double linkBandwidth,
                                              double linkLatency);
void dopplerRtExecutorDestroy(DopplerRtExecutor *executor);
/* 0 (default) means unlimited. Returns 0, or -1 for a bad device. */
int32_t dopplerRtExecutorSetMemoryLimit(DopplerRtExecutor *executor,
                                        int32_t device, uint64_t bytes);
/* Nonzero: devices serve ready tasks by priority; 0: by readiness (FIFO). */
void dopplerRtExecutorSetPriorityOrder(DopplerRtExecutor *executor,
                                       int32_t byPriority);
/* Ready orders (ReadyOrder in Executor.h). */
enum {
  DOPPLER_RT_ORDER_FIFO = 0,
  DOPPLER_RT_ORDER_PRIORITY = 1,
  /* Each device runs its compute tasks, and its copy tasks, in id order. */
  DOPPLER_RT_ORDER_PROGRAM = 2,
  /* The same discipline in priority order (ties in id order). */
  DOPPLER_RT_ORDER_PLANNED = 3,
};
/* Returns 0, or -1 for an unknown order. */
int32_t dopplerRtExecutorSetReadyOrder(DopplerRtExecutor *executor,
                                       int32_t order);
/* Memory policies (MemoryPolicy in Executor.h): what a task whose output
 * does not fit under its device's limit does. */
enum {
  DOPPLER_RT_MEMORY_FAIL = 0, /* the run fails (the default) */
  DOPPLER_RT_MEMORY_WAIT = 1, /* the task waits until memory is freed */
};
/* Returns 0, or -1 for an unknown policy. */
int32_t dopplerRtExecutorSetMemoryPolicy(DopplerRtExecutor *executor,
                                         int32_t policy);

/*===-- Runs
 * ---------------------------------------------------------------===*/

/* Runs `graph` with `data[i]` bound to graph input `inputs[i]`. Always
 * returns a run (NULL only for NULL handles); check dopplerRtRunError. */
DopplerRtRun *dopplerRtExecutorRun(DopplerRtExecutor *executor,
                                   const DopplerRtGraph *graph,
                                   const DopplerRtValue *inputs,
                                   const void *const *data, int32_t numInputs);
/* NULL when the run succeeded, else its error message. */
const char *dopplerRtRunError(const DopplerRtRun *run);
/* Seconds from the run's start to its last task's end. */
double dopplerRtRunMakespan(const DopplerRtRun *run);
/* Start and end of `value`'s task in seconds since the run started.
 * Returns 0, or -1 when the task did not run (e.g. a graph input). */
int32_t dopplerRtRunTaskTime(const DopplerRtRun *run, DopplerRtValue value,
                             double *start, double *end);
uint64_t dopplerRtRunPeakBytes(const DopplerRtRun *run, int32_t device);
/* Largest sum of live host values (evict outputs) during the run. */
uint64_t dopplerRtRunHostPeakBytes(const DopplerRtRun *run);
/* Copies an output marked with dopplerRtGraphMarkOutput; `bytes` must be
 * its exact size. Returns 0, or -1. */
int32_t dopplerRtRunReadOutput(const DopplerRtRun *run, DopplerRtValue value,
                               void *dst, uint64_t bytes);
/* Writes a Chrome trace JSON file. Returns 0, or -1. */
int32_t dopplerRtRunWriteTrace(const DopplerRtRun *run, const char *path);
void dopplerRtRunDestroy(DopplerRtRun *run);

#ifdef __cplusplus
}
#endif

#endif /* DOPPLER_RUNTIME_CAPI_H */
