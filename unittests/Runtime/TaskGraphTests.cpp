//===- TaskGraphTests.cpp - Graph construction and validation -------------===//

#include "doppler/runtime/TaskGraph.h"

#include <gtest/gtest.h>

using namespace doppler;
using namespace doppler::runtime;

namespace {

bool mentions(const Status &status, const std::string &text) {
  return status.message().find(text) != std::string::npos;
}

TEST(TaskGraph, InfersShapesAndTracksConsumers) {
  TaskGraph g;
  ValueId a = *g.addInput(0, {4, 5});
  ValueId b = *g.addInput(0, {5, 6});
  Result<ValueId> c =
      g.addEinsum(0, "ij,jk->ik", JoinKind::Mul, AggKind::Add, {a, b});
  ASSERT_TRUE(c) << c.message();
  EXPECT_EQ(g.task(*c).shape, (Shape{4, 6}));
  ValueId square =
      *g.addEinsum(0, "ij,ij->ij", JoinKind::Mul, std::nullopt, {a, a});
  EXPECT_EQ(g.task(square).uniqueInputs, (std::vector<ValueId>{a}));
  EXPECT_EQ(g.consumers(a), (std::vector<ValueId>{*c, square}));
  EXPECT_EQ(g.byteSize(*c), 4u * 6u * 4u);
  EXPECT_EQ(g.inputs(), (std::vector<ValueId>{a, b}));
  EXPECT_EQ(g.describe(*c), "%2 einsum ij,jk->ik mul/add");
  ValueId moved = *g.addTransfer(*c, 3);
  EXPECT_EQ(g.numDevicesUsed(), 4);
  EXPECT_EQ(g.describe(moved), "%4 transfer 0->3");
}

TEST(TaskGraph, EinsumValidation) {
  TaskGraph g;
  ValueId a = *g.addInput(0, {4, 5});
  ValueId onOther = *g.addInput(1, {5, 6});
  ValueId wide = *g.addInput(0, {6, 6});
  ValueId f64 = *g.addInput(0, {5, 6}, ElementType::F64);

  EXPECT_TRUE(mentions(
      g.addEinsum(0, "ij,jk", JoinKind::Mul, AggKind::Add, {a, a}).status(),
      "no '->'"));
  EXPECT_TRUE(mentions(
      g.addEinsum(0, "ij->ij", JoinKind::Add, std::nullopt, {a}).status(),
      "takes 2 input(s)"));
  EXPECT_TRUE(mentions(
      g.addEinsum(0, "ij,jk->ik", JoinKind::Mul, std::nullopt, {wide, wide})
          .status(),
      "no aggregation"));
  EXPECT_TRUE(mentions(
      g.addEinsum(0, "ij,jk->ik", JoinKind::Mul, AggKind::Add, {a, wide})
          .status(),
      "bound to both"));
  EXPECT_TRUE(mentions(
      g.addEinsum(0, "ij,jk->ik", JoinKind::Mul, AggKind::Add, {a, onOther})
          .status(),
      "lives on device 1"));
  EXPECT_TRUE(mentions(
      g.addEinsum(0, "ij,jk->ik", JoinKind::Mul, AggKind::Add, {a, f64})
          .status(),
      "element types"));
  EXPECT_TRUE(mentions(
      g.addEinsum(0, "ij->ij", JoinKind::Exp, std::nullopt, {42}).status(),
      "does not exist"));
  EXPECT_TRUE(mentions(
      g.addEinsum(-1, "ij->ij", JoinKind::Exp, std::nullopt, {a}).status(),
      "negative"));
  // Nothing was added by the failures.
  EXPECT_EQ(g.size(), 4);
}

TEST(TaskGraph, SliceAssembleFillDelayValidation) {
  TaskGraph g;
  ValueId x = *g.addInput(0, {4, 6});
  EXPECT_TRUE(mentions(g.addSlice(0, x, {0}, {4}).status(), "rank 2"));
  EXPECT_TRUE(
      mentions(g.addSlice(0, x, {2, 0}, {3, 6}).status(), "outside [0, 4)"));
  ValueId top = *g.addSlice(0, x, {0, 0}, {2, 6});
  ValueId bottom = *g.addSlice(0, x, {2, 0}, {2, 6});
  Result<ValueId> whole = g.addAssemble(0, {{2, 2}, {6}}, {top, bottom});
  ASSERT_TRUE(whole) << whole.message();
  EXPECT_EQ(g.task(*whole).shape, (Shape{4, 6}));
  EXPECT_TRUE(mentions(g.addAssemble(0, {{2, 2}, {6}}, {top}).status(),
                       "has 2 blocks"));
  EXPECT_TRUE(mentions(g.addAssemble(0, {{3, 1}, {6}}, {top, bottom}).status(),
                       "expected [3, 6]"));
  EXPECT_TRUE(mentions(g.addFill(0, {2, -1}, 0.0).status(), "negative"));
  EXPECT_TRUE(mentions(g.addDelay(0, -1.0).status(), ">= 0"));
  EXPECT_TRUE(mentions(g.addDelay(0, 1e308).status(),
                       "duration 1e+308 s is more than the limit of 3600 s"));
  EXPECT_TRUE(mentions(g.markOutput(99), "does not exist"));
}

TEST(TaskGraph, RefusesSizesPastTheCheckedCap) {
  // Every builder ends in add(), which checks the element count and byte
  // size with the shared helper: no task holds a size that wraps around.
  TaskGraph g;
  const int64_t big = int64_t(1) << 62;
  EXPECT_TRUE(mentions(g.addInput(0, {big}).status(),
                       "takes 1.84e+19 bytes, more than the limit of 2^62"));
  EXPECT_TRUE(mentions(g.addInput(0, {big, 4}).status(),
                       "has 1.84e+19 elements"));
  EXPECT_TRUE(mentions(g.addFill(0, {INT64_MAX, 2}, 0.0).status(),
                       "fill of shape [9223372036854775807, 2] f32 has"));
  // An einsum whose operands fit but whose result does not.
  ValueId a = *g.addInput(0, {int64_t(1) << 31, 4});
  ValueId b = *g.addInput(0, {4, int64_t(1) << 31});
  EXPECT_TRUE(mentions(g.addEinsum(0, "ij,jk->ik", JoinKind::Mul,
                                   AggKind::Add, {a, b})
                           .status(),
                       "more than the limit of 2^62"));
  EXPECT_EQ(g.size(), 2);
}

TEST(TaskGraph, VersionChangesOnEveryMutation) {
  TaskGraph g;
  uint64_t empty = g.version();
  ValueId x = *g.addInput(0, {1});
  uint64_t added = g.version();
  EXPECT_NE(empty, added);
  ASSERT_TRUE(g.markOutput(x));
  EXPECT_NE(g.version(), added);
  TaskGraph other;
  ASSERT_TRUE(other.addInput(0, {1}));
  EXPECT_NE(other.version(), g.version());
}

} // namespace

