//===- CalibrateNetwork.h - The network between ranks, timed ---*- C++ -*-===//
//
// doppler-calibrate under mpirun: the network between two ranks' devices as
// a placed program meets it, measured through the executor with the
// transport doppler-run uses across processes (MPI_Isend/MPI_Irecv posted
// and completed by each rank's progress thread), the same way the links
// inside a process are measured: from a producer's end to the start of its
// consumer on the other side (the message and the idle consumer's
// wake-up).
//
// The two ranks' clocks differ by up to the latency of the barrier that
// starts a run, so a one-way time cannot be read off them. A round trip
// can: device 0 (rank 0) produces a value, sends it to device 1 (rank 1),
// whose task copies it and sends it back to a consumer on device 0. Rank 0
// times the trip on its own clock, less the middle task's duration (rank
// 1's clock, but a duration), and half of that is one hop. Hops of several
// message sizes (4 bytes, 64 KiB, 1 MiB, --transfer-bytes) give the
// network: `latency` the 4-byte hop, `bandwidth` the least-squares fit of
// the larger hops to latency + bytes / bandwidth. Each hop is the median
// of --repeat round trips after a warm-up.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_TOOLS_CALIBRATENETWORK_H
#define DOPPLER_RUNTIME_TOOLS_CALIBRATENETWORK_H

#include "CalibrateBench.h"

#include "doppler/runtime/Transport.h"

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

namespace doppler::runtime::calibrate {

/// The network between ranks 0 and 1, as the cost model reads it.
struct NetworkFigure {
  double latency = 0;   ///< seconds
  double bandwidth = 0; ///< bytes per second
  std::vector<HopSample> samples;
};

/// Collective over every rank of `transport` (at least 2): times the round
/// trips on an executor of one CPU device per rank. The figures are rank
/// 0's (on other ranks they are not meaningful).
Result<NetworkFigure> measureNetwork(const std::shared_ptr<Transport> &transport,
                                     std::mt19937_64 &generator, int repeat,
                                     int64_t largestBytes);

} // namespace doppler::runtime::calibrate

#endif // DOPPLER_RUNTIME_TOOLS_CALIBRATENETWORK_H
