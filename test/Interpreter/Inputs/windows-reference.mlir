// The windows of windows.mlir written out: a slice of the input and one
// einsum per kernel offset, combined by adds (conv), max or a scaled add.

func.func @conv(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x2x2xf32>) -> tensor<1x3x3x3xf32> {
  %x0 = doppler.slice %x [0, 0, 0, 0] : tensor<1x2x4x4xf32> to tensor<1x2x3x3xf32>
  %w0 = doppler.slice %w [0, 0, 0, 0] : tensor<3x2x2x2xf32> to tensor<3x2x1x1xf32>
  %p0 = doppler.einsum "ncij,fcab->nfij" join(mul) agg(add) (%x0, %w0) : (tensor<1x2x3x3xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x3x3xf32>
  %x1 = doppler.slice %x [0, 0, 0, 1] : tensor<1x2x4x4xf32> to tensor<1x2x3x3xf32>
  %w1 = doppler.slice %w [0, 0, 0, 1] : tensor<3x2x2x2xf32> to tensor<3x2x1x1xf32>
  %p1 = doppler.einsum "ncij,fcab->nfij" join(mul) agg(add) (%x1, %w1) : (tensor<1x2x3x3xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x3x3xf32>
  %x2 = doppler.slice %x [0, 0, 1, 0] : tensor<1x2x4x4xf32> to tensor<1x2x3x3xf32>
  %w2 = doppler.slice %w [0, 0, 1, 0] : tensor<3x2x2x2xf32> to tensor<3x2x1x1xf32>
  %p2 = doppler.einsum "ncij,fcab->nfij" join(mul) agg(add) (%x2, %w2) : (tensor<1x2x3x3xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x3x3xf32>
  %x3 = doppler.slice %x [0, 0, 1, 1] : tensor<1x2x4x4xf32> to tensor<1x2x3x3xf32>
  %w3 = doppler.slice %w [0, 0, 1, 1] : tensor<3x2x2x2xf32> to tensor<3x2x1x1xf32>
  %p3 = doppler.einsum "ncij,fcab->nfij" join(mul) agg(add) (%x3, %w3) : (tensor<1x2x3x3xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x3x3xf32>
  %s0 = doppler.einsum "nfij,nfij->nfij" join(add) (%p0, %p1) : (tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  %s1 = doppler.einsum "nfij,nfij->nfij" join(add) (%s0, %p2) : (tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  %s2 = doppler.einsum "nfij,nfij->nfij" join(add) (%s1, %p3) : (tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  return %s2 : tensor<1x3x3x3xf32>
}

func.func @pools(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %x0 = doppler.slice %x [0, 0, 0, 0] : tensor<1x2x4x4xf32> to tensor<1x2x3x3xf32>
  %x1 = doppler.slice %x [0, 0, 0, 1] : tensor<1x2x4x4xf32> to tensor<1x2x3x3xf32>
  %x2 = doppler.slice %x [0, 0, 1, 0] : tensor<1x2x4x4xf32> to tensor<1x2x3x3xf32>
  %x3 = doppler.slice %x [0, 0, 1, 1] : tensor<1x2x4x4xf32> to tensor<1x2x3x3xf32>
  %m0 = doppler.einsum "ncij,ncij->ncij" join(max) (%x0, %x1) : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %m1 = doppler.einsum "ncij,ncij->ncij" join(max) (%m0, %x2) : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %m2 = doppler.einsum "ncij,ncij->ncij" join(max) (%m1, %x3) : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %a0 = doppler.einsum "ncij,ncij->ncij" join(add) (%x0, %x1) : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %a1 = doppler.einsum "ncij,ncij->ncij" join(add) (%a0, %x2) : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %a2 = doppler.einsum "ncij,ncij->ncij" join(add) (%a1, %x3) : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %avg = doppler.einsum "ncij->ncij" join(scale, 0.25) (%a2) : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %m2, %avg : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}
