//===- ImportReferenceGraph.cpp - Reference .txt graphs as doppler.task ---===//

#include "Doppler/Dialect/DopplerOps.h"
#include "Doppler/Placement/Graph.h"
#include "Doppler/Target/Translations.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/Path.h"

#include <cctype>

using namespace mlir;
using namespace mlir::doppler;
namespace placement = ::doppler::placement;

namespace {

/// "graphs/ffnn_192nodes.txt" -> "ffnn_192nodes", a valid symbol name.
std::string functionName(StringRef bufferName) {
  std::string stem = llvm::sys::path::stem(bufferName).str();
  std::string name;
  for (char c : stem)
    name.push_back(std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])))
    name = "graph_" + name;
  return name;
}

} // namespace

OwningOpRef<ModuleOp> mlir::doppler::importReferenceGraph(StringRef text,
                                                          StringRef bufferName,
                                                          MLIRContext *context) {
  context->loadDialect<DopplerDialect, func::FuncDialect>();
  Location loc = FileLineColLoc::get(context, bufferName, 1, 1);
  std::string error;
  std::optional<placement::Graph> graph =
      placement::parseReferenceGraph(text.str(), bufferName.str(), &error);
  if (!graph) {
    // The reader says "NAME:LINE: message"; point the diagnostic at LINE.
    StringRef message(error);
    unsigned line = 1;
    if (message.consume_front(bufferName) && message.consume_front(":")) {
      auto [number, rest] = message.split(": ");
      if (!number.getAsInteger(10, line))
        message = rest;
      else
        message = error;
    } else {
      message = error;
    }
    emitError(FileLineColLoc::get(context, bufferName, line, 1)) << message;
    return {};
  }

  // The IR orders each node's out-edges by consumer position, i.e. by id.
  // The simulator breaks ties in edge order, so say when the file differs.
  for (placement::NodeId v = 0; v < graph->numNodes(); ++v) {
    auto successors = graph->successors(v);
    if (!std::is_sorted(successors.begin(), successors.end())) {
      emitWarning(loc) << "node " << v
                       << ": out-edges are not listed in ascending order in "
                          "the file; the imported IR orders them by id, "
                          "which can change how simulated ties break";
      break;
    }
  }

  OpBuilder builder(context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());
  Type valueType = ValueType::get(context);
  SmallVector<Type> resultTypes;
  for (placement::NodeId v = 0; v < graph->numNodes(); ++v)
    if (graph->outDegree(v) == 0)
      resultTypes.push_back(valueType);
  auto function =
      func::FuncOp::create(builder, loc, functionName(bufferName),
                           builder.getFunctionType({}, resultTypes));
  Block *body = function.addEntryBlock();
  builder.setInsertionPointToEnd(body);

  std::vector<Value> values(graph->numNodes());
  SmallVector<Value> sinks;
  for (placement::NodeId v = 0; v < graph->numNodes(); ++v) {
    SmallVector<Value> inputs;
    for (placement::NodeId u : graph->predecessors(v)) {
      if (u >= v) {
        emitError(loc) << "node " << v << " depends on node " << u
                       << " with a larger id; the reference format lists "
                          "nodes in a topological order";
        return {};
      }
      inputs.push_back(values[u]);
    }
    std::string kind =
        graph->opType(v).empty() ? std::string("task") : graph->opType(v);
    auto task = TaskOp::create(
        builder, FileLineColLoc::get(context, bufferName, 5 + v, 1), valueType,
        builder.getStringAttr(kind),
        builder.getF64FloatAttr(graph->computeCost(v)),
        builder.getF64FloatAttr(graph->transferCost(v)), inputs);
    values[v] = task.getResult();
    if (graph->outDegree(v) == 0)
      sinks.push_back(task.getResult());
  }
  func::ReturnOp::create(builder, loc, sinks);
  return module;
}
