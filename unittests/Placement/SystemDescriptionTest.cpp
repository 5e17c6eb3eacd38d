//===- SystemDescriptionTest.cpp - Presets, JSON, roofline costs ----------===//

#include "Doppler/Placement/SystemDescription.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

using namespace doppler::placement;

namespace {

std::string jsonError(const std::string &text) {
  std::string error;
  EXPECT_FALSE(SystemDescription::parseJson(text, "sys.json", &error)) << text;
  return error;
}

TEST(SystemDescription, PresetsHaveDataSheetFigures) {
  for (const char *name : {"h100x4", "h100x8", "a100x4", "cpu4"})
    ASSERT_TRUE(SystemDescription::preset(name)) << name;
  auto h100 = SystemDescription::preset("h100x8");
  EXPECT_EQ(h100->numDevices(), 8);
  EXPECT_DOUBLE_EQ(h100->device(3).peakFor("bf16"), 989.4e12);
  EXPECT_DOUBLE_EQ(h100->device(3).peakFor("f32"), 67e12);
  EXPECT_DOUBLE_EQ(h100->device(0).memoryBandwidth, 3.35e12);
  EXPECT_DOUBLE_EQ(h100->link(0, 7).bandwidth, 450e9);
  auto a100 = SystemDescription::preset("a100x4");
  EXPECT_DOUBLE_EQ(a100->device(0).peakFor("f16"), 312e12);
  EXPECT_EQ(a100->device(2).name, "A100-SXM4-80GB:2");
}

TEST(SystemDescription, PresetsHaveMemoryCapacities) {
  // H100 SXM5 80GB; A100 SXM4 in its 80GB and 40GB parts; 4 GB of host RAM
  // per CPU core. The simulator's System carries them as capacities.
  for (auto [name, bytes] : std::initializer_list<std::pair<const char *, double>>{
           {"h100x4", 80e9}, {"h100x8", 80e9}, {"a100x4", 80e9},
           {"a100x8", 80e9}, {"a100-40x4", 40e9}, {"a100-40x8", 40e9},
           {"cpu4", 4e9}, {"cpu8", 4e9}}) {
    auto system = SystemDescription::preset(name);
    ASSERT_TRUE(system) << name;
    System sim = system->toSystem();
    for (DeviceId d = 0; d < system->numDevices(); ++d) {
      EXPECT_DOUBLE_EQ(system->device(d).memoryBytes, bytes) << name;
      EXPECT_DOUBLE_EQ(sim.memoryCapacity(d), bytes) << name;
    }
  }
  auto a100 = SystemDescription::preset("a100-40x4");
  EXPECT_EQ(a100->device(0).name, "A100-SXM4-40GB:0");
  EXPECT_DOUBLE_EQ(a100->device(0).memoryBandwidth, 1.555e12);
  EXPECT_DOUBLE_EQ(a100->device(0).peakFor("bf16"), 312e12);
}

TEST(SystemDescription, UnknownPresetListsKnownOnes) {
  std::string error;
  EXPECT_FALSE(SystemDescription::preset("tpu9", &error));
  EXPECT_NE(error.find("unknown system preset 'tpu9'"), std::string::npos);
  EXPECT_NE(error.find("h100x4"), std::string::npos);
  EXPECT_FALSE(SystemDescription::load("/no/such/file.json", &error));
  EXPECT_NE(error.find("no file '/no/such/file.json'"), std::string::npos);
}

TEST(SystemDescription, RooflineAndTransferCostsInMicroseconds) {
  auto system = SystemDescription::preset("h100x4");
  // A 4096^3 f32 matmul: 2*4096^3 FLOP at 67 TF/s, compute bound.
  double flops = 2.0 * 4096 * 4096 * 4096;
  double bytes = 3.0 * 4096 * 4096 * 4;
  EXPECT_NEAR(system->computeCost(0, flops, bytes, "f32"),
              (flops / 67e12 + 5e-6) * 1e6, 1e-9);
  // An elementwise op is memory bound.
  EXPECT_NEAR(system->computeCost(0, 1e6, 8e6, "f32"),
              (8e6 / 3.35e12 + 5e-6) * 1e6, 1e-12);
  EXPECT_NEAR(system->transferCost(0, 1, 450e9), (1 + 2e-6) * 1e6, 1e-6);
  EXPECT_DOUBLE_EQ(system->worstTransferCost(2, 450e9),
                   system->transferCost(2, 0, 450e9));
}

TEST(SystemDescription, JsonRoundTripWithMatrices) {
  const char *text = R"({
    "name": "two-speeds",
    "devices": [
      {"name": "big", "peak_flops": {"f32": 2e12}, "memory_bytes": 1e9,
       "memory_bandwidth": 1e11, "launch_overhead": 1e-6},
      {"name": "small", "count": 2, "peak_flops": {"default": 1e12},
       "memory_bytes": 5e8, "memory_bandwidth": 5e10}
    ],
    "links": {"bandwidth": [[0, 1e9, 2e9], [1e9, 0, 3e9], [2e9, 3e9, 0]],
              "latency": 1e-6}
  })";
  std::string error;
  auto system = SystemDescription::parseJson(text, "sys.json", &error);
  ASSERT_TRUE(system) << error;
  EXPECT_EQ(system->numDevices(), 3);
  EXPECT_EQ(system->device(2).name, "small:1");
  EXPECT_DOUBLE_EQ(system->link(1, 2).bandwidth, 3e9);
  EXPECT_DOUBLE_EQ(system->link(2, 0).latency, 1e-6);
  System sim = system->toSystem();
  EXPECT_DOUBLE_EQ(sim.speed(1), 0.5);
  EXPECT_DOUBLE_EQ(sim.memoryCapacity(0), 1e9);
  auto again = SystemDescription::parseJson(system->toJson(), "again", &error);
  ASSERT_TRUE(again) << error;
  EXPECT_EQ(again->toJson(), system->toJson());

  std::string path = ::testing::TempDir() + "/doppler-system.json";
  std::ofstream(path) << text;
  auto loaded = SystemDescription::load(path, &error);
  ASSERT_TRUE(loaded) << error;
  EXPECT_EQ(loaded->name(), "two-speeds");
  std::remove(path.c_str());
}

