//===- CalibrateKernels.cpp - Per-kind task costs for doppler-calibrate ---===//

#include "CalibrateKernels.h"

#include "Doppler/Support/Window.h"
#include "Doppler/Support/WindowWork.h"

#include <chrono>

namespace doppler::runtime::calibrate {
namespace {

/// Tasks per chain: enough that one late wake-up does not move the mean.
constexpr int kChain = 100;
/// Independent tasks per device for a rate.
constexpr int kRateTasks = 8;
/// Elements of the walks' tasks (fused, elementwise): 64 KiB, cache
/// resident, so that rows and gathers and not memory set the pace.
constexpr int64_t kWalkPoints = 16384;

WindowGeometry squareWindow(int64_t kernel, int64_t stride, int64_t pad) {
  WindowGeometry geometry;
  geometry.kernel = {kernel, kernel};
  geometry.strides = {stride, stride};
  geometry.dilations = {1, 1};
  geometry.padLow = {pad, pad};
  geometry.padHigh = {pad, pad};
  return geometry;
}

/// Seconds per task of a chain of kChain tasks on kOverheadDevices devices
/// (the others idle), each made by `next(bench, device, previous)` from the
/// one before.
using ChainStep = std::function<Result<ValueId>(Bench &, int, ValueId)>;

class KernelCalibrator {
public:
  KernelCalibrator(Executor &executor, std::mt19937_64 &generator, int busy,
                   int repeat)
      : executor_(executor), generator_(generator), busy_(busy),
        repeat_(repeat) {}

  Result<double> chain(Shape start, const ChainStep &next) {
    Bench bench(generator_);
    for (int d = 0; d < kOverheadDevices; ++d) {
      ValueId last = bench.input(d, start);
      for (int k = 0; k < kChain; ++k) {
        Result<ValueId> task = next(bench, d, last);
        if (!task)
          return task.status();
        last = *task;
      }
      if (Status status = bench.graph.markOutput(last); !status)
        return status;
    }
    return timeChainSteps(executor_, bench, repeat_);
  }

  /// Seconds per task of kRateTasks independent tasks per busy device.
  Result<double>
  independent(const std::function<Result<ValueId>(Bench &, int)> &add) {
    Bench bench(generator_);
    for (int d = 0; d < busy_; ++d)
      if (Status status = addIndependent(bench, kRateTasks,
                                         [&] { return add(bench, d); });
          !status)
        return status;
    Result<double> time = timeDevices(executor_, bench, repeat_);
    if (!time)
      return time;
    return *time / kRateTasks;
  }

  /// A convolution's overhead (tiny chain) and rate (`channels` x 16 x 16,
  /// 3x3, padding 1): dense with groups = 1, depthwise with groups =
  /// channels.
  Result<KernelFigure> convolution(bool depthwise) {
    const WindowGeometry geometry = squareWindow(3, 1, 1);
    auto weightShape = [&](int64_t channels) -> Shape {
      return {channels, depthwise ? 1 : channels, 3, 3};
    };
    auto conv = [&](Bench &bench, int d, ValueId input, ValueId weight,
                    int64_t channels) {
      return bench.graph.addConvolution(d, input, weight,
                                        depthwise ? channels : 1, geometry);
    };
    KernelFigure figure;
    figure.kind = depthwise ? "depthwise" : "conv";
    std::vector<ValueId> tinyWeights(busy_);
    Result<double> tiny = chain({1, 4, 4, 4}, [&](Bench &bench, int d,
                                                  ValueId last) {
      if (last < 0 || bench.graph.task(last).kind == TaskKind::Input)
        tinyWeights[d] = bench.input(d, weightShape(4));
      return conv(bench, d, last, tinyWeights[d], 4);
    });
    if (!tiny)
      return tiny.status();
    figure.overhead = *tiny;
    // The rate on `channels` x `side` x `side` inputs (as many filters).
    auto rateAt = [&](int64_t channels, int64_t side) -> Result<double> {
      const Shape inputShape = {1, channels, side, side};
      Result<double> time = independent([&](Bench &bench, int d) {
        ValueId input = bench.input(d, inputShape);
        ValueId weight = bench.input(d, weightShape(channels));
        return conv(bench, d, input, weight, channels);
      });
      if (!time)
        return time;
      // Depthwise: the work its kernel does (WindowWork.h), as the cost
      // model prices it; the taps in padded rows are skipped.
      double flops =
          2 * (depthwise ? depthwiseKernelMultiplyAdds(inputShape, geometry,
                                                       inputShape)
                         : convolutionMultiplyAdds(inputShape,
                                                   weightShape(channels), 1,
                                                   inputShape));
      return flops / computeTime(*time, figure.overhead);
    };
    Result<double> wide = rateAt(depthwise ? 128 : 64, 16);
    if (!wide)
      return wide.status();
    figure.flops = *wide;
    // Sizes: dense, the GEMM sides min(64 filters, 256 positions) and
    // min(256, 4); depthwise, the positions per channel, 256 and 4.
    Result<double> narrow = rateAt(depthwise ? 1024 : 256, 2);
    if (!narrow)
      return narrow.status();
    double rInf = 0, half = 0;
    if (fitHalfSize(depthwise ? 256 : 64, *wide, 4, *narrow, rInf, half)) {
      figure.flops = rInf;
      figure.halfSize = half;
    }
    return figure;
  }

