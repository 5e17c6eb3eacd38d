//===- Passes.td - Doppler passes --------------------------*- tablegen -*-===//

#ifndef DOPPLER_TRANSFORMS_PASSES_TD
#define DOPPLER_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

// Anchoring. The per-function passes (costs, decomposition, placement,
// transfers, their checks, simulation) are op-agnostic: scheduled on a
// function (any FunctionOpInterface op: func.func, util.func, ...) they work
// on that function alone, scheduled on a module on every function in it.
// So `doppler-opt --doppler-place` works from the command line (MLIR cannot
// nest an interface-anchored pass implicitly), and
// `--pass-pipeline="builtin.module(any(doppler-place))"` (or `func.func(...)`)
// lets the pass manager run the functions in parallel. Only what needs the
// whole module runs on it (doppler-work-summary, which prints functions in
// order; doppler-lower-to-runtime, which adds module-level symbols). Options
// are checked once, in each pass's initialize().

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

def DopplerAnnotateCostsPass : Pass<"doppler-annotate-costs"> {
  let summary = "Attach a compute and a transfer cost to every op";
  let description = [{
    Sets `doppler.compute_cost` and `doppler.transfer_cost` (f64, in
    microseconds) on every op directly inside a function body, from the
    work the op reports (`WorkOpInterface`) and the system description:

    - compute: a roofline, max(FLOPs / peak FLOP/s for the result's element
      type, bytes read and written / memory bandwidth), plus the device's
      kernel launch overhead (device 0 of the system); joins the system
      lists a throughput for are charged at that rate instead of as FLOPs,
      once per point for an einsum and once per point and step for a
      `doppler.fused` op;
    - transfer: moving the op's results over the slowest link leaving
      device 0: latency + bytes / bandwidth.

    Ops without the interface are costed as memory-bound copies of their
    operands and results. `doppler.task` ops keep their explicit costs.
    `system` is a preset (h100x4, h100x8, a100x4, a100x8, a100-40x4,
    a100-40x8, cpu4, cpu8; nodes joined by a network: h100x8-2n, h100x8-4n,
    h100x8-8n, cpu2-2n) or the path of a JSON system description
    (docs/SystemDescription.md).

    ```mlir
    // doppler-opt --doppler-annotate-costs=system=h100x4
    %c = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %b)
        {doppler.compute_cost = 2.101e+03 : f64,
         doppler.transfer_cost = 151.1 : f64} : ...
    ```
  }];
  let options = [
    Option<"system", "system", "std::string", /*default=*/"\"h100x4\"",
           "System preset name or path of a JSON system description">,
  ];
  let statistics = [
    Statistic<"numCosted", "ops-costed", "Ops given costs from their work">,
    Statistic<"numFallback", "ops-fallback",
              "Ops without WorkOpInterface, costed as copies">,
  ];
}

