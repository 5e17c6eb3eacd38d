//===- Plan.cpp - A task graph with its function's signature --------------===//

//
// The plan's own bookkeeping. Plans as JSON files are in PlanJson.cpp,
// seeded arguments, checksums and output files in HostTensors.cpp, timing
// and run reports in RunReport.cpp.
//
//===----------------------------------------------------------------------===//

#include "doppler/runtime/Plan.h"

namespace doppler::runtime {

//===----------------------------------------------------------------------===//
// Bookkeeping
//===----------------------------------------------------------------------===//

int64_t Plan::addArgument(ElementType type, Shape shape) {
  arguments.push_back({type, std::move(shape)});
  return static_cast<int64_t>(arguments.size()) - 1;
}

Status Plan::bindArgument(ValueId input, int64_t argument) {
  if (!graph.contains(input) || graph.task(input).kind != TaskKind::Input)
    return Status::failure("%" + std::to_string(input) +
                           " is not a graph input");
  if (argument < 0 || argument >= static_cast<int64_t>(arguments.size()))
    return Status::failure("argument " + std::to_string(argument) +
                           " does not exist (" +
                           std::to_string(arguments.size()) + " declared)");
  const Task &task = graph.task(input);
  const PlanArgument &arg = arguments[argument];
  if (task.type != arg.type || task.shape != arg.shape)
    return Status::failure("graph input %" + std::to_string(input) + " is " +
                           tensorTypeString(task.type, task.shape) +
                           " but argument " + std::to_string(argument) +
                           " is " + tensorTypeString(arg.type, arg.shape));
  inputArgument[input] = argument;
  return Status();
}

Status Plan::addResult(ValueId value) {
  if (Status status = graph.markOutput(value); !status)
    return status;
  results.push_back(value);
  return Status();
}

Status Plan::verify() const {
  for (ValueId input : graph.inputs()) {
    auto it = inputArgument.find(input);
    if (it == inputArgument.end())
      return Status::failure("graph input %" + std::to_string(input) +
                             " is bound to no argument");
    int64_t argument = it->second;
    if (argument < 0 || argument >= static_cast<int64_t>(arguments.size()))
      return Status::failure("graph input %" + std::to_string(input) +
                             " is bound to argument " +
                             std::to_string(argument) +
                             ", which does not "
                             "exist");
    const Task &task = graph.task(input);
    const PlanArgument &arg = arguments[argument];
    if (task.type != arg.type || task.shape != arg.shape)
      return Status::failure("graph input %" + std::to_string(input) + " is " +
                             tensorTypeString(task.type, task.shape) +
                             " but its argument " + std::to_string(argument) +
                             " is " + tensorTypeString(arg.type, arg.shape));
  }
  for (const auto &[input, argument] : inputArgument)
    if (!graph.contains(input) || graph.task(input).kind != TaskKind::Input)
      return Status::failure("argument binding for %" + std::to_string(input) +
                             ", which is not a graph input");
  for (ValueId result : results)
    if (!graph.contains(result) || !graph.isOutput(result))
      return Status::failure("result %" + std::to_string(result) +
                             " is not a graph output");
  return Status();
}

} // namespace doppler::runtime
