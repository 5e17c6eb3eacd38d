//===- NetworkTest.cpp - The LibTorch side of the dual policy -------------===//
//
// Shapes of the encoder outputs, the hand-written autograd functions
// against plain LibTorch formulas, and agreement between the rollout's
// scores (plain C++) and the batched loss's probabilities.
//
//===----------------------------------------------------------------------===//

#include "PolicyNetwork.h"
#include "Random.h"
#include "Rollout.h"

#include "Doppler/Placement/Environment.h"
#include "Doppler/Placement/Learning/GraphGenerator.h"

#include <gtest/gtest.h>

using namespace doppler::placement;
using namespace doppler::placement::learning;

namespace {

Graph smallTransformer() {
  TransformerShape shape;
  shape.sequence = 1024;
  shape.model = 1024;
  shape.ffn = 2816;
  shape.sequenceParts = 2;
  shape.headGroups = 2;
  shape.ffnParts = 2;
  return generateTransformer(shape, CostRates())->graph;
}

ModelConfig tinyConfig(EdgeNetworkKind edge, bool shared) {
  ModelConfig config;
  config.hiddenSize = 16;
  config.headHiddenSize = 8;
  config.messagePassingRounds = 2;
  config.edgeNetwork = edge;
  config.edgeRank = 4;
  config.sharedEncoder = shared;
  return config;
}

/// Plain LibTorch version of SegmentStandardize for one segment.
torch::Tensor standardizeReference(const torch::Tensor &x) {
  torch::Tensor mean = x.mean(0, true);
  torch::Tensor std = ((x - mean).pow(2).mean(0, true) + 1e-12).sqrt();
  return (x - mean) / (std + kStandardizeEpsilon);
}

} // namespace

TEST(NetworkTest, EncoderShapesForBothEdgeNetworks) {
  Graph graph = smallTransformer();
  GraphTensors tensors = buildGraphTensors(graph);
  const int64_t N = graph.numNodes();
  for (EdgeNetworkKind edge : {EdgeNetworkKind::Full, EdgeNetworkKind::LowRank})
    for (bool shared : {true, false}) {
      torch::manual_seed(1);
      DualPolicyNetwork network(tinyConfig(edge, shared));
      EncodedGraph encoded = encodeGraph(*network, tensors);
      EXPECT_EQ(encoded.selEmbedding.sizes(), (std::vector<int64_t>{N, 16}));
      EXPECT_EQ(encoded.plcEmbedding.sizes(), (std::vector<int64_t>{N, 16}));
      EXPECT_EQ(encoded.bottomSums.sizes(), (std::vector<int64_t>{N, 16}));
      EXPECT_EQ(encoded.selNodeTerm.sizes(), (std::vector<int64_t>{N, 8}));
      EXPECT_EQ(encoded.plcNodeTerm.sizes(), (std::vector<int64_t>{N, 8}));
      EXPECT_TRUE(torch::isfinite(encoded.selEmbedding).all().item<bool>());
      // Standardised across all nodes.
      EXPECT_NEAR(encoded.topSums.mean().item<double>(), 0.0, 1e-4);
      EXPECT_EQ(shared, encoded.selEmbedding.is_same(encoded.plcEmbedding));
    }
}

