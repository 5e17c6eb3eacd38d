//===- Pipeline.cpp - doppler-pipeline: the whole chain -------------------===//

#include "Doppler/Placement/SystemDescription.h"
#include "Doppler/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::doppler;

namespace {

struct PipelineOptions : public PassPipelineOptions<PipelineOptions> {
  Option<std::string> system{*this, "system",
                             llvm::cl::desc("System preset or JSON file"),
                             llvm::cl::init("h100x4")};
  Option<int> devices{*this, "devices",
                      llvm::cl::desc("Devices to place on (>= 1)"),
                      llvm::cl::init(4)};
  Option<std::string> parts{
      *this, "parts",
      llvm::cl::desc("Decomposition: 'auto' (each op's blocks chosen by cost "
                     "for the devices of the system) or blocks per einsum "
                     "(1: no decomposition)"),
      llvm::cl::init("auto")};
  Option<std::string> policy{
      *this, "policy",
      llvm::cl::desc("Placement policy: doppler (learned) or a heuristic"),
      llvm::cl::init("doppler")};
  Option<int> samples{*this, "samples",
                      llvm::cl::desc("Learned policy: best of K rollouts "
                                     "(0: greedy)"),
                      llvm::cl::init(0)};
  Option<std::string> model{
      *this, "model",
      llvm::cl::desc("Learned policy: model file (default: embedded)"),
      llvm::cl::init("")};
  Option<bool> fuse{
      *this, "fuse",
      llvm::cl::desc("Merge chains of elementwise ops on one device into "
                     "doppler.fused ops (doppler-fuse-elementwise) before "
                     "placement"),
      llvm::cl::init(true)};
  Option<bool> offload{
      *this, "offload",
      llvm::cl::desc("Last, offload tensors to host memory where a device's "
                     "memory would be exceeded (doppler-plan-memory; a "
                     "program that fits is left as it is)"),
      llvm::cl::init(true)};
  Option<double> memoryLimit{
      *this, "memory-limit",
      llvm::cl::desc("Bytes of memory per device, overriding the system's "
                     "capacities, for the placement (doppler-place fits "
                     "them) and the offload (0: the system's)"),
      llvm::cl::init(0.0)};
  Option<uint64_t> seed{*this, "seed", llvm::cl::desc("Seed"),
                        llvm::cl::init(0)};
  Option<int64_t> budgetEvaluations{
      *this, "budget-evaluations",
      llvm::cl::desc("Placement budget in simulator runs (doppler-place; "
                     "-1: its default, 0: none)"),
      llvm::cl::init(-1)};
  Option<double> budgetMilliseconds{
      *this, "budget-ms",
      llvm::cl::desc("Placement budget in wall-clock milliseconds "
                     "(doppler-place; 0: none)"),
      llvm::cl::init(0.0)};
};

void buildDopplerPipeline(OpPassManager &pm, const PipelineOptions &options) {
  // A program placed already, or Doppler ops nested in regions, would be
  // decomposed and placed into nonsense: say so before anything changes.
  pm.addPass(createDopplerVerifyUnplacedPass());
  DopplerAnnotateCostsPassOptions costs;
  costs.system = options.system;
  // Costs before decomposition guide its choice of splits; the blocks are
  // then costed anew.
  pm.addPass(createDopplerAnnotateCostsPass(costs));
  bool decomposes = options.parts != "1";
  // Decomposition and placement searched together where the placement has
  // a budget: candidate decompositions placed greedily, the best kept.
  if (options.parts == "auto" && options.budgetEvaluations != 0 &&
      options.devices >= 1 && options.devices <= 4096) {
    DopplerDecomposeSearchPassOptions search;
    search.system = options.system;
    search.devices = options.devices;
    search.policy = options.policy;
    search.seed = options.seed;
    pm.addPass(createDopplerDecomposeSearchPass(search));
    pm.addPass(createCanonicalizerPass());
  } else if (decomposes) {
    DopplerDecomposePassOptions decompose;
    decompose.parts = options.parts;
    decompose.system = options.system;
    // Out-of-range device counts are doppler-place's to report (below).
    decompose.devices = std::clamp<int64_t>(options.devices, 0, 4096);
    pm.addPass(createDopplerDecomposePass(decompose));
    pm.addPass(createCanonicalizerPass());
  }
  // After decomposition, so that a chain split into blocks fuses block by
  // block (matching grids connect block to block, without glue) and the
  // decomposition heuristic still sees each einsum's own shape; before
  // placement, so that the policy and the simulator see the fused ops.
  if (options.fuse)
    pm.addPass(createDopplerFuseElementwisePass());
  if (decomposes || options.fuse)
    pm.addPass(createDopplerAnnotateCostsPass(costs));
  DopplerPlacePassOptions place;
  place.devices = options.devices;
  place.policy = options.policy;
  place.seed = options.seed;
  place.samples = options.samples;
  place.model = options.model;
  place.budgetEvaluations = options.budgetEvaluations;
  place.budgetMilliseconds = options.budgetMilliseconds;
  // The placement fits the devices' memory where it can; the offload below
  // handles what it cannot.
  place.system = options.system;
  place.memoryLimit = options.memoryLimit;
  // The place pass warns when asked for more devices than the system has
  // (a system that does not load is reported by doppler-annotate-costs).
  std::string error;
  if (std::optional<::doppler::placement::SystemDescription> system =
          ::doppler::placement::SystemDescription::load(options.system, &error))
    place.systemDevices = system->numDevices();
  pm.addPass(createDopplerPlacePass(place));
  pm.addPass(createDopplerVerifyPlacedPass());
  pm.addPass(createDopplerInsertTransfersPass());
  pm.addPass(createDopplerVerifyTransfersPass());
  DopplerSimulatePassOptions simulate;
  simulate.system = options.system;
  pm.addPass(createDopplerSimulatePass(simulate));
  // Last: it refines the simulated schedule with the copies it adds, and no
  // pass before it needs to know about them.
  if (options.offload) {
    DopplerPlanMemoryPassOptions memory;
    memory.system = options.system;
    memory.memoryLimit = options.memoryLimit;
    pm.addPass(createDopplerPlanMemoryPass(memory));
  }
}

} // namespace

void mlir::doppler::registerDopplerPipeline() {
  PassPipelineRegistration<PipelineOptions>(
      "doppler-pipeline",
      "Annotate costs, decompose, fuse, re-cost, place, insert transfers, "
      "simulate, offload to host memory where needed",
      buildDopplerPipeline);
}
