//===- DopplerAttrs.td - Doppler enums and attributes ------*- tablegen -*-===//

#ifndef DOPPLER_DIALECT_DOPPLERATTRS_TD
#define DOPPLER_DIALECT_DOPPLERATTRS_TD

include "Doppler/Dialect/DopplerBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

// Keep the cases and their order in sync with doppler::JoinKind in
// include/Doppler/Support/EinsumSpec.h (a unit test maps every case by name).
def Doppler_JoinKind : I32EnumAttr<"JoinKind",
    "scalar function an einsum applies to one element of each input", [
      I32EnumAttrCase<"Identity", 0, "identity">,
      I32EnumAttrCase<"Add", 1, "add">,
      I32EnumAttrCase<"Sub", 2, "sub">,
      I32EnumAttrCase<"Mul", 3, "mul">,
      I32EnumAttrCase<"Div", 4, "div">,
      I32EnumAttrCase<"Max", 5, "max">,
      I32EnumAttrCase<"Min", 6, "min">,
      I32EnumAttrCase<"Pow", 7, "pow">,
      I32EnumAttrCase<"Neg", 8, "neg">,
      I32EnumAttrCase<"Exp", 9, "exp">,
      I32EnumAttrCase<"Log", 10, "log">,
      I32EnumAttrCase<"Sqrt", 11, "sqrt">,
      I32EnumAttrCase<"Rsqrt", 12, "rsqrt">,
      I32EnumAttrCase<"Reciprocal", 13, "reciprocal">,
      I32EnumAttrCase<"Abs", 14, "abs">,
      I32EnumAttrCase<"Relu", 15, "relu">,
      I32EnumAttrCase<"Silu", 16, "silu">,
      I32EnumAttrCase<"Gelu", 17, "gelu">,
      I32EnumAttrCase<"Tanh", 18, "tanh">,
      I32EnumAttrCase<"Sigmoid", 19, "sigmoid">,
      I32EnumAttrCase<"Square", 20, "square">,
      I32EnumAttrCase<"Scale", 21, "scale">,
      I32EnumAttrCase<"Shift", 22, "shift">,
      I32EnumAttrCase<"Erf", 23, "erf">,
      I32EnumAttrCase<"Eq", 24, "eq">,
      I32EnumAttrCase<"Ne", 25, "ne">,
      I32EnumAttrCase<"Lt", 26, "lt">,
      I32EnumAttrCase<"Le", 27, "le">,
      I32EnumAttrCase<"Gt", 28, "gt">,
      I32EnumAttrCase<"Ge", 29, "ge">,
      I32EnumAttrCase<"Where", 30, "where">,
    ]> {
  let cppNamespace = "::mlir::doppler";
  let genSpecializedAttr = 0;
}
def Doppler_JoinKindAttr : EnumAttr<Doppler_Dialect, Doppler_JoinKind, "join">;

def Doppler_AggKind : I32EnumAttr<"AggKind",
    "how an einsum combines the values of a contracted index", [
      I32EnumAttrCase<"Add", 0, "add">,
      I32EnumAttrCase<"Mul", 1, "mul">,
      I32EnumAttrCase<"Max", 2, "max">,
      I32EnumAttrCase<"Min", 3, "min">,
    ]> {
  let cppNamespace = "::mlir::doppler";
  let genSpecializedAttr = 0;
}
def Doppler_AggKindAttr : EnumAttr<Doppler_Dialect, Doppler_AggKind, "agg">;

// Keep the cases and their order in sync with doppler::PoolKind in
// include/Doppler/Support/Window.h.
def Doppler_PoolKind : I32EnumAttr<"PoolKind",
    "how a pooling window combines its elements", [
      I32EnumAttrCase<"Max", 0, "max">,
      I32EnumAttrCase<"Avg", 1, "avg">,
    ]> {
  let cppNamespace = "::mlir::doppler";
  let genSpecializedAttr = 0;
}
def Doppler_PoolKindAttr : EnumAttr<Doppler_Dialect, Doppler_PoolKind, "pool">;

def Doppler_DeviceAttr : AttrDef<Doppler_Dialect, "Device"> {
  let mnemonic = "device";
  let summary = "a device an op is placed on";
  let description = [{
    Identifies one (virtual) device of the system by its index, e.g.
    `#doppler.device<2>`. Attached to ops as the discardable attribute
    `doppler.device`.
  }];
  let parameters = (ins "int64_t":$id);
  let assemblyFormat = "`<` $id `>`";
  let genVerifyDecl = 1;
}

#endif // DOPPLER_DIALECT_DOPPLERATTRS_TD
