func.func @branches(%a: tensor<4xf32>) -> tensor<4xf32> {
  "test.br"()[^next] : () -> ()
^next:
  return %a : tensor<4xf32>
}
