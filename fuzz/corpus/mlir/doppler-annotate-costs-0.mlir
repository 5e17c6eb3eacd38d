// A 4096^3 f32 matmul on an H100 (67 TFLOP/s f32, 5 us launch) is compute
// bound: 2*4096^3 / 67e12 s + 5 us = 2056.3 us. Its 64 MiB result moves over
// NVLink (450 GB/s, 2 us latency) in 67108864 / 450e9 s + 2 us = 151.13 us.
// On one CPU core (96 GFLOP/s f32, 2 us launch): 1431655.8 us; 64 MiB at
// 10 GB/s + 1 us = 6711.9 us.
func.func @matmul(%a: tensor<4096x4096xf32>, %b: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %c = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %b) : (tensor<4096x4096xf32>, tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  return %c : tensor<4096x4096xf32>
}
