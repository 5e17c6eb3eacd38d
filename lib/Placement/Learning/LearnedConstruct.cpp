//===- LearnedConstruct.cpp - Annealing distilled into a construction -----===//
//
// See LearnedConstruct.h. The pass is critical path's (Heuristics.cpp's
// placeByRule) with the device rule replaced by a linear scorer; its SEL is
// critical path's own (selectCriticalPathNode).
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Learning/LearnedConstruct.h"
#include "Doppler/Placement/Analysis.h"
#include "Doppler/Placement/Environment.h"
#include "Doppler/Placement/Heuristics.h"

#include "ModelNumbers.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

using namespace doppler::placement;

const std::array<const char *, kConstructFeatureCount>
    doppler::placement::kConstructFeatureNames = {
        "est_gap",       "est_gap_global", "is_cp",      "is_ja",
        "split_gap",     "ready_gap",      "device_wait", "idle_gap",
        "load",          "local_share",    "late_producer_on_d",
        "empty",         "crit_x_est_gap", "crit_x_is_cp",
        "crit_x_local",  "small_x_local"};

namespace {

constexpr double kConstructClip = 10;

/// The per-step buffers and the graph-level scales of the features.
struct ConstructScratch {
  std::vector<double> est, scratch, split, ready, same, cross, local;
  std::vector<NodeId> window;
  double meanCompute = 1, balanced = 1, maxBottom = 1;
};

double clipped(double x) { return std::min(x, kConstructClip); }

/// Writes the features of placing v on every device to `rows` (numDevices
/// x kConstructFeatureCount); `s.est` holds est(v, d).
void constructFeatures(const PlacementEnvironment &env, NodeId v,
                       const std::vector<double> &bottom, ConstructScratch &s,
                       double *rows) {
  const Graph &graph = env.graph();
  const int32_t numDevices = env.numDevices();
  env.joinSplitCosts(v, s.split.data());
  // Data-ready time on each device: inputs there at their finish, the
  // others after their edge cost (the two largest cross arrivals kept, as
  // PlacementEnvironment::earliestStarts does).
  std::fill(s.same.begin(), s.same.end(), 0.0);
  std::fill(s.cross.begin(), s.cross.end(), 0.0);
  std::fill(s.local.begin(), s.local.end(), 0.0);
  double inputCost = 0, latest = -1;
  DeviceId latestDevice = -1;
  ArrayView<int32_t> edges = graph.predecessorEdges(v);
  for (int32_t e : edges) {
    const NodeId u = graph.edgeSource(e);
    const DeviceId du = env.deviceOf(u);
    const double finish = env.estimatedFinish(u);
    const double arrival = finish + graph.edgeCost(e);
    s.same[du] = std::max(s.same[du], finish);
    s.cross[du] = std::max(s.cross[du], arrival);
    s.local[du] += graph.edgeCost(e);
    inputCost += graph.edgeCost(e);
    if (arrival > latest) {
      latest = arrival;
      latestDevice = du;
    }
  }
  double best = 0, second = 0;
  DeviceId bestDevice = -1;
  for (DeviceId d = 0; d < numDevices; ++d) {
    if (s.cross[d] > best) {
      second = best;
      best = s.cross[d];
      bestDevice = d;
    } else if (s.cross[d] > second) {
      second = s.cross[d];
    }
  }
  double minEst = s.est[0], minSplit = s.est[0] + s.split[0];
  double minReady = INFINITY, meanLoad = 0;
  for (DeviceId d = 0; d < numDevices; ++d) {
    s.ready[d] = std::max(s.same[d], d == bestDevice ? second : best);
    minEst = std::min(minEst, s.est[d]);
    minSplit = std::min(minSplit, s.est[d] + s.split[d]);
    minReady = std::min(minReady, s.ready[d]);
    meanLoad += env.deviceLoad(d) / numDevices;
  }
  const DeviceId cp = earliestStartDevice(env, s.est.data());
  const DeviceId ja = joinAwareDevice(numDevices, s.est.data(), s.split.data());
  const double c = graph.computeCost(v);
  const double unit = c + s.meanCompute;
  const double crit = bottom[v] / s.maxBottom;
  const double small = s.meanCompute / unit;
  for (DeviceId d = 0; d < numDevices; ++d) {
    double *f = rows + d * kConstructFeatureCount;
    const double free = env.deviceFreeTime(d);
    const double localShare = inputCost > 0 ? s.local[d] / inputCost : 0;
    f[0] = clipped((s.est[d] - minEst) / unit);
    f[1] = clipped((s.est[d] - minEst) / s.balanced);
    f[2] = d == cp;
    f[3] = d == ja;
    f[4] = clipped((s.est[d] + s.split[d] - minSplit) / unit);
    f[5] = clipped((s.ready[d] - minReady) / unit);
    f[6] = clipped(std::max(0.0, free - s.ready[d]) / unit);
    f[7] = clipped(std::max(0.0, s.ready[d] - free) / unit);
    f[8] = (env.deviceLoad(d) - meanLoad) / s.balanced;
    f[9] = localShare;
    f[10] = d == latestDevice;
    f[11] = env.nodesOn(d).empty();
    f[12] = crit * f[0];
    f[13] = crit * f[2];
    f[14] = crit * localShare;
    f[15] = small * localShare;
  }
}

/// Drops the devices whose est_gap exceeds `window` from `example`; its
/// label becomes the kept row's index, or -1 when the label was dropped.
void keepWindow(ConstructExample &example, double window) {
  constexpr int F = kConstructFeatureCount;
  int32_t kept = 0;
  DeviceId label = -1;
  for (int32_t d = 0; d < example.numDevices; ++d) {
    if (example.features[d * F] > window)
      continue;
    if (d == example.label)
      label = kept;
    std::copy_n(&example.features[d * F], F, &example.features[kept * F]);
    ++kept;
  }
  example.features.resize(static_cast<size_t>(kept) * F);
  example.numDevices = kept;
  example.label = label;
}

/// ConstructRollIn::judge's label: the device (within `window` of the
/// earliest start, 0: any) whose completion by critical path's rule is
/// shortest; critical path's own device `cp` among equals (tried first),
/// then the lowest id. `forced` is a buffer of numNodes values.
DeviceId completedBest(const PlacementEnvironment &env, NodeId v,
                       const std::vector<double> &bottom,
                       const std::vector<double> &rows, Simulator &judge,
                       double window, DeviceId cp,
                       std::vector<DeviceId> &forced) {
  ArrayView<DeviceId> placed = env.assignment();
  forced.assign(placed.begin(), placed.end());
  DeviceId best = -1;
  double shortest = INFINITY;
  for (DeviceId k = -1; k < env.numDevices(); ++k) {
    const DeviceId d = k < 0 ? cp : k;
    if ((k >= 0 && d == cp) ||
        (window > 0 && rows[d * kConstructFeatureCount] > window))
      continue;
    forced[v] = d;
    const double makespan = judge.run(completePlacement(
        env.graph(), env.numDevices(), bottom, false, forced));
    if (makespan < shortest) {
      shortest = makespan;
      best = d;
    }
  }
  return best;
}

/// The device permutation (teacher's device -> this pass's) that best
/// matches the two placements so far: `together[a * D + b]`, the compute
/// placed on a here and on b by the teacher, matched greedily largest
/// first; unmatched devices in id order.
void matchDevices(const std::vector<double> &together, int32_t numDevices,
                  std::vector<DeviceId> &teacherToHere) {
  std::vector<int32_t> cells(together.size());
  for (size_t i = 0; i < cells.size(); ++i)
    cells[i] = static_cast<int32_t>(i);
  std::stable_sort(cells.begin(), cells.end(), [&](int32_t x, int32_t y) {
    return together[x] > together[y];
  });
  std::vector<char> hereUsed(numDevices, 0);
  teacherToHere.assign(numDevices, -1);
  for (int32_t cell : cells) {
    if (together[cell] <= 0)
      break;
    const int32_t here = cell / numDevices, teacher = cell % numDevices;
    if (hereUsed[here] || teacherToHere[teacher] >= 0)
      continue;
    hereUsed[here] = 1;
    teacherToHere[teacher] = here;
  }
  DeviceId next = 0;
  for (DeviceId b = 0; b < numDevices; ++b) {
    if (teacherToHere[b] >= 0)
      continue;
    while (hereUsed[next])
      ++next;
    hereUsed[next] = 1;
    teacherToHere[b] = next;
  }
}

/// The pass. With a teacher, each step follows it (its device renamed by
/// the current permutation) with probability rollIn.follow (seeded), else
/// `model` decides (critical path's device where no model); with `out`,
/// one example per step labelled by the teacher (see ConstructRollIn).
std::vector<DeviceId> runConstruct(const Graph &graph, int32_t numDevices,
                                   const ConstructModel *model,
                                   const std::vector<DeviceId> *teacher,
                                   const ConstructRollIn &rollIn,
                                   std::vector<ConstructExample> *out) {
  const std::vector<double> bottom = computeBottomLevels(graph).value;
  PlacementEnvironment env;
  env.reset(graph, numDevices);
  ConstructScratch s;
  for (auto *buffer : {&s.est, &s.scratch, &s.split, &s.ready, &s.same,
                       &s.cross, &s.local})
    buffer->assign(numDevices, 0.0);
  const int32_t n = graph.numNodes();
  s.meanCompute = std::max(graph.totalCompute() / std::max(n, 1), 1e-12);
  s.balanced = std::max(graph.totalCompute() / numDevices, 1e-12);
  s.maxBottom = 1e-12;
  for (double b : bottom)
    s.maxBottom = std::max(s.maxBottom, b);
  std::vector<double> rows(static_cast<size_t>(numDevices) *
                           kConstructFeatureCount);
  std::vector<double> together;
  std::vector<DeviceId> teacherToHere(numDevices);
  for (DeviceId d = 0; d < numDevices; ++d)
    teacherToHere[d] = d;
  if (teacher)
    together.assign(static_cast<size_t>(numDevices) * numDevices, 0.0);
  SeededRandom random(rollIn.seed);
  const int32_t remapEvery = std::max(rollIn.remapEvery, 1);
  CandidateOrder order;
  order.reset(n, bottom.data());
  int32_t steps = 0;
  std::vector<DeviceId> forced;
  while (!env.done()) {
    order.sync(env);
    const NodeId v =
        selectCriticalPathNode(env, order, bottom, s.window, s.est, s.scratch);
    DeviceId device = -1;
    if (model || out)
      constructFeatures(env, v, bottom, s, rows.data());
    if (model) {
      device = earliestStartDevice(env, s.est.data());
      double best = model->score(&rows[device * kConstructFeatureCount]);
      for (DeviceId d = 0; d < numDevices; ++d) {
        if (model->window > 0 &&
            rows[d * kConstructFeatureCount] > model->window)
          continue;
        const double z = model->score(&rows[d * kConstructFeatureCount]);
        if (z > best) {
          best = z;
          device = d;
        }
      }
    } else {
      device = earliestStartDevice(env, s.est.data());
    }
    if (teacher && (rollIn.follow >= 1 ||
                    (rollIn.follow > 0 && random.uniform() < rollIn.follow)))
      device = teacherToHere[(*teacher)[v]];
    if (out && teacher) {
      ConstructExample example;
      example.features = rows;
      example.numDevices = numDevices;
      example.label = teacherToHere[(*teacher)[v]];
      if (rollIn.followProducers) {
        // The teacher's producer of v on v's own device, the dearest edge
        // first: v goes where that producer is here.
        double dearest = -1;
        ArrayView<int32_t> inEdges = graph.predecessorEdges(v);
        for (int32_t e : inEdges) {
          const NodeId u = graph.edgeSource(e);
          if ((*teacher)[u] == (*teacher)[v] && graph.edgeCost(e) > dearest) {
            dearest = graph.edgeCost(e);
            example.label = env.deviceOf(u);
          }
        }
      }
      if (rollIn.judge)
        example.label = completedBest(env, v, bottom, rows, *rollIn.judge,
                                      rollIn.window,
                                      earliestStartDevice(env, s.est.data()),
                                      forced);
      if (rollIn.window > 0)
        keepWindow(example, rollIn.window);
      if (example.label >= 0)
        out->push_back(std::move(example));
    }
    env.step(v, device);
    order.remove(v);
    if (!together.empty()) {
      together[static_cast<size_t>(device) * numDevices + (*teacher)[v]] +=
          graph.computeCost(v) + 1e-12;
      if (++steps % remapEvery == 0)
        matchDevices(together, numDevices, teacherToHere);
    }
  }
  ArrayView<DeviceId> placed = env.assignment();
  return {placed.begin(), placed.end()};
}

} // namespace