TEST(SystemDescription, JoinThroughputReplacesTheJoinsFlops) {
  const char *text = R"({
    "devices": [{"peak_flops": {"f32": 1e11}, "memory_bytes": 1e9,
                 "memory_bandwidth": 1e10, "launch_overhead": 1e-6,
                 "join_throughput": {"exp": 1e8, "silu": 5e7}}],
    "links": {"bandwidth": 1e9}
  })";
  std::string error;
  auto system = SystemDescription::parseJson(text, "sys.json", &error);
  ASSERT_TRUE(system) << error;
  EXPECT_DOUBLE_EQ(system->device(0).throughputOf(doppler::JoinKind::Exp), 1e8);
  EXPECT_EQ(system->device(0).throughputOf(doppler::JoinKind::Add), 0);
  // exp over 2^20 f32 elements: 2^20 / 1e8 s, above the 8 MiB / 1e10 s of
  // memory traffic that bounds an add of the same size.
  double points = 1 << 20, bytes = 8.0 * points;
  double exp = system->computeCost(0, points, bytes, "f32",
                                   doppler::JoinKind::Exp, points);
  EXPECT_NEAR(exp, (points / 1e8 + 1e-6) * 1e6, 1e-9);
  double add = system->computeCost(0, points, 1.5 * bytes, "f32",
                                   doppler::JoinKind::Add, points);
  EXPECT_DOUBLE_EQ(add, system->computeCost(0, points, 1.5 * bytes, "f32"));
  EXPECT_GT(exp, 5 * add);
  // A reduction keeps its aggregation FLOPs at peak.
  double reduce = system->computeCost(0, 4 * points, 0, "f32",
                                      doppler::JoinKind::Silu, points);
  EXPECT_NEAR(reduce, (points / 1e11 + points / 5e7 + 1e-6) * 1e6, 1e-9);
  // Round trip.
  auto again = SystemDescription::parseJson(system->toJson(), "again", &error);
  ASSERT_TRUE(again) << error;
  EXPECT_DOUBLE_EQ(again->device(0).throughputOf(doppler::JoinKind::Silu), 5e7);
}

