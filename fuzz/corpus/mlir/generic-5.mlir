#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#unit = affine_map<(d0, d1, d2) -> (0, d1, d2)>
#red = affine_map<(d0, d1, d2) -> (d0, d1)>
#bcast = affine_map<(d0, d1, d2) -> (d2)>

// linalg.generic with a constant 0 on a unit dim (torch-mlir's broadcast
// of a size-1 dim), a sum of squares reduction (mean-square of RMSNorm)
// with a zero init, a reduction accumulating into a non-identity init, and
// a pure broadcast with an unused init.
func.func @unit_dims(%x: tensor<4x8x16xf32>, %y: tensor<1x8x16xf32>) -> tensor<4x8x16xf32> {
  %e = tensor.empty() : tensor<4x8x16xf32>
  %0 = linalg.generic {indexing_maps = [#id3, #unit, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %y : tensor<4x8x16xf32>, tensor<1x8x16xf32>) outs(%e : tensor<4x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.mulf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8x16xf32>
  return %0 : tensor<4x8x16xf32>
}

func.func @sum_of_squares(%x: tensor<4x8x16xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id3, #red], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<4x8x16xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    %t = arith.addf %o, %s : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

func.func @max_accumulate(%x: tensor<4x8x16xf32>) -> tensor<4x8xf32> {
  %low = arith.constant -3.40282347E+38 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %init = linalg.fill ins(%low : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id3, #red], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<4x8x16xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.maximumf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

func.func @broadcast_exp(%b: tensor<16xf32>) -> tensor<4x8x16xf32> {
  %e = tensor.empty() : tensor<4x8x16xf32>
  %0 = linalg.generic {indexing_maps = [#bcast, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b : tensor<16xf32>) outs(%e : tensor<4x8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %x1 = math.exp %a : f32
    linalg.yield %x1 : f32
  } -> tensor<4x8x16xf32>
  return %0 : tensor<4x8x16xf32>
}
