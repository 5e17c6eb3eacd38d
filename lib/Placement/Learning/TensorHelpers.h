//===- TensorHelpers.h - Small tensor constructors of the network -*- C++ -*-===//
//
// Internal to the learning library: what the graph tensors, the modules and
// the episode loss share.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_LIB_PLACEMENT_LEARNING_TENSORHELPERS_H
#define DOPPLER_LIB_PLACEMENT_LEARNING_TENSORHELPERS_H

#include "Rollout.h"

#include <torch/torch.h>

#include <cstdint>
#include <vector>

// GCC and Clang build an AVX2 clone of a function so marked next to the
// baseline one and pick by CPU at load time. AVX2 without FMA: the same
// operations, so the same values, on every x86-64 (not under ASan or TSan,
// whose runtimes are not up when the clone's resolver runs; see
// Rollout.cpp).
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) &&     \
    !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define DOPPLER_AVX2_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define DOPPLER_AVX2_CLONES
#endif

namespace doppler::placement::learning::detail {

inline torch::Tensor leaky(const torch::Tensor &x) {
  return torch::leaky_relu(x, kLeakySlope);
}

inline torch::Tensor int32Tensor(const std::vector<int32_t> &values) {
  return torch::from_blob(const_cast<int32_t *>(values.data()),
                          {static_cast<int64_t>(values.size())}, torch::kInt32)
      .clone();
}
inline torch::Tensor int64FromInt32(const std::vector<int32_t> &values) {
  return int32Tensor(values).to(torch::kInt64);
}

/// One segment of segmentStandardize (GraphOps.cpp), in plain loops: `rows`
/// rows of `width` columns, row r at x + (ids ? ids[r] : r) * width,
/// standardised column-wise ((x - mean) / (std + eps), population std, sums
/// in double and in row order) into y [rows][width]; sigma [width] gets the
/// std. `scratch`: 3 * width doubles.
void standardizeRows(const float *x, const NodeId *ids, int32_t rows,
                     int64_t width, float *y, float *sigma, double *scratch);
/// Its backward: `g` [rows][width], the gradient of y, becomes that of the
/// rows, written to (or, with `add`, added to) out + (ids ? ids[r] : r) *
/// width. `scratch`: 4 * width doubles.
void standardizeRowsBackward(const float *g, const float *y, const float *sigma,
                             const NodeId *ids, int32_t rows, int64_t width,
                             float *out, bool add, double *scratch);

} // namespace doppler::placement::learning::detail

#endif // DOPPLER_LIB_PLACEMENT_LEARNING_TENSORHELPERS_H
