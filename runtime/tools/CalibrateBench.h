//===- CalibrateBench.h - doppler-calibrate's timed task graphs -*- C++ -*-===//
//
// What doppler-calibrate's measurements share: a task graph under
// construction with seeded inputs (Bench), independent tasks, the time a
// device spends on its share of a graph, and a compute time net of the
// per-task overhead. Header-only, internal to the tool.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_TOOLS_CALIBRATEBENCH_H
#define DOPPLER_RUNTIME_TOOLS_CALIBRATEBENCH_H

#include "doppler/runtime/Executor.h"
#include "doppler/runtime/TaskGraph.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <random>
#include <vector>

namespace doppler::runtime::calibrate {

/// Devices that run tasks while a per-task overhead (a chain of tiny tasks,
/// the hand-off) is timed: one, the others idle. The rates are timed with
/// all devices busy (what a balanced placement sees); the overheads matter
/// where tasks are small, and the pipeline keeps a model's chains of small
/// tasks on one device (the zoo's transformers at D = 2: every compute task
/// on device 0). A device whose neighbours idle pays less per task than one
/// whose neighbour also runs tiny tasks (2-core VM, three calibrations
/// each, chrt -f 1, load 5: contraction 0.75-1.72 us against 2.22-2.42,
/// fused 0.62-1.41 against 1.14-1.77, convolution 1.98-3.85 against
/// 3.25-4.52), and a D = 2 description timed both busy priced DistilBERT,
/// placed on device 0 alone, at 87.6 us where it ran in 52.1.
constexpr int kOverheadDevices = 1;

inline double computeTime(double total, double overhead) {
  // Never below a tenth of the total: guards the rates against noise.
  return std::max(total - overhead, 0.1 * total);
}

/// One transfer size and its hop (seconds, from the producer's end to the
/// consumer's start), for the links and the network between ranks.
struct HopSample {
  int64_t bytes = 0;
  double hop = 0;
};

/// Bandwidth (bytes/s) of `hop - latency = bytes / bandwidth` fitted
/// through every sample but the first (the latency's) by least squares,
/// dominated by the largest; each excess is kept above a tenth of its hop
/// against noise, as the compute figures are.
inline double fitBandwidth(const std::vector<HopSample> &samples,
                           double latency) {
  double crossed = 0, squares = 0;
  for (size_t i = 1; i < samples.size(); ++i) {
    double bytes = static_cast<double>(samples[i].bytes);
    crossed += bytes * computeTime(samples[i].hop, latency);
    squares += bytes * bytes;
  }
  return crossed > 0 ? squares / crossed : 0;
}

/// A graph under construction and the seeded host data of its inputs.
class Bench {
public:
  explicit Bench(std::mt19937_64 &generator) : generator_(generator) {}

  /// A seeded input in [low, high) on `device`.
  ValueId input(int device, Shape shape, ElementType type = ElementType::F32,
                double low = -1, double high = 1) {
    ValueId id = *graph.addInput(device, shape, type);
    int64_t count = numElements(shape);
    std::uniform_real_distribution<double> uniform(low, high);
    if (type == ElementType::F64) {
      std::vector<double> &data = f64_.emplace_back(count);
      for (double &value : data)
        value = uniform(generator_);
      inputs[id] = data.data();
    } else {
      std::vector<float> &data = f32_.emplace_back(count);
      for (float &value : data)
        value = static_cast<float>(uniform(generator_));
      inputs[id] = data.data();
    }
    return id;
  }

  /// An input of `shape` on `device` whose every element is `value`
  /// (large operands whose values do not matter to a timing).
  ValueId filled(int device, Shape shape, float value) {
    ValueId id = *graph.addInput(device, shape, ElementType::F32);
    std::vector<float> &data = f32_.emplace_back(numElements(shape), value);
    inputs[id] = data.data();
    return id;
  }

