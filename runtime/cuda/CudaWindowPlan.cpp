//===- CudaWindowPlan.cpp - Convolutions and pools as GPU steps -----------===//
//
// A conv or pool task is one WindowStep: a direct kernel with one thread
// per output element (CudaWindowMath.h), its parameters normalised to 3
// spatial dims here. Shapes are checked by the same functions as the task
// graph's (Doppler/Support/Window.h).
//
//===----------------------------------------------------------------------===//

#include "CudaPlan.h"

#include <string>

namespace doppler::runtime::cuda {
namespace {

/// Output counts at or above this use 64-bit index math (the grid-stride
/// loop's `i + stride` must not wrap 32 bits).
constexpr uint64_t kNarrowWindowLimit =
    (uint64_t(1) << 31) - (uint64_t(1) << 24);

Status checkType(ElementType type, const char *what) {
  if (type != ElementType::F32 && type != ElementType::F64)
    return Status::failure(std::string(what) + " on " +
                           std::string(elementTypeName(type)) +
                           " is not supported on the GPU (f32, f64 only)");
  return Status();
}

/// The geometry and shapes of a window op as WindowParams (3 spatial dims,
/// leading ones padded with extent 1, kernel 1, stride 1, no padding).
WindowParams windowParams(const Shape &inputShape, const Shape &outShape,
                          const WindowGeometry &geometry) {
  WindowParams p;
  const unsigned k = geometry.spatialDims();
  const unsigned lead = kWindowDims - k;
  for (unsigned j = lead; j < kWindowDims; ++j) {
    p.in[j] = inputShape[2 + j - lead];
    p.kernel[j] = geometry.kernel[j - lead];
    p.stride[j] = geometry.strides[j - lead];
    p.dilation[j] = geometry.dilations[j - lead];
    p.padLow[j] = geometry.padLow[j - lead];
    p.out[j] = outShape[2 + j - lead];
  }
  p.batch = inputShape[0];
  p.channels = inputShape[1];
  p.filters = outShape[1];
  p.count = numElements(outShape);
  p.volume = 1;
  for (unsigned j = 0; j < k; ++j)
    p.volume *= static_cast<double>(geometry.kernel[j]);
  return p;
}

KernelPlan windowPlan(const WindowParams &params, bool hasWeight,
                      ElementType type, const DeviceLimits &limits) {
  KernelPlan plan;
  plan.type = type;
  WindowStep step;
  step.params = params;
  step.out = BufferRef::output();
  step.input = BufferRef::input(0);
  step.weight = BufferRef::input(1);
  step.hasWeight = hasWeight;
  step.wide = static_cast<uint64_t>(params.count) >= kNarrowWindowLimit;
  step.launch = gridFor(static_cast<uint64_t>(params.count), limits);
  if (params.count > 0)
    plan.steps.push_back(step);
  return plan;
}

} // namespace

Result<KernelPlan> planConvolution(const Shape &inputShape,
                                   const Shape &weightShape, int64_t groups,
                                   const WindowGeometry &geometry,
                                   ElementType type,
                                   const DeviceLimits &limits) {
  if (Status status = checkType(type, "conv"); !status)
    return status;
  std::string error;
  std::optional<std::vector<int64_t>> outShape = convolutionResultShape(
      inputShape, weightShape, groups, geometry, &error);
  if (!outShape)
    return Status::failure("conv: " + error);
  WindowParams params = windowParams(inputShape, *outShape, geometry);
  params.perGroupIn = weightShape[1];
  params.perGroupOut = weightShape[0] / groups;
  return windowPlan(params, /*hasWeight=*/true, type, limits);
}

Result<KernelPlan> planPool(PoolKind kind, const Shape &inputShape,
                            const WindowGeometry &geometry, ElementType type,
                            const DeviceLimits &limits) {
  if (Status status = checkType(type, "pool"); !status)
    return status;
  std::string error;
  std::optional<std::vector<int64_t>> outShape =
      poolResultShape(inputShape, geometry, &error);
  if (!outShape)
    return Status::failure("pool: " + error);
  WindowParams params = windowParams(inputShape, *outShape, geometry);
  params.isPool = true;
  params.isMax = kind == PoolKind::Max;
  return windowPlan(params, /*hasWeight=*/false, type, limits);
}

std::string describeWindowStep(const WindowStep &step) {
  const WindowParams &p = step.params;
  std::string kernel = std::to_string(p.kernel[0]) + "x" +
                       std::to_string(p.kernel[1]) + "x" +
                       std::to_string(p.kernel[2]);
  if (p.isPool)
    return std::string(p.isMax ? "max" : "avg") + " pool " + kernel +
           " into " + std::to_string(p.count) + " elements";
  return "direct convolution " + kernel + " into " + std::to_string(p.count) +
         " elements";
}

} // namespace doppler::runtime::cuda
