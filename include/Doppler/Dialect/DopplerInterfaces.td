//===- DopplerInterfaces.td - Doppler op interfaces --------*- tablegen -*-===//

#ifndef DOPPLER_DIALECT_DOPPLERINTERFACES_TD
#define DOPPLER_DIALECT_DOPPLERINTERFACES_TD

include "mlir/IR/OpBase.td"

def Doppler_WorkOpInterface : OpInterface<"WorkOpInterface"> {
  let cppNamespace = "::mlir::doppler";
  let description = [{
    Reports the work an op does, for the cost model: floating-point
    operations, bytes read and bytes written. Implemented by every doppler
    op, and attachable to ops of other dialects as an external model.
  }];
  let methods = [
    InterfaceMethod<"Floating-point operations the op performs.",
      "double", "getFlops">,
    InterfaceMethod<"Bytes the op reads from its operands.",
      "double", "getBytesRead">,
    InterfaceMethod<"Bytes the op writes to its results.",
      "double", "getBytesWritten">,
  ];
}

#endif // DOPPLER_DIALECT_DOPPLERINTERFACES_TD
