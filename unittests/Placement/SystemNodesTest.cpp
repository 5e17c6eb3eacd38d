//===- SystemNodesTest.cpp - Nodes, networks and their presets ------------===//
//
// System descriptions with nodes (docs/SystemDescription.md, "Nodes and
// networks"): parsing, every validation error, the multi-node presets, the
// JSON round trip, withDevices, and the simulator's System they become.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/SystemDescription.h"

#include <gtest/gtest.h>

using namespace doppler::placement;

namespace {

/// One GPU-like device entry (a count of `count`).
std::string device(int count) {
  return R"({"name": "gpu", "count": )" + std::to_string(count) +
         R"(, "peak_flops": {"f32": 1e12}, "memory_bytes": 1e9,
            "memory_bandwidth": 1e11})";
}

/// Two nodes: "a" with 2 devices and 2 NICs, "b" with 1 device and 1 NIC.
std::string twoNodes() {
  return R"({"name": "pair", "nodes": [
      {"name": "a", "nics": 2, "devices": [)" +
         device(2) + R"(], "links": {"bandwidth": 4e11, "latency": 1e-6}},
      {"name": "b", "nics": 1, "devices": [)" +
         device(1) + R"(]}],
    "network": {"bandwidth": 5e10, "latency": 3e-6}})";
}

std::string nodesError(const std::string &text) {
  std::string error;
  EXPECT_FALSE(SystemDescription::parseJson(text, "sys.json", &error)) << text;
  return error;
}

TEST(SystemNodes, ParsesNodesAndNetwork) {
  std::string error;
  auto system = SystemDescription::parseJson(twoNodes(), "sys.json", &error);
  ASSERT_TRUE(system) << error;
  EXPECT_EQ(system->name(), "pair");
  EXPECT_EQ(system->numDevices(), 3);
  EXPECT_EQ(system->numNodes(), 2);
  EXPECT_TRUE(system->hasNetwork());
  EXPECT_EQ(system->nodeOf(0), 0);
  EXPECT_EQ(system->nodeOf(1), 0);
  EXPECT_EQ(system->nodeOf(2), 1);
  EXPECT_EQ(system->device(1).name, "a/gpu:1");
  EXPECT_EQ(system->device(2).name, "b/gpu");
  ASSERT_EQ(system->nodes().size(), 2u);
  EXPECT_EQ(system->nodes()[0].nics, 2);
  EXPECT_EQ(system->nodes()[1].firstDevice, 2);
  EXPECT_EQ(system->nodes()[1].numDevices, 1);
  // Inside a node: the node's links; between nodes: one NIC's figures.
  EXPECT_DOUBLE_EQ(system->link(0, 1).bandwidth, 4e11);
  EXPECT_DOUBLE_EQ(system->link(1, 2).bandwidth, 5e10);
  EXPECT_DOUBLE_EQ(system->link(2, 0).latency, 3e-6);
  EXPECT_DOUBLE_EQ(system->network().bandwidth, 5e10);
  // 1 MB: 3 us + 20 us between nodes, in microseconds.
  EXPECT_NEAR(system->transferCost(0, 2, 1e6), 23, 1e-9);
  // The worst link from device 0 that a placement assumes: its node's
  // (the network's only from a node with no other device).
  EXPECT_DOUBLE_EQ(system->worstTransferCost(0, 1e6),
                   system->transferCost(0, 1, 1e6));
  EXPECT_DOUBLE_EQ(system->worstTransferCost(2, 1e6),
                   system->transferCost(2, 0, 1e6));
  // No host object: the host link comes from the links inside nodes and
  // half the memory bandwidth (5e10), not from the network.
  EXPECT_DOUBLE_EQ(system->hostLink(0).bandwidth, 5e10);
  EXPECT_DOUBLE_EQ(system->hostLink(0).latency, 1e-6);

  // A node entry with a count: copies named name:i.
  auto copies = SystemDescription::parseJson(
      R"({"nodes": [{"name": "dgx", "count": 3, "nics": 4, "devices": [)" +
          device(2) +
          R"(], "links": {"bandwidth": 1e11}}], "network": {"bandwidth": 1e10}})",
      "sys.json", &error);
  ASSERT_TRUE(copies) << error;
  EXPECT_EQ(copies->numDevices(), 6);
  EXPECT_EQ(copies->numNodes(), 3);
  EXPECT_EQ(copies->nodes()[2].name, "dgx:2");
  EXPECT_EQ(copies->device(5).name, "dgx:2/gpu:1");
  EXPECT_DOUBLE_EQ(copies->network().latency, 0);
  // One node is a flat system.
  auto one = SystemDescription::parseJson(
      R"({"nodes": [{"nics": 1, "devices": [)" + device(2) +
          R"(], "links": {"bandwidth": 1e11}}], "network": {"bandwidth": 1e10}})",
      "sys.json", &error);
  ASSERT_TRUE(one) << error;
  EXPECT_EQ(one->numNodes(), 1);
  EXPECT_FALSE(one->hasNetwork());
  EXPECT_FALSE(one->toSystem().hasNetwork());
}

