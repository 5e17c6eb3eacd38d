//===- WindowPlan.h - A linalg op read as a convolution or a pool ---------===//
//
// Internal to lib/Conversion/LinalgToDoppler: what WindowAnalysis.cpp reads
// from a structured op that slides a window (which input is the image,
// which loops are batch, group, channel, spatial and kernel loops, the
// strides, dilations and the padding of a folded tensor.pad) and
// Windows.cpp turns into one doppler.conv or doppler.pool.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_LIB_CONVERSION_LINALGTODOPPLER_WINDOWPLAN_H
#define DOPPLER_LIB_CONVERSION_LINALGTODOPPLER_WINDOWPLAN_H

#include "Doppler/Support/Window.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <optional>
#include <string>

namespace mlir::doppler::linalg_to_doppler {

enum class WindowKind { Conv, MaxPool, SumPool };

/// One spatial dim: its output and kernel loops, where the image reads it.
struct SpatialDim {
  unsigned out = 0, kernel = 0;
  unsigned imagePos = 0;
  int64_t stride = 1, dilation = 1;
  int64_t extent = 0; ///< the image's (after a folded pad: its source's)
  int64_t padLow = 0, padHigh = 0;
  int64_t trim = 0; ///< image elements past the last window, cut off
};

/// The op as doppler sees it; loops are the op's loop dims.
struct WindowPlan {
  WindowKind kind = WindowKind::Conv;
  unsigned imageIndex = 0; ///< input operand of the image
  Value image;             ///< a folded pad's source, else the operand
  Value other;             ///< the weight, or a pool's window
  tensor::PadOp pad;       ///< the pad folded into the op, or null
  AffineMap imageMap, otherMap, outMap;
  SmallVector<SpatialDim> spatial;
  SmallVector<unsigned> batch; ///< loops, in the output's order
  std::optional<unsigned> group, filter, channel;
  SmallVector<int64_t> ranges;
  RankedTensorType resultType;
  Value init;
  bool accumulate = false;

  /// A loop's extent; 1 for a dim the op does not have.
  int64_t extent(std::optional<unsigned> loop) const {
    return loop ? ranges[*loop] : 1;
  }
  /// The kernel's element count.
  double volume() const {
    double v = 1;
    for (const SpatialDim &s : spatial)
      v *= double(ranges[s.kernel]);
    return v;
  }
  /// The doppler op's kernel, strides, dilations and padding.
  ::doppler::WindowGeometry geometry() const {
    ::doppler::WindowGeometry g;
    for (const SpatialDim &s : spatial) {
      g.kernel.push_back(ranges[s.kernel]);
      g.strides.push_back(s.stride);
      g.dilations.push_back(s.dilation);
      g.padLow.push_back(s.padLow);
      g.padHigh.push_back(s.padHigh);
    }
    return g;
  }
};

/// Reads `op` as a convolution or pool into `plan`, or says why not in
/// `why` (WindowAnalysis.cpp).
LogicalResult analyseWindowOp(linalg::LinalgOp op, WindowPlan &plan,
                              std::string &why);

/// The position of loop `loop` among the results of `map` (which has it).
unsigned positionIn(AffineMap map, unsigned loop);

} // namespace mlir::doppler::linalg_to_doppler

#endif // DOPPLER_LIB_CONVERSION_LINALGTODOPPLER_WINDOWPLAN_H
