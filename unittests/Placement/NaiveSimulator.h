//===- NaiveSimulator.h - Straightforward reference simulator ---*- C++ -*-===//
//
// Test and benchmark support, not part of the library: the obvious port of
// METHOD section 2. One std::priority_queue holds every event ordered by
// (time, priority, creation sequence), start-up events included, and every
// run allocates its state afresh. It serves as a second oracle for the fast
// Simulator (which replaces most of this queue by a FIFO and batches
// arrivals) and as the baseline of bench/SimulatorBench.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_UNITTESTS_PLACEMENT_NAIVESIMULATOR_H
#define DOPPLER_UNITTESTS_PLACEMENT_NAIVESIMULATOR_H

#include "Doppler/Placement/Graph.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <queue>
#include <vector>

namespace doppler::placement::testing {

/// Returns the makespan of `assignment` under the reference semantics.
inline double naiveSimulate(const Graph &graph, int32_t numDevices,
                            ArrayView<DeviceId> assignment) {
  enum Kind {
    TransferProcessStart, // urgent start-up, one per edge: waits, no effect
    ComputeProcessStart,  // urgent start-up, one per node
    InputsReady,
    Granted,
    Done,
    Release,
    Finished,
    Arrived,
    TransferComplete,
  };
  enum Priority { Urgent = 0, Normal = 1 };
  struct Event {
    double time;
    int priority;
    uint64_t sequence;
    Kind kind;
    int32_t id; // node, device or edge, by kind
    bool operator>(const Event &other) const {
      if (time != other.time)
        return time > other.time;
      if (priority != other.priority)
        return priority > other.priority;
      return sequence > other.sequence;
    }
  };

  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  uint64_t sequence = 0;
  double now = 0;
  auto schedule = [&](Kind kind, int32_t id, double delay = 0,
                      Priority priority = Normal) {
    events.push({now + delay, priority, sequence++, kind, id});
  };

  std::vector<int32_t> inputsLeft(graph.numNodes());
  std::vector<std::deque<NodeId>> waiting(numDevices);
  std::vector<bool> deviceIdle(numDevices, true);
  auto grantHead = [&](DeviceId d) {
    NodeId v = waiting[d].front();
    waiting[d].pop_front();
    deviceIdle[d] = false;
    schedule(Granted, v);
  };

  for (int32_t e = 0; e < graph.numEdges(); ++e)
    schedule(TransferProcessStart, e, 0, Urgent);
  for (NodeId v = 0; v < graph.numNodes(); ++v)
    schedule(ComputeProcessStart, v, 0, Urgent);

  while (!events.empty()) {
    Event event = events.top();
    events.pop();
    now = event.time;
    const int32_t id = event.id;
    switch (event.kind) {
    case TransferProcessStart:
      break;
    case ComputeProcessStart:
      inputsLeft[id] = graph.inDegree(id);
      if (inputsLeft[id] == 0)
        schedule(InputsReady, id);
      break;
    case InputsReady: {
      DeviceId d = assignment[id];
      waiting[d].push_back(id);
      if (deviceIdle[d])
        grantHead(d);
      break;
    }
    case Granted:
      schedule(Done, id, graph.computeCost(id));
      break;
    case Done:
      deviceIdle[assignment[id]] = true;
      schedule(Release, assignment[id]);
      schedule(Finished, id);
      break;
    case Release:
      if (deviceIdle[id] && !waiting[id].empty())
        grantHead(id);
      break;
    case Finished:
      for (int32_t e = graph.succBegin(id); e < graph.succEnd(id); ++e) {
        bool crossDevice = assignment[graph.edgeTarget(e)] != assignment[id];
        schedule(Arrived, e, crossDevice ? graph.edgeCost(e) : 0.0);
      }
      break;
    case Arrived:
      schedule(TransferComplete, id);
      break;
    case TransferComplete: {
      NodeId target = graph.edgeTarget(id);
      if (--inputsLeft[target] == 0)
        schedule(InputsReady, target);
      break;
    }
    }
  }
  return now;
}

} // namespace doppler::placement::testing

#endif // DOPPLER_UNITTESTS_PLACEMENT_NAIVESIMULATOR_H
