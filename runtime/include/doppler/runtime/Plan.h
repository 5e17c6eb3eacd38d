//===- Plan.h - A task graph with its function's signature ------*- C++ -*-===//
//
// A plan is what `doppler-run --export-plan` writes and `doppler-run-plan`
// runs on a machine without MLIR: the task graph of a placed function plus
// what is needed to feed and read it like the function itself:
//  - the function's arguments (type and shape, in order), and for every
//    graph input the argument it holds (an argument read on several devices
//    is one graph input per device, all bound to the same host data);
//  - the function's results, in order (a value may appear twice);
//  - the predicted makespan of the placement, when the IR had one.
//
// Seeded arguments are the reference interpreter's (doppler-interpret):
// arguments in order from one std::mt19937_64, every element uniform in
// [-1, 1) from 53 random bits, rounded to the element type. So a plan run
// anywhere gives the outputs doppler-run and doppler-interpret compute.
//
// The JSON format, version 1 (one task per line when written):
//
//   {"format": "doppler-runtime-plan", "version": 1, "function": "mlp",
//    "devices": 2,                      // devices used (informative)
//    "predicted_makespan_s": 1.2e-4,    // or null
//    "nodes": [0, 0, 1, 1],             // optional: each device's node
//                                       // (rank under mpirun)
//    "arguments": [{"type": "f32", "shape": [16, 32]}, ...],
//    "results": [57],                   // task ids, in result order
//    "tasks": [                         // ids 0, 1, 2, ... in order
//      {"id": 0, "kind": "input", "device": 0, "type": "f32",
//       "shape": [16, 32], "argument": 0},
//      {"id": 5, "kind": "einsum", "device": 1, "inputs": [0, 3],
//       "spec": "bi,ih->bh", "join": "mul", "aggregation": "add",
//       "scalar": 0.5 /* scale and shift only */, "type": ..., "shape": ...},
//      {"id": 6, "kind": "fused", "device": 1, "inputs": [5, 2],
//       "spec": "bh,h->bh", /* elementwise */ "program":
//       "add(in0, in1); gelu(s0)" /* JoinProgram.h's text */, ...},
//      {"kind": "transfer", "inputs": [5], "seconds": 1e-6 /* optional:
//       a fixed duration */}, {"kind": "fill", "value": 0.0},
//      {"kind": "slice", "inputs": [0], "offsets": [0, 16], "shape": [16, 16]},
//      {"kind": "assemble", "inputs": [...], "block_extents": [[8, 8], [24]]},
//      {"kind": "reshape", "inputs": [1], "shape": [4, 8] /* required: the
//       new shape, same element count */},
//      {"kind": "conv", "inputs": [x, w] /* [N, C, S..], [F, C/groups,
//       K..] */, "groups": 1, "strides": [1, 1], "dilations": [1, 1],
//       "padding_low": [1, 1], "padding_high": [1, 1] /* one entry per
//       spatial dim; the kernel is the weight's spatial extents */},
//      {"kind": "pool", "inputs": [x], "pool": "max" /* or "avg" */,
//       "kernel": [3, 3], "strides": [2, 2], "dilations": [1, 1],
//       "padding_low": [1, 1], "padding_high": [1, 1]},
//      {"kind": "gather", "inputs": [table, indices] /* indices i32 or
//       i64 */, "axis": 0 /* result: table[:axis] + indices +
//       table[axis+1:] */},
//      {"kind": "delay", "inputs": [...], "seconds": 1e-5},
//      ... every task may carry "priority" (integer) and "label" (string)]}
//
// "type" and "shape" are written for every task and, where the inputs imply
// them, checked against what they imply. A task may only read earlier
// tasks. Loading rebuilds the graph through the TaskGraph builders, so a
// loaded plan is validated exactly like one built in memory; every error is
// one line naming the file and, where there is one, the task or field
// ("plan.json: tasks[7]: input 1 refers to task 12, which does not exist
// before this task"). A reader rejects any other version.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_PLAN_H
#define DOPPLER_RUNTIME_PLAN_H

#include "doppler/runtime/Executor.h"
#include "doppler/runtime/Status.h"
#include "doppler/runtime/TaskGraph.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace doppler::runtime {

/// The version `savePlan` writes and `loadPlan` accepts.
constexpr int kPlanFormatVersion = 1;

struct PlanArgument {
  ElementType type = ElementType::F32;
  Shape shape;
};

struct Plan {
  /// Name of the function the plan came from (informative).
  std::string function;
  TaskGraph graph;
  std::vector<PlanArgument> arguments;
  /// For every graph input, the index of the argument it holds.
  std::map<ValueId, int64_t> inputArgument;
  /// The function's results in order; each is a graph output.
  std::vector<ValueId> results;
  /// The placement's predicted makespan in seconds, when known.
  std::optional<double> predictedMakespan;
  /// The device count a plan file declares (its "devices" field, checked
  /// to be in [1, kMaxDevices] and to cover every task's device); unset for
  /// a plan built in memory, where the devices used are the count.
  std::optional<int> devices;
  /// The node of each device (its "nodes" field, optional): across
  /// processes node i runs on rank i (runtime/README.md, "Across processes
  /// (MPI)"); empty: devices are split over the ranks in contiguous blocks.
  std::vector<int> nodes;

  /// Declares argument `arguments.size()` and returns its index.
  int64_t addArgument(ElementType type, Shape shape);
  /// Records that graph input `input` holds argument `argument`; checks
  /// that both exist and agree in type and shape.
  Status bindArgument(ValueId input, int64_t argument);
  /// Appends a result and marks it as a graph output.
  Status addResult(ValueId value);
  /// Checks the bookkeeping: every graph input bound to an existing
  /// argument of its type and shape, every result a graph value.
  Status verify() const;
};

