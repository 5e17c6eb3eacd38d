// A fused op pays every step's join once per point (2^20 points): exp at
// its listed 1e8/s (10485.76 us), mul at its listed 1e9/s (1048.576 us),
// add at peak (1 FLOP: 10.48576 us), 11544.82176 us in all, above the one
// pass over memory (two inputs and the output: 1258.29 us). The three
// einsums it replaces would cost 10485.76 + 1258.29 + 1258.29 us.
func.func @fused(%x: tensor<1024x1024xf32>, %y: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %f = doppler.fused "ij,ij->ij" "exp(in0); mul(s0, in1); add(s1, in1)" (%x, %y)
      : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  return %f : tensor<1024x1024xf32>
}
