//===- SimulatorNetworkTest.cpp - NIC contention between nodes ------------===//
//
// SimulatorOptions::linkContention on a System with nodes: a transfer
// between nodes holds one NIC of each node for its whole duration; inside a
// node the links contend as before. Expected makespans worked out by hand
// in the comments.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/Simulator.h"

#include <gtest/gtest.h>

using namespace doppler::placement;

namespace {

/// A -> C and B -> D, unit compute, edge costs 4, 40-byte outputs.
Graph twoPairs() {
  GraphBuilder b;
  b.addNode(1, 4); // 0: A
  b.addNode(1, 4); // 1: B
  b.addNode(1, 0); // 2: C <- A
  b.addNode(1, 0); // 3: D <- B
  b.addEdge(0, 2);
  b.addEdge(1, 3);
  for (NodeId v = 0; v < 4; ++v)
    b.setOutputBytes(v, 40);
  std::string error;
  std::optional<Graph> graph = b.build(&error);
  EXPECT_TRUE(graph) << error;
  return graph ? std::move(*graph) : Graph();
}

/// `nodeOf` devices with `nics` per node; links inside a node 100 bytes
/// per unit, no latency; the network 10 bytes per unit after 1 unit.
System network(std::vector<int32_t> nodeOf, std::vector<int32_t> nics) {
  const int32_t devices = static_cast<int32_t>(nodeOf.size());
  std::string error;
  std::optional<System> system = SystemBuilder(devices)
                                     .setUniformLink({100, 0})
                                     .setNodes(std::move(nodeOf),
                                               std::move(nics), {10, 1})
                                     .build(&error);
  EXPECT_TRUE(system) << error;
  return system ? *system : System::uniform(devices);
}

SimulatorOptions contention(TransferModel model) {
  SimulatorOptions options;
  options.linkContention = true;
  options.transferModel = model;
  options.recordTransfers = true;
  return options;
}

// A on device 0 and B on device 1 (node 0) send to C on device 2 and D on
// device 3 (node 1): two different device pairs, so links alone never
// make them wait for each other.
const std::vector<DeviceId> kAcross = {0, 1, 2, 3};

TEST(SimulatorNetwork, OneNicSerialisesCrossNodeTransfers) {
  Graph graph = twoPairs();
  const System system = network({0, 0, 1, 1}, {1, 1});
  // Byte model: 1 + 40 / 10 = 5 per transfer. A and B run 0..1; A's output
  // takes both nodes' only NIC 1..6, B's 6..11; C 6..7, D 11..12.
  Simulator bytes(graph, system, contention(TransferModel::LinkBandwidth));
  EXPECT_EQ(bytes.run(kAcross), 12);
  const auto &transfers = bytes.schedule().transfers;
  ASSERT_EQ(transfers.size(), 2u);
  EXPECT_EQ(transfers[0].start, 1);
  EXPECT_EQ(transfers[0].end, 6);
  EXPECT_EQ(transfers[1].from, 1);
  EXPECT_EQ(transfers[1].to, 3);
  EXPECT_EQ(transfers[1].start, 6);
  EXPECT_EQ(transfers[1].end, 11);
  // Edge costs (4): 1..5 and 5..9; D 9..10.
  Simulator edges(graph, system, contention(TransferModel::EdgeCost));
  EXPECT_EQ(edges.run(kAcross), 10);
  // On one node (or flat) the two links are separate: both arrive at 5,
  // C and D 5..6.
  Simulator flat(graph, System::uniform(4),
                 contention(TransferModel::EdgeCost));
  EXPECT_EQ(flat.run(kAcross), 6);
  // Without linkContention nothing contends: 1 + 5 = 6, C and D 6..7.
  SimulatorOptions free;
  free.transferModel = TransferModel::LinkBandwidth;
  Simulator uncontended(graph, system, free);
  EXPECT_EQ(uncontended.run(kAcross), 7);
}

TEST(SimulatorNetwork, TwoNicsCarryTwoTransfersAtOnce) {
  Graph graph = twoPairs();
  // A takes NIC 0 of each node, B the free NIC 1 of each: both 1..6, C
  // and D 6..7.
  Simulator two(graph, network({0, 0, 1, 1}, {2, 2}),
                contention(TransferModel::LinkBandwidth));
  EXPECT_EQ(two.run(kAcross), 7);
  EXPECT_EQ(two.schedule().transfers[1].start, 1);
  // Two NICs on the sender but one on the receiver: the receiver's NIC
  // serialises them (12, as with one NIC on each side).
  Simulator receiverBound(graph, network({0, 0, 1, 1}, {2, 1}),
                          contention(TransferModel::LinkBandwidth));
  EXPECT_EQ(receiverBound.run(kAcross), 12);
}

TEST(SimulatorNetwork, ReceivingNodeNicIsShared) {
  Graph graph = twoPairs();
  // Three nodes of one device: A on node 0 and B on node 2 both send to
  // node 1. A 1..6 on node 1's NIC, B waits for it: 6..11. C 6..7, D
  // 11..12 (device 1 is free again at 7).
  const std::vector<DeviceId> intoNode1 = {0, 2, 1, 1};
  Simulator one(graph, network({0, 1, 2}, {1, 1, 1}),
                contention(TransferModel::LinkBandwidth));
  EXPECT_EQ(one.run(intoNode1), 12);
  // With a second NIC on node 1 both arrive at 6: C 6..7, D 7..8.
  Simulator two(graph, network({0, 1, 2}, {1, 2, 1}),
                contention(TransferModel::LinkBandwidth));
  EXPECT_EQ(two.run(intoNode1), 8);
}

TEST(SimulatorNetwork, TransfersInsideANodeUseTheLinks) {
  Graph graph = twoPairs();
  const System system = network({0, 0, 1, 1}, {1, 1});
  // A -> C crosses nodes (1..6, C 6..7); B -> D stays on node 0 over its
  // link: 40 / 100 = 0.4, D 1.4..2.4. They share nothing.
  Simulator simulator(graph, system, contention(TransferModel::LinkBandwidth));
  EXPECT_EQ(simulator.run(std::vector<DeviceId>{0, 1, 2, 0}), 7);
  const auto &transfers = simulator.schedule().transfers;
  ASSERT_EQ(transfers.size(), 2u);
  EXPECT_EQ(transfers[1].start, 1);
  EXPECT_DOUBLE_EQ(transfers[1].end, 1.4);
  // Runs are independent: the NICs are free again at the next run.
  EXPECT_EQ(simulator.run(kAcross), 12);
  EXPECT_EQ(simulator.run(kAcross), 12);
}

TEST(SimulatorNetwork, ReferenceModeIgnoresTheNetwork) {
  Graph graph = twoPairs();
  // Default options: METHOD section 2, edge costs, no contention. A and B
  // arrive at 5, C and D 5..6, whatever the nodes.
  Simulator reference(graph, network({0, 0, 1, 1}, {1, 1}));
  EXPECT_EQ(reference.run(kAcross), 6);
  EXPECT_EQ(reference.run(std::vector<DeviceId>{0, 1, 2, 0}), 6);
}

} // namespace
