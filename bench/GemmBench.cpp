//===- GemmBench.cpp - Which GEMM library the CPU runtime should call -----===//
//
// Single-threaded GEMMs (the runtime runs one BLAS thread per virtual
// device) through OpenBLAS (the runtime's library), BLIS and oneDNN, f32
// and f64, on every layout the runtime's contraction planner produces (NN,
// NT, TN, TT, batched) at the shapes of the examples: examples/mlp.mlir
// (batch 512, 1024 -> 4096 -> 1024) and the LLaMA block at the README's
// smaller size (seq 512, d 1024, 8 heads, ffn 2752) placed on 2 devices,
// plus small batched GEMMs. Next to them, the runtime's own EinsumKernel on
// the same einsum, so the cost of planning, permuting operands and
// permuting the output shows against a direct library call.
//
// The summary gives GFLOP/s and the ratio to OpenBLAS from medians of 9
// repetitions interleaved at random across all benchmarks
// (--benchmark_enable_random_interleaving), so machine noise spreads over
// every library alike. Rates are per CPU second: every call is
// single-threaded, so its CPU time leaves out the time other processes held
// its core, which on a shared machine is most of the noise in real time.
//
//===----------------------------------------------------------------------===//

#include "GemmLibraries.h"
#include "MedianCollector.h"

#include "doppler/runtime/CpuKernels.h"

#include <benchmark/benchmark.h>
#include <cblas.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

using namespace doppler;
using namespace doppler::runtime;
using doppler::bench::GemmCall;

namespace {

/// One contraction: an einsum for the runtime, and the library call of the
/// same m, n, k on operands already in that layout. For einsums whose
/// operands or output the runtime must permute, the direct call is the NN
/// GEMM a library would do on data in GEMM layout.
struct GemmCase {
  const char *layout; ///< NN, NT, TN, TT, or the einsum's own name.
  const char *spec;
  std::vector<Shape> shapes;
  int64_t batch, m, n, k;
  bool transA, transB;
  const char *origin;
};

const std::vector<GemmCase> &gemmCases() {
  static const std::vector<GemmCase> cases = {
      // examples/mlp.mlir on 2 devices (1024 x 1024 weight blocks) ...
      {"NN", "mk,kn->mn", {{512, 1024}, {1024, 1024}}, 1, 512, 1024, 1024,
       false, false, "mlp block"},
      {"NT", "mk,nk->mn", {{512, 1024}, {1024, 1024}}, 1, 512, 1024, 1024,
       false, true, "mlp block, W^T (torch Linear)"},
      {"TN", "km,kn->mn", {{1024, 512}, {1024, 1024}}, 1, 512, 1024, 1024,
       true, false, "mlp block, A^T"},
      {"TT", "km,nk->mn", {{1024, 512}, {1024, 1024}}, 1, 512, 1024, 1024,
       true, true, "mlp block, both"},
      // ... and on 1 device.
      {"NN", "mk,kn->mn", {{512, 1024}, {1024, 4096}}, 1, 512, 4096, 1024,
       false, false, "mlp layer 1"},
      {"NN", "mk,kn->mn", {{512, 4096}, {4096, 1024}}, 1, 512, 1024, 4096,
       false, false, "mlp layer 2"},
      // LLaMA block (seq 512, d 1024, 8 heads, ffn 2752) on 2 devices.
      {"NN", "sd,df->sf", {{512, 1024}, {1024, 688}}, 1, 512, 688, 1024, false,
       false, "llama w_gate/w_up block"},
      {"NN", "sf,fd->sd", {{512, 688}, {688, 1024}}, 1, 512, 1024, 688, false,
       false, "llama w_down block"},
      {"bNT", "hqe,hke->hqk", {{2, 512, 128}, {2, 512, 128}}, 2, 512, 512, 128,
       false, true, "llama q k^T"},
      {"bNN", "hqk,hke->hqe", {{2, 512, 512}, {2, 512, 128}}, 2, 512, 128, 512,
       false, false, "llama p v"},
      {"sd,dhe->hse", "sd,dhe->hse", {{512, 512}, {512, 4, 128}}, 1, 512, 512,
       512, false, false, "llama q/k/v heads"},
      {"hse,hed->sd", "hse,hed->sd", {{4, 512, 128}, {4, 128, 512}}, 1, 512,
       512, 512, false, false, "llama w_o"},
      // Small batched GEMMs (attention at short sequences).
      {"bNN", "bmk,bkn->bmn", {{64, 64, 64}, {64, 64, 64}}, 64, 64, 64, 64,
       false, false, "small batched"},
      {"bNT", "bmk,bnk->bmn", {{16, 128, 64}, {16, 128, 64}}, 16, 128, 128, 64,
       false, true, "small batched"},
      {"NN", "mk,kn->mn", {{128, 256}, {256, 256}}, 1, 128, 256, 256, false,
       false, "small"},
  };
  return cases;
}

enum class Library { OpenBlas, Blis, OneDnn, Einsum };

const char *libraryName(Library library) {
  switch (library) {
  case Library::OpenBlas:
    return "openblas";
  case Library::Blis:
    return "blis";
  case Library::OneDnn:
    return "onednn";
  case Library::Einsum:
    return "einsum";
  }
  return "?";
}

std::string caseName(const GemmCase &c) {
  std::string name = c.layout;
  if (c.batch > 1)
    name += " " + std::to_string(c.batch) + "x";
  else
    name += " ";
  name += std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
          std::to_string(c.k);
  return name;
}

std::string benchmarkName(const GemmCase &c, ElementType type,
                          Library library) {
  return std::string(type == ElementType::F64 ? "f64" : "f32") + "/" +
         caseName(c) + "/" + libraryName(library);
}

double flopsOf(const GemmCase &c) {
  return 2.0 * static_cast<double>(c.batch) * static_cast<double>(c.m) *
         static_cast<double>(c.n) * static_cast<double>(c.k);
}

template <typename T> std::vector<T> randomValues(int64_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<T> dist(-1, 1);
  std::vector<T> values(static_cast<size_t>(count));
  for (T &v : values)
    v = dist(rng);
  return values;
}

template <typename T>
void cblasGemm(const GemmCall<T> &call) {
  auto trans = [](bool t) { return t ? CblasTrans : CblasNoTrans; };
  const int m = static_cast<int>(call.m), n = static_cast<int>(call.n),
            k = static_cast<int>(call.k), lda = static_cast<int>(call.lda),
            ldb = static_cast<int>(call.ldb), ldc = static_cast<int>(call.ldc);
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, trans(call.transA), trans(call.transB), m, n, k,
                1.0f, call.a, lda, call.b, ldb, 0.0f, call.c, ldc);
  else
    cblas_dgemm(CblasRowMajor, trans(call.transA), trans(call.transB), m, n, k,
                1.0, call.a, lda, call.b, ldb, 0.0, call.c, ldc);
}

