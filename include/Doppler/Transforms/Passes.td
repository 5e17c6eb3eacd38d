//===- Passes.td - Doppler passes --------------------------*- tablegen -*-===//

#ifndef DOPPLER_TRANSFORMS_PASSES_TD
#define DOPPLER_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def DopplerWorkSummaryPass : Pass<"doppler-work-summary", "::mlir::ModuleOp"> {
  let summary = "Print the work of every function: ops, FLOPs, bytes";
  let description = [{
    For every function of the module, counts the ops by name and adds up the
    work that ops report through `WorkOpInterface` (FLOPs, bytes read,
    bytes written). Ops without the interface are listed as having unknown
    work. The IR is not changed. The summary goes to stderr, or to the file
    named by `output`.

    ```
    $ doppler-opt examples/mlp.mlir --doppler-work-summary -o /dev/null
    doppler-work-summary: @mlp
      ops: 6 (doppler.einsum 4, func.return 1, ...)
      flops: 8.6e+09 ...
    ```
  }];
  let options = [
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "Where to write the summary ('-' for stderr)">,
  ];
  let statistics = [
    Statistic<"numOpsWithWork", "ops-with-work", "Ops that report their work">,
    Statistic<"numOpsWithoutWork", "ops-without-work",
              "Ops whose work is unknown">,
  ];
}

#endif // DOPPLER_TRANSFORMS_PASSES_TD
