// Ops of other dialects need a device too.
func.func @other_dialect(%a: tensor<4xf32>) -> tensor<4xf32> {
  %x = arith.addf %a, %a : tensor<4xf32>
  return %x : tensor<4xf32>
}
