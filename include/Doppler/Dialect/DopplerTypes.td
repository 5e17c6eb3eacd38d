//===- DopplerTypes.td - Doppler types ---------------------*- tablegen -*-===//

#ifndef DOPPLER_DIALECT_DOPPLERTYPES_TD
#define DOPPLER_DIALECT_DOPPLERTYPES_TD

include "Doppler/Dialect/DopplerBase.td"
include "mlir/IR/AttrTypeBase.td"

def Doppler_ValueType : TypeDef<Doppler_Dialect, "Value"> {
  let mnemonic = "value";
  let summary = "an opaque value of a cost-only graph";
  let description = [{
    The result of a `doppler.task`: a value whose contents are unknown and
    whose only properties are the costs of the op that makes it. Graphs
    imported from the reference text format use it.
  }];
}

#endif // DOPPLER_DIALECT_DOPPLERTYPES_TD
