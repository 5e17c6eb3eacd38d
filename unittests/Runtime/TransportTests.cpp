//===- TransportTests.cpp - Runs across processes, without MPI ------------===//
//
// The MPI-free parts of runs across ranks (Transport.h): the device -> rank
// map, the hash ranks compare, the packing of a rank's results for rank 0;
// and the executor's side of a distributed run, with a loopback transport
// that plays two ranks in one process (one executor and thread per rank):
// its outputs and merged figures equal a one-process run's.
// test/Mpi runs the same on Open MPI.
//
//===----------------------------------------------------------------------===//

#include "ExecutorTestSupport.h"

#include "doppler/runtime/Plan.h"
#include "doppler/runtime/Transport.h"

#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <thread>

using namespace doppler;
using namespace doppler::runtime;
using namespace doppler::runtime::test;

namespace {

TEST(TransportTest, ContiguousBlocks) {
  EXPECT_EQ(unwrap(assignDevicesToRanks(4, 2, {})),
            (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(unwrap(assignDevicesToRanks(4, 4, {})),
            (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(unwrap(assignDevicesToRanks(3, 1, {})),
            (std::vector<int>{0, 0, 0}));
  Result<std::vector<int>> uneven = assignDevicesToRanks(4, 3, {});
  ASSERT_FALSE(uneven);
  EXPECT_NE(uneven.message().find("4 devices cannot be split evenly over 3 "
                                  "ranks"),
            std::string::npos)
      << uneven.message();
}

TEST(TransportTest, NodesGiveTheRanks) {
  EXPECT_EQ(unwrap(assignDevicesToRanks(4, 2, {1, 0, 1, 0})),
            (std::vector<int>{1, 0, 1, 0}));
  // A node per device, each an existing rank.
  Result<std::vector<int>> short_ = assignDevicesToRanks(4, 2, {0, 1});
  ASSERT_FALSE(short_);
  EXPECT_NE(short_.message().find("2 entries for 4 devices"),
            std::string::npos);
  Result<std::vector<int>> far = assignDevicesToRanks(2, 2, {0, 2});
  ASSERT_FALSE(far);
  EXPECT_NE(far.message().find("device 1 is on node 2, but there are 2 "
                               "ranks"),
            std::string::npos)
      << far.message();
  EXPECT_FALSE(assignDevicesToRanks(4, 0, {}));
}

TEST(TransportTest, PlanNodesRoundTrip) {
  Plan plan;
  ValueId x = *plan.graph.addInput(0, {4});
  ASSERT_TRUE(plan.bindArgument(x, plan.addArgument(ElementType::F32, {4})));
  ASSERT_TRUE(plan.addResult(*plan.graph.onDevice(x, 1)));
  plan.nodes = {1, 0};
  std::string text = planToJson(plan);
  EXPECT_NE(text.find("\"nodes\": [1,0]"), std::string::npos) << text;
  Plan back = unwrap(planFromJson(text, "plan.json"));
  EXPECT_EQ(back.nodes, (std::vector<int>{1, 0}));
  // A plan without nodes writes none.
  plan.nodes.clear();
  EXPECT_EQ(planToJson(plan).find("nodes"), std::string::npos);
}

TEST(TransportTest, HashSeesEveryByte) {
  std::vector<unsigned char> bytes(1000);
  std::mt19937 random(3);
  for (unsigned char &byte : bytes)
    byte = static_cast<unsigned char>(random());
  uint64_t hash = hashBytes(bytes.data(), bytes.size());
  EXPECT_EQ(hash, hashBytes(bytes.data(), bytes.size()));
  for (size_t at : {size_t(0), size_t(500), size_t(999)}) {
    std::vector<unsigned char> changed = bytes;
    changed[at] ^= 1;
    EXPECT_NE(hash, hashBytes(changed.data(), changed.size())) << at;
  }
  // Chained: the hash of two pieces is the hash of the whole.
  EXPECT_EQ(hash, hashBytes(bytes.data() + 400, 600,
                            hashBytes(bytes.data(), 400)));
  EXPECT_NE(hashBytes(nullptr, 0), hashBytes(bytes.data(), 1));
}

/// Two ranks in one process: messages matched by tag in memory, the
/// collectives as a barrier over shared slots.
struct LoopbackHub {
  explicit LoopbackHub(int ranks) : ranks(ranks), packed(ranks), spans(ranks) {}

  struct Post {
    const void *from = nullptr;
    void *to = nullptr;
    uint64_t bytes = 0;
    Transport::Completion sent, received;
  };

  /// Both ends of `tag` posted: copies and completes both (outside the
  /// lock: a completion may post the next message).
  void post(int64_t tag, const std::function<void(Post &)> &fill) {
    Post ready;
    {
      std::lock_guard<std::mutex> lock(mutex);
      Post &slot = pending[tag];
      fill(slot);
      if (!slot.sent || !slot.received)
        return;
      ready = std::move(slot);
      pending.erase(tag);
      ++messages;
    }
    std::memcpy(ready.to, ready.from, ready.bytes);
    ready.received(Status());
    ready.sent(Status());
  }

  void barrier() {
    std::unique_lock<std::mutex> lock(mutex);
    uint64_t generation = barrierGeneration;
    if (++arrived == ranks) {
      arrived = 0;
      ++barrierGeneration;
      wake.notify_all();
      return;
    }
    wake.wait(lock, [&] { return barrierGeneration != generation; });
  }

  int ranks;
  std::mutex mutex;
  std::condition_variable wake;
  std::map<int64_t, Post> pending;
  int64_t messages = 0;
  int arrived = 0;
  uint64_t barrierGeneration = 0;
  std::vector<std::vector<unsigned char>> packed;
  std::vector<double> spans;
};

class LoopbackTransport : public Transport {
public:
  LoopbackTransport(LoopbackHub &hub, int rank) : hub_(hub), rank_(rank) {}
  int rank() const override { return rank_; }
  int ranks() const override { return hub_.ranks; }
  Status beginRun() override {
    hub_.barrier();
    return Status();
  }
  void send(int64_t tag, int, const void *data, uint64_t bytes,
            Completion done) override {
    hub_.post(tag, [&](LoopbackHub::Post &post) {
      post.from = data;
      post.bytes = bytes;
      post.sent = std::move(done);
    });
  }
  void receive(int64_t tag, int, void *data, uint64_t, Completion done) override {
    hub_.post(tag, [&](LoopbackHub::Post &post) {
      post.to = data;
      post.received = std::move(done);
    });
  }
  Status endRun(const TaskGraph &graph, RunResult &result) override {
    hub_.packed[rank_] = packRankResult(graph, deviceRanks(), rank_, result);
    hub_.spans[rank_] = result.makespan;
    hub_.barrier();
    Status merged;
    if (rank_ == 0) {
      for (int r = 1; r < hub_.ranks && merged; ++r)
        merged = unpackRankResult(graph, deviceRanks(), r, hub_.packed[r],
                                  result);
      result.devices.resize(deviceRanks().size());
      recomputeDeviceStats(result);
      result.deviceRanks = deviceRanks();
    }
    double span = 0;
    for (double s : hub_.spans)
      span = std::max(span, s);
    hub_.barrier();
    result.makespan = std::max(result.makespan, span);
    return merged;
  }
  [[noreturn]] void abortRun(const std::string &message) override {
    std::fprintf(stderr, "loopback rank %d: %s\n", rank_, message.c_str());
    std::abort();
  }

private:
  LoopbackHub &hub_;
  int rank_;
};

/// A chain across 4 devices: each device multiplies what the previous one
/// made by its own weight, so every hop from device 1 to 2 (rank 0 to
/// rank 1 in blocks of 2) is a message; device 0's and 3's results are
/// outputs.
struct ChainGraph {
  TaskGraph graph;
  std::vector<std::vector<float>> data;
  InputBindings bindings;
  std::vector<ValueId> outputs;

  ChainGraph() {
    std::mt19937 random(11);
    std::uniform_real_distribution<float> uniform(-1, 1);
    ValueId x = *graph.addInput(0, {16, 32});
    std::vector<ValueId> inputs{x};
    ValueId current = x;
    for (int d = 0; d < 4; ++d) {
      ValueId w = *graph.addInput(d, {32, 32});
      inputs.push_back(w);
      ValueId here = *graph.onDevice(current, d);
      current = *graph.addEinsum(d, "ij,jk->ik", JoinKind::Mul, AggKind::Add,
                                 {here, w});
      if (d == 0 || d == 3)
        outputs.push_back(current);
    }
    for (ValueId output : outputs)
      (void)graph.markOutput(output);
    data.resize(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      data[i].resize(graph.byteSize(inputs[i]) / sizeof(float));
      for (float &v : data[i])
        v = uniform(random);
      bindings[inputs[i]] = data[i].data();
    }
  }
};

std::unique_ptr<Backend> cpu(int devices) {
  CpuBackendOptions options;
  options.numDevices = devices;
  options.pinComputeWorkers = false;
  return std::move(*createCpuBackend(options));
}

TEST(TransportTest, TwoRanksEqualOneProcess) {
  ChainGraph chain;
  Executor single(cpu(4));
  RunResult reference = unwrap(single.run(chain.graph, chain.bindings));

  LoopbackHub hub(2);
  std::vector<RunResult> results(2);
  std::vector<std::string> errors(2);
  auto rank = [&](int r) {
    auto transport = std::make_shared<LoopbackTransport>(hub, r);
    transport->setDeviceRanks(unwrap(assignDevicesToRanks(4, 2, {})));
    ExecutorOptions options;
    options.transport = transport;
    Executor executor(cpu(4), options);
    for (int run = 0; run < 3; ++run) { // runs repeat on one executor
      Result<RunResult> result = executor.run(chain.graph, chain.bindings);
      if (!result) {
        errors[r] = result.message();
        return;
      }
      results[r] = std::move(*result);
    }
  };
  std::thread rank1(rank, 1);
  rank(0);
  rank1.join();
  ASSERT_EQ(errors[0], "");
  ASSERT_EQ(errors[1], "");
  // One message per run: the hop from device 1 to device 2.
  EXPECT_EQ(hub.messages, 3);

  // Rank 0 has every output, byte for byte the one-process run's.
  const RunResult &merged = results[0];
  ASSERT_EQ(merged.outputs.size(), chain.outputs.size());
  for (ValueId output : chain.outputs)
    EXPECT_EQ(merged.outputs.at(output).bytes,
              reference.outputs.at(output).bytes)
        << "output %" << output;
  // Rank 1 keeps only its own (device 3's).
  EXPECT_EQ(results[1].outputs.size(), 1u);
  EXPECT_EQ(results[1].outputs.count(chain.outputs[1]), 1u);
  // Every task ran somewhere, each on its own device, and each device's
  // figures are there; the transfer across ranks ends after it starts.
  for (ValueId id = 0; id < chain.graph.size(); ++id) {
    if (chain.graph.task(id).kind == TaskKind::Input)
      continue;
    EXPECT_TRUE(merged.tasks[id].ran) << "task " << id;
    EXPECT_EQ(merged.tasks[id].device, chain.graph.task(id).device);
    EXPECT_LE(merged.tasks[id].start, merged.tasks[id].end);
  }
  ASSERT_EQ(merged.devices.size(), 4u);
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(merged.devices[d].computeTasks, 1) << "device " << d;
    EXPECT_GT(merged.devices[d].peakBytes, 0u) << "device " << d;
  }
  EXPECT_EQ(merged.deviceRanks, (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(results[0].makespan, results[1].makespan);
  EXPECT_NE(merged.chromeTrace(chain.graph).find("rank 1 device 3"),
            std::string::npos);
}

TEST(TransportTest, PackedResultsRejectGarbage) {
  ChainGraph chain;
  RunResult result;
  std::vector<unsigned char> garbage{1, 2, 3};
  Status status =
      unpackRankResult(chain.graph, {0, 0, 1, 1}, 1, garbage, result);
  ASSERT_FALSE(status);
  EXPECT_NE(status.message().find("rank 1 sent a malformed run result"),
            std::string::npos);
}

} // namespace