  Result<KernelFigure> pool() {
    KernelFigure figure;
    figure.kind = "pool";
    Result<double> tiny =
        chain({1, 4, 4, 4}, [&](Bench &bench, int d, ValueId last) {
          return bench.graph.addPool(d, PoolKind::Max, last,
                                     squareWindow(3, 1, 1));
        });
    if (!tiny)
      return tiny.status();
    figure.overhead = *tiny;
    // Window elements per second of 3x3 stride-2 pools over `channels` x
    // `side` x `side` inputs: channels * (side / 2)^2 * 9 each.
    auto rateAt = [&](int64_t channels, int64_t side) -> Result<double> {
      Result<double> time = independent([&](Bench &bench, int d) {
        return bench.graph.addPool(d, PoolKind::Max,
                                   bench.input(d, {1, channels, side, side}),
                                   squareWindow(3, 2, 1));
      });
      if (!time)
        return time;
      double applications = double(channels) * (side / 2) * (side / 2) * 9;
      return applications / computeTime(*time, figure.overhead);
    };
    // Output positions per channel 256 and 4.
    Result<double> wide = rateAt(64, 32);
    if (!wide)
      return wide.status();
    figure.flops = *wide;
    Result<double> narrow = rateAt(1024, 4);
    if (!narrow)
      return narrow.status();
    double rInf = 0, half = 0;
    if (fitHalfSize(256, *wide, 4, *narrow, rInf, half)) {
      figure.flops = rInf;
      figure.halfSize = half;
    }
    return figure;
  }

  Result<KernelFigure> contraction(double peakF32, double peakSide) {
    std::vector<ValueId> rights(busy_);
    Result<double> tiny =
        chain({16, 16}, [&](Bench &bench, int d, ValueId last) {
          if (bench.graph.task(last).kind == TaskKind::Input)
            rights[d] = bench.input(d, {16, 16}, ElementType::F32, -0.25,
                                    0.25);
          return bench.graph.addEinsum(d, "ij,jk->ik", JoinKind::Mul,
                                       AggKind::Add, {last, rights[d]});
        });
    if (!tiny)
      return tiny.status();
    const double flops = 2.0 * 16 * 16 * 16;
    KernelFigure figure{"contraction",
                        computeTime(*tiny, peakF32 > 0 ? flops / peakF32 : 0),
                        0, 0};
    // 512 x 512 by 512 x 8: a GEMM side of 8 against the peak's.
    Result<double> narrow = independent([&](Bench &bench, int d) {
      ValueId a = bench.input(d, {512, 512});
      ValueId b = bench.input(d, {512, 8});
      return bench.graph.addEinsum(d, "ij,jk->ik", JoinKind::Mul, AggKind::Add,
                                   {a, b});
    });
    if (!narrow)
      return narrow.status();
    double rate = 2.0 * 512 * 512 * 8 / computeTime(*narrow, figure.overhead);
    double rInf = 0, half = 0;
    if (fitHalfSize(peakSide, peakF32, 8, rate, rInf, half)) {
      figure.flops = rInf;
      figure.halfSize = half;
    }
    // Matrix-vector products stream their matrix: a model's weights, read
    // once per run from beyond the caches.
    // As a linear layer lays its weights out ([out, in]: "ij,kj->ik"),
    // each output a dot product along a row of the matrix.
    constexpr int64_t kGemvRows = 4096, kGemvColumns = 512;
    Result<double> gemv = independent([&](Bench &bench, int d) {
      ValueId v = bench.filled(d, {1, kGemvRows}, 0.5f);
      ValueId m = bench.filled(d, {kGemvColumns, kGemvRows}, 0.25f);
      return bench.graph.addEinsum(d, "ij,kj->ik", JoinKind::Mul, AggKind::Add,
                                   {v, m});
    });
    if (!gemv)
      return gemv.status();
    figure.gemvBandwidth =
        4.0 * (kGemvRows * kGemvColumns + kGemvRows + kGemvColumns) /
        computeTime(*gemv, figure.overhead);
    return figure;
  }

