// An op convert-linalg-to-doppler leaves (a linalg.generic computing erf,
// which has no doppler join) still goes through doppler-pipeline: it is
// costed from its work (WorkOpInterface external model: 16x32 points x 1
// body op, 2 KiB read and written), placed, gets transfers and simulated
// times like the einsums around it. The tensor.collapse_shape after it
// (which regroups extents) becomes slices of its result, one einsum per
// row and an assemble.

#id = affine_map<(d0, d1) -> (d0, d1)>

// The matmul 2*16*32*8, erf 16*32 points x 1 op, the collapse's 16
// row einsums 512, exp 512.
func.func @left(%x: tensor<16x8xf32>, %w: tensor<8x32xf32>) -> tensor<512xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %m = linalg.matmul ins(%x, %w : tensor<16x8xf32>, tensor<8x32xf32>) outs(%f : tensor<16x32xf32>) -> tensor<16x32xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<16x32xf32>) outs(%e : tensor<16x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.erf %a : f32
    linalg.yield %r : f32
  } -> tensor<16x32xf32>
  %c = tensor.collapse_shape %g [[0, 1]] : tensor<16x32xf32> into tensor<512xf32>
  %e1 = tensor.empty() : tensor<512xf32>
  %r = linalg.exp ins(%c : tensor<512xf32>) outs(%e1 : tensor<512xf32>) -> tensor<512xf32>
  return %r : tensor<512xf32>
}
