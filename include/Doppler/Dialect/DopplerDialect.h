//===- DopplerDialect.h - Doppler dialect -----------------------*- C++ -*-===//

#ifndef DOPPLER_DIALECT_DOPPLERDIALECT_H
#define DOPPLER_DIALECT_DOPPLERDIALECT_H

#include "Doppler/Dialect/DopplerAttrs.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Dialect.h"

#include "Doppler/Dialect/DopplerDialect.h.inc"

namespace mlir::doppler {
/// Names of the discardable attributes, as declared in DopplerBase.td.
inline constexpr StringLiteral kDeviceAttr =
    DopplerDialect::DeviceAttrHelper::getNameStr();
inline constexpr StringLiteral kComputeCostAttr =
    DopplerDialect::ComputeCostAttrHelper::getNameStr();
inline constexpr StringLiteral kTransferCostAttr =
    DopplerDialect::TransferCostAttrHelper::getNameStr();
inline constexpr StringLiteral kStartAttr =
    DopplerDialect::StartAttrHelper::getNameStr();
inline constexpr StringLiteral kEndAttr =
    DopplerDialect::EndAttrHelper::getNameStr();
inline constexpr StringLiteral kMakespanAttr =
    DopplerDialect::MakespanAttrHelper::getNameStr();
inline constexpr StringLiteral kPartsAttr =
    DopplerDialect::PartsAttrHelper::getNameStr();
inline constexpr StringLiteral kPeakMemoryAttr =
    DopplerDialect::PeakMemoryAttrHelper::getNameStr();
inline constexpr StringLiteral kOffloadAttr =
    DopplerDialect::OffloadAttrHelper::getNameStr();
inline constexpr StringLiteral kNodesAttr =
    DopplerDialect::NodesAttrHelper::getNameStr();
} // namespace mlir::doppler

#endif // DOPPLER_DIALECT_DOPPLERDIALECT_H