/// One library call per batch element, as the runtime makes.
template <typename T>
bool directGemm(Library library, const GemmCase &c, const T *a, const T *b,
                T *out) {
  GemmCall<T> call;
  call.transA = c.transA;
  call.transB = c.transB;
  call.m = c.m;
  call.n = c.n;
  call.k = c.k;
  call.lda = c.transA ? c.m : c.k;
  call.ldb = c.transB ? c.k : c.n;
  call.ldc = c.n;
  for (int64_t i = 0; i < c.batch; ++i) {
    call.a = a + i * c.m * c.k;
    call.b = b + i * c.k * c.n;
    call.c = out + i * c.m * c.n;
    switch (library) {
    case Library::OpenBlas:
      cblasGemm(call);
      break;
#ifdef DOPPLER_BENCH_HAVE_BLIS
    case Library::Blis:
      bench::blisGemm(call);
      break;
#endif
#ifdef DOPPLER_BENCH_HAVE_ONEDNN
    case Library::OneDnn:
      if constexpr (std::is_same_v<T, float>) {
        if (!bench::oneDnnGemm(call))
          return false;
        break;
      }
      return false;
#endif
    default:
      return false;
    }
  }
  return true;
}

template <typename T>
void runCase(benchmark::State &state, const GemmCase &c, Library library) {
  const ElementType type =
      std::is_same_v<T, float> ? ElementType::F32 : ElementType::F64;
  std::vector<T> a = randomValues<T>(c.batch * c.m * c.k, 1);
  std::vector<T> b = randomValues<T>(c.batch * c.k * c.n, 2);
  std::vector<T> out(static_cast<size_t>(c.batch * c.m * c.n));
  std::optional<cpu::EinsumKernel> kernel;
  if (library == Library::Einsum) {
    Result<cpu::EinsumKernel> created =
        cpu::EinsumKernel::create(*EinsumSpec::parse(c.spec), JoinKind::Mul,
                                  AggKind::Add, 0, c.shapes, type);
    if (!created) {
      state.SkipWithError(created.message().c_str());
      return;
    }
    if (!created->usesGemm()) {
      state.SkipWithError("the runtime did not plan this einsum as a GEMM");
      return;
    }
    kernel = std::move(*created);
  }
  const void *inputs[] = {a.data(), b.data()};
  for (auto _ : state) {
    if (kernel) {
      kernel->run(inputs, out.data());
    } else if (!directGemm(library, c, a.data(), b.data(), out.data())) {
      state.SkipWithError("the library failed");
      return;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(flopsOf(c) * 1e-9,
                         benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(c.origin);
}

std::vector<Library> librariesFor(ElementType type) {
  std::vector<Library> libraries = {Library::OpenBlas};
#ifdef DOPPLER_BENCH_HAVE_BLIS
  libraries.push_back(Library::Blis);
#endif
#ifdef DOPPLER_BENCH_HAVE_ONEDNN
  if (type == ElementType::F32) // oneDNN has no f64 GEMM.
    libraries.push_back(Library::OneDnn);
#endif
  libraries.push_back(Library::Einsum);
  return libraries;
}

void registerBenchmarks() {
  for (ElementType type : {ElementType::F32, ElementType::F64})
    for (const GemmCase &c : gemmCases())
      for (Library library : librariesFor(type)) {
        benchmark::internal::Benchmark *bm = benchmark::RegisterBenchmark(
            benchmarkName(c, type, library).c_str(),
            [&c, library, type](benchmark::State &state) {
              if (type == ElementType::F64)
                runCase<double>(state, c, library);
              else
                runCase<float>(state, c, library);
            });
        bm->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(0.1);
      }
}

/// GFLOP/s per library and the ratio to OpenBLAS, from the medians.
void printSummary(const bench::MedianCollector &medians) {
  for (ElementType type : {ElementType::F32, ElementType::F64}) {
    std::vector<Library> libraries = librariesFor(type);
    std::printf("\n%s GFLOP/s per core (median CPU time; ratio to OpenBLAS in "
                "brackets; !: CPU time above real time)\n",
                type == ElementType::F64 ? "f64" : "f32");
    std::printf("%-24s", "layout batch x m x n x k");
    for (Library library : libraries)
      std::printf(" %16s", libraryName(library));
    std::printf("  origin\n");
    for (const GemmCase &c : gemmCases()) {
      double base =
          medians.get(benchmarkName(c, type, Library::OpenBlas)).cpu;
      std::printf("%-24s", caseName(c).c_str());
      for (Library library : libraries) {
        bench::MedianCollector::Medians m =
            medians.get(benchmarkName(c, type, library));
        if (m.cpu <= 0) {
          std::printf(" %16s", "-");
          continue;
        }
        double gflops = flopsOf(c) / (m.cpu * 1e-3) * 1e-9;
        // A library that ran on more than one thread would use more CPU
        // time than real time: flag it, its rate is not a one-core rate.
        std::printf("  %6.1f (%5.3fx)%s", gflops, base > 0 ? base / m.cpu : 0.0,
                    m.cpu > 1.2 * m.real ? "!" : "");
      }
      std::printf("  %s\n", c.origin);
    }
  }
}

bool hasFlag(int argc, char **argv, const char *prefix) {
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], prefix, std::strlen(prefix)) == 0)
      return true;
  return false;
}

