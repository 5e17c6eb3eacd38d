// With a join throughput (exp: 1e8 per second; 1e11 FLOP/s, 1e10 B/s, no
// launch overhead), exp over 2^20 elements costs 2^20 / 1e8 s = 10485.76 us,
// far above the memory-bound add (12 MiB / 1e10 B/s = 1258.29 us). A
// reduction adds its aggregation at peak (+ 10.49 us). A mul-add
// contraction is a GEMM: peak FLOP/s (2 * 256^3 / 1e11 = 335.54 us), never
// the elementwise mul throughput.
func.func @joins(%x: tensor<1024x1024xf32>, %a: tensor<256x256xf32>)
    -> (tensor<1024x1024xf32>, tensor<1024x1024xf32>, tensor<1024xf32>, tensor<256x256xf32>) {
  %e = doppler.einsum "ij->ij" join(exp) (%x) : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %s = doppler.einsum "ij,ij->ij" join(add) (%x, %x) : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %r = doppler.einsum "ij->i" join(exp) agg(add) (%x) : (tensor<1024x1024xf32>) -> tensor<1024xf32>
  %m = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %a) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  return %e, %s, %r, %m : tensor<1024x1024xf32>, tensor<1024x1024xf32>, tensor<1024xf32>, tensor<256x256xf32>
}
