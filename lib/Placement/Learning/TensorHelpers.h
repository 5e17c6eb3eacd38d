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

} // namespace doppler::placement::learning::detail

#endif // DOPPLER_LIB_PLACEMENT_LEARNING_TENSORHELPERS_H
