//===- DopplerBase.td - Doppler dialect definition ---------*- tablegen -*-===//

#ifndef DOPPLER_DIALECT_DOPPLERBASE_TD
#define DOPPLER_DIALECT_DOPPLERBASE_TD

include "mlir/IR/OpBase.td"

def Doppler_Dialect : Dialect {
  let name = "doppler";
  let cppNamespace = "::mlir::doppler";
  let summary = "Einsum-style dataflow graphs placed on devices";
  let description = [{
    The Doppler dialect holds machine-learning dataflow graphs as
    `doppler.einsum` ops (elementwise ops, reductions, contractions and
    attention pieces are all einsums), the glue that tensor-relational
    decomposition needs (`doppler.slice`, `doppler.assemble`,
    `doppler.fill`), explicit device moves (`doppler.transfer`), copies to
    host memory and back for tensors that do not fit in a device's memory
    (`doppler.evict`, `doppler.reload`) and cost-only ops for imported
    graphs (`doppler.task`).

    Placement is the discardable attribute `doppler.device` holding a
    `#doppler.device<N>`, so ops of any dialect can be placed. The dialect
    verifies that attribute wherever it appears.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let hasConstantMaterializer = 0;
  let hasOperationAttrVerify = 1;
  // The discardable attributes the passes read and write, on ops of any
  // dialect (the dialect verifies them wherever they appear): the placement,
  // the cost model's results and the simulated schedule (in the graph's cost
  // units, microseconds for the IR), explicit partition counts for
  // doppler-decompose, and doppler-plan-memory's predicted peak bytes per
  // device and offload summary (on functions), and, on a module placed for a
  // system of several nodes, the node of each device (index = device id;
  // across processes node i runs on rank i). C++ names them through the generated helpers
  // (DopplerDialect::DeviceAttrHelper::getNameStr(), ...), aliased as
  // kDeviceAttr, ... in DopplerDialect.h.
  let discardableAttrs = (ins
    "::mlir::doppler::DeviceAttr":$device,
    "::mlir::FloatAttr":$compute_cost,
    "::mlir::FloatAttr":$transfer_cost,
    "::mlir::FloatAttr":$start,
    "::mlir::FloatAttr":$end,
    "::mlir::FloatAttr":$makespan,
    "::mlir::DenseI64ArrayAttr":$parts,
    "::mlir::DenseI64ArrayAttr":$peak_memory,
    "::mlir::DictionaryAttr":$offload,
    "::mlir::DenseI64ArrayAttr":$nodes
  );
  let extraClassDeclaration = [{
  private:
    void registerAttributes();
    void registerTypes();
  public:
  }];
}

class Doppler_Op<string mnemonic, list<Trait> traits = []>
    : Op<Doppler_Dialect, mnemonic, traits>;

#endif // DOPPLER_DIALECT_DOPPLERBASE_TD