TEST(NetworkTest, GradientsMatchPlainLibTorch) {
  // End to end through the encoder, path sums and standardisation: each
  // parameter's gradient against a central difference (float32, so the
  // tolerance is loose; a wiring mistake is off by far more).
  Graph graph = smallTransformer();
  GraphTensors tensors = buildGraphTensors(graph);
  for (EdgeNetworkKind edge : {EdgeNetworkKind::Full, EdgeNetworkKind::LowRank}) {
    torch::manual_seed(3);
    DualPolicyNetwork network(tinyConfig(edge, true));
    torch::Tensor weights = torch::randn({graph.numNodes(), 16});
    auto lossOf = [&] {
      EncodedGraph e = encodeGraph(*network, tensors);
      return (e.bottomSums * weights).sum() + (e.topSums.sin()).sum() +
             e.plcNodeTerm.pow(2).sum();
    };
    network->zero_grad();
    lossOf().backward();
    for (auto &item : network->named_parameters()) {
      torch::Tensor p = item.value();
      if (!p.grad().defined() || p.numel() == 0)
        continue;
      int64_t index = p.numel() / 2;
      double analytic = p.grad().view({-1})[index].item<double>();
      torch::NoGradGuard noGrad;
      float saved = p.view({-1})[index].item<float>();
      const float step = 1e-3f;
      p.view({-1})[index] = saved + step;
      double up = lossOf().item<double>();
      p.view({-1})[index] = saved - step;
      double down = lossOf().item<double>();
      p.view({-1})[index] = saved;
      double numeric = (up - down) / (2 * step);
      EXPECT_NEAR(analytic, numeric, 0.05 * std::abs(numeric) + 0.05)
          << item.key();
    }
  }
}

/// Forward values and input gradients of `mine` and `reference` agree.
void expectSameFunction(
    const std::function<torch::Tensor(const torch::Tensor &)> &mine,
    const std::function<torch::Tensor(const torch::Tensor &)> &reference,
    torch::Tensor input, const char *what) {
  torch::Tensor a = input.detach().clone().requires_grad_(true);
  torch::Tensor b = input.detach().clone().requires_grad_(true);
  torch::Tensor outA = mine(a), outB = reference(b);
  ASSERT_EQ(outA.sizes(), outB.sizes()) << what;
  EXPECT_TRUE(torch::allclose(outA, outB, 1e-4, 1e-4)) << what;
  torch::Tensor weights = torch::randn(outA.sizes());
  (outA * weights).sum().backward();
  (outB * weights).sum().backward();
  EXPECT_TRUE(torch::allclose(a.grad(), b.grad(), 1e-3, 1e-3)) << what;
}

