// tensor.pad with a constant.
func.func @pad(%x: tensor<4x8xf32>) -> tensor<6x9xf32> {
  %zero = arith.constant 0.0 : f32
  %0 = tensor.pad %x low[1, 0] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x8xf32> to tensor<6x9xf32>
  return %0 : tensor<6x9xf32>
}