  Result<KernelFigure> fused() {
    std::vector<std::pair<ValueId, ValueId>> operands(busy_);
    Result<double> tiny =
        chain({16}, [&](Bench &bench, int d, ValueId last) {
          if (bench.graph.task(last).kind == TaskKind::Input)
            operands[d] = {bench.input(d, {16}), bench.input(d, {16})};
          return bench.graph.addFused(d, "i,i,i->i",
                                      "mul(in0, in1); add(s0, in2)",
                                      {last, operands[d].first,
                                       operands[d].second});
        });
    if (!tiny)
      return tiny.status();
    KernelFigure figure{"fused", *tiny, 0};
    // The walk (KernelCost::gatherTime, rowTime): the same program over
    // kWalkPoints elements as rows of `inner`, with its second and third
    // inputs laid out like the output or one value per row (a batch norm's
    // scale and shift); the difference is two filled inputs' elements and
    // the rows, at two row lengths.
    auto walk = [&](int64_t inner, bool perRow) {
      const Shape shape = {kWalkPoints / inner, inner};
      const Shape side = perRow ? Shape{kWalkPoints / inner} : shape;
      return independent([&](Bench &bench, int d) {
        return bench.graph.addFused(
            d, perRow ? "ij,i,i->ij" : "ij,ij,ij->ij",
            "mul(in0, in1); add(s0, in2)",
            {bench.input(d, shape), bench.input(d, side),
             bench.input(d, side)});
      });
    };
    Result<double> dense = walk(64, false);
    Result<double> short8 = walk(8, true);
    Result<double> short64 = walk(64, true);
    for (const Result<double> *time : {&dense, &short8, &short64})
      if (!*time)
        return time->status();
    const double rows8 = kWalkPoints / 8 - 1, rows64 = kWalkPoints / 64 - 1;
    const double extra8 = *short8 - *dense, extra64 = *short64 - *dense;
    figure.rowTime = std::max(0.0, (extra8 - extra64) / (rows8 - rows64));
    figure.gatherTime =
        std::max(0.0, (extra64 - rows64 * figure.rowTime) / (2 * kWalkPoints));
    return figure;
  }

  /// Slices and assembles (copyBox: a memcpy per row of each box) and a
  /// reshape's view. A chain of pairs on kOverheadDevices devices: a slice
  /// of [rows, 8] to [rows, 4] (not contiguous: a real copy, one box), then
  /// an assemble of it twice back to [rows, 8] (two boxes), at 2 and 32
  /// rows. A pair is three boxes' overhead and 3 (rows - 1) rows beyond
  /// their first, plus its bytes at `bandwidth` (the cost model's term).
  Result<KernelFigure> copy(double bandwidth) {
    auto pairStep = [&](int64_t rows) -> Result<double> {
      Bench bench(generator_);
      for (int d = 0; d < kOverheadDevices; ++d) {
        ValueId x = bench.input(d, {rows, 8});
        for (int k = 0; k < kChain / 2; ++k) {
          Result<ValueId> half = bench.graph.addSlice(d, x, {0, 0}, {rows, 4});
          if (!half)
            return half.status();
          Result<ValueId> whole =
              bench.graph.addAssemble(d, {{rows}, {4, 4}}, {*half, *half});
          if (!whole)
            return whole.status();
          x = *whole;
        }
        if (Status status = bench.graph.markOutput(x); !status)
          return status;
      }
      return timePairSteps(executor_, bench, repeat_);
    };
    Result<double> few = pairStep(2), many = pairStep(32);
    for (const Result<double> *step : {&few, &many})
      if (!*step)
        return step->status();
    // Bytes read and written per pair: 32 per row by the slice, 64 by the
    // assemble.
    auto net = [&](double step, double rows) {
      return computeTime(step, bandwidth > 0 ? 96 * rows / bandwidth : 0);
    };
    KernelFigure figure{"copy", 0, 0};
    figure.rowTime = std::max(0.0, (net(*many, 32) - net(*few, 2)) / 90);
    figure.overhead = std::max(0.0, net(*few, 2) / 3 - figure.rowTime);
    return figure;
  }