double ConstructModel::score(const double *features) const {
  double z = 0;
  for (int i = 0; i < kConstructFeatureCount; ++i)
    z += weight[i] * (features[i] - mean[i]) / scale[i];
  return z;
}

std::vector<DeviceId>
doppler::placement::placeLearnedConstruct(const Graph &graph,
                                          int32_t numDevices,
                                          const ConstructModel &model) {
  return runConstruct(graph, numDevices, &model, nullptr, ConstructRollIn{},
                      nullptr);
}

void doppler::placement::collectConstructExamples(
    const Graph &graph, int32_t numDevices,
    const std::vector<DeviceId> &teacher, const ConstructModel *model,
    const ConstructRollIn &rollIn, std::vector<ConstructExample> &out) {
  runConstruct(graph, numDevices, model, &teacher, rollIn, &out);
}

namespace {

/// The mean negative log-likelihood of `examples` under `model` (standard
/// features), and where given its gradient and Hessian in the weights.
double constructLoss(const ConstructModel &model,
                     const std::vector<ConstructExample> &examples,
                     std::vector<double> *gradient,
                     std::vector<double> *hessian) {
  constexpr int F = kConstructFeatureCount;
  const double weight = 1.0 / examples.size();
  std::vector<double> z, x, mean(F);
  double nll = 0;
  for (const ConstructExample &e : examples) {
    const int32_t devices = e.numDevices;
    z.resize(devices);
    x.resize(static_cast<size_t>(devices) * F);
    double top = -INFINITY;
    for (int32_t d = 0; d < devices; ++d) {
      for (int i = 0; i < F; ++i)
        x[d * F + i] = (e.features[d * F + i] - model.mean[i]) / model.scale[i];
      double score = 0;
      for (int i = 0; i < F; ++i)
        score += model.weight[i] * x[d * F + i];
      top = std::max(top, z[d] = score);
    }
    double total = 0;
    for (int32_t d = 0; d < devices; ++d)
      total += z[d] = std::exp(z[d] - top);
    nll -= weight * std::log(z[e.label] / total);
    if (!gradient)
      continue;
    std::fill(mean.begin(), mean.end(), 0.0);
    for (int32_t d = 0; d < devices; ++d)
      for (int i = 0; i < F; ++i)
        mean[i] += z[d] / total * x[d * F + i];
    for (int i = 0; i < F; ++i)
      (*gradient)[i] += weight * (mean[i] - x[e.label * F + i]);
    // Hessian: the covariance of x under the softmax.
    for (int32_t d = 0; d < devices; ++d) {
      const double p = weight * z[d] / total;
      for (int i = 0; i < F; ++i) {
        const double xi = x[d * F + i] - mean[i];
        for (int j = 0; j <= i; ++j)
          (*hessian)[i * F + j] += p * xi * (x[d * F + j] - mean[j]);
      }
    }
  }
  return nll;
}

/// Solves a x = b for a symmetric positive definite a (Cholesky; a's lower
/// triangle is read and overwritten). Returns false if a is not.
bool constructSolve(std::vector<double> &a, std::vector<double> &b, int n) {
  for (int j = 0; j < n; ++j) {
    double diagonal = a[j * n + j];
    for (int k = 0; k < j; ++k)
      diagonal -= a[j * n + k] * a[j * n + k];
    if (diagonal <= 0)
      return false;
    a[j * n + j] = std::sqrt(diagonal);
    for (int i = j + 1; i < n; ++i) {
      double value = a[i * n + j];
      for (int k = 0; k < j; ++k)
        value -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = value / a[j * n + j];
    }
  }
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < i; ++k)
      b[i] -= a[i * n + k] * b[k];
    b[i] /= a[i * n + i];
  }
  for (int i = n - 1; i >= 0; --i) {
    for (int k = i + 1; k < n; ++k)
      b[i] -= a[k * n + i] * b[k];
    b[i] /= a[i * n + i];
  }
  return true;
}

} // namespace

