//===- CalibrateGemmGrid.h - Kernel rates by GEMM shape -----*- C++ -*-===//
//
// The "grid" of a calibrated description's contraction entry (below:
// measureContractionGrid, as the convolutions') and its conv entry
// (GemmGrid in Doppler/Placement/KernelCosts.h): the CPU runtime runs a
// convolution as one GEMM per image and group (runtime/lib/CpuWindow.cpp:
// im2col, then W_g [m x k] Col [k x n]), whose rate depends on all three
// sides: on the
// 2-core VM a GEMM side of 64 filters runs at 1.5-1.7x the time of one of
// 256 at the same positions, which no rule on min(m, n) tells apart, and
// RegNet's groups of 16 filters ran at 4-5x what that rule said. Measured
// on 3x3 stride-1 padding-1 convolutions at every point of m filters per
// group x n = side^2 positions x k = 9 C (C input channels per group), with
// as many groups as make a task's weights kGridTaskBytes (a group's GEMM is
// the same whatever the groups; the smallest points of the grid are one
// group of RegNet's convolutions, 25 of 16 filters), each task on its own
// weights and enough tasks that the weights of a device's tasks pass the
// caches (kGridColdBytes): in a model every layer reads its own weights
// once per run, from memory beyond the caches when the model is larger
// than them (a 400x400 1x1 convolution on 2x2 positions: 65 us with eight
// layers' weights in the caches, 131 with 64 layers', as in RegNet). The
// rates are net of the kind's per-task overhead.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_TOOLS_CALIBRATEGEMMGRID_H
#define DOPPLER_RUNTIME_TOOLS_CALIBRATEGEMMGRID_H

#include "CalibrateBench.h"

#include "Doppler/Support/Window.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

