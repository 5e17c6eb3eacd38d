// Softmax: the row max and row sum are reductions and stay; x - max and
// exp fuse; exp's result is read twice (sum and divide), so the divide
// stays alone.
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = doppler.einsum "ij->i" join(identity) agg(max) (%x) : (tensor<4x8xf32>) -> tensor<4xf32>
  %d = doppler.einsum "ij,i->ij" join(sub) (%x, %m) : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  %e = doppler.einsum "ij->ij" join(exp) (%d) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = doppler.einsum "ij->i" join(identity) agg(add) (%e) : (tensor<4x8xf32>) -> tensor<4xf32>
  %y = doppler.einsum "ij,i->ij" join(div) (%e, %s) : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
