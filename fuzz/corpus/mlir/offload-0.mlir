func.func @round_trip(%a: tensor<4x8xf32>, %y: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %x = doppler.einsum "ij->ij" join(exp) (%a) {doppler.device = #doppler.device<0>}
      : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %h = doppler.evict %x from <0> {doppler.device = #doppler.device<0>} : tensor<4x8xf32>
  %t = doppler.einsum "ij->i" join(identity) agg(add) (%x) {doppler.device = #doppler.device<0>}
      : (tensor<4x8xf32>) -> tensor<4xf32>
  %r = doppler.reload %h to <0> after(%t, %y : tensor<4xf32>, tensor<8xf32>) {doppler.device = #doppler.device<0>} : tensor<4x8xf32>
  %s = doppler.reload %h to <1> : tensor<4x8xf32>
  return %r, %s : tensor<4x8xf32>, tensor<4x8xf32>
}

// Two reloads of one stash are two copies (CSE keeps both); a reload nobody
// reads is dead, and so is an evict whose reloads are all gone.
func.func @effects(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %h = doppler.evict %x from <0> : tensor<4xf32>
  %r0 = doppler.reload %h to <0> : tensor<4xf32>
  %r1 = doppler.reload %h to <0> : tensor<4xf32>
  %dead = doppler.reload %h to <0> : tensor<4xf32>
  return %r0, %r1 : tensor<4xf32>, tensor<4xf32>
}

func.func @dead_evict(%x: tensor<4xf32>) -> tensor<4xf32> {
  %h = doppler.evict %x from <0> : tensor<4xf32>
  %r = doppler.reload %h to <0> : tensor<4xf32>
  return %x : tensor<4xf32>
}

// Each copy reads and writes its tensor once (4 x 8 x 4 = 128 bytes): with
// the exp (128 read, 128 written) and the row sum (128, 16), 640 read and
// 528 written.

// doppler-plan-memory's function attributes: per-device peak bytes and a
// summary.
func.func @summary() attributes {doppler.peak_memory = array<i64: 4096, 0>, doppler.offload = {evictions = 1 : i64}} {
  return
}
