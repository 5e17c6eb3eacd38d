//===- KernelCostsTest.cpp - A device's per-kind task costs ---------------===//
//
// The "kernels" table of a system description (Doppler/Placement/
// KernelCosts.h): parsing with errors that name the field, the JSON round
// trip, and what the costs of each kind become.
//
//===----------------------------------------------------------------------===//

#include "Doppler/Placement/SystemDescription.h"

#include <gtest/gtest.h>

#include <cmath>
#include <utility>

using namespace doppler::placement;

namespace {

std::string withKernels(const std::string &kernels) {
  return R"({"devices": [{"name": "cpu", "count": 2,
    "peak_flops": {"f32": 1e11}, "memory_bytes": 4e9,
    "memory_bandwidth": 2e10, "launch_overhead": 3e-7,
    "kernels": )" +
         kernels + R"(}], "links": {"bandwidth": 1e10, "latency": 1e-5}})";
}

std::string jsonError(const std::string &text) {
  std::string error;
  EXPECT_FALSE(SystemDescription::parseJson(text, "sys.json", &error)) << text;
  return error;
}

TEST(KernelCosts, KindsHaveNames) {
  for (unsigned k = 0; k < kNumKernelKinds; ++k) {
    auto kind = static_cast<KernelKind>(k);
    EXPECT_EQ(parseKernelKind(kernelKindName(kind)), kind);
  }
  EXPECT_FALSE(parseKernelKind("gemm"));
  EXPECT_EQ(kernelKindNames(),
            "contraction, fused, copy, conv, depthwise, pool, elementwise");
}

TEST(KernelCosts, RateFallsWithTheGemmSide) {
  KernelCost cost;
  cost.halfSize = 20;
  EXPECT_DOUBLE_EQ(cost.rateAt(80e9, 0), 80e9);  // unknown side, or exempt
  EXPECT_DOUBLE_EQ(cost.rateAt(80e9, 1), 80e9 / 21); // one position
  EXPECT_DOUBLE_EQ(cost.rateAt(80e9, 20), 40e9); // half at half_size
  EXPECT_DOUBLE_EQ(cost.rateAt(80e9, 60), 60e9);
  cost.halfSize = 0;
  EXPECT_DOUBLE_EQ(cost.rateAt(80e9, 4), 80e9);
}