  TaskGraph graph;
  InputBindings inputs;

private:
  std::mt19937_64 &generator_;
  // Deques: growing them never moves the buffers bound above.
  std::deque<std::vector<float>> f32_;
  std::deque<std::vector<double>> f64_;
};

/// `count` tasks made by `add`, independent of each other; the last one is
/// kept as an output.
inline Status addIndependent(Bench &bench, int count,
                      const std::function<Result<ValueId>()> &add) {
  ValueId last = -1;
  for (int k = 0; k < count; ++k) {
    Result<ValueId> task = add();
    if (!task)
      return task.status();
    last = *task;
  }
  return bench.graph.markOutput(last);
}

/// The median of `values` (not empty; reordered).
inline double medianOf(std::vector<double> &values) {
  std::nth_element(values.begin(), values.begin() + values.size() / 2,
                   values.end());
  return values[values.size() / 2];
}

/// Per timed run of a per-task figure (the chains, the hand-off's graphs),
/// the least time over which its runs are spread: the host's state moves
/// within a second, and a figure timed in one moment keeps it. A chain of
/// 100 tiny mixed tasks ran 61-68 us for seconds, then 109-120 for 0.1-0.8
/// s, and again (medians of 25 runs every 0.1 s, 2-core VM at load 2,
/// chrt -f 1); a D = 2 description timed its contraction chain at 0.21 us
/// and, a second later, its fused, copy and convolution chains at 1.7-1.8x
/// another's at the same load. So such a bench runs back to back (warm, as
/// doppler-run's repeats run: runs 50 ms apart, asleep in between, found
/// every task 1.3-2.3x slower, the caches another process's) for at least
/// repeat x this span, and the median is over all its runs, as the zoo's
/// medians are over rounds minutes apart.
constexpr std::chrono::milliseconds kChainSpacing{50};

/// The median over `repeat` runs of `bench`, after a warm-up run (page
/// faults, kernel plans), of `sample` of each run's result; with `spacing`,
/// over every run of at least repeat x spacing of them back to back.
inline Result<double>
medianOverRuns(Executor &executor, Bench &bench, int repeat,
               const std::function<double(const RunResult &)> &sample,
               std::chrono::milliseconds spacing = {}) {
  std::vector<double> samples;
  std::chrono::steady_clock::time_point until{};
  for (int run = 0;; ++run) {
    if (run > repeat && std::chrono::steady_clock::now() >= until)
      break;
    Result<RunResult> result = executor.run(bench.graph, bench.inputs);
    if (!result)
      return result.status();
    if (run == 0)
      until = std::chrono::steady_clock::now() + repeat * spacing;
    else
      samples.push_back(sample(*result));
  }
  return medianOf(samples);
}

/// Per device, the (start, end) of each compute task `result` ran.
inline std::map<int, std::vector<std::pair<double, double>>>
computeSpans(const TaskGraph &graph, const RunResult &result) {
  std::map<int, std::vector<std::pair<double, double>>> spans;
  for (ValueId id = 0; id < graph.size(); ++id) {
    const TaskTiming &timing = result.tasks[id];
    if (timing.ran && timing.worker == WorkerKind::Compute)
      spans[timing.device].emplace_back(timing.start, timing.end);
  }
  return spans;
}

/// Seconds a device spends on its share of `bench`: from its first task's
/// start to its last task's end, averaged over the devices that ran tasks;
/// the median of `repeat` runs after a warm-up. Unlike the makespan, this
/// leaves out how late each worker woke up, which on a VM can be
/// milliseconds and says nothing about the device's rate.
inline Result<double> timeDevices(Executor &executor, Bench &bench,
                                  int repeat) {
  return medianOverRuns(executor, bench, repeat, [&](const RunResult &run) {
    auto spans = computeSpans(bench.graph, run);
    double total = 0;
    for (const auto &[device, list] : spans) {
      double first = list.front().first, last = list.front().second;
      for (const auto &[start, end] : list) {
        first = std::min(first, start);
        last = std::max(last, end);
      }
      total += last - first;
    }
    return spans.empty() ? 0 : total / static_cast<double>(spans.size());
  });
}

/// Per device, in start order, `step(previous, next)` of each pair of its
/// consecutive compute tasks; its median, averaged over the devices; the
/// median of `repeat` runs after a warm-up. Medians per run, not sums:
/// another process that takes the core for a scheduler slice (4 ms, 40
/// times a chain of tiny tasks) delays one step of a run, which a sum
/// charges to every task and a median leaves out, as it should: the
/// figure is what each task costs, not how loaded the host was.
inline Result<double> medianStep(
    Executor &executor, Bench &bench, int repeat,
    const std::function<double(const std::pair<double, double> &,
                               const std::pair<double, double> &)> &step,
    std::chrono::milliseconds spacing = kChainSpacing) {
  return medianOverRuns(executor, bench, repeat, [&](const RunResult &run) {
    double total = 0;
    int devices = 0;
    std::vector<double> steps;
    for (auto &[device, list] : computeSpans(bench.graph, run)) {
      if (list.size() < 2)
        continue;
      std::sort(list.begin(), list.end());
      steps.clear();
      for (size_t i = 1; i < list.size(); ++i)
        steps.push_back(step(list[i - 1], list[i]));
      total += medianOf(steps);
      ++devices;
    }
    return devices ? total / devices : 0;
  }, spacing);
}

/// Seconds per task of a chain of dependent tasks per device in `bench`
/// (each task's input is the previous one's output): the typical interval
/// from one task's start to the next one's, i.e. the task and the
/// hand-off to its successor (medianStep). The runs `spacing` apart
/// (kChainSpacing; the GEMM grids', each point one of many, none).
inline Result<double>
timeChainSteps(Executor &executor, Bench &bench, int repeat,
               std::chrono::milliseconds spacing = kChainSpacing) {
  return medianStep(
      executor, bench, repeat,
      [](const auto &previous, const auto &next) {
        return next.first - previous.first;
      },
      spacing);
}

/// Seconds a device's compute worker sits idle between two of its tasks in
/// `bench` (the executor's hand-off: freeing, counting, queueing, popping,
/// allocating), when each task's inputs are ready as it ends: the typical
/// gap between consecutive tasks (medianStep).
inline Result<double> timeHandOffs(Executor &executor, Bench &bench,
                                   int repeat) {
  return medianStep(executor, bench, repeat,
                    [](const auto &previous, const auto &next) {
                      return std::max(0.0, next.first - previous.second);
                    });
}

/// Seconds per pair of tasks of a chain that alternates two kinds of task
/// (a copy's slice and assemble): per device, in start order, the median
/// of the start-to-start spans of tasks 2i and 2i + 2, averaged over the
/// devices; the median of `repeat` runs after a warm-up, kChainSpacing
/// apart (medianStep's reasons).
inline Result<double> timePairSteps(Executor &executor, Bench &bench,
                                    int repeat) {
  return medianOverRuns(executor, bench, repeat, [&](const RunResult &run) {
    double total = 0;
    int devices = 0;
    std::vector<double> pairs;
    for (auto &[device, list] : computeSpans(bench.graph, run)) {
      std::sort(list.begin(), list.end());
      pairs.clear();
      for (size_t i = 0; i + 2 < list.size(); i += 2)
        pairs.push_back(list[i + 2].first - list[i].first);
      if (pairs.empty())
        continue;
      total += medianOf(pairs);
      ++devices;
    }
    return devices ? total / devices : 0;
  }, kChainSpacing);
}

} // namespace doppler::runtime::calibrate

#endif // DOPPLER_RUNTIME_TOOLS_CALIBRATEBENCH_H