TEST(SystemDescription, FusedKernelsPayEveryStepsJoin) {
  const char *text = R"({
    "devices": [{"peak_flops": {"f32": 1e11}, "memory_bytes": 1e9,
                 "memory_bandwidth": 1e10, "launch_overhead": 1e-6,
                 "join_throughput": {"exp": 1e8, "gelu": 2e7}}],
    "links": {"bandwidth": 1e9}
  })";
  std::string error;
  auto system = SystemDescription::parseJson(text, "sys.json", &error);
  ASSERT_TRUE(system) << error;
  using doppler::JoinKind;
  double points = 1 << 20, bytes = 12.0 * points;
  // add (unlisted: 1 FLOP at peak) then gelu (listed) then exp (listed):
  // points / 2e7 + points / 1e8 + points / 1e11 seconds, above the memory
  // time of reading two inputs and writing one output.
  double flops = points * (doppler::joinFlops(JoinKind::Add) +
                           doppler::joinFlops(JoinKind::Gelu) +
                           doppler::joinFlops(JoinKind::Exp));
  std::vector<JoinKind> steps{JoinKind::Add, JoinKind::Gelu, JoinKind::Exp};
  double fused = system->computeCost(0, flops, bytes, "f32", steps, points);
  EXPECT_NEAR(fused,
              (points / 2e7 + points / 1e8 + points / 1e11 + 1e-6) * 1e6,
              1e-6);
  // Cheaper than the three kernels it replaces, each of which moves its
  // own operands through memory and pays a launch.
  double apart =
      system->computeCost(0, points, bytes, "f32", JoinKind::Add, points) +
      system->computeCost(0, points * doppler::joinFlops(JoinKind::Gelu),
                          8 * points, "f32", JoinKind::Gelu, points) +
      system->computeCost(0, points * doppler::joinFlops(JoinKind::Exp),
                          8 * points, "f32", JoinKind::Exp, points);
  EXPECT_LT(fused, apart);
  // A repeated join is paid once per step.
  double twice = system->computeCost(0, 2 * points * 1, 8 * points, "f32",
                                     {JoinKind::Exp, JoinKind::Exp}, points);
  EXPECT_NEAR(twice, (2 * points / 1e8 + 1e-6) * 1e6, 1e-6);
  // One step is the single-join overload; no listed join is the roofline.
  EXPECT_DOUBLE_EQ(
      system->computeCost(0, points, bytes, "f32", {JoinKind::Exp}, points),
      system->computeCost(0, points, bytes, "f32", JoinKind::Exp, points));
  EXPECT_DOUBLE_EQ(system->computeCost(0, 3 * points, 100 * points, "f32",
                                       {JoinKind::Add, JoinKind::Mul}, points),
                   system->computeCost(0, 3 * points, 100 * points, "f32"));
  // Memory bound: the listed joins overlap with the traffic.
  double memoryBound = system->computeCost(0, points, 1e4 * points, "f32",
                                           {JoinKind::Exp}, points);
  EXPECT_NEAR(memoryBound, (1e4 * points / 1e10 + 1e-6) * 1e6, 1e-6);
}

TEST(SystemDescription, FilesWithoutJoinThroughputCostAsBefore) {
  const char *text = R"({
    "devices": [{"peak_flops": {"f32": 1e11}, "memory_bytes": 1e9,
                 "memory_bandwidth": 1e10}],
    "links": {"bandwidth": 1e9}
  })";
  std::string error;
  auto system = SystemDescription::parseJson(text, "sys.json", &error);
  ASSERT_TRUE(system) << error;
  for (unsigned k = 0; k < doppler::kNumJoinKinds; ++k)
    EXPECT_EQ(system->device(0).joinThroughput[k], 0);
  EXPECT_DOUBLE_EQ(
      system->computeCost(0, 1e9, 1e3, "f32", doppler::JoinKind::Exp, 1e9),
      1e9 / 1e11 * 1e6);
  EXPECT_EQ(system->toJson().find("join_throughput"), std::string::npos);
}