TEST(NetworkTest, HandWrittenOperationsMatchStockLibTorch) {
  torch::manual_seed(5);
  Graph graph = smallTransformer();
  GraphTensors tensors = buildGraphTensors(graph);
  const int64_t N = graph.numNodes(), E = graph.numEdges();
  torch::Tensor x = torch::randn({N, 6});

  torch::Tensor index = torch::randint(0, N, {3 * N}, torch::kInt64);
  expectSameFunction([&](const torch::Tensor &t) { return gatherRows(t, index); },
                     [&](const torch::Tensor &t) { return t.index_select(0, index); },
                     x, "gatherRows");
  torch::Tensor wide = torch::randn({3 * N, 6});
  expectSameFunction(
      [&](const torch::Tensor &t) { return scatterAddRows(t, index, N); },
      [&](const torch::Tensor &t) {
        return torch::zeros({N, 6}).index_add(0, index, t);
      },
      wide, "scatterAddRows");

  // Undirected aggregation, with and without gates.
  std::vector<int64_t> src, dst, edge;
  for (int32_t e = 0; e < E; ++e) {
    src.insert(src.end(), {graph.edgeSource(e), graph.edgeTarget(e)});
    dst.insert(dst.end(), {graph.edgeTarget(e), graph.edgeSource(e)});
    edge.insert(edge.end(), {e, e});
  }
  torch::Tensor srcT = torch::tensor(src), dstT = torch::tensor(dst),
                edgeT = torch::tensor(edge);
  expectSameFunction(
      [&](const torch::Tensor &t) {
        return edgeAggregate(t, torch::Tensor(), tensors);
      },
      [&](const torch::Tensor &t) {
        return torch::zeros({N, 6}).index_add(0, dstT, t.index_select(0, srcT));
      },
      x, "edgeAggregate");
  torch::Tensor gates = torch::randn({E, 6});
  expectSameFunction(
      [&](const torch::Tensor &t) { return edgeAggregate(x, t, tensors); },
      [&](const torch::Tensor &t) {
        return torch::zeros({N, 6}).index_add(
            0, dstT, x.index_select(0, srcT) * t.index_select(0, edgeT));
      },
      gates, "edgeAggregate gates");
  expectSameFunction(
      [&](const torch::Tensor &t) { return edgeAggregate(t, gates, tensors); },
      [&](const torch::Tensor &t) {
        return torch::zeros({N, 6}).index_add(
            0, dstT, t.index_select(0, srcT) * gates.index_select(0, edgeT));
      },
      x, "edgeAggregate x");

  // Path sums against summing each path's rows.
  for (bool bottom : {true, false}) {
    const torch::Tensor &next = bottom ? tensors.bottomNext : tensors.topNext;
    const torch::Tensor &order = bottom ? tensors.bottomOrder : tensors.topOrder;
    expectSameFunction(
        [&](const torch::Tensor &t) { return pathSum(t, next, order); },
        [&](const torch::Tensor &t) {
          std::vector<torch::Tensor> rows;
          const int32_t *nx = next.data_ptr<int32_t>();
          for (int64_t v = 0; v < N; ++v) {
            std::vector<int64_t> path;
            for (int64_t u = v; u >= 0; u = nx[u])
              path.push_back(u);
            rows.push_back(t.index_select(0, torch::tensor(path)).sum(0));
          }
          return torch::stack(rows);
        },
        x, bottom ? "pathSum bottom" : "pathSum top");
  }

  // Segments of sizes 1, 3, N-4 (a size-1 segment standardises to zero).
  torch::Tensor offsets =
      torch::tensor({0, 1, 4, static_cast<int32_t>(N)}, torch::kInt32);
  auto perSegment = [&](const torch::Tensor &t, auto function) {
    std::vector<torch::Tensor> parts;
    const int32_t *off = offsets.data_ptr<int32_t>();
    for (int64_t s = 0; s + 1 < offsets.size(0); ++s)
      parts.push_back(function(t.narrow(0, off[s], off[s + 1] - off[s])));
    return torch::cat(parts);
  };
  expectSameFunction(
      [&](const torch::Tensor &t) { return segmentStandardize(t, offsets); },
      [&](const torch::Tensor &t) {
        return perSegment(t, [](const torch::Tensor &p) {
          return standardizeReference(p);
        });
      },
      x, "segmentStandardize");
  expectSameFunction(
      [&](const torch::Tensor &t) { return segmentLogSoftmax(t, offsets); },
      [&](const torch::Tensor &t) {
        return perSegment(t, [](const torch::Tensor &p) {
          return torch::log_softmax(p, 0);
        });
      },
      torch::randn({N}), "segmentLogSoftmax");
}

// Without gradients (placing) the GRU round runs in blocks of rows
// (GraphOps.cpp): the same values bit for bit, across a block boundary
// and a longer last block.
TEST(NetworkTest, GruRoundWithoutGradientsIsTheSame) {
  torch::manual_seed(9);
  for (int64_t H : {16, 128}) {
    const int64_t N = 3001;
    torch::Tensor messages = torch::randn({N, H}), bias = torch::randn({H});
    torch::Tensor h = torch::randn({N, H}).requires_grad_(true);
    torch::Tensor weightIh = torch::randn({3 * H, H}),
                  weightHh = torch::randn({3 * H, H});
    torch::Tensor biasIh = torch::randn({3 * H}),
                  biasHh = torch::randn({3 * H});
    torch::Tensor withGradients =
        gruRound(messages, bias, h, weightIh, weightHh, biasIh, biasHh);
    ASSERT_TRUE(withGradients.requires_grad());
    torch::NoGradGuard noGrad;
    torch::Tensor without =
        gruRound(messages, bias, h, weightIh, weightHh, biasIh, biasHh);
    EXPECT_TRUE(torch::equal(withGradients.detach(), without)) << "H = " << H;
  }
}
