//===- CalibrateKernels.h - Per-kind task costs, measured -*- C++ -*-===//
//
// The figures of a system description's "kernels" object
// (docs/SystemDescription.md): per kind of task the cost model tells apart,
// the fixed time of one task (dispatch and hand-off included) and, for the
// kinds whose kernels run at their own rate rather than at the GEMM peak,
// that rate in FLOP/s (as the work interface counts FLOPs):
//
//   contraction  overhead: a chain of 16x16x16 mul/add contractions, less
//                their FLOPs at the f32 peak; half_size: 512 x 512 by
//                512 x 8 contractions against the peak (at --gemm-size);
//                grid: the rate at 48 GEMM shapes (CalibrateGemmGrid.h);
//                gemv_bandwidth: 1 x 4096 by 512 x 4096 (transposed, as a
//                linear layer holds its weights) products, each on
//                its own 8 MB matrix (64 MB per device, beyond a core's
//                share of the caches), bytes read and written per second
//                (convolutions get the same figure: one on a 1x1 output is
//                the same matrix-vector product);
//   fused        overhead: a chain of 3-input fused tasks of 16 elements;
//                gather_time and row_time: the same program over 16384
//                elements with a per-row scale and shift ("ij,i,i->ij")
//                in rows of 8 and of 64, less the same with inputs laid
//                out like the output (seconds per filled element and per
//                row of the kernel's walk);
//   copy         overhead and row_time: a chain of slices of [R, 8] to
//                [R, 4] and assembles of two such halves back, at R = 2
//                and 32 (a box's fixed time, and each row's memcpy beyond
//                its first; an assemble copies a box per block);
//   elementwise  einsums that are not contractions: overhead, a chain of
//                16-element negations; row_time: "ij,i->ij" over 16384
//                elements in rows of 8 and of 64 (the loop nest's call per
//                row);
//   conv         overhead: a chain of 1x4x4x4 3x3 convolutions; rate and
//                half_size: 1x64x16x16 3x3 (64 filters, padding 1)
//                convolutions (GEMM side 64) and 1x256x2x2 ones with 256
//                filters (side 4), a ResNet's early and late stages; grid:
//                the rate at 48 GEMM shapes, each on weights beyond the
//                caches (CalibrateGemmGrid.h);
//   depthwise    the same for one input channel per group: 1x4x4x4, then
//                1x128x16x16 and 1x1024x2x2 3x3 depthwise convolutions
//                (256 and 4 output positions per channel);
//   pool         overhead: 1x4x4x4 3x3 max pools (stride 1, padding 1);
//                rate and half_size: 3x3 stride 2 max pools of 1x64x32x32
//                and 1x1024x4x4 (256 and 4 positions per channel), window
//                elements per second.
//
// Chains (each task reads the one before) time what a dependent task costs
// as doppler-run runs it, as launch_overhead does, on one device while the
// others idle (kOverheadDevices, CalibrateBench.h); rates time kTasks
// independent tasks per device on all busy devices and subtract the kind's
// overhead.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_TOOLS_CALIBRATEKERNELS_H
#define DOPPLER_RUNTIME_TOOLS_CALIBRATEKERNELS_H

#include "CalibrateBench.h"
#include "CalibrateGemmGrid.h"

#include <string>
#include <vector>

namespace doppler::runtime::calibrate {

struct KernelFigure {
  std::string kind;
  /// Seconds per task.
  double overhead = 0;
  /// FLOP/s of the kind's own kernel; 0 when it runs at the GEMM peak or is
  /// bound by memory.
  double flops = 0;
  /// Hockney's half-performance length of its GEMM (0: none): see
  /// Doppler/Placement/KernelCosts.h.
  double halfSize = 0;
  /// Bytes per second of a matrix-vector product's matrix stream (0: not
  /// measured).
  double gemvBandwidth = 0;
  /// Fused tasks: seconds per gathered input element and per row of the
  /// kernel's walk (0: not measured).
  double gatherTime = 0;
  double rowTime = 0;
  /// Contractions and dense convolutions: the rate by GEMM shape
  /// (CalibrateGemmGrid.h).
  GemmGridFigure grid{};
};

/// The executor's idle time between two tasks of one device, in seconds:
/// between dependent tasks in a chain of tiny tasks, all hot in cache (what
/// the kinds' overheads above include) and in a model-like graph (layers of
/// a GEMM on its own weights, a fused bias + relu + residual, a reduction
/// and a broadcast: values with two readers, weights beyond the core's
/// caches; `bytes` of output per task on average); and between the chain's
/// tasks made independent, all queued at the run's start (a fan: the worker
/// pops the next as it ends one). doppler-calibrate takes chain - queued
/// off every kind's overhead and launch_overhead (a task that was queued
/// when its device became free pays the fan's gap) and writes model -
/// queued as the device's `hand_off`, with `bytes` as its `hand_off_bytes`:
/// what a task pays that its device waited for, after a task of that many
/// output bytes or more (SimulatorOptions::handOff). The executor does the
/// same between tasks either way (the worker that ends a task queues its
/// successors and pops the next); the gap grows with the data the task
/// before touched (docs/SystemDescription.md).
struct HandOffFigure {
  double chain = 0;
  double model = 0;
  double queued = 0;
  double bytes = 0;
  /// What the chains' overheads hold beyond a queued task's gap.
  double rebate() const { return chain > queued ? chain - queued : 0; }
  /// What a task its device waited for pays beyond a queued one.
  double handOff() const { return model > queued ? model - queued : 0; }
};

/// Timed on one device, the others idle (kOverheadDevices), as the
/// overheads are.
Result<HandOffFigure> measureHandOff(Executor &executor,
                                     std::mt19937_64 &generator, int repeat);

/// Fits rate(s) = rInf * s / (s + half) through two measured (side, rate)
/// points, the larger side first; false (and nothing set) when the points
/// do not fit it (the smaller side is not slower, or noise).
bool fitHalfSize(double side1, double rate1, double side2, double rate2,
                 double &rInf, double &half);

/// Measures every kind of the file comment on `busy` devices at once, each
/// figure the median of `repeat` runs; `peakF32` (FLOP/s) is the
/// contractions' rate, measured on GEMMs of side `peakSide` (a tiny
/// contraction's share of it is not overhead; it and a side-8 GEMM give the
/// contraction's half size). Without `grids`, convolutions and
/// contractions get no GEMM-shape grid (doppler-calibrate --no-grids).
/// `bandwidth` (bytes/s, 0: none) prices the copies' bytes, taken off
/// their overhead and row time as the cost model adds them back.
Result<std::vector<KernelFigure>>
measureKernels(Executor &executor, std::mt19937_64 &generator, int busy,
               int repeat, double peakF32, double peakSide, bool grids = true,
               double bandwidth = 0);

} // namespace doppler::runtime::calibrate

#endif // DOPPLER_RUNTIME_TOOLS_CALIBRATEKERNELS_H