TEST(SystemDescription, PresetsListJoinThroughputs) {
  // GPUs: special function units, 16 per clock per SM.
  auto h100 = SystemDescription::preset("h100x4");
  EXPECT_DOUBLE_EQ(h100->device(0).throughputOf(doppler::JoinKind::Exp),
                   132 * 16 * 1.98e9);
  EXPECT_DOUBLE_EQ(h100->device(0).throughputOf(doppler::JoinKind::Silu),
                   132 * 16 * 1.98e9 / 2);
  EXPECT_EQ(h100->device(0).throughputOf(doppler::JoinKind::Add), 0);
  // A large f32 exp stays memory bound on an H100.
  double points = 1 << 24;
  EXPECT_DOUBLE_EQ(h100->computeCost(0, points, 8 * points, "f32",
                                     doppler::JoinKind::Exp, points),
                   h100->computeCost(0, points, 8 * points, "f32"));
  // A CPU core evaluates exp (SLEEF, AVX2) below its memory speed, GELU
  // slower still: a large f32 exp is compute bound at the listed rate.
  auto cpu = SystemDescription::preset("cpu4");
  const auto &core = cpu->device(0);
  EXPECT_GT(core.throughputOf(doppler::JoinKind::Exp),
            core.throughputOf(doppler::JoinKind::Gelu));
  double exp = cpu->computeCost(0, points, 8 * points, "f32",
                                doppler::JoinKind::Exp, points);
  double plain = cpu->computeCost(0, points, 8 * points, "f32");
  EXPECT_GT(exp, 1.5 * plain);
  EXPECT_NEAR(exp, points / core.throughputOf(doppler::JoinKind::Exp) * 1e6,
              0.001 * exp);
}

TEST(SystemDescription, WithDevicesKeepsAPrefix) {
  auto system = SystemDescription::preset("h100x8");
  std::string error;
  auto four = system->withDevices(4, &error);
  ASSERT_TRUE(four) << error;
  EXPECT_EQ(four->numDevices(), 4);
  EXPECT_FALSE(system->withDevices(9, &error));
  EXPECT_NE(error.find("has 8 device(s); cannot use 9"), std::string::npos);
  EXPECT_FALSE(system->withDevices(0, &error));
}

