// The whole pipeline on small examples: every op ends up placed, every
// cross-device use goes through a transfer, the function has a makespan,
// and the result still computes what the input did.
// Every op placed, every cross-device use through a transfer:
// offload (doppler-plan-memory, on by default) changes nothing when the
// program fits, as it does on h100x4's 80 GB; with 48000 bytes per device
// the block on one device (38.7 kB of arguments) needs two evictions and
// still computes what the input did.
// Placement is deterministic for a seed.
// Without decomposition (parts=1) the ops stay whole; fusion (on by
// default) still merges the elementwise chains: 50 ops become 33.
// With fuse=true (the default), elementwise chains (RMSNorm's pieces, RoPE, softmax,
// SwiGLU's gate) become doppler.fused ops block by block after
// decomposition; they are costed, placed and simulated like any op, and the
// result is unchanged within 1e-6 relative. fuse=false keeps every einsum.


// The per-function passes, scheduled on each function (any(...)), place and
// simulate exactly as the module-level passes do.
// (doppler-"place": keeps lit from substituting the tool of that name.)