  /// Einsums that are not contractions (the loop nest): overhead, a chain
  /// of 16-element negations; row_time, "ij,i->ij" subtractions (a
  /// broadcast row, as a bias or a normalisation) over kWalkPoints elements
  /// in rows of 8 and of 64 on every busy device.
  Result<KernelFigure> elementwise() {
    Result<double> tiny = chain({16}, [&](Bench &bench, int d, ValueId last) {
      return bench.graph.addEinsum(d, "i->i", JoinKind::Neg, std::nullopt,
                                   {last});
    });
    if (!tiny)
      return tiny.status();
    KernelFigure figure{"elementwise", *tiny, 0};
    auto rowsOf = [&](int64_t inner) {
      return independent([&](Bench &bench, int d) {
        return bench.graph.addEinsum(
            d, "ij,i->ij", JoinKind::Sub, std::nullopt,
            {bench.input(d, {kWalkPoints / inner, inner}),
             bench.input(d, {kWalkPoints / inner})});
      });
    };
    Result<double> short8 = rowsOf(8), short64 = rowsOf(64);
    for (const Result<double> *time : {&short8, &short64})
      if (!*time)
        return time->status();
    figure.rowTime = std::max(
        0.0, (*short8 - *short64) / (kWalkPoints / 8 - kWalkPoints / 64));
    return figure;
  }

  /// The hand-off between tasks, in a chain of tiny fused tasks (what the
  /// kinds' chains include), in a fan of the same tasks queued at once and
  /// in a model-like graph (HandOffFigure).
  Result<HandOffFigure> handOff() {
    HandOffFigure figure;
    for (bool fan : {false, true}) {
      // A chain, or the same tasks independent: all queued at the run's
      // start, so the worker pops each as it ends the one before (its
      // value freed at once, as a chain's is after its reader).
      Bench bench(generator_);
      for (int d = 0; d < kOverheadDevices; ++d) {
        ValueId first = bench.input(d, {16}), last = first;
        ValueId a = bench.input(d, {16}), b = bench.input(d, {16});
        for (int k = 0; k < kChain; ++k) {
          Result<ValueId> task = bench.graph.addFused(
              d, "i,i,i->i", "mul(in0, in1); add(s0, in2)",
              {fan ? first : last, a, b});
          if (!task)
            return task.status();
          last = *task;
        }
        if (Status status = bench.graph.markOutput(last); !status)
          return status;
      }
      Result<double> gap = timeHandOffs(executor_, bench, repeat_);
      if (!gap)
        return gap.status();
      (fan ? figure.queued : figure.chain) = *gap;
    }
    Result<double> model = modelGaps(figure.bytes);
    if (!model)
      return model.status();
    figure.model = *model;
    return figure;
  }

