//===- SimulatorTest.cpp - Reference parity, ties, extended modes ---------===//

#include "Doppler/Placement/Simulator.h"

#include "NaiveSimulator.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>

using namespace doppler::placement;
using doppler::placement::testing::naiveSimulate;

namespace {

const std::string kDataDir = DOPPLER_SHARED_DATA_DIR;

//===----------------------------------------------------------------------===//
// Parity with the reference simulator (data/reference/reference_cases.json)
//===----------------------------------------------------------------------===//

struct ReferenceCase {
  std::string graphName;
  std::string caseName;
  int32_t numDevices;
  std::vector<DeviceId> assignment;
  double envNow;
};

std::vector<ReferenceCase> loadReferenceCases() {
  std::vector<ReferenceCase> cases;
  std::ifstream file(kDataDir + "/reference_cases.json");
  if (!file)
    return cases; // the Loaded test below reports this
  nlohmann::json root = nlohmann::json::parse(file, nullptr, false);
  if (root.is_discarded() || !root.contains("graphs"))
    return cases;
  for (auto &[graphName, graph] : root["graphs"].items()) {
    for (auto &entry : graph["cases"]) {
      ReferenceCase c;
      c.graphName = graphName;
      c.caseName = entry["name"].get<std::string>();
      c.numDevices = graph["devices"].get<int32_t>();
      c.assignment = entry["assignment"].get<std::vector<DeviceId>>();
      c.envNow = entry["env_now"].get<double>();
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

const std::vector<ReferenceCase> &referenceCases() {
  static const std::vector<ReferenceCase> cases = loadReferenceCases();
  return cases;
}

/// Graphs are read once and shared by all cases.
const Graph &referenceGraph(const std::string &name) {
  static std::map<std::string, std::unique_ptr<Graph>> graphs;
  auto &slot = graphs[name];
  if (!slot) {
    std::string error;
    auto graph =
        readReferenceGraph(kDataDir + "/graphs/" + name + ".txt", &error);
    EXPECT_TRUE(graph) << error;
    slot = std::make_unique<Graph>(graph ? std::move(*graph) : Graph());
  }
  return *slot;
}

double relativeError(double actual, double expected) {
  return std::abs(actual - expected) / std::max(1.0, std::abs(expected));
}

class SimulatorParity : public ::testing::TestWithParam<ReferenceCase> {};

TEST(SimulatorParityData, Loaded) {
  EXPECT_EQ(referenceCases().size(), 96u)
      << "reading " << kDataDir << "/reference_cases.json";
}

TEST_P(SimulatorParity, MatchesReferenceMakespan) {
  const ReferenceCase &c = GetParam();
  const Graph &graph = referenceGraph(c.graphName);
  ASSERT_EQ(graph.numNodes(), static_cast<int32_t>(c.assignment.size()));
  std::string error;
  ASSERT_TRUE(validateAssignment(graph, c.numDevices, c.assignment, &error))
      << error;

  Simulator simulator(graph, c.numDevices);
  // Twice: a second run must not see state left over from the first.
  for (int repeat = 0; repeat < 2; ++repeat)
    EXPECT_LT(relativeError(simulator.run(c.assignment), c.envNow), 1e-12)
        << "fast simulator, run " << repeat;
  EXPECT_LT(
      relativeError(naiveSimulate(graph, c.numDevices, c.assignment), c.envNow),
      1e-12)
      << "naive simulator";

  // The extended engine with every extension neutral (unit speeds) must
  // agree too: it takes no batching shortcut.
  SimulatorOptions neutral;
  neutral.deviceSpeeds = true;
  neutral.recordTransfers = true;
  neutral.handOff = true; // every hand-off 0
  Simulator extended(graph, System::uniform(c.numDevices), neutral);
  EXPECT_LT(relativeError(extended.run(c.assignment), c.envNow), 1e-12)
      << "extended engine";

  // Schedule invariants.
  const Schedule &schedule = simulator.schedule();
  double busyTotal = 0, lastEnd = 0;
  for (double b : schedule.deviceBusy)
    busyTotal += b;
  EXPECT_EQ(busyTotal, graph.totalCompute());
  for (NodeId v = 0; v < graph.numNodes(); ++v) {
    EXPECT_EQ(schedule.end[v] - schedule.start[v], graph.computeCost(v));
    EXPECT_EQ(schedule.start[v], extended.schedule().start[v]);
    lastEnd = std::max(lastEnd, schedule.end[v]);
    for (int32_t e = graph.succBegin(v); e < graph.succEnd(v); ++e) {
      NodeId w = graph.edgeTarget(e);
      double delay = c.assignment[v] == c.assignment[w] ? 0 : graph.edgeCost(e);
      EXPECT_GE(schedule.start[w], schedule.end[v] + delay);
    }
  }
  EXPECT_EQ(schedule.makespan, lastEnd);
}

std::string caseTestName(const ::testing::TestParamInfo<ReferenceCase> &info) {
  std::string name = info.param.graphName + "_" + info.param.caseName;
  for (char &ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch)))
      ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(ReferenceCases, SimulatorParity,
                         ::testing::ValuesIn(referenceCases()), caseTestName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SimulatorParity);

//===----------------------------------------------------------------------===//
// Assignment validation
//===----------------------------------------------------------------------===//

Graph buildGraph(GraphBuilder &builder) {
  std::string error;
  auto graph = builder.build(&error);
  EXPECT_TRUE(graph) << error;
  return graph ? std::move(*graph) : Graph();
}

/// 0 -> 1 -> 2 with the given costs.
Graph chain3(double c0, double c1, double c2, double m) {
  GraphBuilder b;
  b.addNode(c0, m);
  b.addNode(c1, m);
  b.addNode(c2, m);
  b.addEdge(0, 1);
  b.addEdge(1, 2);
  return buildGraph(b);
}

TEST(SimulatorValidate, Assignment) {
  Graph graph = chain3(1, 1, 1, 1);
  std::string error;
  EXPECT_TRUE(
      validateAssignment(graph, 2, std::vector<DeviceId>{0, 1, 1}, &error));
  EXPECT_FALSE(
      validateAssignment(graph, 2, std::vector<DeviceId>{0, 1}, &error));
  EXPECT_EQ(error, "assignment has 2 entries, expected 3 (one per node)");
  EXPECT_FALSE(
      validateAssignment(graph, 2, std::vector<DeviceId>{0, 2, 1}, &error));
  EXPECT_EQ(error, "node 1: device 2 out of range [0, 2)");
  EXPECT_FALSE(
      validateAssignment(graph, 2, std::vector<DeviceId>{0, 1, -1}, &error));
  EXPECT_EQ(error, "node 2: device -1 out of range [0, 2)");
  EXPECT_FALSE(
      validateAssignment(graph, 0, std::vector<DeviceId>{0, 0, 0}, &error));
  EXPECT_EQ(error, "device count 0 is less than 1");
}

//===----------------------------------------------------------------------===//
// Hand-made graphs (reference semantics)
//===----------------------------------------------------------------------===//

TEST(SimulatorReference, ChainOnOneDeviceAndAcross) {
  Graph graph = chain3(2, 3, 4, 10);
  Simulator simulator(graph, 2);
  EXPECT_EQ(simulator.run(std::vector<DeviceId>{0, 0, 0}), 9);
  // Each hop across devices costs m = 10.
  EXPECT_EQ(simulator.run(std::vector<DeviceId>{0, 1, 0}), 29);
  const Schedule &s = simulator.schedule();
  EXPECT_EQ(s.start, (std::vector<double>{0, 12, 25}));
  EXPECT_EQ(s.end, (std::vector<double>{2, 15, 29}));
  EXPECT_EQ(s.deviceBusy, (std::vector<double>{6, 3}));
  EXPECT_EQ(s.makespan, 29);
}

TEST(SimulatorReference, EmptyGraph) {
  Graph graph = *GraphBuilder().build();
  Simulator simulator(graph, 3);
  EXPECT_EQ(simulator.run(std::vector<DeviceId>{}), 0);
}

TEST(SimulatorReference, SourcesQueueInIdOrder) {
  GraphBuilder b;
  b.addNode(5, 0);
  b.addNode(1, 0);
  b.addNode(2, 0);
  Graph graph = buildGraph(b);
  Simulator simulator(graph, 1);
  EXPECT_EQ(simulator.run(std::vector<DeviceId>{0, 0, 0}), 8);
  EXPECT_EQ(simulator.schedule().start, (std::vector<double>{0, 5, 6}));
}

// A cross-device arrival at time T was created before T, so it precedes the
// same-device arrivals created during T's finishing cascade, even when its
// target has the larger id (METHOD section 2).
TEST(SimulatorReference, CrossDeviceArrivalBeatsSameDeviceAtSameInstant) {
  GraphBuilder b;
  b.addNode(2, 0);   // 0 = P, device 0
  b.addNode(1, 1);   // 1 = X, device 1: arrives at 2 on device 0
  b.addNode(10, 0);  // 2 = Q, device 0, fed by P (same device)
  b.addNode(1, 0);   // 3 = R, device 0, fed by X (cross device)
  b.addNode(100, 0); // 4 = S, device 1, fed by R (m(R) = 0)
  b.addEdge(0, 2);
  b.addEdge(1, 3);
  b.addEdge(3, 4);
  Graph graph = buildGraph(b);
  std::vector<DeviceId> assignment = {0, 1, 0, 0, 1};
  Simulator simulator(graph, 2);
  // R runs 2..3 before Q (3..13); S runs 3..103. Served by id, Q would run
  // first and the makespan would be 113.
  EXPECT_EQ(simulator.run(assignment), 103);
  EXPECT_EQ(simulator.schedule().start, (std::vector<double>{0, 0, 3, 2, 3}));
  EXPECT_EQ(naiveSimulate(graph, 2, assignment), 103);
}

// Two transfers arrive at the same instant: the one created earlier (its
// producer finished first) is served first, whatever the ids.
TEST(SimulatorReference, SimultaneousArrivalsServedInCreationOrder) {
  GraphBuilder b;
  b.addNode(1, 3); // 0: device 1, done at 1, arrives at 4
  b.addNode(2, 2); // 1: device 2, done at 2, arrives at 4
  b.addNode(5, 0); // 2: device 0, fed by 1
  b.addNode(5, 0); // 3: device 0, fed by 0
  b.addEdge(1, 2);
  b.addEdge(0, 3);
  Graph graph = buildGraph(b);
  std::vector<DeviceId> assignment = {1, 2, 0, 0};
  Simulator simulator(graph, 3);
  EXPECT_EQ(simulator.run(assignment), 14);
  // 3 (fed by the earlier finisher) first, although 2 has the smaller id.
  EXPECT_EQ(simulator.schedule().start[3], 4);
  EXPECT_EQ(simulator.schedule().start[2], 9);
  EXPECT_EQ(naiveSimulate(graph, 3, assignment), 14);
}

// Outputs of one node fan out in edge order: source ascending, then order
// of first appearance (not destination id).
TEST(SimulatorReference, FanOutFollowsEdgeOrder) {
  GraphBuilder b;
  b.addNode(1, 0); // 0
  b.addNode(3, 0); // 1
  b.addNode(1, 0); // 2
  b.addEdge(0, 2); // added first, so 2 becomes ready before 1
  b.addEdge(0, 1);
  Graph graph = buildGraph(b);
  Simulator simulator(graph, 1);
  EXPECT_EQ(simulator.run(std::vector<DeviceId>{0, 0, 0}), 5);
  EXPECT_EQ(simulator.schedule().start, (std::vector<double>{0, 2, 1}));
}

TEST(SimulatorReference, ZeroCostsAndPerEdgeCosts) {
  GraphBuilder b;
  b.addNode(0, 0); // 0: zero compute
  b.addNode(4, 7); // 1
  b.addNode(1, 0); // 2
  b.addNode(1, 0); // 3
  b.addEdge(0, 1);
  b.addEdge(1, 2, 2); // explicit edge costs differ from m(1)
  b.addEdge(1, 3, 5);
  Graph graph = buildGraph(b);
  std::vector<DeviceId> assignment = {0, 0, 1, 1};
  Simulator simulator(graph, 2);
  // 1 runs 0..4; 2 arrives at 6 (runs 6..7), 3 arrives at 9 (9..10).
  EXPECT_EQ(simulator.run(assignment), 10);
  EXPECT_EQ(naiveSimulate(graph, 2, assignment), 10);
}

/// Random DAGs with many ties (small integer costs, zeros, repeated edges,
/// per-edge costs): the fast simulator, the extended engine and the naive
/// port must agree exactly.
TEST(SimulatorReference, AgreesWithNaivePortOnRandomGraphs) {
  std::mt19937_64 rng(20240611);
  for (int trial = 0; trial < 400; ++trial) {
    std::uniform_int_distribution<int> sizeDist(1, 40);
    const int numNodes = sizeDist(rng);
    const int numDevices = std::uniform_int_distribution<int>(1, 5)(rng);
    std::uniform_int_distribution<int> costDist(0, 4);
    // Zero-time nodes take the simulator's general path; positive ones its
    // level-by-level fast path. Test both.
    std::uniform_int_distribution<int> computeDist(trial % 2, 4);
    GraphBuilder b;
    for (int v = 0; v < numNodes; ++v)
      b.addNode(computeDist(rng), costDist(rng));
    const bool perEdgeCosts = trial % 3 == 0;
    std::uniform_int_distribution<int> nodeDist(0, numNodes - 1);
    for (int k = 0; k < 2 * numNodes; ++k) {
      int u = nodeDist(rng), v = nodeDist(rng);
      if (u == v)
        continue;
      if (u > v)
        std::swap(u, v); // acyclic by construction
      if (perEdgeCosts)
        b.addEdge(u, v, costDist(rng));
      else
        b.addEdge(u, v);
    }
    Graph graph = buildGraph(b);
    Simulator fast(graph, numDevices);
    SimulatorOptions neutral;
    neutral.deviceSpeeds = true;
    Simulator extended(graph, System::uniform(numDevices), neutral);
    std::uniform_int_distribution<int> deviceDist(0, numDevices - 1);
    for (int a = 0; a < 5; ++a) {
      std::vector<DeviceId> assignment(numNodes);
      for (auto &d : assignment)
        d = deviceDist(rng);
      const double expected = naiveSimulate(graph, numDevices, assignment);
      ASSERT_EQ(fast.run(assignment), expected) << "trial " << trial;
      ASSERT_EQ(extended.run(assignment), expected) << "trial " << trial;
      ASSERT_EQ(fast.schedule().start, extended.schedule().start);
    }
  }
}

// Wide graphs keep more than 64 events in flight, which moves the
// simulator's future-event queue from its sorted-array form to a heap.
TEST(SimulatorReference, AgreesWithNaivePortWhenManyEventsAreInFlight) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> costDist(1, 50);
  GraphBuilder b;
  const int numSources = 150, numNodes = 400;
  for (int v = 0; v < numNodes; ++v)
    b.addNode(costDist(rng), costDist(rng));
  for (int v = numSources; v < numNodes; ++v) {
    std::uniform_int_distribution<int> earlier(0, v - 1);
    b.addEdge(earlier(rng), v);
    b.addEdge(earlier(rng), v, costDist(rng)); // non-uniform fan-out costs
  }
  Graph graph = buildGraph(b);
  const int numDevices = 100;
  Simulator fast(graph, numDevices);
  std::uniform_int_distribution<int> deviceDist(0, numDevices - 1);
  for (int a = 0; a < 5; ++a) {
    std::vector<DeviceId> assignment(numNodes);
    for (auto &d : assignment)
      d = deviceDist(rng);
    EXPECT_EQ(fast.run(assignment),
              naiveSimulate(graph, numDevices, assignment));
  }
}

//===----------------------------------------------------------------------===//
// System
//===----------------------------------------------------------------------===//

std::string systemError(const SystemBuilder &builder) {
  std::string error;
  EXPECT_FALSE(builder.build(&error));
  return error;
}

TEST(System, DefaultsAndSetters) {
  System uniform = System::uniform(3);
  EXPECT_EQ(uniform.numDevices(), 3);
  EXPECT_EQ(uniform.speed(2), 1);
  EXPECT_FALSE(uniform.hasNonUnitSpeeds());
  EXPECT_FALSE(uniform.hasMemoryLimits());
  EXPECT_TRUE(std::isinf(uniform.memoryCapacity(0)));
  EXPECT_TRUE(std::isinf(uniform.link(0, 1).bandwidth));
  EXPECT_EQ(uniform.link(0, 1).latency, 0);

  auto system = SystemBuilder(2)
                    .setSpeeds({1, 2})
                    .setMemoryCapacity(1, 64)
                    .setUniformLink({100, 1})
                    .setLink(1, 0, {50, 2})
                    .build();
  ASSERT_TRUE(system);
  EXPECT_TRUE(system->hasNonUnitSpeeds());
  EXPECT_TRUE(system->hasMemoryLimits());
  EXPECT_EQ(system->memoryCapacity(1), 64);
  EXPECT_EQ(system->link(0, 1).bandwidth, 100);
  EXPECT_EQ(system->link(1, 0).latency, 2);
}

TEST(System, Errors) {
  EXPECT_EQ(systemError(SystemBuilder(0)), "device count 0 is less than 1");
  EXPECT_EQ(systemError(SystemBuilder(2).setSpeed(1, 0)),
            "device 1: speed 0 is not a positive finite number");
  EXPECT_EQ(systemError(SystemBuilder(2).setSpeed(0, -2)),
            "device 0: speed -2 is not a positive finite number");
  EXPECT_EQ(systemError(SystemBuilder(2).setSpeed(0, NAN)),
            "device 0: speed nan is not a positive finite number");
  EXPECT_EQ(systemError(SystemBuilder(4).setSpeeds({1, 1, 1})),
            "expected 4 speeds, got 3");
  EXPECT_EQ(systemError(SystemBuilder(2).setMemoryCapacity(1, -5)),
            "device 1: memory capacity -5 is negative or not a number");
  EXPECT_EQ(systemError(SystemBuilder(2).setMemoryCapacities({1})),
            "expected 2 memory capacities, got 1");
  EXPECT_EQ(systemError(SystemBuilder(4).setLink(0, 3, {0, 0})),
            "link 0 -> 3: bandwidth 0 is not positive");
  EXPECT_EQ(systemError(SystemBuilder(2).setUniformLink({1, -1})),
            "link 0 -> 1: latency -1 is negative or not finite");
  EXPECT_EQ(systemError(SystemBuilder(2).setLink(1, 1, {})),
            "link 1 -> 1: a device has no link to itself");
  EXPECT_EQ(systemError(SystemBuilder(4).setSpeed(7, 1)),
            "device 7 out of range [0, 4)");
}

//===----------------------------------------------------------------------===//
// Extended modes (answers computed by hand in the comments)
//===----------------------------------------------------------------------===//

TEST(SimulatorExtended, CreateRejectsUnsupportedOptions) {
  Graph graph = chain3(1, 1, 1, 1); // no output bytes
  System system = System::uniform(2);
  std::string error;
  SimulatorOptions memory;
  memory.trackMemory = true;
  EXPECT_FALSE(Simulator::create(graph, system, memory, &error));
  EXPECT_EQ(error, "memory tracking needs the output size of every node, and "
                   "the graph has none");
  SimulatorOptions bandwidth;
  bandwidth.transferModel = TransferModel::LinkBandwidth;
  EXPECT_FALSE(Simulator::create(graph, system, bandwidth, &error));
  EXPECT_EQ(error, "the link-bandwidth transfer model needs the output size "
                   "of every node, and the graph has none");
  SimulatorOptions enforceOnly;
  enforceOnly.enforceMemoryCapacity = true;
  EXPECT_FALSE(Simulator::create(graph, system, enforceOnly, &error));
  EXPECT_EQ(error, "enforcing memory capacities needs trackMemory");
  EXPECT_TRUE(Simulator::create(graph, system, SimulatorOptions{}, &error));
}

TEST(SimulatorExtended, DeviceSpeeds) {
  Graph graph = chain3(4, 6, 8, 3);
  auto system = SystemBuilder(2).setSpeeds({2, 0.5}).build();
  ASSERT_TRUE(system);
  SimulatorOptions options;
  options.deviceSpeeds = true;
  Simulator simulator(graph, *system, options);
  // Device 0 is twice as fast: 2 + 3 + 4.
  EXPECT_EQ(simulator.run(std::vector<DeviceId>{0, 0, 0}), 9);
  // 0 on device 0 (0..2), 1 on device 1 at half speed (5..17), 2 back on
  // device 0 (20..24). Transfers are not scaled.
  EXPECT_EQ(simulator.run(std::vector<DeviceId>{0, 1, 0}), 24);
  EXPECT_EQ(simulator.schedule().deviceBusy, (std::vector<double>{6, 12}));
  // Device 1 at half speed: 8 + 12 + 16.
  EXPECT_EQ(simulator.run(std::vector<DeviceId>{1, 1, 1}), 36);
  // Off by default: the same system without the option is the reference.
  Simulator plain(graph, *system);
  EXPECT_EQ(plain.run(std::vector<DeviceId>{1, 1, 1}), 18);
}

/// `numDevices` devices, each with a hand-off of `handOff`.
System handOffSystem(int32_t numDevices, double handOff) {
  SystemBuilder builder(numDevices);
  for (DeviceId d = 0; d < numDevices; ++d)
    builder.setHandOff(d, handOff);
  return *builder.build();
}

TEST(SimulatorHandOff, ChainPaysWhereItsDeviceWaited) {
  Graph graph = chain3(4, 6, 8, 3);
  SimulatorOptions options;
  options.handOff = true;
  Simulator simulator(graph, handOffSystem(2, 1), options);
  // The source starts at 0; each successor became ready as its device
  // became free, with nothing else queued: 0..4, 5..11, 12..20.
  EXPECT_EQ(simulator.run(std::vector<DeviceId>{0, 0, 0}), 20);
  EXPECT_EQ(simulator.schedule().start, (std::vector<double>{0, 5, 12}));
  EXPECT_EQ(simulator.schedule().end, (std::vector<double>{4, 11, 20}));
  EXPECT_EQ(simulator.schedule().deviceBusy, (std::vector<double>{18, 0}));
  // Node 1's last input crossed a link (whose latency holds the wake-up):
  // 0..4, arrives 7, 7..13; node 2 came back across too: 16..24.
  EXPECT_EQ(simulator.run(std::vector<DeviceId>{0, 1, 0}), 24);
  EXPECT_EQ(simulator.schedule().start, (std::vector<double>{0, 7, 16}));
  // Node 2 follows node 1 on device 1: 0..4, 7..13, 14..22.
  EXPECT_EQ(simulator.run(std::vector<DeviceId>{0, 1, 1}), 22);
  EXPECT_EQ(simulator.schedule().start, (std::vector<double>{0, 7, 14}));
  // Off by default: the reference.
  Simulator plain(graph, handOffSystem(2, 1));
  EXPECT_EQ(plain.run(std::vector<DeviceId>{0, 0, 0}), 18);
}

TEST(SimulatorHandOff, QueuedNodesDoNotPay) {
  // A fan: a (1) feeds b (2), c (3), d (4), all on device 0. All three
  // become ready at a's end; the device waited for the first only:
  // a 0..1, b 2..4, c 4..7, d 7..11.
  GraphBuilder b;
  b.addNode(1, 1);
  b.addNode(2, 1);
  b.addNode(3, 1);
  b.addNode(4, 1);
  for (NodeId v = 1; v <= 3; ++v)
    b.addEdge(0, v);
  Graph fan = buildGraph(b);
  SimulatorOptions options;
  options.handOff = true;
  Simulator simulator(fan, handOffSystem(1, 1), options);
  EXPECT_EQ(simulator.run(std::vector<DeviceId>{0, 0, 0, 0}), 11);
  EXPECT_EQ(simulator.schedule().start, (std::vector<double>{0, 2, 4, 7}));

  // Two sources a (2) and s (3) and a's successor v (4), on device 0:
  // a 0..2, then s (queued since 0) 2..5; v, ready at 2 while s was
  // queued, waits in the queue and starts 5..9 without a hand-off.
  GraphBuilder q;
  q.addNode(2, 1); // a
  q.addNode(3, 1); // s
  q.addNode(4, 1); // v <- a
  q.addEdge(0, 2);
  Graph queued = buildGraph(q);
  Simulator second(queued, handOffSystem(1, 1), options);
  EXPECT_EQ(second.run(std::vector<DeviceId>{0, 0, 0}), 9);
  EXPECT_EQ(second.schedule().start, (std::vector<double>{0, 2, 5}));

  // With priorities the device chooses once the instant's ready nodes have
  // joined its queue: v (priority 1) goes before s (5), but the device had
  // s queued when a ended, so it did not wait for v: a 0..2, v 2..6, s 6..9.
  options.priorities = {0, 5, 1};
  Simulator prioritised(queued, handOffSystem(1, 1), options);
  EXPECT_EQ(prioritised.run(std::vector<DeviceId>{0, 0, 0}), 9);
  EXPECT_EQ(prioritised.schedule().start, (std::vector<double>{0, 6, 2}));
  // Alone, v pays: a 0..2, v 3..7.
  options.priorities.clear();
  EXPECT_EQ(Simulator(queued, handOffSystem(2, 1), options)
                .run(std::vector<DeviceId>{0, 1, 0}),
            7);
}

TEST(SimulatorHandOff, PerDeviceAndValidated) {
  Graph graph = chain3(4, 6, 8, 3);
  auto system = SystemBuilder(2).setHandOff(0, 0).setHandOff(1, 2).build();
  ASSERT_TRUE(system);
  EXPECT_TRUE(system->hasHandOffs());
  EXPECT_FALSE(System::uniform(2).hasHandOffs());
  SimulatorOptions options;
  options.handOff = true;
  Simulator simulator(graph, *system, options);
  EXPECT_EQ(simulator.run(std::vector<DeviceId>{0, 0, 0}), 18);
  // 0..4 on device 0, 7..13 on device 1, then 15..23 there.
  EXPECT_EQ(simulator.run(std::vector<DeviceId>{0, 1, 1}), 23);
  std::string error;
  EXPECT_FALSE(SystemBuilder(2).setHandOff(1, -1).build(&error));
  EXPECT_EQ(error, "device 1: hand-off -1 is negative or not finite");
  EXPECT_FALSE(SystemBuilder(2).setHandOff(0, 1, -5).build(&error));
  EXPECT_EQ(error, "device 0: hand-off bytes -5 is negative or not finite");
  EXPECT_FALSE(SystemBuilder(2).setHandOff(2, 1).build(&error));
  EXPECT_EQ(error, "device 2 out of range [0, 2)");
}

TEST(SimulatorHandOff, ShareByTheProducersBytes) {
  // a (4, 100 bytes) -> b (6, 50 bytes) -> c (8), on device 0, whose
  // hand-off of 2 is paid in full after 100 bytes: b pays 2 (6..12), c
  // half of it (13..21).
  GraphBuilder b;
  b.addNode(4, 1);
  b.addNode(6, 1);
  b.addNode(8, 1);
  b.addEdge(0, 1);
  b.addEdge(1, 2);
  b.setOutputBytes(0, 100);
  b.setOutputBytes(1, 50);
  b.setOutputBytes(2, 10);
  Graph graph = buildGraph(b);
  SimulatorOptions options;
  options.handOff = true;
  Simulator simulator(graph, *SystemBuilder(1).setHandOff(0, 2, 100).build(),
                      options);
  EXPECT_EQ(simulator.run(std::vector<DeviceId>{0, 0, 0}), 21);
  EXPECT_EQ(simulator.schedule().start, (std::vector<double>{0, 6, 13}));
  // Past the bytes the share stays 1: 0..4, 6..12, 14..22.
  Simulator small(graph, *SystemBuilder(1).setHandOff(0, 2, 40).build(),
                  options);
  EXPECT_EQ(small.run(std::vector<DeviceId>{0, 0, 0}), 22);
  // A graph without output bytes pays nothing where bytes are given.
  Graph costsOnly = chain3(4, 6, 8, 3);
  Simulator none(costsOnly, *SystemBuilder(1).setHandOff(0, 2, 100).build(),
                 options);
  EXPECT_EQ(none.run(std::vector<DeviceId>{0, 0, 0}), 18);
}

/// Two producers on device 0 feeding consumers elsewhere; m = 4 each.
Graph twoTransfers() {
  GraphBuilder b;
  b.addNode(1, 4); // 0: A
  b.addNode(1, 4); // 1: B
  b.addNode(1, 0); // 2: C <- A
  b.addNode(1, 0); // 3: D <- B
  b.addEdge(0, 2);
  b.addEdge(1, 3);
  return buildGraph(b);
}

TEST(SimulatorExtended, LinkContentionSerialisesOneLink) {
  Graph graph = twoTransfers();
  std::vector<DeviceId> sameLink = {0, 0, 1, 1};
  SimulatorOptions options;
  options.linkContention = true;
  options.recordTransfers = true;
  Simulator contended(graph, System::uniform(3), options);
  Simulator reference(graph, 3);
  // Unlimited: A 0..1, B 1..2; arrivals 5 and 6; C 5..6, D 6..7.
  EXPECT_EQ(reference.run(sameLink), 7);
  // Link 0->1 carries A's output 1..5, then B's 5..9; D runs 9..10.
  EXPECT_EQ(contended.run(sameLink), 10);
  const auto &transfers = contended.schedule().transfers;
  ASSERT_EQ(transfers.size(), 2u);
  EXPECT_EQ(transfers[0].edge, 0);
  EXPECT_EQ(transfers[0].start, 1);
  EXPECT_EQ(transfers[0].end, 5);
  EXPECT_EQ(transfers[1].from, 0);
  EXPECT_EQ(transfers[1].to, 1);
  EXPECT_EQ(transfers[1].start, 5);
  EXPECT_EQ(transfers[1].end, 9);
  // Different links do not contend: D on device 2 gets B's output at 6.
  EXPECT_EQ(contended.run(std::vector<DeviceId>{0, 0, 1, 2}), 7);
}

TEST(SimulatorExtended, LinkContentionSendsEachValueOncePerDevice) {
  GraphBuilder b;
  b.addNode(1, 5); // 0: S
  b.addNode(1, 0); // 1: T1 <- S
  b.addNode(1, 0); // 2: T2 <- S
  b.addEdge(0, 1);
  b.addEdge(0, 2);
  Graph graph = buildGraph(b);
  SimulatorOptions options;
  options.linkContention = true;
  options.recordTransfers = true;
  Simulator simulator(graph, System::uniform(2), options);
  // One copy 1..6 serves both: T1 6..7, T2 7..8.
  EXPECT_EQ(simulator.run(std::vector<DeviceId>{0, 1, 1}), 8);
  EXPECT_EQ(simulator.schedule().transfers.size(), 1u);
}

TEST(SimulatorExtended, LinkBandwidthModel) {
  GraphBuilder b;
  b.addNode(1, 1000); // 0, 100 bytes: m is ignored in the byte model
  b.addNode(1, 0);    // 1
  b.addEdge(0, 1);
  b.setOutputBytes(0, 100);
  Graph graph = buildGraph(b);
  auto system = SystemBuilder(2).setUniformLink({50, 1}).build();
  ASSERT_TRUE(system);
  SimulatorOptions options;
  options.transferModel = TransferModel::LinkBandwidth;
  auto simulator = Simulator::create(graph, *system, options);
  ASSERT_TRUE(simulator);
  // Transfer: latency 1 + 100 / 50 = 3; node 1 runs 4..5.
  EXPECT_EQ(simulator->run(std::vector<DeviceId>{0, 1}), 5);
  EXPECT_EQ(simulator->run(std::vector<DeviceId>{0, 0}), 2);
}

/// A -> B -> C with outputs of 10, 20 and 5 bytes, unit compute.
Graph memoryChain() {
  GraphBuilder b;
  b.addNode(1, 0);
  b.addNode(1, 0);
  b.addNode(1, 0);
  b.addEdge(0, 1);
  b.addEdge(1, 2);
  b.setOutputBytes(0, 10);
  b.setOutputBytes(1, 20);
  b.setOutputBytes(2, 5);
  return buildGraph(b);
}

TEST(SimulatorExtended, TracksPeakMemory) {
  Graph graph = memoryChain();
  SimulatorOptions options;
  options.trackMemory = true;
  Simulator simulator(graph, System::uniform(2), options);
  // 0..1: A (10). 1..2: A + B (30). At 2, B ends and frees A; C (5) starts.
  EXPECT_EQ(simulator.run(std::vector<DeviceId>{0, 0, 0}), 3);
  EXPECT_EQ(simulator.schedule().peakMemory, (std::vector<double>{30, 0}));
  // Split (transfers take 0): A's copy arrives on device 1 at 1 and lives
  // there with B (20) until B ends at 2: 30. Device 0 frees A at 1 (its
  // transfer is over), then holds B's copy (20) and C (5) from 2: 25.
  EXPECT_EQ(simulator.run(std::vector<DeviceId>{0, 1, 0}), 3);
  EXPECT_EQ(simulator.schedule().peakMemory, (std::vector<double>{25, 30}));
}

TEST(SimulatorExtended, MemoryLimitFails) {
  Graph graph = memoryChain();
  auto system = SystemBuilder(1).setMemoryCapacity(0, 25).build();
  ASSERT_TRUE(system);
  SimulatorOptions options;
  options.trackMemory = true;
  options.enforceMemoryCapacity = true;
  options.memoryPolicy = MemoryLimitPolicy::Fail;
  Simulator simulator(graph, *system, options);
  EXPECT_TRUE(std::isinf(simulator.run(std::vector<DeviceId>{0, 0, 0})));
  const Schedule &s = simulator.schedule();
  EXPECT_EQ(s.status, SimulationStatus::MemoryExceeded);
  EXPECT_EQ(s.failedNode, 1);
  EXPECT_EQ(s.failedDevice, 0);
  EXPECT_EQ(s.describeFailure(),
            "memory exceeded: node 1 needs 20 bytes on device 0, which has "
            "10 of 25 bytes in use");
  EXPECT_TRUE(std::isnan(s.start[2]));
  // With room for 30 bytes the same run succeeds.
  auto roomy = SystemBuilder(1).setMemoryCapacity(0, 30).build();
  Simulator ok(graph, *roomy, options);
  EXPECT_EQ(ok.run(std::vector<DeviceId>{0, 0, 0}), 3);
  EXPECT_TRUE(ok.schedule().ok());
  EXPECT_EQ(ok.schedule().describeFailure(), "");
}

TEST(SimulatorExtended, MemoryLimitStallsUntilFreed) {
  GraphBuilder b;
  b.addNode(1, 2); // 0: A, device 0, 10 bytes, sent 1..3
  b.addNode(5, 0); // 1: B, device 1, consumes A (arrives at 3, runs 3..8)
  b.addNode(1, 0); // 2: C, device 0, 10 bytes, a source
  b.addEdge(0, 1);
  b.setOutputBytes(0, 10);
  b.setOutputBytes(2, 10);
  Graph graph = buildGraph(b);
  auto system = SystemBuilder(2).setMemoryCapacity(0, 15).build();
  ASSERT_TRUE(system);
  SimulatorOptions options;
  options.trackMemory = true;
  std::vector<DeviceId> assignment = {0, 1, 0};

  // Not enforced: C runs 1..2 and device 0 peaks at 20.
  Simulator unlimited(graph, *system, options);
  EXPECT_EQ(unlimited.run(assignment), 8);
  EXPECT_EQ(unlimited.schedule().peakMemory[0], 20);

  // Stall: C waits until A's transfer has arrived at 3 and device 0 frees
  // A, then runs 3..4.
  options.enforceMemoryCapacity = true;
  options.memoryPolicy = MemoryLimitPolicy::Stall;
  Simulator stalling(graph, *system, options);
  EXPECT_EQ(stalling.run(assignment), 8);
  EXPECT_EQ(stalling.schedule().start[2], 3);
  EXPECT_EQ(stalling.schedule().peakMemory[0], 10);
  EXPECT_TRUE(stalling.schedule().ok());
}

TEST(SimulatorExtended, MemoryStallDeadlockIsReported) {
  Graph graph = memoryChain();
  auto system = SystemBuilder(1).setMemoryCapacity(0, 5).build();
  SimulatorOptions options;
  options.trackMemory = true;
  options.enforceMemoryCapacity = true;
  options.memoryPolicy = MemoryLimitPolicy::Stall;
  Simulator simulator(graph, *system, options);
  EXPECT_TRUE(std::isinf(simulator.run(std::vector<DeviceId>{0, 0, 0})));
  EXPECT_EQ(simulator.schedule().status, SimulationStatus::MemoryDeadlock);
  EXPECT_EQ(simulator.schedule().describeFailure(),
            "memory deadlock: device 0 waits to run node 0 (needs 10 bytes, "
            "0 of 5 in use) but nothing left to run can free memory there");
}

} // namespace
