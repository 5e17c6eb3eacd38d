// So are dynamic shapes: einsums are static by construction.
func.func @dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  %y = doppler.einsum "i->i" join(exp) (%x) : (tensor<?xf32>) -> tensor<?xf32>
  return %y : tensor<?xf32>
}