namespace {

TEST(TaskGraph, EvictAndReloadMakeAndReadHostValues) {
  TaskGraph g;
  ValueId x = *g.addInput(1, {4, 5}, ElementType::F64);
  ValueId y = *g.addFill(1, {4, 5}, 2.0, ElementType::F64);
  Result<ValueId> stash = g.addEvict(x);
  ASSERT_TRUE(stash) << stash.message();
  const Task &host = g.task(*stash);
  EXPECT_EQ(host.kind, TaskKind::Evict);
  EXPECT_TRUE(host.onHost);
  EXPECT_EQ(host.device, 1);
  EXPECT_EQ(host.type, ElementType::F64);
  EXPECT_EQ(host.shape, (Shape{4, 5}));
  EXPECT_TRUE(host.runsOnCopyWorker());
  EXPECT_EQ(g.describe(*stash), "%2 evict 1->host");
  EXPECT_EQ(taskKindName(TaskKind::Evict), "evict");
  EXPECT_EQ(taskKindName(TaskKind::Reload), "reload");

  Result<ValueId> back = g.addReload(*stash, 0, {y, y, *stash, x});
  ASSERT_TRUE(back) << back.message();
  const Task &reload = g.task(*back);
  EXPECT_EQ(reload.kind, TaskKind::Reload);
  EXPECT_FALSE(reload.onHost);
  EXPECT_EQ(reload.device, 0);
  EXPECT_TRUE(reload.runsOnCopyWorker());
  EXPECT_EQ(reload.inputs, (std::vector<ValueId>{*stash}));
  EXPECT_EQ(reload.uniqueInputs, (std::vector<ValueId>{*stash}));
  // Repeats and the stash itself are dropped; the rest sorted by id.
  EXPECT_EQ(reload.after, (std::vector<ValueId>{x, y}));
  EXPECT_EQ(g.describe(*back), "%3 reload host->0");
  // Control dependents are not readers: they do not keep buffers alive.
  EXPECT_EQ(g.consumers(x), (std::vector<ValueId>{*stash}));
  EXPECT_TRUE(g.consumers(y).empty());
  EXPECT_EQ(g.controlDependents(y), (std::vector<ValueId>{*back}));
  EXPECT_EQ(g.controlDependents(x), (std::vector<ValueId>{*back}));
  EXPECT_EQ(g.consumers(*stash), (std::vector<ValueId>{*back}));
  EXPECT_TRUE(g.markOutput(*back).ok());
}

TEST(TaskGraph, OnlyReloadsReadHostValues) {
  TaskGraph g;
  ValueId x = *g.addInput(0, {8});
  ValueId stash = *g.addEvict(x);
  const std::string host = "is a host value";
  EXPECT_TRUE(mentions(
      g.addEinsum(0, "i->i", JoinKind::Exp, std::nullopt, {stash}).status(),
      host));
  EXPECT_TRUE(mentions(g.addFused(0, "i,i->i", "add(in0, in1)", {x, stash})
                           .status(),
                       host));
  EXPECT_TRUE(mentions(g.addTransfer(stash, 1).status(), host));
  EXPECT_TRUE(mentions(g.onDevice(stash, 1).status(), host));
  EXPECT_TRUE(mentions(g.addSlice(0, stash, {0}, {4}).status(), host));
  EXPECT_TRUE(mentions(g.addAssemble(0, {{8}}, {stash}).status(), host));
  EXPECT_TRUE(mentions(g.addDelay(0, 0.0, {stash}).status(), host));
  EXPECT_TRUE(mentions(g.addEvict(stash).status(), host));
  Status output = g.markOutput(stash);
  EXPECT_FALSE(output);
  EXPECT_EQ(output.message(),
            "output %1 is a host value (reload it onto a device)");
  EXPECT_TRUE(g.outputs().empty());
  // Reloads read host values only; ids must exist and be earlier.
  EXPECT_EQ(g.addReload(x, 0).message(),
            "reload source %0 is not a host value (reload the output of an "
            "evict)");
  EXPECT_TRUE(mentions(g.addReload(9, 0).status(), "does not exist"));
  EXPECT_TRUE(mentions(g.addReload(stash, 0, {2}).status(),
                       "reload control dependency %2 does not exist"));
  EXPECT_TRUE(mentions(g.addReload(stash, -1).status(), "negative"));
  EXPECT_TRUE(mentions(g.addEvict(5).status(), "does not exist"));
  // Nothing was added by the failed calls.
  EXPECT_EQ(g.size(), 2);
}

} // namespace