TEST(KernelCosts, ParsedKindsPriceTheirTasks) {
  std::string error;
  auto system = SystemDescription::parseJson(
      withKernels(R"({"conv": {"overhead": 2e-6, "flops": 5e10,
                               "half_size": 10},
                      "copy": {"overhead": 1e-7}})"),
      "sys.json", &error);
  ASSERT_TRUE(system) << error;
  const DeviceDescription &cpu = system->device(1);
  EXPECT_DOUBLE_EQ(cpu.overheadFor(KernelKind::Conv), 2e-6);
  EXPECT_DOUBLE_EQ(cpu.overheadFor(KernelKind::Copy), 1e-7);
  // Kinds not listed, and no kind, keep launch_overhead and the peak.
  EXPECT_DOUBLE_EQ(cpu.overheadFor(KernelKind::Pool), 3e-7);
  EXPECT_DOUBLE_EQ(cpu.overheadFor(std::nullopt), 3e-7);
  EXPECT_DOUBLE_EQ(cpu.flopsFor(KernelKind::Pool, "f32"), 1e11);
  EXPECT_DOUBLE_EQ(cpu.flopsFor(KernelKind::Conv, "f32", 10), 2.5e10);

  // 1e6 FLOPs of a conv with GEMM side 10 (at 2.5e10 FLOP/s: 40 us) over
  // 1e5 bytes (5 us): 40 + 2 us. Cost units are microseconds.
  EXPECT_NEAR(system->computeCost(0, 1e6, 1e5, "f32", KernelKind::Conv, 10),
              42.0, 1e-9);
  // Without a kind: the roofline at the peak, 10 us + 0.3.
  EXPECT_NEAR(system->computeCost(0, 1e6, 1e5, "f32"), 10.3, 1e-9);
  // A matrix-vector product (size 0) streams at the kind's gemv_bandwidth
  // where given: 1e6 bytes at 1e10 B/s = 100 us + 2; other sizes and kinds
  // keep memory_bandwidth (2e10 here: 50 us).
  system = SystemDescription::parseJson(
      withKernels(R"({"conv": {"overhead": 2e-6, "flops": 5e10,
                               "gemv_bandwidth": 1e10}})"),
      "sys.json", &error);
  ASSERT_TRUE(system) << error;
  EXPECT_NEAR(system->computeCost(0, 1e3, 1e6, "f32", KernelKind::Conv, 0),
              102.0, 1e-9);
  EXPECT_NEAR(system->computeCost(0, 1e3, 1e6, "f32", KernelKind::Conv, 4),
              52.0, 1e-9);
  EXPECT_DOUBLE_EQ(system->device(0).bandwidthFor(KernelKind::Pool, 0),
                   system->device(0).memoryBandwidth);
  // A kind without entries is the roofline exactly.
  EXPECT_DOUBLE_EQ(
      system->computeCost(0, 1e6, 1e5, "f32", KernelKind::Contraction, 8),
      system->computeCost(0, 1e6, 1e5, "f32"));
  // A fused task's joins are priced as before; its overhead is the kind's.
  system = SystemDescription::parseJson(
      withKernels(R"({"fused": {"overhead": 1e-6}})"), "sys.json", &error);
  ASSERT_TRUE(system) << error;
  const std::vector<doppler::JoinKind> joins = {doppler::JoinKind::Add};
  EXPECT_NEAR(
      system->computeCost(0, 1e6, 1e5, "f32", joins, 1e5, KernelKind::Fused) -
          system->computeCost(0, 1e6, 1e5, "f32", joins, 1e5),
      0.7, 1e-9);
}

TEST(KernelCosts, RoundTripsThroughJson) {
  std::string error;
  auto system = SystemDescription::parseJson(
      withKernels(R"({"contraction": {"overhead": 5e-7, "flops": 8e10,
                                      "half_size": 10.5,
                                      "gemv_bandwidth": 2.5e10},
                      "pool": {"flops": 1.3e9}})"),
      "sys.json", &error);
  ASSERT_TRUE(system) << error;
  auto again = SystemDescription::parseJson(system->toJson(), "again", &error);
  ASSERT_TRUE(again) << error;
  for (unsigned k = 0; k < kNumKernelKinds; ++k) {
    const KernelCost &a = system->device(0).kernels[k];
    const KernelCost &b = again->device(0).kernels[k];
    EXPECT_EQ(a.overhead, b.overhead) << k;
    EXPECT_EQ(a.flops, b.flops) << k;
    EXPECT_EQ(a.halfSize, b.halfSize) << k;
    EXPECT_EQ(a.gemvBandwidth, b.gemvBandwidth) << k;
  }
  EXPECT_DOUBLE_EQ(again->device(1).kernels[0].gemvBandwidth, 2.5e10);
  EXPECT_DOUBLE_EQ(again->device(1).kernels[0].halfSize, 10.5);
}