TEST(SystemDescription, HostMemoryAndLinks) {
  std::string error;
  auto h100 = SystemDescription::preset("h100x4", &error);
  ASSERT_TRUE(h100) << error;
  EXPECT_DOUBLE_EQ(h100->hostMemoryBytes(), 2e12);
  EXPECT_DOUBLE_EQ(h100->hostLink(3).bandwidth, 55e9);
  // 1 MB over 55 GB/s after 10 us: in microseconds.
  EXPECT_NEAR(h100->hostTransferCost(0, 1e6), 10 + 1e6 / 55e9 * 1e6, 1e-9);
  auto cpu = SystemDescription::preset("cpu4", &error);
  ASSERT_TRUE(cpu) << error;
  EXPECT_DOUBLE_EQ(cpu->hostLink(0).bandwidth, 10e9);
  EXPECT_DOUBLE_EQ(cpu->withDevices(2, &error)->hostLink(1).latency, 1e-6);

  // A file's "host" object round-trips; without one, the host link is the
  // slowest device link or half the smallest memory bandwidth, whichever
  // is slower, with the largest link latency, and host memory unlimited.
  const char *devices = R"("devices": [
      {"peak_flops": {"f32": 1e12}, "memory_bytes": 1e9,
       "memory_bandwidth": 4e9},
      {"peak_flops": {"f32": 1e12}, "memory_bytes": 1e9,
       "memory_bandwidth": 1e11}],
    "links": {"bandwidth": [[0, 3e9], [5e9, 0]], "latency": [[0, 1e-6], [2e-6, 0]]})";
  auto derived = SystemDescription::parseJson(
      std::string("{") + devices + "}", "sys.json", &error);
  ASSERT_TRUE(derived) << error;
  EXPECT_DOUBLE_EQ(derived->hostLink(0).bandwidth, 2e9);
  EXPECT_DOUBLE_EQ(derived->hostLink(1).latency, 2e-6);
  EXPECT_DOUBLE_EQ(derived->hostMemoryBytes(), 0);
  auto given = SystemDescription::parseJson(
      std::string("{") + devices +
          R"(, "host": {"memory_bytes": 5e11, "link_bandwidth": 2.5e10,
                        "link_latency": 1e-5}})",
      "sys.json", &error);
  ASSERT_TRUE(given) << error;
  EXPECT_DOUBLE_EQ(given->hostLink(1).bandwidth, 2.5e10);
  EXPECT_DOUBLE_EQ(given->hostLink(0).latency, 1e-5);
  EXPECT_DOUBLE_EQ(given->hostMemoryBytes(), 5e11);
  auto again = SystemDescription::parseJson(given->toJson(), "again", &error);
  ASSERT_TRUE(again) << error;
  EXPECT_EQ(again->toJson(), given->toJson());

  auto hostError = [&](const std::string &host) {
    std::string message;
    EXPECT_FALSE(SystemDescription::parseJson(
        std::string("{") + devices + R"(, "host": )" + host + "}", "sys.json",
        &message));
    return message;
  };
  EXPECT_EQ(hostError("3"), "sys.json: host: expected an object with "
                            "memory_bytes, link_bandwidth and link_latency");
  EXPECT_EQ(hostError(R"({"memory_bytes": 1})"),
            "sys.json: host.link_bandwidth: expected a positive number of "
            "bytes per second");
  EXPECT_EQ(hostError(R"({"link_bandwidth": 0})"),
            "sys.json: host.link_bandwidth: expected a positive number of "
            "bytes per second");
  EXPECT_EQ(hostError(R"({"link_bandwidth": 1, "link_latency": -1})"),
            "sys.json: host.link_latency: expected a non-negative number of "
            "seconds");
  EXPECT_EQ(hostError(R"({"link_bandwidth": 1, "memory_bytes": "lots"})"),
            "sys.json: host.memory_bytes: expected a non-negative number of "
            "bytes (0: unlimited)");
  EXPECT_EQ(hostError(R"({"link_bandwidth": 1, "pcie": 5})").rfind(
                "sys.json: host.pcie: unknown field", 0),
            0u);
}