ConstructModel doppler::placement::fitConstructModel(
    const std::vector<ConstructExample> &examples, int32_t iterations,
    double l2, double *loss) {
  constexpr int F = kConstructFeatureCount;
  ConstructModel model;
  double rowsTotal = 0;
  std::array<double, F> sum{}, square{};
  for (const ConstructExample &e : examples)
    for (int32_t d = 0; d < e.numDevices; ++d, ++rowsTotal)
      for (int i = 0; i < F; ++i) {
        const double x = e.features[d * F + i];
        sum[i] += x;
        square[i] += x * x;
      }
  if (rowsTotal == 0)
    return model;
  for (int i = 0; i < F; ++i) {
    model.mean[i] = sum[i] / rowsTotal;
    const double variance =
        std::max(0.0, square[i] / rowsTotal - model.mean[i] * model.mean[i]);
    model.scale[i] = variance > 1e-18 ? std::sqrt(variance) : 1.0;
  }
  // Newton's method on the convex (L2-regularised) likelihood, halving the
  // step until the loss falls: deterministic, converges in a few steps.
  auto regularised = [&](const ConstructModel &m) {
    double penalty = 0;
    for (double w : m.weight)
      penalty += 0.5 * l2 * w * w;
    return constructLoss(m, examples, nullptr, nullptr) + penalty;
  };
  double current = regularised(model);
  for (int32_t step = 0; step < iterations; ++step) {
    std::vector<double> gradient(F, 0.0), hessian(F * F, 0.0);
    constructLoss(model, examples, &gradient, &hessian);
    for (int i = 0; i < F; ++i) {
      gradient[i] += l2 * model.weight[i];
      hessian[i * F + i] += l2;
    }
    if (!constructSolve(hessian, gradient, F))
      break;
    bool improved = false;
    for (double rate = 1; rate > 1e-4 && !improved; rate /= 2) {
      ConstructModel trial = model;
      for (int i = 0; i < F; ++i)
        trial.weight[i] -= rate * gradient[i];
      const double value = regularised(trial);
      if (value < current) {
        improved = current - value > 1e-10;
        model = trial;
        current = value;
        if (!improved)
          break;
      }
    }
    if (!improved)
      break;
  }
  if (loss)
    *loss = constructLoss(model, examples, nullptr, nullptr);
  return model;
}