TEST(KernelCosts, FusedWalkCostsRowsAndGathers) {
  std::string error;
  auto system = SystemDescription::parseJson(
      withKernels(R"({"fused": {"overhead": 4e-7, "gather_time": 2e-10,
                                "row_time": 1.5e-8}})"),
      "sys.json", &error);
  ASSERT_TRUE(system) << error;
  const KernelCost &fused =
      system->device(1).kernels[static_cast<unsigned>(KernelKind::Fused)];
  // The first row is the task's own walk; each further one and each
  // gathered element adds its time.
  EXPECT_DOUBLE_EQ(fused.walkSeconds(1, 0), 0);
  EXPECT_DOUBLE_EQ(fused.walkSeconds(64, 0), 63 * 1.5e-8);
  EXPECT_DOUBLE_EQ(fused.walkSeconds(64, 1024), 63 * 1.5e-8 + 1024 * 2e-10);
  // Not given (every other kind here, and every preset): no walk term.
  const KernelCost &conv =
      system->device(0).kernels[static_cast<unsigned>(KernelKind::Conv)];
  EXPECT_DOUBLE_EQ(conv.walkSeconds(64, 1024), 0);
  auto preset = SystemDescription::preset("cpu4");
  ASSERT_TRUE(preset);
  for (const KernelCost &cost : preset->device(0).kernels)
    EXPECT_DOUBLE_EQ(cost.walkSeconds(1000, 1e6), 0);
  // Both figures survive the JSON round trip.
  auto again = SystemDescription::parseJson(system->toJson(), "again", &error);
  ASSERT_TRUE(again) << error;
  const KernelCost &back =
      again->device(0).kernels[static_cast<unsigned>(KernelKind::Fused)];
  EXPECT_DOUBLE_EQ(back.gatherTime, 2e-10);
  EXPECT_DOUBLE_EQ(back.rowTime, 1.5e-8);
}

TEST(KernelCosts, CopiesAndElementwiseEinsumsReadRowTime) {
  std::string error;
  auto system = SystemDescription::parseJson(
      withKernels(R"({"copy": {"overhead": 2.4e-7, "row_time": 2.5e-9},
                      "elementwise": {"overhead": 2.3e-7,
                                      "row_time": 1.1e-8}})"),
      "sys.json", &error);
  ASSERT_TRUE(system) << error;
  const auto &kernels = system->device(1).kernels;
  const KernelCost &copy = kernels[static_cast<unsigned>(KernelKind::Copy)];
  const KernelCost &loop =
      kernels[static_cast<unsigned>(KernelKind::Elementwise)];
  EXPECT_DOUBLE_EQ(copy.rowTime, 2.5e-9);
  EXPECT_DOUBLE_EQ(loop.walkSeconds(33, 0), 32 * 1.1e-8);
  // The elementwise kind's overhead replaces launch_overhead.
  EXPECT_DOUBLE_EQ(system->device(0).overheadFor(KernelKind::Elementwise),
                   2.3e-7);
  auto again = SystemDescription::parseJson(system->toJson(), "again", &error);
  ASSERT_TRUE(again) << error;
  EXPECT_DOUBLE_EQ(
      again->device(0)
          .kernels[static_cast<unsigned>(KernelKind::Elementwise)]
          .rowTime,
      1.1e-8);
  EXPECT_DOUBLE_EQ(
      again->device(0).kernels[static_cast<unsigned>(KernelKind::Copy)].rowTime,
      2.5e-9);
  // Neither gathers: only fused tasks fill or gather their inputs.
  EXPECT_EQ(jsonError(withKernels(R"({"copy": {"gather_time": 1e-9}})")),
            "sys.json: devices[0].kernels.copy.gather_time: not read for copy "
            "tasks (overhead, row_time are)");
  EXPECT_EQ(
      jsonError(withKernels(R"({"elementwise": {"flops": 1e9}})")),
      "sys.json: devices[0].kernels.elementwise.flops: not read for "
      "elementwise tasks (overhead, row_time are)");
}

