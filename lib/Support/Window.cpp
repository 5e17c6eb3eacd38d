//===- Window.cpp - Geometry of convolutions and pooling ------------------===//

#include "Doppler/Support/Window.h"

#include "Doppler/Support/CheckedSize.h"

#include <cmath>
#include <limits>

namespace doppler {

namespace {

constexpr int64_t kMaxWindowValue = int64_t(1) << 31;

void setError(std::string *error, std::string message) {
  if (error)
    *error = std::move(message);
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

bool checkSizes(const std::vector<int64_t> &shape, const char *what,
                std::string *error) {
  if (!checkedByteSize(shape, 8)) {
    setError(error, std::string(what) + " " + shapeText(shape) +
                        " has a negative extent or more than " +
                        checkedSizeLimitText() + " bytes");
    return false;
  }
  return true;
}

} // namespace

bool WindowGeometry::validate(std::string *error) const {
  size_t k = kernel.size();
  if (k < 1 || k > kMaxWindowSpatialDims) {
    setError(error, "a window op takes 1 to 3 spatial dims, got " +
                        std::to_string(k));
    return false;
  }
  struct Field {
    const char *name;
    const std::vector<int64_t> &values;
    int64_t minimum;
  };
  const Field fields[] = {{"kernel", kernel, 1},
                          {"strides", strides, 1},
                          {"dilations", dilations, 1},
                          {"padding (low)", padLow, 0},
                          {"padding (high)", padHigh, 0}};
  for (const Field &field : fields) {
    if (field.values.size() != k) {
      setError(error, std::string(field.name) + " has " +
                          std::to_string(field.values.size()) +
                          " entries for " + std::to_string(k) +
                          " spatial dims");
      return false;
    }
    for (int64_t value : field.values) {
      if (value < field.minimum || value > kMaxWindowValue) {
        setError(error, std::string(field.name) + " " +
                            shapeText(field.values) + ": each must be in [" +
                            std::to_string(field.minimum) + ", 2^31]");
        return false;
      }
    }
  }
  return true;
}

std::optional<int64_t> WindowGeometry::outputExtent(unsigned j,
                                                    int64_t extent) const {
  int64_t padded = extent + padLow[j] + padHigh[j];
  int64_t reach = dilations[j] * (kernel[j] - 1) + 1;
  if (extent < 0 || padded < reach)
    return std::nullopt;
  return (padded - reach) / strides[j] + 1;
}

std::optional<std::vector<int64_t>>
WindowGeometry::outputSpatial(const std::vector<int64_t> &inputSpatial,
                              std::string *error) const {
  std::vector<int64_t> out;
  for (unsigned j = 0; j < spatialDims(); ++j) {
    std::optional<int64_t> extent = outputExtent(j, inputSpatial[j]);
    if (!extent) {
      setError(error, "spatial dim " + std::to_string(j) + " of extent " +
                          std::to_string(inputSpatial[j]) + " padded by " +
                          std::to_string(padLow[j]) + "+" +
                          std::to_string(padHigh[j]) +
                          " is shorter than the kernel's reach " +
                          std::to_string(dilations[j] * (kernel[j] - 1) + 1));
      return std::nullopt;
    }
    out.push_back(*extent);
  }
  return out;
}

namespace {

/// [N, channels, O1 .. Ok] for an input [N, C, S1 .. Sk] checked by the
/// caller, or nullopt with `*error` set when an output extent is empty or
/// the result is out of the checked range (padding can make it far larger
/// than the input).
std::optional<std::vector<int64_t>>
windowResult(const std::vector<int64_t> &inputShape, int64_t channels,
             const WindowGeometry &geometry, std::string *error) {
  std::vector<int64_t> spatial(inputShape.begin() + 2, inputShape.end());
  std::optional<std::vector<int64_t>> out =
      geometry.outputSpatial(spatial, error);
  if (!out)
    return std::nullopt;
  std::vector<int64_t> result = {inputShape[0], channels};
  result.insert(result.end(), out->begin(), out->end());
  if (!checkSizes(result, "result", error))
    return std::nullopt;
  return result;
}

} // namespace

std::optional<std::vector<int64_t>>
convolutionResultShape(const std::vector<int64_t> &inputShape,
                       const std::vector<int64_t> &weightShape, int64_t groups,
                       const WindowGeometry &geometry, std::string *error) {
  if (!geometry.validate(error))
    return std::nullopt;
  size_t k = geometry.spatialDims();
  if (inputShape.size() != k + 2 || weightShape.size() != k + 2) {
    setError(error, "input and weight must have rank " + std::to_string(k + 2) +
                        " (N, C and " + std::to_string(k) +
                        " spatial dims; F, C/groups and the kernel), got " +
                        shapeText(inputShape) + " and " +
                        shapeText(weightShape));
    return std::nullopt;
  }
  if (!checkSizes(inputShape, "input", error) ||
      !checkSizes(weightShape, "weight", error))
    return std::nullopt;
  if (groups < 1 || groups > kMaxWindowValue) {
    setError(error, "groups must be in [1, 2^31], got " +
                        std::to_string(groups));
    return std::nullopt;
  }
  int64_t channels = inputShape[1], filters = weightShape[0];
  if (channels % groups != 0 || filters % groups != 0) {
    setError(error, "groups " + std::to_string(groups) +
                        " must divide the input channels (" +
                        std::to_string(channels) + ") and the output channels (" +
                        std::to_string(filters) + ")");
    return std::nullopt;
  }
  if (weightShape[1] != channels / groups) {
    setError(error, "weight " + shapeText(weightShape) + " must have " +
                        std::to_string(channels / groups) +
                        " input channels per group (input channels " +
                        std::to_string(channels) + " / groups " +
                        std::to_string(groups) + ")");
    return std::nullopt;
  }
  for (size_t j = 0; j < k; ++j) {
    if (weightShape[2 + j] != geometry.kernel[j]) {
      setError(error, "weight " + shapeText(weightShape) +
                          " does not match the kernel " +
                          shapeText(geometry.kernel));
      return std::nullopt;
    }
  }
  return windowResult(inputShape, filters, geometry, error);
}

std::optional<std::vector<int64_t>>
poolResultShape(const std::vector<int64_t> &inputShape,
                const WindowGeometry &geometry, std::string *error) {
  if (!geometry.validate(error))
    return std::nullopt;
  size_t k = geometry.spatialDims();
  if (inputShape.size() != k + 2) {
    setError(error, "input must have rank " + std::to_string(k + 2) +
                        " (N, C and " + std::to_string(k) +
                        " spatial dims), got " + shapeText(inputShape));
    return std::nullopt;
  }
  if (!checkSizes(inputShape, "input", error))
    return std::nullopt;
  return windowResult(inputShape, inputShape[1], geometry, error);
}

std::string_view poolKindName(PoolKind kind) {
  return kind == PoolKind::Max ? "max" : "avg";
}

std::optional<PoolKind> parsePoolKind(std::string_view name) {
  if (name == "max")
    return PoolKind::Max;
  if (name == "avg")
    return PoolKind::Avg;
  return std::nullopt;
}

double convolutionMultiplyAdds(const std::vector<int64_t> &inputShape,
                               const std::vector<int64_t> &weightShape,
                               int64_t groups,
                               const std::vector<int64_t> &resultShape) {
  double macs = approximateElementCount(resultShape.data(), resultShape.size());
  // Per output element: the group's input channels times the kernel.
  macs *= approximateElementCount(weightShape.data() + 1,
                                  weightShape.size() - 1);
  (void)inputShape;
  (void)groups;
  return macs;
}

namespace {

/// Row-major strides of `shape`.
std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * shape[i];
  return strides;
}

/// Calls `visit(tap, inside, offset)` for every kernel
/// offset of output point `out` (spatial coordinates), in the kernel's
/// row-major order, with whether its input element is inside the input and,
/// if so, its offset from the channel's first element.
template <typename Visit>
void forEachTap(const WindowGeometry &g, const std::vector<int64_t> &inSpatial,
                const std::vector<int64_t> &inStrides,
                const std::vector<int64_t> &out, Visit visit) {
  unsigned k = g.spatialDims();
  std::vector<int64_t> tap(k, 0);
  int64_t kernelIndex = 0;
  while (true) {
    int64_t offset = 0;
    bool inside = true;
    for (unsigned j = 0; j < k && inside; ++j) {
      int64_t pos = out[j] * g.strides[j] - g.padLow[j] + tap[j] * g.dilations[j];
      inside = pos >= 0 && pos < inSpatial[j];
      offset += pos * inStrides[2 + j];
    }
    visit(kernelIndex, inside, offset);
    ++kernelIndex;
    unsigned j = k;
    while (j > 0) {
      --j;
      if (++tap[j] < g.kernel[j])
        break;
      tap[j] = 0;
      if (j == 0)
        return;
    }
  }
}

/// Advances `index` (row-major over `extents`); false after the last one.
bool advance(std::vector<int64_t> &index, const std::vector<int64_t> &extents) {
  for (size_t j = index.size(); j-- > 0;) {
    if (++index[j] < extents[j])
      return true;
    index[j] = 0;
  }
  return false;
}

} // namespace

void convolutionReference(const double *input,
                          const std::vector<int64_t> &inputShape,
                          const double *weight,
                          const std::vector<int64_t> &weightShape,
                          int64_t groups, const WindowGeometry &geometry,
                          double *output,
                          const std::vector<int64_t> &resultShape) {
  unsigned k = geometry.spatialDims();
  std::vector<int64_t> inStrides = stridesOf(inputShape);
  std::vector<int64_t> inSpatial(inputShape.begin() + 2, inputShape.end());
  std::vector<int64_t> outSpatialShape(resultShape.begin() + 2,
                                       resultShape.end());
  int64_t kernelVolume = 1;
  for (unsigned j = 0; j < k; ++j)
    kernelVolume *= geometry.kernel[j];
  int64_t perGroupIn = weightShape[1];
  int64_t perGroupOut = resultShape[1] / groups;
  double *y = output;
  for (int64_t n = 0; n < resultShape[0]; ++n) {
    for (int64_t f = 0; f < resultShape[1]; ++f) {
      int64_t firstChannel = (f / perGroupOut) * perGroupIn;
      std::vector<int64_t> out(k, 0);
      do {
        double sum = 0;
        for (int64_t c = 0; c < perGroupIn; ++c) {
          const double *x =
              input + n * inStrides[0] + (firstChannel + c) * inStrides[1];
          const double *w = weight + (f * perGroupIn + c) * kernelVolume;
          forEachTap(geometry, inSpatial, inStrides, out,
                     [&](int64_t tap, bool inside, int64_t offset) {
                       if (inside)
                         sum += x[offset] * w[tap];
                     });
        }
        *y++ = sum;
      } while (advance(out, outSpatialShape));
    }
  }
}

void poolReference(PoolKind kind, const double *input,
                   const std::vector<int64_t> &inputShape,
                   const WindowGeometry &geometry, double *output,
                   const std::vector<int64_t> &resultShape) {
  unsigned k = geometry.spatialDims();
  std::vector<int64_t> inStrides = stridesOf(inputShape);
  std::vector<int64_t> inSpatial(inputShape.begin() + 2, inputShape.end());
  std::vector<int64_t> outSpatialShape(resultShape.begin() + 2,
                                       resultShape.end());
  double volume = 1;
  for (unsigned j = 0; j < k; ++j)
    volume *= double(geometry.kernel[j]);
  double *y = output;
  for (int64_t n = 0; n < resultShape[0]; ++n) {
    for (int64_t c = 0; c < resultShape[1]; ++c) {
      const double *x = input + n * inStrides[0] + c * inStrides[1];
      std::vector<int64_t> out(k, 0);
      do {
        double acc = kind == PoolKind::Max
                         ? -std::numeric_limits<double>::infinity()
                         : 0.0;
        forEachTap(geometry, inSpatial, inStrides, out,
                   [&](int64_t, bool inside, int64_t offset) {
                     if (!inside)
                       return;
                     if (kind == PoolKind::Max)
                       acc = (x[offset] > acc || std::isnan(x[offset])) ? x[offset] : acc;
                     else
                       acc += x[offset];
                   });
        *y++ = kind == PoolKind::Max ? acc : acc / volume;
      } while (advance(out, outSpatialShape));
    }
  }
}

} // namespace doppler
