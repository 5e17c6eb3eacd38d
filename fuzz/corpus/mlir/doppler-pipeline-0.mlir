// The whole pipeline on small examples: every op ends up placed, every
// cross-device use goes through a transfer, the function has a makespan,
// and the result still computes what the input did.
// Every op placed, every cross-device use through a transfer:
// Placement is deterministic for a seed.
// Without decomposition (parts=1) the ops stay whole.


// The per-function passes, scheduled on each function (any(...)), place and
// simulate exactly as the module-level passes do.
// (doppler-"place": keeps lit from substituting the tool of that name.)
