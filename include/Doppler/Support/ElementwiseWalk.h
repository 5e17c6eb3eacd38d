//===- ElementwiseWalk.h - The merged space of an elementwise op -*- C++ -*-===//
//
// An elementwise kernel (the CPU and CUDA fused kernels) walks its output
// in the output's own index order with the extent-1 dimensions dropped and
// neighbours merged where every operand (output and inputs) walks them as
// one, so that a dense operand is one long run. The cost model plans the
// same walk to price the CPU kernel's rows and gathers
// (lib/Analysis/CostModel.cpp); one function serves all three.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_SUPPORT_ELEMENTWISEWALK_H
#define DOPPLER_SUPPORT_ELEMENTWISEWALK_H

#include "Doppler/Support/EinsumSpec.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace doppler {

/// One dimension of the merged walk.
struct WalkDim {
  int64_t extent;
  std::vector<int64_t> strides; ///< Per operand slot (output first).
};

/// The output's dimensions (`output`, extents from `sizes`), outermost
/// first, with extent-1 ones dropped and a dimension merged into the one
/// before it when, for each of the `slots` operands, the outer one's
/// stride is the inner one's times its extent. `strideOf(slot, index)` is
/// operand `slot`'s element stride along `index` (0 where it lacks it).
/// Empty for a single point.
template <typename StrideOf>
std::vector<WalkDim> mergedWalk(const std::string &output,
                                const IndexSizes &sizes, size_t slots,
                                StrideOf strideOf) {
  std::vector<WalkDim> dims;
  for (char index : output) {
    WalkDim dim{sizes.sizes[sizes.indices.find(index)], {}};
    if (dim.extent == 1)
      continue;
    for (size_t slot = 0; slot < slots; ++slot)
      dim.strides.push_back(strideOf(slot, index));
    if (!dims.empty()) {
      WalkDim &prev = dims.back();
      bool merges = true;
      for (size_t slot = 0; slot < slots; ++slot)
        merges &= prev.strides[slot] == dim.strides[slot] * dim.extent;
      if (merges) {
        prev.extent *= dim.extent;
        prev.strides = dim.strides;
        continue;
      }
    }
    dims.push_back(std::move(dim));
  }
  return dims;
}

} // namespace doppler

#endif // DOPPLER_SUPPORT_ELEMENTWISEWALK_H
