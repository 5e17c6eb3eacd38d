// doppler-place makes the placement fit each device's memory (issue 17):
// the simulator's peak of live buffers per device against the capacity of
// `system` or `memory-limit`. Four independent 1 MiB results (graph outputs,
// live to the end): `single` puts all four on device 0 (4 MiB).
// A 3 MB limit holds two of them per device, not three: the fit moves two.
// Every policy fits; a fitting placement is left alone.
// A system's capacities apply the same way (cpu4: 4 GB per device: fits).
// Below one result's size no placement fits: a warning, the least overflow
// kept (for doppler-plan-memory to offload), no failure.
// Deterministic for a seed.

func.func @four_outputs(%x: tensor<256x1024xf32>)
    -> (tensor<256x1024xf32>, tensor<256x1024xf32>, tensor<256x1024xf32>,
        tensor<256x1024xf32>) {
  %a = doppler.einsum "ij->ij" join(relu) (%x) : (tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %b = doppler.einsum "ij->ij" join(exp) (%x) : (tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %c = doppler.einsum "ij->ij" join(neg) (%x) : (tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %d = doppler.einsum "ij->ij" join(abs) (%x) : (tensor<256x1024xf32>) -> tensor<256x1024xf32>
  return %a, %b, %c, %d : tensor<256x1024xf32>, tensor<256x1024xf32>, tensor<256x1024xf32>, tensor<256x1024xf32>
}