TEST(SystemDescription, ErrorsNameTheField) {
  EXPECT_EQ(jsonError("{"), "sys.json: (document): not valid JSON");
  EXPECT_EQ(jsonError("[]"),
            "sys.json: (document): expected an object with \"devices\"");
  EXPECT_EQ(jsonError(R"({"devices": []})"),
            "sys.json: devices: expected a non-empty array of devices");
  EXPECT_EQ(jsonError(R"({"devices": [{"peak_flops": {"f32": 1}, "memory_bytes": 1,
              "memory_bandwidth": -3}], "links": {"bandwidth": 1}})"),
            "sys.json: devices[0].memory_bandwidth: expected a positive number");
  // The capacity is required, in bytes, positive and finite.
  for (const char *bytes : {"", R"("memory_bytes": 0,)",
                            R"("memory_bytes": -8e10,)",
                            R"("memory_bytes": "80GB",)"})
    EXPECT_EQ(jsonError(std::string(R"({"devices": [{"peak_flops": {"f32": 1}, )") +
                        bytes +
                        R"( "memory_bandwidth": 1}], "links": {"bandwidth": 1}})"),
              "sys.json: devices[0].memory_bytes: expected a positive number")
        << bytes;
  EXPECT_EQ(jsonError(R"({"devices": [{"peak_flops": {}, "memory_bytes": 1,
              "memory_bandwidth": 1}], "links": {"bandwidth": 1}})")
                .rfind("sys.json: devices[0].peak_flops: expected an object", 0),
            0u);
  EXPECT_EQ(jsonError(R"({"devices": [{"peak_flops": {"f32": "fast"}, "memory_bytes": 1,
              "memory_bandwidth": 1}], "links": {"bandwidth": 1}})"),
            "sys.json: devices[0].peak_flops.f32: expected a positive number");
  EXPECT_EQ(jsonError(R"({"devices": [{"peak_flops": {"f32": 1}, "memory_bytes": 1,
              "memory_bandwidth": 1, "colour": 2}], "links": {"bandwidth": 1}})")
                .rfind("sys.json: devices[0].colour: unknown field", 0),
            0u);
  EXPECT_EQ(jsonError(R"({"devices": [{"count": 0, "peak_flops": {"f32": 1},
              "memory_bytes": 1, "memory_bandwidth": 1}], "links": {"bandwidth": 1}})"),
            "sys.json: devices[0].count: expected an integer in [1, 4096]");
  // Each entry within the cap, the total over it: the D x D link table
  // would not fit (65536 devices: 68 GB).
  EXPECT_EQ(jsonError(R"({"devices": [{"count": 4096, "peak_flops": {"f32": 1},
              "memory_bytes": 1, "memory_bandwidth": 1}, {"peak_flops": {"f32": 1},
              "memory_bytes": 1, "memory_bandwidth": 1}], "links": {"bandwidth": 1}})"),
            "sys.json: devices[1].count: the system would have more than 4096 "
            "devices");
  EXPECT_EQ(jsonError(R"({"devices": [{"peak_flops": {"f32": 1}, "memory_bytes": 1,
              "memory_bandwidth": 1}]})")
                .rfind("sys.json: links: missing", 0),
            0u);
  EXPECT_EQ(jsonError(R"({"devices": [{"count": 2, "peak_flops": {"f32": 1},
              "memory_bytes": 1, "memory_bandwidth": 1}],
              "links": {"bandwidth": [[0, 1], [1]]}})"),
            "sys.json: links.bandwidth[1]: expected a row of 2 numbers");
  EXPECT_EQ(jsonError(R"({"devices": [{"count": 2, "peak_flops": {"f32": 1},
              "memory_bytes": 1, "memory_bandwidth": 1}],
              "links": {"bandwidth": [[0, 1], [0, 0]]}})"),
            "sys.json: links.bandwidth[1][0]: expected a positive number");
  EXPECT_EQ(jsonError(R"({"devices": [{"peak_flops": {"f32": 1}, "memory_bytes": 1,
              "memory_bandwidth": 1}], "links": {"bandwidth": 1, "latency": -1}})"),
            "sys.json: links.latency: expected a non-negative number");
  EXPECT_EQ(
      jsonError(R"({"devices": [{"peak_flops": {"f32": 1}, "memory_bytes": 1,
              "memory_bandwidth": 1, "join_throughput": 3}], "links": {"bandwidth": 1}})"),
      "sys.json: devices[0].join_throughput: expected an object of "
      "applications per second by join kind, e.g. {\"exp\": 2e8}");
  EXPECT_EQ(
      jsonError(R"({"devices": [{"peak_flops": {"f32": 1}, "memory_bytes": 1,
              "memory_bandwidth": 1, "join_throughput": {"expo": 1}}],
              "links": {"bandwidth": 1}})")
          .rfind("sys.json: devices[0].join_throughput.expo: unknown join "
                 "kind (known: identity, add, sub,",
                 0),
      0u);
  EXPECT_EQ(
      jsonError(R"({"devices": [{"peak_flops": {"f32": 1}, "memory_bytes": 1,
              "memory_bandwidth": 1, "join_throughput": {"exp": 1}},
              {"peak_flops": {"f32": 1}, "memory_bytes": 1, "memory_bandwidth": 1,
               "join_throughput": {"tanh": 0}}], "links": {"bandwidth": 1}})"),
      "sys.json: devices[1].join_throughput.tanh: expected a positive "
      "number of applications per second");
}

} // namespace