TEST(SystemNodes, ToSystemCarriesNodesInCostUnits) {
  std::string error;
  auto description =
      SystemDescription::parseJson(twoNodes(), "sys.json", &error);
  ASSERT_TRUE(description) << error;
  System system = description->toSystem();
  EXPECT_EQ(system.numNodes(), 2);
  EXPECT_EQ(system.nodeOf(1), 0);
  EXPECT_EQ(system.nodeOf(2), 1);
  EXPECT_FALSE(system.sameNode(1, 2));
  EXPECT_EQ(system.nics(0), 2);
  EXPECT_EQ(system.nics(1), 1);
  EXPECT_EQ(system.numNics(), 3);
  EXPECT_EQ(system.firstNic(1), 2);
  // Bytes per microsecond and microseconds.
  EXPECT_DOUBLE_EQ(system.network().bandwidth, 5e4);
  EXPECT_DOUBLE_EQ(system.network().latency, 3);
  EXPECT_DOUBLE_EQ(system.link(0, 2).bandwidth, 5e4);
  EXPECT_DOUBLE_EQ(system.link(0, 1).bandwidth, 4e5);
  // A flat description stays one node with no NICs.
  System flat = SystemDescription::preset("h100x8")->toSystem();
  EXPECT_EQ(flat.numNodes(), 1);
  EXPECT_FALSE(flat.hasNetwork());
  EXPECT_EQ(flat.numNics(), 0);
  EXPECT_EQ(flat.nodeOf(7), 0);
}

TEST(SystemNodes, Presets) {
  // DGX H100 nodes: 8 H100 SXM5 on NVLink 4 (the h100x8 figures), 8
  // ConnectX-7 NICs at 400 Gb/s (50 GB/s) each, 3 us between nodes.
  auto h100 = SystemDescription::preset("h100x8");
  for (auto [name, nodes] : std::initializer_list<std::pair<const char *, int>>{
           {"h100x8-2n", 2}, {"h100x8-4n", 4}, {"h100x8-8n", 8}}) {
    std::string error;
    auto system = SystemDescription::preset(name, &error);
    ASSERT_TRUE(system) << error;
    EXPECT_EQ(system->numDevices(), 8 * nodes) << name;
    EXPECT_EQ(system->numNodes(), nodes) << name;
    for (const NodeDescription &node : system->nodes()) {
      EXPECT_EQ(node.numDevices, 8);
      EXPECT_EQ(node.nics, 8);
    }
    EXPECT_EQ(system->nodeOf(8), 1) << name;
    EXPECT_EQ(system->device(9).name, "node1/H100-SXM5-80GB:1") << name;
    EXPECT_DOUBLE_EQ(system->device(9).peakFor("bf16"),
                     h100->device(1).peakFor("bf16"));
    EXPECT_DOUBLE_EQ(system->link(8, 15).bandwidth, h100->link(0, 7).bandwidth);
    EXPECT_DOUBLE_EQ(system->link(8, 15).latency, h100->link(0, 7).latency);
    EXPECT_DOUBLE_EQ(system->link(7, 8).bandwidth, 50e9) << name;
    EXPECT_DOUBLE_EQ(system->link(0, 8 * nodes - 1).latency, 3e-6) << name;
    EXPECT_DOUBLE_EQ(system->hostLink(12).bandwidth, 55e9);
  }
  // Two nodes of two CPU devices (the cpu4 figures inside a node) over an
  // MPI loopback "network": 5 GB/s, 5 us, one NIC per node.
  std::string error;
  auto cpu = SystemDescription::preset("cpu2-2n", &error);
  ASSERT_TRUE(cpu) << error;
  auto cpu4 = SystemDescription::preset("cpu4");
  EXPECT_EQ(cpu->numDevices(), 4);
  EXPECT_EQ(cpu->numNodes(), 2);
  EXPECT_EQ(cpu->nodes()[1].nics, 1);
  EXPECT_EQ(cpu->device(3).name, "node1/" + cpu4->device(1).name);
  EXPECT_DOUBLE_EQ(cpu->link(0, 1).bandwidth, cpu4->link(0, 1).bandwidth);
  EXPECT_DOUBLE_EQ(cpu->link(1, 2).bandwidth, 5e9);
  EXPECT_DOUBLE_EQ(cpu->link(3, 0).latency, 5e-6);
  EXPECT_DOUBLE_EQ(cpu->hostMemoryBytes(), cpu4->hostMemoryBytes());
  const auto &names = SystemDescription::presetNames();
  for (const char *name : {"h100x8-2n", "h100x8-4n", "h100x8-8n", "cpu2-2n"})
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end())
        << name;
}

