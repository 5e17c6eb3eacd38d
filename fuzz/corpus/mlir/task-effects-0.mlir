// Cost-only tasks are graph nodes: CSE does not merge two equal ones and
// canonicalization does not drop one whose value nobody reads.
func.func @tasks_are_not_pure() {
  %0 = doppler.task "input" compute(1.0) transfer(2.0)
  %1 = doppler.task "input" compute(1.0) transfer(2.0)
  %2 = doppler.task "einsummable" (%0, %1) compute(3.0) transfer(4.0)
  %3 = doppler.task "sink" (%2) compute(1.0) transfer(0.0)
  return
}