  /// The median gap between dependent tasks in layers of a residual block
  /// as the frontend emits them: a GEMM on the layer's own weights (kLayers
  /// x 256 KB, more than a core's L2), a fused bias + relu + residual, a
  /// row reduction and a broadcast subtraction. Values have two readers
  /// and are freed as they die. Sets `bytes` to the mean output bytes of
  /// its tasks.
  Result<double> modelGaps(double &bytes) {
    Bench model(generator_);
    constexpr int kLayers = 24;
    double outputBytes = 0;
    int tasks = 0;
    for (int d = 0; d < kOverheadDevices; ++d) {
      ValueId x = model.input(d, {32, 256});
      for (int l = 0; l < kLayers; ++l) {
        ValueId w = model.input(d, {256, 256}, ElementType::F32, -0.06, 0.06);
        ValueId bias = model.input(d, {256});
        Result<ValueId> h = model.graph.addEinsum(
            d, "ij,jk->ik", JoinKind::Mul, AggKind::Add, {x, w});
        if (!h)
          return h.status();
        Result<ValueId> g = model.graph.addFused(
            d, "ij,j,ij->ij", "add(in0, in1); relu(s0); add(s1, in2)",
            {*h, bias, x});
        if (!g)
          return g.status();
        Result<ValueId> mean = model.graph.addEinsum(
            d, "ij->i", JoinKind::Identity, AggKind::Add, {*g});
        if (!mean)
          return mean.status();
        Result<ValueId> next = model.graph.addEinsum(
            d, "ij,i->ij", JoinKind::Sub, std::nullopt, {*g, *mean});
        if (!next)
          return next.status();
        for (ValueId task : {*h, *g, *mean, *next})
          outputBytes += static_cast<double>(model.graph.byteSize(task));
        tasks += 4;
        x = *next;
      }
      if (Status status = model.graph.markOutput(x); !status)
        return status;
    }
    bytes = outputBytes / tasks;
    return timeHandOffs(executor_, model, repeat_);
  }

private:
  Executor &executor_;
  std::mt19937_64 &generator_;
  int busy_;
  int repeat_;
};

} // namespace

bool fitHalfSize(double side1, double rate1, double side2, double rate2,
                 double &rInf, double &half) {
  // 1 / rate = a + b / side, with a = 1 / rInf and b = half / rInf.
  if (!(side1 > side2 && side2 > 0 && rate1 > 0 && rate2 > 0))
    return false;
  double b = (1 / rate2 - 1 / rate1) / (1 / side2 - 1 / side1);
  double a = 1 / rate1 - b / side1;
  if (!(b > 0 && a > 0))
    return false;
  rInf = 1 / a;
  half = b / a;
  return true;
}

Result<std::vector<KernelFigure>>
measureKernels(Executor &executor, std::mt19937_64 &generator, int busy,
               int repeat, double peakF32, double peakSide, bool grids,
               double bandwidth) {
  KernelCalibrator calibrator(executor, generator, busy, repeat);
  std::vector<KernelFigure> figures;
  for (const std::function<Result<KernelFigure>()> &measure :
       std::vector<std::function<Result<KernelFigure>()>>{
           [&] { return calibrator.contraction(peakF32, peakSide); },
           [&] { return calibrator.fused(); },
           [&] { return calibrator.copy(bandwidth); },
           [&] { return calibrator.elementwise(); },
           [&] { return calibrator.convolution(false); },
           [&] { return calibrator.convolution(true); },
           [&] { return calibrator.pool(); }}) {
    Result<KernelFigure> figure = measure();
    if (!figure)
      return figure.status();
    figures.push_back(*figure);
  }
  // A convolution on a 1x1 output is the contraction's matrix-vector
  // product (im2col, then ?gemv on the weights); any other contraction or
  // convolution runs at its GEMM shape's rate.
  for (KernelFigure &figure : figures) {
    const bool conv = figure.kind == "conv";
    if (!conv && figure.kind != "contraction")
      continue;
    if (conv)
      figure.gemvBandwidth = figures.front().gemvBandwidth;
    if (!grids)
      continue;
    const auto start = std::chrono::steady_clock::now();
    Result<GemmGridFigure> grid =
        conv ? measureConvGrid(executor, generator, busy, repeat,
                               figure.overhead)
             : measureContractionGrid(executor, generator, busy, repeat,
                                      figure.overhead);
    if (!grid)
      return grid.status();
    figure.grid = *grid;
    figure.grid.seconds = std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - start)
                              .count();
  }
  return figures;
}

Result<HandOffFigure> measureHandOff(Executor &executor,
                                     std::mt19937_64 &generator, int repeat) {
  KernelCalibrator calibrator(executor, generator, kOverheadDevices, repeat);
  return calibrator.handOff();
}

} // namespace doppler::runtime::calibrate