namespace doppler::runtime::calibrate {

/// FLOP/s at every (m, n, k) of the axes: flops[(i * n.size() + j) *
/// k.size() + l].
struct GemmGridFigure {
  std::vector<double> m, n, k, flops;
  /// How long measuring it took.
  double seconds = 0;
  bool empty() const { return flops.empty(); }
  /// As the description's conv entry holds it.
  nlohmann::json json() const {
    return {{"m", m}, {"n", n}, {"k", k}, {"flops", flops}};
  }
};

/// Filters, positions per side and input channels of the grid's points:
/// m 16..256, n 4..256 (2x2..16x16), k 36..2304 (4..256 channels, 3x3).
constexpr int64_t kGridFilters[] = {16, 64, 256};
constexpr int64_t kGridSides[] = {2, 4, 8, 16};
constexpr int64_t kGridChannels[] = {4, 16, 64, 256};
/// Weights per device a point's tasks read, together: most of the
/// last-level cache (32 MiB on the VM), as a model's layers' weights are
/// (each run uploads the graph's inputs first, as doppler-run does, so the
/// last ones uploaded start in the caches).
constexpr double kGridColdBytes = 24e6;
/// The largest point's weights (256 x 2304 conv taps, 1024 x 512 features).
constexpr double kGridLargestBytes = 4.0 * 256 * 2304;
/// Runs per point at most (each the median of its steps already).
constexpr int kGridRepeat = 3;
/// Weights per task at least (up to kGridMaxGroups groups).
constexpr double kGridTaskBytes = 256e3;
constexpr int64_t kGridMaxGroups = 64;
/// Tasks per device and point: at least kGridMinTasks (three steps per
/// run, whose median one late step cannot move), at most kGridMaxTasks,
/// and no more than kGridRunFlops of work per device and run beyond the
/// minimum (the largest points are bound by their FLOPs, not by their
/// weights' reads).
constexpr int kGridMinTasks = 4;
constexpr int kGridMaxTasks = 256;
constexpr double kGridRunFlops = 5e7;

/// Tasks per device for a point of `weightBytes` weights and `flops` FLOPs.
inline int gridTasks(double weightBytes, double flops) {
  double tasks = std::ceil(kGridColdBytes / weightBytes);
  tasks = std::min(tasks, std::floor(kGridRunFlops / flops));
  return static_cast<int>(std::clamp(tasks, double(kGridMinTasks),
                                     double(kGridMaxTasks)));
}

/// One point of a grid: each task's FLOPs and weights' shape, a device's
/// input (made once per device, hot as a layer's input is) and a task on
/// that input and its own weights.
struct GridPoint {
  double flops = 0;
  Shape weightShape;
  std::function<ValueId(Bench &, int)> input;
  std::function<Result<ValueId>(Bench &, int, ValueId input, ValueId weight)>
      task;
};

/// The points' weights: per device one pool of kGridColdBytes and the
/// largest point's weights, filled once (the values do not matter to a
/// timing), bound at successive offsets so that each task reads its own,
/// instead of allocating and filling 24 MB per point and device.
class GridWeights {
public:
  ValueId take(Bench &bench, int device, const Shape &shape) {
    if (pools_.size() <= size_t(device))
      pools_.resize(size_t(device) + 1);
    std::vector<float> &pool = pools_[device].floats;
    if (pool.empty())
      pool.assign(size_t((kGridColdBytes + kGridLargestBytes) / 4), 0.01f);
    size_t &offset = pools_[device].offset;
    const size_t count = size_t(numElements(shape));
    if (offset + count > pool.size())
      offset = 0;
    ValueId id = *bench.graph.addInput(device, shape, ElementType::F32);
    bench.inputs[id] = pool.data() + offset;
    offset += count;
    return id;
  }
  /// Each point starts at the pools' beginning.
  void restart() {
    for (Pool &pool : pools_)
      pool.offset = 0;
  }

private:
  struct Pool {
    std::vector<float> floats;
    size_t offset = 0;
  };
  std::vector<Pool> pools_;
};

/// A point's rate on `busy` devices at once: the median over `repeat` runs
/// (kGridRepeat at most) of the median step from one task's start to the
/// next's (timeChainSteps: a task and its hand-off, as the overhead holds
/// them, and robust to another process taking the core for a slice of the
/// run, which a sum over the tasks would charge to every one), less
/// `overhead` (seconds, the kind's per-task time).
inline Result<double> gridRate(Executor &executor, std::mt19937_64 &generator,
                               int busy, int repeat, double overhead,
                               GridWeights &weights, const GridPoint &point) {
  const int tasks =
      gridTasks(4.0 * double(numElements(point.weightShape)), point.flops);
  Bench bench(generator);
  weights.restart();
  for (int d = 0; d < busy; ++d) {
    ValueId input = point.input(bench, d);
    if (Status status = addIndependent(bench, tasks,
                                       [&] {
                                         return point.task(
                                             bench, d, input,
                                             weights.take(bench, d,
                                                          point.weightShape));
                                       });
        !status)
      return status;
  }
  Result<double> time = timeChainSteps(executor, bench,
                                       std::min(repeat, kGridRepeat),
                                       std::chrono::milliseconds(0));
  if (!time)
    return time.status();
  return point.flops / computeTime(*time, overhead);
}

/// The rate of `pointAt(m, n, k)` at every point of `grid`'s axes (set),
/// in its order (m-major).
inline Status
fillGrid(Executor &executor, std::mt19937_64 &generator, int busy, int repeat,
         double overhead, GemmGridFigure &grid,
         const std::function<GridPoint(int64_t, int64_t, int64_t)> &pointAt) {
  GridWeights weights;
  for (double m : grid.m)
    for (double n : grid.n)
      for (double k : grid.k) {
        Result<double> rate =
            gridRate(executor, generator, busy, repeat, overhead, weights,
                     pointAt(int64_t(m), int64_t(n), int64_t(k)));
        if (!rate)
          return rate.status();
        grid.flops.push_back(*rate);
      }
  return Status();
}

/// The convolutions' grid (the file comment) on `busy` devices at once;
/// `overhead` is the conv kind's per-task time.
inline Result<GemmGridFigure> measureConvGrid(Executor &executor,
                                              std::mt19937_64 &generator,
                                              int busy, int repeat,
                                              double overhead) {
  WindowGeometry geometry;
  geometry.kernel = {3, 3};
  geometry.strides = {1, 1};
  geometry.dilations = {1, 1};
  geometry.padLow = {1, 1};
  geometry.padHigh = {1, 1};
  GemmGridFigure grid;
  for (int64_t filters : kGridFilters)
    grid.m.push_back(double(filters));
  for (int64_t side : kGridSides)
    grid.n.push_back(double(side * side));
  for (int64_t channels : kGridChannels)
    grid.k.push_back(double(9 * channels));
  Status status = fillGrid(
      executor, generator, busy, repeat, overhead, grid,
      [&](int64_t filters, int64_t positions, int64_t taps) {
        const int64_t channels = taps / 9;
        const int64_t side = std::llround(std::sqrt(double(positions)));
        const double groupBytes = 4.0 * double(filters * taps);
        const int64_t groups = std::clamp<int64_t>(
            int64_t(std::ceil(kGridTaskBytes / groupBytes)), 1,
            kGridMaxGroups);
        const Shape inputShape = {1, groups * channels, side, side};
        const Shape weightShape = {groups * filters, channels, 3, 3};
        GridPoint point;
        point.flops = 2.0 * double(groups * filters) * double(positions) *
                      double(taps);
        point.weightShape = weightShape;
        point.input = [inputShape](Bench &bench, int d) {
          return bench.input(d, inputShape);
        };
        point.task = [groups, geometry](Bench &bench, int d, ValueId input,
                                        ValueId weight) {
          return bench.graph.addConvolution(d, input, weight, groups,
                                            geometry);
        };
        return point;
      });
  if (!status)
    return status;
  return grid;
}

/// Contractions' sides: m rows of the input (positions, tokens), n output
/// features (the weights' rows), k the contracted features.
constexpr int64_t kGridRows[] = {4, 16, 64, 256};
constexpr int64_t kGridFeatures[] = {16, 64, 256, 1024};
constexpr int64_t kGridContracted[] = {32, 128, 512};

/// The contractions' grid: "ij,kj->ik" as a linear layer holds its weights
/// ([n, k], its own per task) on an [m, k] input, 48 shapes, measured as
/// the convolutions' are; `overhead` is the contraction's per-task time.
inline Result<GemmGridFigure>
measureContractionGrid(Executor &executor, std::mt19937_64 &generator,
                       int busy, int repeat, double overhead) {
  GemmGridFigure grid;
  for (int64_t m : kGridRows)
    grid.m.push_back(double(m));
  for (int64_t n : kGridFeatures)
    grid.n.push_back(double(n));
  for (int64_t k : kGridContracted)
    grid.k.push_back(double(k));
  Status status = fillGrid(
      executor, generator, busy, repeat, overhead, grid,
      [](int64_t m, int64_t n, int64_t k) {
        GridPoint point;
        point.flops = 2.0 * double(m) * double(n) * double(k);
        point.weightShape = {n, k};
        point.input = [m, k](Bench &bench, int d) {
          return bench.input(d, {m, k});
        };
        point.task = [](Bench &bench, int d, ValueId input, ValueId weight) {
          return bench.graph.addEinsum(d, "ij,kj->ik", JoinKind::Mul,
                                       AggKind::Add, {input, weight});
        };
        return point;
      });
  if (!status)
    return status;
  return grid;
}

} // namespace doppler::runtime::calibrate

#endif // DOPPLER_RUNTIME_TOOLS_CALIBRATEGEMMGRID_H
