//===- SimulatorEvents.h - Packed events and the future queue ---*- C++ -*-===//
//
// Internal to lib/Placement: what Simulator.cpp (construction),
// SimulatorReference.cpp (the reference engines) and SimulatorExtended.cpp
// (the extended engine) share. The queue's push and pop are defined here so
// that every engine's loop inlines them.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_LIB_PLACEMENT_SIMULATOREVENTS_H
#define DOPPLER_LIB_PLACEMENT_SIMULATOREVENTS_H

#include "Doppler/Placement/Simulator.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <limits>

namespace doppler::placement {

namespace detail {

/// What an event does when it runs (METHOD section 2, steps 2-8).
enum EventKind : uint32_t {
  InputsReady,      // node: joins its device's FIFO
  Granted,          // node: starts computing
  Done,             // node: stops computing
  ReleaseAndFinish, // node: its device may grant its queue head (Release),
                    // then the node sends its output along its out-edges
                    // (Finished). The reference schedules these two events
                    // back to back, so one event can do both in order.
  Arrived,          // edge: the transfer (possibly of 0 time) is over
  TransferComplete, // edge: counts towards its target's inputs
  ArrivalBatch,     // node: Arrived for each of its cross-device edges
  TransferStart,    // edge: (memory tracking only) a transfer that waited
                    // for its link starts, and the receiver's copy of the
                    // value is allocated
};

constexpr uint32_t kKindShift = 29;
constexpr uint32_t kIdMask = (1u << kKindShift) - 1;

inline uint32_t packEvent(EventKind kind, int32_t id) {
  return (static_cast<uint32_t>(kind) << kKindShift) |
         static_cast<uint32_t>(id);
}

constexpr double kInfinity = std::numeric_limits<double>::infinity();

inline uint64_t timeToBits(double time) {
  assert(time >= 0 && "times are non-negative");
  uint64_t bits;
  std::memcpy(&bits, &time, sizeof(bits));
  return bits;
}

} // namespace detail

inline double Simulator::FutureQueue::topTime() const {
  double time;
  std::memcpy(&time, &entries_[begin_].timeBits, sizeof(time));
  return time;
}

inline void Simulator::FutureQueue::push(double time, uint64_t order) {
  const Entry entry{detail::timeToBits(time), order};
  Entry *entries = entries_.data();
  if (!isHeap_) {
    if (end_ - begin_ < kSortedLimit) {
      // Insertion from the back: new events tend to be the latest.
      size_t i = end_++;
      while (i > begin_ && entry < entries[i - 1]) {
        entries[i] = entries[i - 1];
        --i;
      }
      entries[i] = entry;
      return;
    }
    // Too many for insertion: the sorted range, moved to the front, is a
    // valid heap as it stands.
    std::copy(entries + begin_, entries + end_, entries);
    end_ -= begin_;
    begin_ = 0;
    isHeap_ = true;
  }
  size_t i = end_++;
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (!(entry < entries[parent]))
      break;
    entries[i] = entries[parent];
    i = parent;
  }
  entries[i] = entry;
}

inline uint64_t Simulator::FutureQueue::pop() {
  Entry *entries = entries_.data();
  if (!isHeap_)
    return entries[begin_++].order;
  const uint64_t top = entries[0].order;
  const Entry last = entries[--end_];
  const size_t size = end_;
  size_t i = 0;
  for (;;) {
    size_t child = 2 * i + 1;
    if (child >= size)
      break;
    if (child + 1 < size && entries[child + 1] < entries[child])
      ++child;
    if (!(entries[child] < last))
      break;
    entries[i] = entries[child];
    i = child;
  }
  entries[i] = last;
  return top;
}

} // namespace doppler::placement

#endif // DOPPLER_LIB_PLACEMENT_SIMULATOREVENTS_H