TEST(KernelCosts, ErrorsNameTheField) {
  EXPECT_EQ(jsonError(withKernels("[1]")),
            "sys.json: devices[0].kernels: expected an object of task costs "
            "by kind, e.g. {\"conv\": {\"overhead\": 1.8e-6, \"flops\": "
            "5e10}}");
  EXPECT_EQ(jsonError(withKernels(R"({"gemm": {}})")),
            "sys.json: devices[0].kernels.gemm: unknown kind (known: "
            "contraction, fused, copy, conv, depthwise, pool, elementwise)");
  EXPECT_EQ(jsonError(withKernels(R"({"conv": 3})")),
            "sys.json: devices[0].kernels.conv: expected an object with "
            "overhead (seconds per task), flops (FLOP/s), half_size, "
            "gemv_bandwidth, gather_time, row_time and/or grid");
  EXPECT_EQ(jsonError(withKernels(R"({"conv": {"overhead": -1}})")),
            "sys.json: devices[0].kernels.conv.overhead: expected a number "
            "of seconds per task in [0, 1]");
  EXPECT_EQ(jsonError(withKernels(R"({"pool": {"flops": 0}})")),
            "sys.json: devices[0].kernels.pool.flops: expected a number of "
            "FLOP/s in [1, 1e21]");
  EXPECT_EQ(jsonError(withKernels(R"({"conv": {"half_size": "big"}})")),
            "sys.json: devices[0].kernels.conv.half_size: expected a GEMM "
            "side or positions per channel in [0, 1e9]");
  // Figures that would price a task at infinity are refused here, naming
  // the field, not later by the op's finite-cost check.
  EXPECT_EQ(jsonError(withKernels(R"({"conv": {"overhead": 1e308}})")),
            "sys.json: devices[0].kernels.conv.overhead: expected a number "
            "of seconds per task in [0, 1]");
  EXPECT_EQ(
      jsonError(withKernels(R"({"contraction": {"gemv_bandwidth": 1e-300}})")),
      "sys.json: devices[0].kernels.contraction.gemv_bandwidth: expected a "
      "number of bytes per second in [1, 1e16]");
  // A figure the cost model does not read for the kind is an error, not
  // silently ignored.
  EXPECT_EQ(jsonError(withKernels(R"({"fused": {"flops": 1e9}})")),
            "sys.json: devices[0].kernels.fused.flops: not read for fused "
            "tasks (overhead, gather_time, row_time are)");
  EXPECT_EQ(jsonError(withKernels(R"({"conv": {"row_time": 1e-8}})")),
            "sys.json: devices[0].kernels.conv.row_time: not read for conv "
            "tasks (overhead, flops, half_size, gemv_bandwidth, grid are)");
  EXPECT_EQ(jsonError(withKernels(R"({"fused": {"gather_time": -1e-9}})")),
            "sys.json: devices[0].kernels.fused.gather_time: expected a "
            "number of seconds per gathered element in [0, 1]");
  EXPECT_EQ(jsonError(withKernels(R"({"pool": {"gemv_bandwidth": 1e10}})")),
            "sys.json: devices[0].kernels.pool.gemv_bandwidth: not read for "
            "pool tasks (overhead, flops, half_size are)");
  EXPECT_EQ(jsonError(withKernels(R"({"conv": {"rate": 1}})")),
            "sys.json: devices[0].kernels.conv.rate: unknown field (expected "
            "overhead, flops, half_size, gemv_bandwidth, gather_time, "
            "row_time, grid)");
  EXPECT_EQ(
      jsonError(withKernels(R"({"contraction": {"gemv_bandwidth": -2}})")),
      "sys.json: devices[0].kernels.contraction.gemv_bandwidth: expected a "
      "number of bytes per second in [1, 1e16]");
}

// A 2 x 2 x 1 grid: m in {16, 256}, n in {4, 64}, k = 144.
const char *kGrid = R"({"m": [16, 256], "n": [4, 64], "k": [144],
                        "flops": [2e9, 2e10, 8e9, 5e10]})";

