//===- RuntimeCostOracle.h - Measured makespans for real-rl -----*- C++ -*-===//
//
// The cost oracle of the real-rl stage (METHOD section 6, stage 3): the
// wall-clock makespan of actually running the placed graph on the runtime.
//
// Each training graph loaded from an .mlir function keeps that function as
// its program. An episode's assignment (a device per node) is written as
// `doppler.device` onto a copy of the function, doppler-insert-transfers
// adds the moves, the plan builder (buildRuntimePlan) turns the result into
// a runtime task graph (as doppler-run does) and the executor runs it on
// seeded inputs that are generated once per program. The cost is the median of `repeat` timed runs
// after `warmup` untimed ones, in microseconds: the unit of the cost
// attributes, so measured and simulated costs read alike in the log.
//
// Library DopplerRuntimeOracle: it wires the IR bridge (Analysis), the plan
// builder (DopplerToRuntime), the runtime and Placement's oracle interface
// together, which neither Placement nor the runtime may do. MLIR-free
// interface (the IR lives behind Impl) so that doppler-train.cpp stays a
// plain C++ tool over the learning library's noexcept API.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIMEORACLE_RUNTIMECOSTORACLE_H
#define DOPPLER_RUNTIMEORACLE_RUNTIMECOSTORACLE_H

#include "Doppler/Analysis/GraphLoader.h"
#include "Doppler/Placement/Graph.h"
#include "Doppler/Placement/Learning/Trainer.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace doppler::train {

struct RuntimeOracleOptions {
  /// "cpu", or "cuda" where the build has the CUDA backend.
  std::string backend = "cpu";
  /// Devices of the backend: the largest device count trained for.
  int32_t numDevices = 1;
  /// Timed runs per measurement; the (lower) median is the cost.
  int32_t repeat = 1;
  /// Untimed runs before them (first-touch page faults, caches).
  int32_t warmup = 1;
  /// Seed of the programs' random inputs (as doppler-run --seed).
  uint64_t seed = 0;
};

class RuntimeCostOracle : public placement::CostOracle {
public:
  /// Creates the backend and its executor; fails (e.g. no CUDA backend in
  /// this build, or no GPU) with a one-line error.
  static std::unique_ptr<RuntimeCostOracle>
  create(const RuntimeOracleOptions &options, std::string *error);
  ~RuntimeCostOracle() override;

  /// Makes the function of `path` (chosen and costed as `load` says) the
  /// program of `graph`, which loadPlacementGraph(path, load) returned.
  /// Checks that the function's ops number exactly as the graph's nodes and
  /// that it runs (every op on device 0). Errors are one line.
  bool addProgram(const std::string &path, const GraphLoadOptions &load,
                  const placement::Graph &graph, std::string *error);

  /// Runs `assignment` of a graph given to addProgram (matched by
  /// structure: the trainer holds its own copies of the graphs).
  std::optional<double>
  measure(const placement::Graph &graph,
          placement::ArrayView<placement::DeviceId> assignment,
          std::string *error) override;
  /// "runtime-cpu" or "runtime-cuda".
  const char *costSource() const noexcept override;

  /// Measurements so far and the wall time they took (runs, transfer
  /// insertion and plan building), for the tool's summary.
  int64_t measurements() const;
  double measuringSeconds() const;

private:
  struct Impl;
  explicit RuntimeCostOracle(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace doppler::train

#endif // DOPPLER_RUNTIMEORACLE_RUNTIMECOSTORACLE_H