def DopplerPlacePass : Pass<"doppler-place"> {
  let summary = "Place every op of every function on a device";
  let description = [{
    Builds a placement graph of each function (one node per op, edges from
    SSA uses, costs from `doppler-annotate-costs` or `doppler.task`), runs a
    placement policy from lib/Placement within a budget, and writes
    `doppler.device = #doppler.device<N>` on every op. A remark on each
    function gives the summary: predicted makespan, lower bound, per-device
    load.

    Policies: doppler (default: the learned dual policy of METHOD.md
    section 5 with the model embedded in libDopplerLearning.so, or `model`;
    greedy, or the best of `samples` rollouts by the simulator),
    critical-path, join-aware (critical-path that also weighs the
    transfers a join waits for when its inputs are apart), rollout (one
    pass of the rollout algorithm over the better of join-aware and
    critical-path: each op, in order, tries every other device with the
    rest completed by that rule, judged by the simulator; never worse than
    either), learned-moves (the better of critical-path and join-aware,
    then moves of ops on or beside the critical chain to other devices,
    tried in the order a learned model ranks them and each kept when the
    simulator says it shortens the makespan; docs/Method.md section 12),
    heft, round-robin, random, single, critical-path-reference (the
    reference code's variant, for comparisons). The learned policy loads
    LibTorch on first use (about 0.7 s); the heuristics need no LibTorch.

    Budget (lib/Placement/Learning/Budget.h): the learned policy starts from
    its placement and its two heuristic priors (critical-path, join-aware)
    and refines the best by simulated annealing, judged by the simulator,
    for `budget-evaluations` simulator runs. By default that is about a
    second's worth on a few hundred ops (growing as the square root of the
    size, 10 s at most), counted in runs so that the same program and seed
    give the same placement on every machine; `budget-evaluations=0` places
    greedily only. `budget-ms` spends wall-clock time instead (the result
    then depends on the machine). A heuristic places alone unless given a
    budget, which then refines its placement.

    Nodes: when `system` has several nodes (h100x8-2n, ...) and `devices`
    is its device count, the heuristics price each device pair's link (the
    network between nodes), the learned policy's budget adds hierarchical
    starts (pipeline stages across nodes), and the network simulator (link
    and NIC contention) judges the starts, the refinement and the remark's
    predicted makespan (docs/SystemDescription.md). Run on a module, it
    then writes `doppler.nodes` there (the node of each device, which
    `mpirun -np R doppler-run` follows: node i on rank i), and removes it
    when placing without nodes.

    Memory: with `system` or `memory-limit`, and ops that carry byte sizes
    (einsum and friends, not cost-only `doppler.task` graphs), the placement
    must fit every device's memory: the simulator's peak of live buffers on
    each device (outputs from their op's start to their last reader,
    received copies, graph outputs to the end; function arguments are not
    counted here: `doppler-plan-memory` counts them) is compared with its
    capacity, and a placement that exceeds one is repaired (ops moved off
    the overfull devices, then annealing among placements that fit,
    `fit-evaluations` simulator runs at most; lib/Placement/MemoryFit.h). A
    placement that fits is never changed. When no fitting placement is
    found, a warning gives the reason and the placement with the least
    overflow is kept, for `doppler-plan-memory` to offload.

    ```mlir
    // doppler-opt --doppler-place="devices=2 policy=critical-path"
    %0 = doppler.task "input" compute(1.0) transfer(1.0) {doppler.device = #doppler.device<0>}
    ```
  }];
  let options = [
    Option<"devices", "devices", "int", /*default=*/"4", "Number of devices (>= 1)">,
    Option<"policy", "policy", "std::string", /*default=*/"\"doppler\"",
           "Placement policy: doppler (learned) or a heuristic">,
    Option<"samples", "samples", "int", /*default=*/"0",
           "Learned policy: 0 places greedily; K > 0 keeps the best of K "
           "rollouts (greedy + K-1 sampled) by the simulator">,
    Option<"model", "model", "std::string", /*default=*/"\"\"",
           "Learned policy: a model file (default: the embedded model)">,
    Option<"seed", "seed", "uint64_t", /*default=*/"0",
           "Seed of randomised policies and of the refinement">,
    Option<"budgetEvaluations", "budget-evaluations", "int64_t",
           /*default=*/"-1",
           "Refinement budget in simulator runs, deterministic per seed (-1: "
           "about a second's worth for policy doppler, none for a heuristic; "
           "0: none)">,
    Option<"budgetMilliseconds", "budget-ms", "double", /*default=*/"0.0",
           "Refinement budget in wall-clock milliseconds, starts included "
           "(machine-dependent; 0: none); with budget-evaluations, whichever "
           "ends first">,
    Option<"systemDevices", "system-devices", "int", /*default=*/"0",
           "Devices of the system description the costs came from (set by "
           "doppler-pipeline; 0: unknown). Placing on more warns: the extra "
           "devices have no description and take the costs of the others">,
    Option<"system", "system", "std::string", /*default=*/"\"\"",
           "System description (preset or JSON path) whose memory "
           "capacities the placement must respect (empty: no memory "
           "constraint unless memory-limit is set; doppler-pipeline passes "
           "its own)">,
    Option<"memoryLimit", "memory-limit", "double", /*default=*/"0.0",
           "Bytes of memory per device, overriding the system's capacities "
           "(0: the system's)">,
    Option<"fitEvaluations", "fit-evaluations", "int64_t", /*default=*/"20000",
           "Simulator runs spent making a placement that exceeds a "
           "device's memory fit (deterministic per seed)">,
  ];
  let statistics = [
    Statistic<"numPlaced", "ops-placed", "Ops given a device">,
    Statistic<"numMovedToFit", "ops-moved-to-fit",
              "Ops the memory fit moved to another device">,
  ];
}

