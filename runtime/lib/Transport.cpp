//===- Transport.cpp - The MPI-free parts of runs across processes --------===//
//
// The device -> rank map, the hash ranks compare, and the packing of one
// rank's part of a run for rank 0 (Transport.h). MpiTransport.cpp moves the
// bytes; everything here is testable without MPI.
//
//===----------------------------------------------------------------------===//

#include "doppler/runtime/Transport.h"

#include "doppler/runtime/Executor.h"

#include <algorithm>
#include <cstring>

namespace doppler::runtime {

Result<std::vector<int>> assignDevicesToRanks(int devices, int ranks,
                                              const std::vector<int> &nodes) {
  if (ranks < 1)
    return Status::failure("needs at least one rank, got " +
                           std::to_string(ranks));
  if (devices < 1)
    return Status::failure("needs at least one device, got " +
                           std::to_string(devices));
  std::vector<int> owner(static_cast<size_t>(devices));
  if (!nodes.empty()) {
    if (static_cast<int>(nodes.size()) != devices)
      return Status::failure("the plan's \"nodes\" has " +
                             std::to_string(nodes.size()) +
                             " entries for " + std::to_string(devices) +
                             " devices (one node per device)");
    for (int d = 0; d < devices; ++d) {
      if (nodes[d] < 0 || nodes[d] >= ranks)
        return Status::failure(
            "device " + std::to_string(d) + " is on node " +
            std::to_string(nodes[d]) + ", but there are " +
            std::to_string(ranks) + " ranks (node i runs on rank i)");
      owner[d] = nodes[d];
    }
    return owner;
  }
  if (devices % ranks != 0)
    return Status::failure(
        std::to_string(devices) + " devices cannot be split evenly over " +
        std::to_string(ranks) +
        " ranks (give the plan a \"nodes\" field, or use a rank count that "
        "divides the device count)");
  int perRank = devices / ranks;
  for (int d = 0; d < devices; ++d)
    owner[d] = d / perRank;
  return owner;
}

uint64_t hashBytes(const void *data, uint64_t bytes, uint64_t seed) {
  const auto *p = static_cast<const unsigned char *>(data);
  uint64_t h = seed;
  for (uint64_t i = 0; i < bytes; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

namespace {

template <typename T> void put(std::vector<unsigned char> &out, T value) {
  size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &value, sizeof(T));
}

/// Reads packed fields in order; `ok` turns false past the end.
struct Reader {
  const std::vector<unsigned char> &in;
  size_t at = 0;
  bool ok = true;
  template <typename T> T get() {
    T value{};
    if (!ok || at + sizeof(T) > in.size()) {
      ok = false;
      return value;
    }
    std::memcpy(&value, in.data() + at, sizeof(T));
    at += sizeof(T);
    return value;
  }
};

/// Whether `id` is a transfer whose source lives on another rank than the
/// transfer itself.
bool crossesRanks(const TaskGraph &graph, const std::vector<int> &ranks,
                  ValueId id) {
  const Task &task = graph.task(id);
  if (task.kind != TaskKind::Transfer || task.inputs.empty())
    return false;
  auto rankOf = [&](int d) {
    return d >= 0 && d < static_cast<int>(ranks.size()) ? ranks[d] : 0;
  };
  return rankOf(graph.task(task.inputs[0]).device) != rankOf(task.device);
}

} // namespace

std::vector<unsigned char> packRankResult(const TaskGraph &graph,
                                          const std::vector<int> &deviceRanks,
                                          int rank, const RunResult &result) {
  std::vector<unsigned char> out;
  std::vector<ValueId> ran;
  for (ValueId id = 0; id < static_cast<ValueId>(result.tasks.size()); ++id)
    if (result.tasks[id].ran)
      ran.push_back(id);
  put<int64_t>(out, static_cast<int64_t>(ran.size()));
  for (ValueId id : ran) {
    const TaskTiming &timing = result.tasks[id];
    put<int64_t>(out, id);
    put<double>(out, timing.start);
    put<double>(out, timing.end);
    put<int32_t>(out, timing.device);
    put<uint8_t>(out, static_cast<uint8_t>(timing.worker));
    put<int32_t>(out, timing.lane);
  }
  std::vector<int> mine;
  for (int d = 0; d < static_cast<int>(deviceRanks.size()); ++d)
    if (deviceRanks[d] == rank && d < static_cast<int>(result.devices.size()))
      mine.push_back(d);
  put<int64_t>(out, static_cast<int64_t>(mine.size()));
  for (int d : mine) {
    put<int32_t>(out, d);
    put<uint64_t>(out, result.devices[d].peakBytes);
  }
  put<int64_t>(out, static_cast<int64_t>(result.outputs.size()));
  for (const auto &[id, tensor] : result.outputs) {
    (void)graph;
    put<int64_t>(out, id);
    put<uint64_t>(out, tensor.bytes.size());
    out.insert(out.end(), tensor.bytes.begin(), tensor.bytes.end());
  }
  return out;
}

/// Merges one timing of `id` that `rank` reported (Transport.h).
static void mergeTiming(const TaskGraph &graph,
                        const std::vector<int> &deviceRanks, int rank,
                        ValueId id, const TaskTiming &theirs,
                        RunResult &result) {
  TaskTiming &ours = result.tasks[id];
  const Task &task = graph.task(id);
  int owner = task.device >= 0 &&
                      task.device < static_cast<int>(deviceRanks.size())
                  ? deviceRanks[task.device]
                  : 0;
  if (!crossesRanks(graph, deviceRanks, id) || !ours.ran) {
    ours = theirs;
    ours.device = task.device;
    return;
  }
  if (owner == rank) { // The receive: its end, where and how it ran.
    double start = ours.start;
    ours = theirs;
    ours.start = std::min(start, theirs.end);
  } else { // The send: when the source was ready.
    ours.start = std::min(theirs.start, ours.end);
  }
}

Status unpackRankResult(const TaskGraph &graph,
                        const std::vector<int> &deviceRanks, int rank,
                        const std::vector<unsigned char> &packed,
                        RunResult &result) {
  Reader reader{packed};
  auto malformed = [&] {
    return Status::failure("rank " + std::to_string(rank) +
                           " sent a malformed run result (" +
                           std::to_string(packed.size()) + " bytes)");
  };
  if (result.tasks.size() < static_cast<size_t>(graph.size()))
    result.tasks.resize(static_cast<size_t>(graph.size()));
  int64_t timings = reader.get<int64_t>();
  for (int64_t i = 0; i < timings && reader.ok; ++i) {
    ValueId id = reader.get<int64_t>();
    TaskTiming timing;
    timing.start = reader.get<double>();
    timing.end = reader.get<double>();
    timing.device = reader.get<int32_t>();
    timing.worker = static_cast<WorkerKind>(reader.get<uint8_t>());
    timing.lane = reader.get<int32_t>();
    timing.ran = true;
    if (!reader.ok || id < 0 || id >= graph.size())
      return malformed();
    mergeTiming(graph, deviceRanks, rank, id, timing, result);
  }
  int64_t devices = reader.get<int64_t>();
  for (int64_t i = 0; i < devices && reader.ok; ++i) {
    int32_t d = reader.get<int32_t>();
    uint64_t peak = reader.get<uint64_t>();
    if (!reader.ok || d < 0)
      return malformed();
    if (result.devices.size() <= static_cast<size_t>(d))
      result.devices.resize(static_cast<size_t>(d) + 1);
    result.devices[d].peakBytes = peak;
  }
  int64_t outputs = reader.get<int64_t>();
  for (int64_t i = 0; i < outputs && reader.ok; ++i) {
    ValueId id = reader.get<int64_t>();
    uint64_t bytes = reader.get<uint64_t>();
    if (!reader.ok || id < 0 || id >= graph.size() ||
        bytes != graph.byteSize(id) || reader.at + bytes > packed.size())
      return malformed();
    HostTensor tensor;
    tensor.type = graph.task(id).type;
    tensor.shape = graph.task(id).shape;
    tensor.bytes.assign(packed.begin() + static_cast<ptrdiff_t>(reader.at),
                        packed.begin() +
                            static_cast<ptrdiff_t>(reader.at + bytes));
    reader.at += bytes;
    result.outputs[id] = std::move(tensor);
  }
  if (!reader.ok || reader.at != packed.size())
    return malformed();
  return Status();
}

void recomputeDeviceStats(RunResult &result) {
  result.makespan = 0;
  for (DeviceStats &stats : result.devices) {
    uint64_t peak = stats.peakBytes;
    stats = DeviceStats{};
    stats.peakBytes = peak;
  }
  for (const TaskTiming &timing : result.tasks) {
    if (!timing.ran || timing.device < 0)
      continue;
    result.makespan = std::max(result.makespan, timing.end);
    if (result.devices.size() <= static_cast<size_t>(timing.device))
      result.devices.resize(static_cast<size_t>(timing.device) + 1);
    DeviceStats &stats = result.devices[timing.device];
    double busy = timing.end - timing.start;
    if (timing.worker == WorkerKind::Compute) {
      stats.computeBusy += busy;
      ++stats.computeTasks;
    } else {
      stats.copyBusy += busy;
      ++stats.copyTasks;
    }
  }
  for (DeviceStats &stats : result.devices)
    stats.utilization =
        result.makespan > 0 ? stats.computeBusy / result.makespan : 0;
}

} // namespace doppler::runtime
