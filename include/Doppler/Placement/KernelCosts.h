//===- KernelCosts.h - Per-kind task costs of a device ----------*- C++ -*-===//
//
// A roofline prices every task alike: max(FLOPs / peak, bytes / memory
// bandwidth) plus one launch overhead. On a CPU the kinds of task differ
// more than that (measured by doppler-calibrate on this project's VM: a
// tiny contraction 0.52 us where a tiny elementwise task is 0.27 us, a
// 3x3 convolution 58 GFLOP/s through im2col, a depthwise one 12 GFLOP/s,
// a max pool 1.3 G window elements/s against a 77 GFLOP/s GEMM peak). A
// device's "kernels" table gives, per kind, the fixed time of one task
// (replacing launch_overhead) and the kind's own FLOP rate (replacing the
// peak); a kind not listed keeps the roofline. docs/SystemDescription.md
// has the JSON; the presets list none.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_PLACEMENT_KERNELCOSTS_H
#define DOPPLER_PLACEMENT_KERNELCOSTS_H

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace doppler::placement {

/// The kinds of task the cost model tells apart.
enum class KernelKind : uint8_t {
  Contraction, ///< a mul/add einsum (a GEMM)
  Fused,       ///< a fused elementwise chain
  Copy,        ///< slice, assemble, reshape, fill
  Conv,        ///< a convolution with more than one input channel per group
  Depthwise,   ///< a convolution with one input channel per group
  Pool,        ///< max or average pooling
  /// An einsum that is not a mul/add contraction: elementwise, reducing or
  /// transposing (the CPU runtime's loop nest).
  Elementwise,
};
constexpr unsigned kNumKernelKinds = 7;

/// "contraction", "fused", "copy", "conv", "depthwise", "pool",
/// "elementwise".
std::string_view kernelKindName(KernelKind kind);
std::optional<KernelKind> parseKernelKind(std::string_view name);
/// The names, comma-separated, for error messages.
std::string kernelKindNames();

/// A kind's rate measured on a grid of GEMM shapes (doppler-calibrate's
/// convolutions: per group, m filters, n output positions, k input
/// channels times kernel taps; contractions: m the first input's own
/// indices, n the second's, k the contracted ones), each measured as a
/// model runs it, on its own weights beyond the caches. The rate of any shape is interpolated
/// in log space: log(rate) trilinear in log(m), log(n), log(k), each
/// clamped to its axis (a shape beyond the grid runs at its edge's rate).
/// Where a kind has one it replaces the kind's flops and half_size.
struct GemmGrid {
  /// Increasing, positive; at least one point each.
  std::vector<double> m, n, k;
  /// FLOP/s at (m[i], n[j], k[l]): flops[(i * n.size() + j) * k.size() + l].
  std::vector<double> flops;

  bool empty() const { return flops.empty(); }
  /// The interpolated rate of a GEMM of shape (m, n, k), sides >= 1.
  double rateAt(double m, double n, double k) const;
};

struct KernelCost {
  /// Seconds per task; negative: not given (launch_overhead applies).
  double overhead = -1;
  /// FLOP/s (as the work interface counts FLOPs; for depthwise
  /// convolutions, as their kernel works: Doppler/Support/WindowWork.h);
  /// 0: not given (the peak applies).
  double flops = 0;
  /// Hockney's half-performance length: a task of size s runs at rate * s /
  /// (s + halfSize). For GEMM-based kinds (contraction, conv) s is the
  /// GEMM's smaller output side min(m, n) (small GEMMs spend their time
  /// packing operands and on partial register tiles; a product with one
  /// row or column is a matrix-vector product, bound by memory: the cost
  /// model passes s = 0, no factor); for depthwise convolutions and pools,
  /// the output positions per channel (their kernels loop channel by
  /// channel; one position is the slowest). 0: not given (every size runs
  /// at the rate).
  double halfSize = 0;
  /// Contractions and convolutions that are matrix-vector products (a GEMM
  /// side of 1: the size the cost model passes is 0) stream their matrix
  /// once, from memory beyond the caches for a model's weights: bytes per
  /// second of that stream. 0: not given (the device's memory_bandwidth).
  double gemvBandwidth = 0;
  /// Fused tasks (and `rowTime` for copies and elementwise einsums, below).
  /// Their kernel (runtime/lib/CpuFused.cpp) walks the
  /// output in rows of its innermost merged dimension; an input not laid
  /// out like the output (a per-channel or per-row scale, a transpose) is
  /// copied or filled into a buffer element by element when rows are
  /// shorter than the kernel's chunk, or gathered when it is strided along
  /// the row: `gatherTime` seconds per such element (of each such input),
  /// `rowTime` seconds per row walked (its offsets and per-row loop) beyond
  /// the first. 0: not given (no such term; the presets give none).
  /// Copies (slice, assemble: runtime/lib/CpuKernels.cpp, copyBox) and
  /// elementwise einsums (CpuLoopNest.cpp) walk rows too, one memcpy or
  /// inner-loop call per row of their merged dimensions: `rowTime` per row
  /// beyond the first of each box (a slice is one box, an assemble one per
  /// block, each paying the copy's `overhead`).
  double gatherTime = 0;
  double rowTime = 0;
  /// Contractions and convolutions: the rate by GEMM shape (GemmGrid);
  /// empty: not given.
  GemmGrid grid;

  bool hasOverhead() const { return overhead >= 0; }
  bool hasFlops() const { return flops > 0; }
  bool empty() const {
    return !hasOverhead() && !hasFlops() && halfSize <= 0 &&
           gemvBandwidth <= 0 && gatherTime <= 0 && rowTime <= 0 &&
           grid.empty();
  }
  /// Seconds a fused task spends on `rows` rows and `gathered` gathered
  /// input elements (fusedWalkOf in lib/Analysis/CostModel.cpp).
  double walkSeconds(double rows, double gathered) const {
    return (rows > 1 ? (rows - 1) * rowTime : 0) + gathered * gatherTime;
  }
  /// The rate of a task of size `size` (0: unknown or exempt), given the
  /// kind's full rate `rate`.
  double rateAt(double rate, double size) const {
    if (halfSize <= 0 || size <= 0)
      return rate;
    return rate * size / (size + halfSize);
  }
};

using KernelCostTable = std::array<KernelCost, kNumKernelKinds>;

} // namespace doppler::placement

#endif // DOPPLER_PLACEMENT_KERNELCOSTS_H