/// The shared library that provides `symbol`, or "?".
std::string providerOf(void *symbol) {
  Dl_info info;
  if (symbol && dladdr(symbol, &info) && info.dli_fname)
    return info.dli_fname;
  return "?";
}

} // namespace

int main(int argc, char **argv) {
  // One thread per GEMM, as on each of the runtime's virtual devices.
  cpu::useSingleThreadedBlas();
#ifdef DOPPLER_BENCH_HAVE_BLIS
  bench::blisSingleThreaded();
#endif
#ifdef DOPPLER_BENCH_HAVE_ONEDNN
  if (!bench::oneDnnSingleThreaded())
    std::fprintf(stderr, "warning: could not limit oneDNN's OpenMP threads; "
                         "set OMP_NUM_THREADS=1\n");
#endif
  // BLIS exports a CBLAS too: the runtime's cblas_sgemm must stay OpenBLAS's.
  std::string cblas =
      providerOf(reinterpret_cast<void *>(&cblas_sgemm));
  benchmark::AddCustomContext("cblas_sgemm", cblas);
  if (cblas.find("openblas") == std::string::npos) {
    std::fprintf(stderr, "error: cblas_sgemm comes from %s, not OpenBLAS\n",
                 cblas.c_str());
    return 1;
  }

  // Medians over interleaved repetitions unless the caller chose otherwise.
  std::vector<char *> args(argv, argv + argc);
  std::string repetitions = "--benchmark_repetitions=9";
  std::string aggregatesOnly = "--benchmark_report_aggregates_only=true";
  std::string interleave = "--benchmark_enable_random_interleaving=true";
  if (!hasFlag(argc, argv, "--benchmark_repetitions"))
    args.push_back(repetitions.data());
  if (!hasFlag(argc, argv, "--benchmark_report_aggregates_only"))
    args.push_back(aggregatesOnly.data());
  if (!hasFlag(argc, argv, "--benchmark_enable_random_interleaving"))
    args.push_back(interleave.data());
  int count = static_cast<int>(args.size());
  registerBenchmarks();
  bench::MedianCollector reporter;
  if (!bench::runBenchmarks(count, args.data(), reporter))
    return 1;
  printSummary(reporter);
  return 0;
}