double doppler::placement::constructAgreement(
    const ConstructModel &model,
    const std::vector<ConstructExample> &examples) {
  size_t agree = 0;
  for (const ConstructExample &e : examples) {
    DeviceId best = 0;
    double top = model.score(&e.features[0]);
    for (int32_t d = 1; d < e.numDevices; ++d) {
      const double z = model.score(&e.features[d * kConstructFeatureCount]);
      if (z > top) {
        top = z;
        best = d;
      }
    }
    agree += best == e.label;
  }
  return examples.empty() ? 0.0
                          : static_cast<double>(agree) / examples.size();
}

bool doppler::placement::writeConstructModel(const ConstructModel &model,
                                             const std::string &path,
                                             const std::string &comment,
                                             std::string *error) {
  std::ofstream file(path);
  if (!file) {
    if (error)
      *error = "cannot write construct model '" + path + "'";
    return false;
  }
  file << "// doppler learned-construct model: means, scales, weights (";
  for (int i = 0; i < kConstructFeatureCount; ++i)
    file << (i ? ", " : "") << kConstructFeatureNames[i];
  file << ")\n";
  std::istringstream lines(comment);
  std::string line;
  while (std::getline(lines, line))
    file << "// " << line << "\n";
  file.precision(17);
  for (const auto *row : {&model.mean, &model.scale, &model.weight}) {
    for (double x : *row)
      file << x << ", ";
    file << "\n";
  }
  file << model.window << "\n";
  return static_cast<bool>(file);
}

std::optional<ConstructModel>
doppler::placement::readConstructModel(const std::string &path,
                                       std::string *error) {
  std::ifstream file(path);
  if (!file) {
    if (error)
      *error = "cannot read construct model '" + path + "'";
    return std::nullopt;
  }
  std::stringstream text;
  text << file.rdbuf();
  std::optional<std::vector<double>> parsed = parseModelNumbers(
      text.str(), "construct model '" + path + "'", error);
  if (!parsed)
    return std::nullopt;
  const std::vector<double> &numbers = *parsed;
  if (numbers.size() != 3 * kConstructFeatureCount + 1) {
    if (error)
      *error = "construct model '" + path + "': expected " +
               std::to_string(3 * kConstructFeatureCount + 1) +
               " numbers, found " +
               std::to_string(numbers.size());
    return std::nullopt;
  }
  ConstructModel model;
  for (int i = 0; i < kConstructFeatureCount; ++i) {
    model.mean[i] = numbers[i];
    model.scale[i] = numbers[kConstructFeatureCount + i];
    model.weight[i] = numbers[2 * kConstructFeatureCount + i];
  }
  model.window = numbers[3 * kConstructFeatureCount];
  return model;
}
