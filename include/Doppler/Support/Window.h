//===- Window.h - Geometry of convolutions and pooling ----------*- C++ -*-===//
//
// The one definition of a sliding-window op's shapes, shared by the dialect's
// verifier (doppler.conv, doppler.pool), the cost model, the decomposition,
// the interpreter and the runtime's task graph and plan reader. MLIR-free.
//
// Layout: channels first. An input is [N, C, S_1 .. S_k] for k = 1, 2 or 3
// spatial dims; a convolution's weight is [F, C / groups, K_1 .. K_k]; the
// output is [N, F, O_1 .. O_k] (pooling: [N, C, O_1 .. O_k]) with
//
//   O_j = (S_j + low_j + high_j - dilation_j * (K_j - 1) - 1) / stride_j + 1
//
// (integer division; the padded input must hold one dilated kernel). Element
// o of the output reads input elements o * stride - low + kk * dilation for
// kk in [0, K): those outside [0, S) are the padding (zero for a
// convolution and an average pool, minus infinity for a max pool).
//
// A convolution with `groups` G splits the C input channels and the F output
// channels into G equal groups; output channel f reads the input channels of
// group f / (F / G):
//
//   y[n, f, o] = sum_{c < C/G, kk} x[n, (f / (F/G)) * C/G + c, o*s - low + kk*d]
//                                  * w[f, c, kk]
//
// An average pool divides the window's sum by the kernel's volume, padding
// included (PyTorch's count_include_pad=True).
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_SUPPORT_WINDOW_H
#define DOPPLER_SUPPORT_WINDOW_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace doppler {

/// The largest number of spatial dims a window op takes.
constexpr unsigned kMaxWindowSpatialDims = 3;

/// Kernel extents and the sliding rule along each spatial dim. All vectors
/// have one entry per spatial dim.
struct WindowGeometry {
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> padLow;
  std::vector<int64_t> padHigh;

  unsigned spatialDims() const { return unsigned(kernel.size()); }

  /// Checks the geometry on its own: 1 to 3 spatial dims, every vector of
  /// that length, kernel >= 1, stride >= 1, dilation >= 1, padding >= 0, and
  /// every value at most 2^31 (so products stay exact). On failure returns
  /// false and sets `*error` to a message naming the field.
  bool validate(std::string *error = nullptr) const;

  /// The output extent along spatial dim `j` for an input extent `extent`,
  /// or nullopt when the padded input is shorter than one dilated kernel.
  /// Only call on a validated geometry.
  std::optional<int64_t> outputExtent(unsigned j, int64_t extent) const;

  /// The output's spatial extents for `inputSpatial`, or nullopt with
  /// `*error` set (naming the dim) when one is empty.
  std::optional<std::vector<int64_t>>
  outputSpatial(const std::vector<int64_t> &inputSpatial,
                std::string *error = nullptr) const;
};

/// The result shape of a convolution of an input of `inputShape` with a
/// weight of `weightShape` (layouts above), or nullopt with `*error` set:
/// ranks (2 + k each, k the geometry's spatial dims), channel counts
/// (C % groups, F % groups, the weight's C / groups), groups >= 1, the
/// kernel extents equal to the weight's, a non-empty output, and element
/// counts within the checked-size cap.
std::optional<std::vector<int64_t>>
convolutionResultShape(const std::vector<int64_t> &inputShape,
                       const std::vector<int64_t> &weightShape, int64_t groups,
                       const WindowGeometry &geometry,
                       std::string *error = nullptr);

/// The result shape of a pool of an input of `inputShape` (rank 2 + k), or
/// nullopt with `*error` set.
std::optional<std::vector<int64_t>>
poolResultShape(const std::vector<int64_t> &inputShape,
                const WindowGeometry &geometry, std::string *error = nullptr);

enum class PoolKind : uint32_t { Max, Avg };
std::string_view poolKindName(PoolKind kind);
std::optional<PoolKind> parsePoolKind(std::string_view name);

/// Multiply-adds of a convolution with these shapes: N * F * prod(O) *
/// (C / groups) * prod(K), in doubles (never wraps). FLOPs are twice this.
double convolutionMultiplyAdds(const std::vector<int64_t> &inputShape,
                               const std::vector<int64_t> &weightShape,
                               int64_t groups,
                               const std::vector<int64_t> &resultShape);

/// Reference implementations: plain loops over row-major buffers, exact
/// definitions for tests and the interpreter (not fast). Shapes must be the
/// ones the functions above accept.
void convolutionReference(const double *input,
                          const std::vector<int64_t> &inputShape,
                          const double *weight,
                          const std::vector<int64_t> &weightShape,
                          int64_t groups, const WindowGeometry &geometry,
                          double *output,
                          const std::vector<int64_t> &resultShape);
void poolReference(PoolKind kind, const double *input,
                   const std::vector<int64_t> &inputShape,
                   const WindowGeometry &geometry, double *output,
                   const std::vector<int64_t> &resultShape);

} // namespace doppler

#endif // DOPPLER_SUPPORT_WINDOW_H