TEST(SystemNodes, JsonRoundTrip) {
  for (const std::string &text :
       {twoNodes(), SystemDescription::preset("cpu2-2n")->toJson(),
        SystemDescription::preset("h100x8-2n")->toJson()}) {
    std::string error;
    auto first = SystemDescription::parseJson(text, "first", &error);
    ASSERT_TRUE(first) << error;
    auto second = SystemDescription::parseJson(first->toJson(), "second",
                                               &error);
    ASSERT_TRUE(second) << error;
    EXPECT_EQ(second->toJson(), first->toJson());
    EXPECT_EQ(second->numNodes(), first->numNodes());
    for (DeviceId d = 0; d < first->numDevices(); ++d) {
      EXPECT_EQ(second->device(d).name, first->device(d).name);
      for (DeviceId to = 0; to < first->numDevices(); ++to) {
        if (to != d) {
          EXPECT_EQ(second->link(d, to).bandwidth,
                    first->link(d, to).bandwidth);
        }
      }
    }
  }
  // A preset written out names its devices as the preset does.
  auto preset = SystemDescription::preset("h100x8-2n");
  auto again = SystemDescription::parseJson(preset->toJson(), "x");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->device(15).name, preset->device(15).name);
  EXPECT_DOUBLE_EQ(again->hostLink(3).bandwidth, 55e9);
}

TEST(SystemNodes, WithDevicesKeepsWholeAndPartNodes) {
  auto system = SystemDescription::preset("h100x8-4n");
  std::string error;
  auto twelve = system->withDevices(12, &error);
  ASSERT_TRUE(twelve) << error;
  EXPECT_EQ(twelve->numNodes(), 2);
  EXPECT_EQ(twelve->nodes()[1].numDevices, 4);
  EXPECT_EQ(twelve->nodes()[1].nics, 8);
  EXPECT_DOUBLE_EQ(twelve->link(3, 11).bandwidth, 50e9);
  EXPECT_EQ(twelve->toSystem().numNics(), 16);
  // Within the first node: a flat system on NVLink.
  auto eight = system->withDevices(8, &error);
  ASSERT_TRUE(eight) << error;
  EXPECT_EQ(eight->numNodes(), 1);
  EXPECT_FALSE(eight->toSystem().hasNetwork());
  EXPECT_DOUBLE_EQ(eight->link(0, 7).bandwidth, 450e9);
}