def DopplerInsertTransfersPass : Pass<"doppler-insert-transfers"> {
  let summary = "Make every cross-device use go through a doppler.transfer";
  let description = [{
    For every value used on a device other than its producer's, inserts one
    `doppler.transfer` per (value, destination device), right after the
    producer, placed on the destination, and rewires every consumer on that
    device to it. Every op must be placed (`doppler-verify-placed` runs the
    same check first). Values from function arguments are not moved: they
    are assumed present on every device. Results returned by the function
    stay where they are produced.

    ```mlir
    %1 = doppler.transfer %0 from <0> to <1> {doppler.device = #doppler.device<1>} : tensor<4xf32>
    ```
  }];
  let statistics = [
    Statistic<"numTransfers", "transfers", "Transfers inserted">,
  ];
  let dependentDialects = ["::mlir::doppler::DopplerDialect"];
}

def DopplerVerifyUnplacedPass : Pass<"doppler-verify-unplaced"> {
  let summary = "Check that a function is input the placement phases take";
  let description = [{
    Verification before the placement phases (`doppler-pipeline` runs it
    first): no op carries `doppler.device` and there is no
    `doppler.transfer` (the program is not placed already), and no op
    directly in a function body holds Doppler ops in a region (the phases
    place a body's top-level ops). One error per function, naming the op.
  }];
}

def DopplerVerifyPlacedPass : Pass<"doppler-verify-placed"> {
  let summary = "Check that every op in a function body has a device";
  let description = [{
    Verification between phases: every op directly in a function body but
    the terminator must carry `doppler.device`. Errors name the op.
  }];
}

def DopplerVerifyTransfersPass : Pass<"doppler-verify-transfers"> {
  let summary = "Check that no value crosses devices without a transfer";
  let description = [{
    Verification after `doppler-insert-transfers`: every operand produced by
    an op on another device must come through a `doppler.transfer` whose
    source and target devices match the producer and the consumer.
  }];
}

def DopplerSimulatePass : Pass<"doppler-simulate"> {
  let summary = "Attach predicted start and end times and the makespan";
  let description = [{
    Simulates each placed function on the work-conserving engine of the
    placement core (reference semantics: a device runs one op at a time in
    the order they became ready; transfers cost the producer's transfer
    cost and are unlimited in number). `doppler.transfer` ops are modelled
    as the edges they implement. Sets `doppler.start` and `doppler.end` on
    every op (transfers: when the move starts and arrives) and
    `doppler.makespan` (f64, cost units) on the function.

    With `system` (a preset or JSON description, as doppler-annotate-costs
    takes; doppler-pipeline passes its own) whose devices give a
    `hand_off` (doppler-calibrate's descriptions do), an op whose device
    sat idle waiting for it (its last input made on the same device, nothing
    else queued there) starts that long after it could
    (SimulatorOptions::handOff, docs/SystemDescription.md); device d beyond
    the description takes device d mod N's. Without one, or without
    hand-offs, the reference semantics above.
  }];
  let options = [
    Option<"system", "system", "std::string", /*default=*/"\"\"",
           "System preset or JSON description whose hand-offs the schedule "
           "pays (empty: none, the reference semantics)">,
  ];
  let statistics = [
    Statistic<"numSimulated", "functions-simulated", "Functions simulated">,
  ];
}

def DopplerPlanMemoryPass : Pass<"doppler-plan-memory"> {
  let summary = "Offload tensors to host memory where a device's memory is exceeded";
  let description = [{
    On a placed function after transfer insertion (what `doppler-pipeline`
    produces), predicts every device's peak memory and, where some device
    would exceed its capacity, chooses values to evict to host memory and
    when to reload them (the offload planner of
    lib/Placement/Offload.h), then writes the plan into the IR:

    - the memory of device d: its capacity (the `system` description's, or
      `memory-limit` bytes for every device) less the bytes of the function
      arguments read on d (the runtime binds an argument on every device
      that reads it, `doppler-run --inputs every-user`, its default); the
      rest must hold the simulator's peak of live buffers on d (outputs
      from their op's start to their last reader, received copies, returned
      values to the end);
    - per eviction of value %v on device d: `doppler.evict %v from <d>`
      right after %v's producer; `doppler.reload ... to <d> after(%t)`
      right before the first *late reader* (the readers of %v on d that the
      planner moves to the reloaded copy), where %t is the result of the
      *trigger* op on d whose end starts the reload; the late readers read
      the reload, the earlier readers on d and the readers on other devices
      (through their transfers) keep reading %v;
    - the function's `doppler.makespan` becomes the predicted makespan with
      the offload, `doppler.peak_memory` lists each device's predicted peak
      in bytes (arguments included), `doppler.offload` summarises the plan
      (evictions, bytes evicted, the host's peak in bytes, the makespan
      without memory limits), and every op's `doppler.start` /
      `doppler.end` is the offloaded schedule (an evict: from its value's
      end until the host holds the copy; a reload: the copy back).

    Host links (bandwidth and latency between each device and host memory)
    come from the system description. When everything fits the pass changes
    nothing at all. When no plan fits, the pass fails with an error naming
    the device and the planner's diagnosis; likewise when the host's peak
    exceeds the system's host memory. A function with no bytes to hold
    (cost-only `doppler.task` graphs) is left alone. A function that already
    has evictions is refused (run the pass once, last). Every op in the body
    must be placed and costed.

    ```mlir
    // doppler-opt --doppler-plan-memory="memory-limit=8192"
    %a = doppler.einsum "ij->ij" join(exp) (%x) {doppler.device = #doppler.device<0>, ...}
    %h = doppler.evict %a from <0> {doppler.device = #doppler.device<0>, ...} : tensor<32x32xf32>
    ...
    %r = doppler.reload %h to <0> after(%t : tensor<32x32xf32>) {doppler.device = #doppler.device<0>, ...} : tensor<32x32xf32>
    %y = doppler.einsum "ij,ij->ij" join(add) (%r, %u) {doppler.device = #doppler.device<0>, ...}
    ```
  }];
  let options = [
    Option<"system", "system", "std::string", /*default=*/"\"h100x4\"",
           "System preset or JSON description: device memory capacities "
           "and host links (device d beyond the description takes device "
           "d mod N's figures)">,
    Option<"memoryLimit", "memory-limit", "double", /*default=*/"0.0",
           "Bytes of memory per device, overriding the system's "
           "capacities (0: the system's)">,
    Option<"maxEvaluations", "max-evaluations", "int64_t",
           /*default=*/"20000",
           "Simulator runs the planner may spend (deterministic)">,
  ];
  let statistics = [
    Statistic<"numEvictions", "evictions", "Values evicted to host memory">,
    Statistic<"numFunctionsOffloaded", "functions-offloaded",
              "Functions given evictions">,
  ];
  let dependentDialects = ["::mlir::doppler::DopplerDialect"];
}

def DopplerDecomposePass : Pass<"doppler-decompose"> {
  let summary = "Split every einsum into blocks (EinDecomp-style tensor-relational decomposition)";
  let description = [{
    Every `doppler.einsum` gets a partition count per index and becomes one
    block einsum per block of its iteration space. A `doppler.fused` op is
    decomposed the same way as an elementwise einsum (blocks of its output
    index space, each input sliced by its term). Extents need not divide:
    10 in 4 parts gives blocks of 3, 3, 2, 2. Where a contracted index is
    split, the partial blocks of each output block are combined by a
    balanced tree of binary einsums whose join is the aggregation (add ->
    add, mul -> mul, max -> max, min -> min). Between ops, glue connects
    differently partitioned producers and consumers: a consumer takes a
    producer's block directly where the grids match, a `doppler.slice` of
    one block where its block lies inside one, and a `doppler.assemble` of
    the pieces it overlaps otherwise; it looks through existing slices and
    assembles the same way. Function results and other non-einsum users get
    a `doppler.assemble` of the output blocks. Block einsums keep the
    einsum's discardable attributes (e.g. `doppler.device`) except costs and
    schedule times, which must be re-annotated; `doppler.parts` is consumed.

    A `doppler.reshape` follows its input's blocks: where every block of
    the input is a contiguous run of the result (the input cut only along
    dims the reshape keeps, or along the first dim of a group of dims it
    merges or splits, at boundaries of the result's dims: a head split
    [B, T, H*E] -> [B, T, H, E] of a value cut along B, T, or C at multiples
    of E; a flatten [B, T, C] -> [B*T, C] of a value cut along B), it
    becomes one reshape per block and an assemble of the results, with no
    gather; otherwise it stays whole, reading the assembled input, and its
    consumers take slices of it.

    A `doppler.conv` or `doppler.pool` becomes a grid of the same op over
    three dims of its result: the batch, the channels (whole groups of a
    grouped convolution; the output channels of an ungrouped one, each
    block reading every input channel and its rows of the weight) and the
    first spatial dim. A row tile reads its input rows plus the halo its
    kernel reaches; what falls outside the input becomes the tile's own
    padding, so blocks are exact and need no partial sums. Its
    `doppler.parts` gives the three counts; otherwise, when its
    multiply-adds (window elements for a pool) reach `min-points`, the
    split into at most `parts` blocks that reads the fewest input and
    weight elements, an input region crossing a block of the producer's
    tiling counted twice (depthwise: channels; early layers at batch 1:
    rows; late layers: output channels; batched: the batch).

    Partition counts come from the op's `doppler.parts` attribute (one
    count per index in the order of first appearance in the spec, inputs
    then output: "ij,jk->ik" is i, j, k) or else from a heuristic aiming at
    `parts` blocks per einsum (a number): among the ways of writing the largest block
    count <= `parts` the extents allow as a product of per-index counts
    (never more parts than an index's extent), it picks the one that moves
    the fewest elements, counting
      - replication: a piece of an input is read by every block that
        differs only in indices the input lacks; all copies but one count;
      - aggregation: with R blocks along the contracted indices, R - 1
        partial copies of the output;
      - re-partitioning (glue): for inputs whose partition is known (results
        of einsums already decomposed, slices and assembles), the fraction of
        the input a block cannot take from the one producer block it
        overlaps most (0 when the grids match or the consumer's blocks nest
        in the producer's); function arguments and other values count as
        free to distribute.
    Ties go to partitions without aggregation, then to splitting earlier
    indices. Einsums are visited once in program order (a greedy pass in
    topological order, where EinDecomp runs a dynamic program over the
    graph), so each einsum adapts to its producers but not to its
    consumers. Einsums whose iteration space has fewer than `min-points`
    points stay whole.

    ```mlir
    // doppler-opt --doppler-decompose=parts=2
    %c = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a, %b)
        : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    // becomes (i split in 2: b is replicated, nothing is aggregated)
    %a0 = doppler.slice %a [0, 0] : tensor<8x8xf32> to tensor<4x8xf32>
    %c0 = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a0, %b)
        : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %a1 = doppler.slice %a [4, 0] : tensor<8x8xf32> to tensor<4x8xf32>
    %c1 = doppler.einsum "ij,jk->ik" join(mul) agg(add) (%a1, %b)
        : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %c = doppler.assemble [2, 1] (%c0, %c1)
        : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<8x8xf32>
    ```
  }];
  let options = [
    Option<"parts", "parts", "std::string", /*default=*/"\"4\"",
           "Blocks per einsum the heuristic aims at (1 to 4096), or 'auto': "
           "each op's partition chosen by the dynamic program over the "
           "graph for 'devices' devices of 'system'">,
    Option<"system", "system", "std::string", /*default=*/"\"h100x4\"",
           "parts=auto: the system preset or JSON file whose costs it weighs">,
    Option<"devices", "devices", "int64_t", /*default=*/"0",
           "parts=auto: the most blocks an op gets (0: the system's device "
           "count)">,
    Option<"throughputWeight", "throughput-weight", "double",
           /*default=*/"-1.0",
           "parts=auto: the weight w of the throughput term in [0, 1] (-1: "
           "the program's work over D devices against its critical path)">,
    Option<"minPoints", "min-points", "int64_t", /*default=*/"0",
           "Einsums with fewer iteration-space points stay whole">,
  ];
  let statistics = [
    Statistic<"numDecomposed", "einsums-decomposed",
              "Einsums split into blocks">,
    Statistic<"numKeptWhole", "einsums-kept-whole",
              "Einsums left as they were">,
    Statistic<"numBlockEinsums", "block-einsums", "Block einsums created">,
    Statistic<"numAggregationEinsums", "aggregation-einsums",
              "Binary einsums created to aggregate partial blocks">,
    Statistic<"numGlueOps", "glue-ops",
              "Slices and assembles created (and still used)">,
    Statistic<"numReshapesSplit", "reshapes-split",
              "Reshapes made one reshape per block of their input">,
    Statistic<"numReshapesKeptWhole", "reshapes-kept-whole",
              "Reshapes left whole (on their gathered input)">,
    Statistic<"numWindowsSplit", "windows-split",
              "Convolutions and pools split into blocks">,
    Statistic<"numWindowsKeptWhole", "windows-kept-whole",
              "Convolutions and pools left whole">,
    Statistic<"numAutoSplit", "auto-split",
              "parts=auto: ops given more than one block">,
    Statistic<"numAutoWhole", "auto-whole",
              "parts=auto: ops left whole">,
  ];
  let dependentDialects = ["::mlir::doppler::DopplerDialect"];
}

def DopplerDecomposeSearchPass
    : Pass<"doppler-decompose-search", "::mlir::ModuleOp"> {
  let summary = "Decompose each function the way that places best "
                "(candidate decompositions judged by the simulator)";
  let description = [{
    Decomposition and placement searched together: for every function with
    a body, each candidate decomposition runs on a copy of the function
    through `doppler-decompose`, `canonicalize`, `doppler-fuse-elementwise`,
    `doppler-annotate-costs`, a greedy `doppler-place` (the pass's policy,
    no budget), `doppler-insert-transfers` and `doppler-simulate`; the
    function is then decomposed (only decomposed: the pipeline places it
    after) by the candidate with the lowest simulated makespan. The
    candidates: `parts=auto` as it is, with the chain (w = 0) and the
    throughput (w = 1) weighting, with at most D / 2 blocks per op, and
    uniform `parts=D` and (D >= 4) `parts=2`. A remark lists every
    candidate's makespan. A copy
    that fails to decompose or place is skipped; when every one fails, the
    function is decomposed by `parts=auto` and the failure reported by the
    passes after. `doppler-pipeline` runs this pass in place of
    `doppler-decompose` when `parts=auto` and the placement has a budget
    (`budget-evaluations` other than 0).
  }];
  let options = [
    Option<"system", "system", "std::string", /*default=*/"\"h100x4\"",
           "System preset or JSON file">,
    Option<"devices", "devices", "int64_t", /*default=*/"4",
           "Devices to place on">,
    Option<"policy", "policy", "std::string", /*default=*/"\"doppler\"",
           "Placement policy of the candidates' greedy placements">,
    Option<"seed", "seed", "uint64_t", /*default=*/"0", "Seed">,
  ];
  let statistics = [
    Statistic<"numCandidates", "candidates", "Candidate decompositions placed">,
  ];
  let dependentDialects = ["::mlir::doppler::DopplerDialect"];
}

def DopplerFuseElementwisePass : Pass<"doppler-fuse-elementwise"> {
  let summary = "Merge producer-consumer chains of elementwise ops into doppler.fused";
  let description = [{
    Repeatedly merges a producer into its consumer when both are
    elementwise (a `doppler.einsum` without aggregation whose spec contracts
    nothing, or a `doppler.fused`), the producer's result has exactly one use
    (that consumer), both are in the same block, both carry the same
    `doppler.device` or neither does (so the pass is safe before and after
    placement), the consumer does not broadcast the producer's result (that
    would recompute the producer's joins at every point of the broadcast:
    a row-wise rsqrt stays its own op), and the merged join program has at
    most `max-steps` steps.
    The merged op is a `doppler.fused` that never materialises the
    intermediate tensor: the runtime runs one kernel, and the cost model,
    simulator and placement see one op. A lone einsum is left as it is.

    Indices are renamed, not assumed: the producer's output term maps
    position by position onto the term its consumer reads it with, and the
    producer's input terms are renamed through that map. The merged op's
    spec is the consumer's output term with the merged input terms; an
    operand read with the same term by both ops is read once. The merged op
    keeps the consumer's discardable attributes (e.g. `doppler.device`)
    except costs, schedule times and `doppler.parts`, which no longer hold.

    ```mlir
    // doppler-opt --doppler-fuse-elementwise
    %0 = doppler.einsum "bh,h->bh" join(add) (%x, %b)
        : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %1 = doppler.einsum "bh->bh" join(gelu) (%0)
        : (tensor<4x8xf32>) -> tensor<4x8xf32>
    // becomes
    %1 = doppler.fused "bh,h->bh" "add(in0, in1); gelu(s0)" (%x, %b)
        : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let options = [
    Option<"maxSteps", "max-steps", "int64_t", /*default=*/"16",
           "Most join steps a merged op may have (1 to 64); longer chains "
           "are split into several fused ops">,
  ];
  let statistics = [
    Statistic<"numMerges", "merges", "Producers merged into their consumer">,
  ];
  let dependentDialects = ["::mlir::doppler::DopplerDialect"];
}

#endif // DOPPLER_TRANSFORMS_PASSES_TD