/// Plan <-> JSON text. `source` names the text in messages ("plan.json").
std::string planToJson(const Plan &plan);
Result<Plan> planFromJson(const std::string &text, const std::string &source);
Status savePlan(const Plan &plan, const std::string &path);
Result<Plan> loadPlan(const std::string &path);

/// One dense row-major host buffer per argument, seeded as the interpreter
/// seeds them (see the file comment).
struct HostArguments {
  std::vector<std::vector<unsigned char>> buffers;
};
/// Fails (instead of throwing std::bad_alloc) when the host cannot hold them.
/// Float elements are uniform in [-1, 1); integer (i32/i64) elements are
/// floor(u * indexBound) for the same uniform u in [0, 1), so that seeded
/// gather indices are in range (indexBound: seededIndexBound).
Result<HostArguments>
makeSeededArguments(const std::vector<PlanArgument> &arguments, uint64_t seed,
                    int64_t indexBound = 1);
/// The same, with the index bound of the plan's graph.
Result<HostArguments> makeSeededArguments(const Plan &plan, uint64_t seed);
/// The smallest extent a gather task of `graph` indexes (its table's extent
/// along its axis), at least 1; 1 when there is none. The interpreter's
/// seeded integer arguments use the same bound (over doppler.gather ops).
int64_t seededIndexBound(const TaskGraph &graph);
/// Binds every graph input of `plan` to its argument's buffer.
InputBindings bindArguments(const Plan &plan, const HostArguments &arguments);

/// The interpreter's fingerprint of a tensor: the sum and the Euclidean norm
/// of its elements, accumulated in double in row-major order.
struct Checksum {
  double sum = 0;
  double l2 = 0;
};
Checksum checksum(const HostTensor &tensor);
/// Element `i` of `tensor` as a double (f16 / f32 / f64 / i32 / i64; an i64
/// beyond 2^53 is rounded).
double elementAt(const HostTensor &tensor, int64_t i);
/// "f32[16x32]".
std::string tensorTypeString(ElementType type, const Shape &shape);

/// "output 0: f32[16x32] sum 1.23456789 l2 8.7654321" (9 significant
/// digits, as doppler-interpret prints them): the line every runner prints
/// per result, so that runs can be compared with diff or FileCheck.
std::string describeOutput(size_t index, const HostTensor &tensor);

/// The function's results of a run, in order.
Result<std::vector<HostTensor>> collectResults(const Plan &plan,
                                               const RunResult &run);
/// Result tensors as JSON ({"format": "doppler-outputs", "version": 1,
/// "outputs": [{"type", "shape", "data"}]}); values are printed with enough
/// digits to read back exactly. Used to compare a run elsewhere (e.g. a
/// lowered program) with the interpreter.
Status saveOutputs(const std::vector<HostTensor> &outputs,
                   const std::string &path);
Result<std::vector<HostTensor>> loadOutputs(const std::string &path);

//===----------------------------------------------------------------------===//
// Timing and reports (doppler-run, doppler-run-plan, doppler-calibrate)
//===----------------------------------------------------------------------===//

struct Measurement {
  /// The run whose makespan is the median of the timed runs (the lower
  /// median for an even count: a makespan that really happened).
  RunResult median;
  /// Makespans of the timed runs, in run order (seconds).
  std::vector<double> makespans;
};

/// One warm-up run (it pays first-touch page faults and per-graph plans that
/// later runs do not), then `repeat` timed runs.
Result<Measurement> measure(Executor &executor, const TaskGraph &graph,
                            const InputBindings &bindings, int repeat);

/// What the runners print, as text or JSON.
struct RunReport {
  std::string file;
  std::string function;
  std::string backend;
  int devices = 0;
  uint64_t seed = 0;
  int repeat = 0;
  const TaskGraph *graph = nullptr; ///< Must be set.
  Measurement measurement;
  std::optional<double> predicted;
  std::vector<HostTensor> outputs;
  /// Filled by a check against a reference, per output.
  std::vector<double> errors;
  std::optional<double> maxRelError;
  double tolerance = 0;
  std::string trace;
  /// Bytes allowed per device (index = device; 0 or missing: unlimited),
  /// reported next to each device's peak.
  std::vector<uint64_t> memoryLimits;

  /// memoryLimits[device], 0 when unlimited or not given.
  uint64_t memoryLimitOf(size_t device) const {
    return device < memoryLimits.size() ? memoryLimits[device] : 0;
  }
  bool ok() const { return !maxRelError || *maxRelError <= tolerance; }
  /// JSON keys: file, function, backend, devices, seed, repeat, tasks,
  /// tasks_by_kind, measured_makespan_s, makespans_s, predicted_makespan_s
  /// (null when unknown), measured_over_predicted, per_device (utilization,
  /// compute/copy busy seconds and task counts, peak_bytes,
  /// memory_limit_bytes (null: unlimited)), host_peak_bytes (evicted
  /// values), outputs (type, sum, l2[, rel_error]), and with a check
  /// max_rel_error, tolerance, ok.
  std::string json() const;
  std::string text() const;
};

/// IEEE binary16 nearest to `value` (round to nearest even, directly from
/// double: going through float would round twice).
uint16_t doubleToHalf(double value);

} // namespace doppler::runtime

#endif // DOPPLER_RUNTIME_PLAN_H