TEST(SystemNodes, ErrorsNameTheField) {
  const std::string gpu = device(1);
  const std::string network = R"("network": {"bandwidth": 1e10})";
  auto withNodes = [&](const std::string &nodes) {
    return nodesError(R"({"nodes": )" + nodes + ", " + network + "}");
  };
  EXPECT_EQ(nodesError(R"({"nodes": [], )" + network + "}"),
            "sys.json: nodes: expected a non-empty array of nodes");
  EXPECT_EQ(withNodes("[3]"), "sys.json: nodes[0]: expected an object with "
                              "devices, links and nics");
  EXPECT_EQ(withNodes(R"([{"nics": 1, "devices": [)" + gpu + R"(], "gpus": 2}])"),
            "sys.json: nodes[0].gpus: unknown field (expected name, count, "
            "devices, links, nics)");
  EXPECT_EQ(withNodes(R"([{"name": 7, "nics": 1, "devices": [)" + gpu + "]}]"),
            "sys.json: nodes[0].name: expected a string");
  for (const char *count : {"0", "1.5", "5000", "\"two\""})
    EXPECT_EQ(withNodes(std::string(R"([{"count": )") + count +
                        R"(, "nics": 1, "devices": [)" + gpu + "]}]"),
              "sys.json: nodes[0].count: expected an integer in [1, 4096]")
        << count;
  for (const char *nics : {"", R"("nics": 0,)", R"("nics": 2.5,)",
                           R"("nics": 5000,)", R"("nics": "eight",)"})
    EXPECT_EQ(withNodes(std::string("[{") + nics + R"( "devices": [)" + gpu +
                        "]}]"),
              "sys.json: nodes[0].nics: expected a positive integer (at most "
              "4096)")
        << nics;
  EXPECT_EQ(withNodes(R"([{"nics": 1, "devices": []}])"),
            "sys.json: nodes[0].devices: expected a non-empty array of "
            "devices");
  EXPECT_EQ(withNodes(R"([{"nics": 1, "devices": [)" + gpu +
                      R"(]}, {"nics": 1, "devices": [{"peak_flops": {"f32": 1},
                      "memory_bytes": 1, "memory_bandwidth": 0}]}])"),
            "sys.json: nodes[1].devices[0].memory_bandwidth: expected a "
            "positive number");
  EXPECT_EQ(withNodes(R"([{"count": 2, "nics": 1, "devices": [)" + device(2048) +
                      "," + gpu + R"(], "links": {"bandwidth": 1}}])"),
            "sys.json: nodes[0].devices[1].count: the system would have more "
            "than 4096 devices");
  EXPECT_EQ(withNodes(R"([{"nics": 1, "devices": [)" + device(2) + "]}]")
                .rfind("sys.json: nodes[0].links: missing", 0),
            0u);
  EXPECT_EQ(withNodes(R"([{"nics": 1, "devices": [)" + device(2) +
                      R"(], "links": {"bandwidth": [[0, 1]]}}])"),
            "sys.json: nodes[0].links.bandwidth: expected a number or a 2 x 2 "
            "matrix");
  EXPECT_EQ(withNodes(R"([{"nics": 1, "devices": [)" + device(2) +
                      R"(], "links": {"bandwidth": 1, "latency": -1}}])"),
            "sys.json: nodes[0].links.latency: expected a non-negative number");

  const std::string nodes =
      R"("nodes": [{"count": 2, "nics": 1, "devices": [)" + gpu + "]}]";
  auto withNetwork = [&](const std::string &network) {
    return nodesError("{" + nodes + (network.empty() ? "" : ", ") + network +
                      "}");
  };
  EXPECT_EQ(withNetwork("").rfind("sys.json: network: missing", 0), 0u);
  EXPECT_EQ(withNetwork(R"("network": 5)"),
            "sys.json: network: expected an object with bandwidth and "
            "latency");
  EXPECT_EQ(withNetwork(R"("network": {"bandwidth": 1, "nics": 8})"),
            "sys.json: network.nics: unknown field (expected bandwidth, "
            "latency)");
  for (const char *bandwidth : {R"({"latency": 1})", R"({"bandwidth": 0})",
                                R"({"bandwidth": -5})", R"({"bandwidth": "fast"})"})
    EXPECT_EQ(withNetwork(std::string(R"("network": )") + bandwidth),
              "sys.json: network.bandwidth: expected a positive number of "
              "bytes per second per NIC")
        << bandwidth;
  EXPECT_EQ(withNetwork(R"("network": {"bandwidth": 1, "latency": -1})"),
            "sys.json: network.latency: expected a non-negative number of "
            "seconds");
  EXPECT_EQ(withNetwork(R"("network": {"bandwidth": 1}, "host": {"memory_bytes": 1})"),
            "sys.json: host.link_bandwidth: expected a positive number of "
            "bytes per second");
  // The two forms do not mix.
  EXPECT_EQ(nodesError("{" + nodes + R"(, "devices": [)" + gpu + "], " +
                       network + "}"),
            "sys.json: devices: not allowed with nodes (each node lists its "
            "devices and links)");
  EXPECT_EQ(nodesError("{" + nodes + R"(, "links": {"bandwidth": 1}, )" +
                       network + "}"),
            "sys.json: links: not allowed with nodes (each node lists its "
            "devices and links)");
  EXPECT_EQ(nodesError(R"({"devices": [)" + gpu +
                       R"(], "links": {"bandwidth": 1}, )" + network + "}"),
            "sys.json: network: only with nodes (a flat description is one "
            "node)");
  EXPECT_EQ(nodesError(R"({"switches": 2})"),
            "sys.json: switches: unknown field (expected name, devices, "
            "links, host; or name, nodes, network, host)");
}

