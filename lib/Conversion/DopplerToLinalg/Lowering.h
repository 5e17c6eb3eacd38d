//===- Lowering.h - Helpers shared by the doppler-to-linalg patterns ------===//
//
// Internal to lib/Conversion/DopplerToLinalg: placement carried onto the ops
// a pattern makes, float constants, and the sliding-window patterns of
// Windows.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_LIB_CONVERSION_DOPPLERTOLINALG_LOWERING_H
#define DOPPLER_LIB_CONVERSION_DOPPLERTOLINALG_LOWERING_H

#include "Doppler/Dialect/DopplerDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::doppler::doppler_to_linalg {

/// Copies the source op's placement (doppler.device) onto every op a
/// pattern makes, so that placed programs stay placed.
class PlacementCopier {
public:
  explicit PlacementCopier(Operation *source)
      : device(source->getAttr(kDeviceAttr)) {}

  template <typename OpT>
  OpT operator()(OpT op) const {
    if (device)
      op->setAttr(kDeviceAttr, device);
    return op;
  }

private:
  Attribute device;
};

/// A float constant of `type` (the value rounded to the type).
Value floatConstant(OpBuilder &builder, Location loc, FloatType type,
                    double value);

/// doppler.conv and doppler.pool (Windows.cpp).
void populateWindowLoweringPatterns(RewritePatternSet &patterns);

} // namespace mlir::doppler::doppler_to_linalg

#endif // DOPPLER_LIB_CONVERSION_DOPPLERTOLINALG_LOWERING_H