TEST(KernelCosts, GridInterpolatesInLogSpace) {
  std::string error;
  auto system = SystemDescription::parseJson(
      withKernels(std::string(R"({"conv": {"overhead": 2e-6, "grid": )") +
                  kGrid + "}}"),
      "sys.json", &error);
  ASSERT_TRUE(system) << error;
  const GemmGrid &grid =
      system->device(0).kernels[static_cast<unsigned>(KernelKind::Conv)].grid;
  ASSERT_FALSE(grid.empty());
  // The points themselves.
  EXPECT_DOUBLE_EQ(grid.rateAt(16, 4, 144), 2e9);
  EXPECT_DOUBLE_EQ(grid.rateAt(16, 64, 144), 2e10);
  EXPECT_DOUBLE_EQ(grid.rateAt(256, 64, 144), 5e10);
  // Halfway in log space (n = 16 between 4 and 64): the geometric mean.
  EXPECT_NEAR(grid.rateAt(16, 16, 144), std::sqrt(2e9 * 2e10), 1);
  EXPECT_NEAR(grid.rateAt(64, 16, 144),
              std::sqrt(std::sqrt(2e9 * 2e10) * std::sqrt(8e9 * 5e10)), 1);
  // Beyond the grid (and along an axis of one point): the edge's rate.
  EXPECT_DOUBLE_EQ(grid.rateAt(1024, 4096, 9), 5e10);
  EXPECT_DOUBLE_EQ(grid.rateAt(2, 1, 1e6), 2e9);
  // The round trip keeps it; the presets have none.
  auto again = SystemDescription::parseJson(system->toJson(), "again", &error);
  ASSERT_TRUE(again) << error;
  const GemmGrid &back =
      again->device(1).kernels[static_cast<unsigned>(KernelKind::Conv)].grid;
  EXPECT_EQ(back.m, grid.m);
  EXPECT_EQ(back.n, grid.n);
  EXPECT_EQ(back.k, grid.k);
  EXPECT_EQ(back.flops, grid.flops);
  auto preset = SystemDescription::preset("cpu4");
  ASSERT_TRUE(preset);
  for (const KernelCost &cost : preset->device(0).kernels)
    EXPECT_TRUE(cost.grid.empty());
}

TEST(KernelCosts, GridErrorsNameTheField) {
  auto conv = [](const std::string &grid) {
    return jsonError(withKernels(R"({"conv": {"grid": )" + grid + "}}"));
  };
  const std::pair<const char *, const char *> cases[] = {
      {"[]", "grid: expected an object with m, n, k (GEMM sides) and flops "
             "(FLOP/s at each point)"},
      {R"({"m": [16], "n": [4], "k": [9], "flops": [1e9], "l": [1]})",
       "grid.l: unknown field (expected m, n, k, flops)"},
      {R"({"m": [16, 8], "n": [4], "k": [9], "flops": [1, 2]})",
       "grid.m: expected increasing sides"},
      {R"({"m": [16], "n": [0], "k": [9], "flops": [1e9]})",
       "grid.n: expected a list of GEMM sides in [1, 1e9]"},
      {R"({"m": [16], "n": [4]})",
       "grid.k: expected a list of GEMM sides in [1, 1e9]"},
      {R"({"m": [16], "n": [4, 8], "k": [9], "flops": [1e9]})",
       "grid.flops: expected 2 numbers of FLOP/s in [1, 1e21] (m by n by "
       "k)"},
      {R"({"m": [16], "n": [4], "k": [9], "flops": [0]})",
       "grid.flops: expected 1 numbers of FLOP/s in [1, 1e21] (m by n by "
       "k)"},
  };
  for (auto [grid, message] : cases)
    EXPECT_EQ(conv(grid),
              std::string("sys.json: devices[0].kernels.conv.") + message);
  EXPECT_EQ(jsonError(withKernels(std::string(R"({"pool": {"grid": )") +
                                  kGrid + "}}")),
            "sys.json: devices[0].kernels.pool.grid: not read for pool tasks "
            "(overhead, flops, half_size are)");
  // Contractions read one too.
  std::string error;
  EXPECT_TRUE(SystemDescription::parseJson(
      withKernels(std::string(R"({"contraction": {"grid": )") + kGrid + "}}"),
      "sys.json", &error))
      << error;
}

} // namespace