TEST(SystemNodes, BuilderValidatesNodes) {
  auto buildError = [](SystemBuilder builder) {
    std::string error;
    EXPECT_FALSE(builder.build(&error));
    return error;
  };
  const Network network{10, 1};
  EXPECT_EQ(buildError(SystemBuilder(3).setNodes({0, 1}, {1, 1}, network)),
            "expected 3 node ids, got 2");
  EXPECT_EQ(buildError(SystemBuilder(3).setNodes({0, 1, 2}, {1, 1}, network)),
            "device 2: node 2 out of range [0, 2)");
  EXPECT_EQ(buildError(SystemBuilder(3).setNodes({0, -1, 1}, {1, 1}, network)),
            "device 1: node -1 out of range [0, 2)");
  EXPECT_EQ(buildError(SystemBuilder(3).setNodes({0, 0, 2}, {1, 1, 1}, network)),
            "node 1 has no devices");
  EXPECT_EQ(buildError(SystemBuilder(2).setNodes({0, 1}, {1, 0}, network)),
            "node 1: NIC count 0 out of range [1, 4096]");
  EXPECT_EQ(buildError(SystemBuilder(2).setNodes({0, 1}, {5000, 1}, network)),
            "node 0: NIC count 5000 out of range [1, 4096]");
  EXPECT_EQ(buildError(SystemBuilder(2).setNodes({0, 1}, {1, 1}, {0, 1})),
            "network: bandwidth 0 is not positive");
  EXPECT_EQ(buildError(SystemBuilder(2).setNodes({0, 1}, {1, 1}, {1, -2})),
            "network: latency -2 is negative or not finite");

  // Cross-node links become the network's, whatever was set before.
  auto system = SystemBuilder(3)
                    .setUniformLink({100, 0.5})
                    .setNodes({0, 0, 1}, {2, 3}, network)
                    .build();
  ASSERT_TRUE(system);
  EXPECT_EQ(system->numNodes(), 2);
  EXPECT_EQ(system->numNics(), 5);
  EXPECT_EQ(system->firstNic(1), 2);
  EXPECT_EQ(system->link(0, 1).bandwidth, 100);
  EXPECT_EQ(system->link(1, 2).bandwidth, 10);
  EXPECT_EQ(system->link(2, 0).latency, 1);
  // One node: flat.
  auto one = SystemBuilder(2).setNodes({0, 0}, {4}, network).build();
  ASSERT_TRUE(one);
  EXPECT_FALSE(one->hasNetwork());
  EXPECT_EQ(one->numNics(), 0);
}

} // namespace
