//===- ExportSchedule.cpp - Chrome trace, DOT and SVG of a schedule -------===//

#include "Doppler/Dialect/DopplerOps.h"
#include "Doppler/Target/Translations.h"
#include "Doppler/Analysis/PlacementGraph.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <map>

using namespace mlir;
using namespace mlir::doppler;

namespace {

/// One box of a schedule: an op on its device, or a transfer.
struct Interval {
  Operation *op;
  std::string label;
  int64_t device;       // where it runs (a transfer: its destination)
  int64_t source = -1;  // a transfer's source device
  double start, end;
  unsigned lane = 0;    // transfers: which copy lane of the device
};

struct FunctionSchedule {
  std::string name;
  std::vector<Interval> computes, transfers;
  int64_t numDevices = 0;
  unsigned maxLanes = 0;
  double makespan = 0;
};

std::string labelOf(Operation *op) {
  if (auto task = dyn_cast<TaskOp>(op))
    return task.getKind().str();
  if (auto einsum = dyn_cast<EinsumOp>(op))
    return (einsum.getSpec() + " " + stringifyJoinKind(einsum.getJoin())).str();
  if (auto fused = dyn_cast<FusedOp>(op)) {
    // The joins in order ("bh,h->bh fused add+gelu"): the program's
    // operands would make boxes unreadably long.
    std::string label = fused.getSpec().str() + " fused ";
    for (auto [i, step] : llvm::enumerate(fused.getParsedProgram().steps))
      label += (i ? "+" : "") + std::string(::doppler::joinKindName(step.join));
    return label;
  }
  return op->getName().getStringRef().str();
}

/// Reads the schedule doppler-simulate left on a function. Fails, with an
/// error on the op, when an op lacks its device or times.
FailureOr<FunctionSchedule> readSchedule(FunctionOpInterface function) {
  FunctionSchedule schedule;
  schedule.name = function.getName().str();
  if (auto makespan = function->getAttrOfType<FloatAttr>(kMakespanAttr))
    schedule.makespan = makespan.getValueAsDouble();
  for (Operation &op : function.getFunctionBody().getOps()) {
    if (op.hasTrait<OpTrait::IsTerminator>())
      continue;
    auto start = op.getAttrOfType<FloatAttr>(kStartAttr);
    auto end = op.getAttrOfType<FloatAttr>(kEndAttr);
    int64_t device = getDevice(&op);
    if (!start || !end || device < 0)
      return op.emitOpError()
             << "has no simulated schedule (doppler.device, doppler.start, "
                "doppler.end); run doppler-place and doppler-simulate first";
    Interval interval{&op, labelOf(&op), device, -1, start.getValueAsDouble(),
                      end.getValueAsDouble()};
    schedule.numDevices = std::max(schedule.numDevices, device + 1);
    schedule.makespan = std::max(schedule.makespan, interval.end);
    if (auto transfer = dyn_cast<TransferOp>(op)) {
      interval.source = transfer.getSource().getId();
      Operation *producer = transfer.getInput().getDefiningOp();
      interval.label = "transfer " + (producer ? labelOf(producer) : "");
      schedule.transfers.push_back(interval);
    } else if (isa<EvictOp, ReloadOp>(op)) {
      // Copies to host memory and back run on the device's copy engine:
      // drawn with its transfers, in its colour.
      interval.source = device;
      Value value = op.getOperand(0);
      if (auto reload = dyn_cast<ReloadOp>(op))
        value = reload.getStash().getDefiningOp<EvictOp>().getInput();
      Operation *producer = value.getDefiningOp();
      interval.label = (isa<EvictOp>(op) ? "evict " : "reload ") +
                       (producer ? labelOf(producer) : std::string());
      schedule.transfers.push_back(interval);
    } else {
      schedule.computes.push_back(interval);
    }
  }
  // Transfers overlap freely; give each device's transfers lanes so that no
  // two on one lane overlap (first free lane, by start time).
  std::stable_sort(schedule.transfers.begin(), schedule.transfers.end(),
                   [](const Interval &a, const Interval &b) {
                     return a.start < b.start;
                   });
  std::map<int64_t, std::vector<double>> laneFree;
  for (Interval &transfer : schedule.transfers) {
    std::vector<double> &lanes = laneFree[transfer.device];
    unsigned lane = 0;
    while (lane < lanes.size() && lanes[lane] > transfer.start)
      ++lane;
    if (lane == lanes.size())
      lanes.push_back(0);
    lanes[lane] = transfer.end;
    transfer.lane = lane;
    schedule.maxLanes = std::max<unsigned>(schedule.maxLanes, lane + 1);
  }
  return schedule;
}

FailureOr<std::vector<FunctionSchedule>> readSchedules(ModuleOp module) {
  std::vector<FunctionSchedule> schedules;
  bool ok = true;
  module.walk([&](FunctionOpInterface function) {
    if (function.isExternal())
      return;
    FailureOr<FunctionSchedule> schedule = readSchedule(function);
    if (failed(schedule))
      ok = false;
    else
      schedules.push_back(std::move(*schedule));
  });
  if (!ok)
    return failure();
  return schedules;
}

std::string escapeXml(StringRef text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '&': out += "&amp;"; break;
    case '"': out += "&quot;"; break;
    default: out.push_back(c);
    }
  }
  return out;
}

/// `text` inside a double-quoted Graphviz string: quotes and backslashes
/// escaped (a backslash would otherwise start an escape such as \l), line
/// breaks as \n and other control characters dropped.
std::string escapeDot(StringRef text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) >= 0x20) {
      out.push_back(c);
    }
  }
  return out;
}

// Device colours (ColorBrewer Set2 and Dark2, readable on white).
const char *const kPalette[] = {"#66c2a5", "#fc8d62", "#8da0cb", "#e78ac3",
                                "#a6d854", "#ffd92f", "#e5c494", "#b3b3b3",
                                "#1b9e77", "#d95f02", "#7570b3", "#e7298a"};
const char *colour(int64_t device) {
  return kPalette[device % (sizeof(kPalette) / sizeof(kPalette[0]))];
}

} // namespace

LogicalResult mlir::doppler::exportChromeTrace(ModuleOp module,
                                               llvm::raw_ostream &os) {
  FailureOr<std::vector<FunctionSchedule>> schedules = readSchedules(module);
  if (failed(schedules))
    return failure();
  llvm::json::Array events;
  // One process per (function, device); thread 0 computes, threads 1.. are
  // copy lanes. Times are cost units, written as microseconds.
  int64_t pidBase = 0;
  for (const FunctionSchedule &schedule : *schedules) {
    for (int64_t d = 0; d < schedule.numDevices; ++d) {
      std::string process = "device " + std::to_string(d);
      if (schedules->size() > 1)
        process = "@" + schedule.name + " " + process;
      events.push_back(llvm::json::Object{
          {"name", "process_name"}, {"ph", "M"}, {"pid", pidBase + d},
          {"args", llvm::json::Object{{"name", process}}}});
      events.push_back(llvm::json::Object{
          {"name", "thread_name"}, {"ph", "M"}, {"pid", pidBase + d},
          {"tid", 0}, {"args", llvm::json::Object{{"name", "compute"}}}});
      for (unsigned lane = 0; lane < schedule.maxLanes; ++lane)
        events.push_back(llvm::json::Object{
            {"name", "thread_name"}, {"ph", "M"}, {"pid", pidBase + d},
            {"tid", lane + 1},
            {"args", llvm::json::Object{
                         {"name", "copy in " + std::to_string(lane)}}}});
    }
    for (const Interval &op : schedule.computes)
      events.push_back(llvm::json::Object{
          {"name", op.label}, {"cat", "compute"}, {"ph", "X"},
          {"ts", op.start}, {"dur", op.end - op.start},
          {"pid", pidBase + op.device}, {"tid", 0}});
    for (const Interval &transfer : schedule.transfers)
      events.push_back(llvm::json::Object{
          {"name", transfer.label}, {"cat", "transfer"}, {"ph", "X"},
          {"ts", transfer.start}, {"dur", transfer.end - transfer.start},
          {"pid", pidBase + transfer.device}, {"tid", transfer.lane + 1},
          {"args", llvm::json::Object{{"from", transfer.source}}}});
    pidBase += schedule.numDevices;
  }
  llvm::json::Object root{{"traceEvents", std::move(events)},
                          {"displayTimeUnit", "ms"}};
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  return success();
}

LogicalResult mlir::doppler::exportDot(ModuleOp module, llvm::raw_ostream &os) {
  os << "digraph doppler {\n  rankdir=TB;\n  node [shape=box, style=filled, "
        "fontname=\"Helvetica\"];\n";
  unsigned cluster = 0;
  bool ok = true;
  module.walk([&](FunctionOpInterface function) {
    if (function.isExternal())
      return;
    llvm::DenseMap<Operation *, unsigned> ids;
    os << "  subgraph cluster_" << cluster++ << " {\n    label=\"@"
       << escapeDot(function.getName()) << "\";\n";
    unsigned next = 0;
    for (Operation &op : function.getFunctionBody().getOps()) {
      if (op.hasTrait<OpTrait::IsTerminator>())
        continue;
      unsigned id = next++;
      ids[&op] = id;
      int64_t device = getDevice(&op);
      std::string label = labelOf(&op);
      os << "    n" << cluster << "_" << id << " [label=\"" << escapeDot(label);
      if (device >= 0)
        os << "\\ndevice " << device;
      os << "\", fillcolor=\"" << (device >= 0 ? colour(device) : "#ffffff")
         << "\"";
      if (isa<TransferOp>(op))
        os << ", shape=cds";
      os << "];\n";
      for (Value operand : op.getOperands()) {
        auto it = ids.find(operand.getDefiningOp());
        if (it != ids.end())
          os << "    n" << cluster << "_" << it->second << " -> n" << cluster
             << "_" << id << ";\n";
      }
    }
    os << "  }\n";
  });
  os << "}\n";
  return success(ok);
}

LogicalResult mlir::doppler::exportSvgGantt(ModuleOp module,
                                            llvm::raw_ostream &os) {
  FailureOr<std::vector<FunctionSchedule>> schedules = readSchedules(module);
  if (failed(schedules))
    return failure();
  const double left = 110, width = 1100, rowHeight = 28, laneHeight = 12,
               top = 40;
  double height = top;
  for (const FunctionSchedule &s : *schedules)
    height += 30 + s.numDevices * (rowHeight + s.maxLanes * laneHeight + 8);
  height += 30;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\""
     << left + width + 20 << "\" height=\"" << height
     << "\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"11\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  double y = top;
  for (const FunctionSchedule &s : *schedules) {
    double scale = s.makespan > 0 ? width / s.makespan : 0;
    os << "<text x=\"10\" y=\"" << y - 12 << "\" font-size=\"14\">@"
       << escapeXml(s.name) << ": makespan "
       << llvm::format("%.6g", s.makespan)
       << " (boxes: ops; thin boxes: transfers into the device)</text>\n";
    std::vector<double> rowTop(s.numDevices);
    for (int64_t d = 0; d < s.numDevices; ++d) {
      rowTop[d] = y;
      os << "<text x=\"10\" y=\"" << y + rowHeight * 0.65 << "\">device " << d
         << "</text>\n";
      os << "<rect x=\"" << left << "\" y=\"" << y << "\" width=\"" << width
         << "\" height=\"" << rowHeight
         << "\" fill=\"#f4f4f4\" stroke=\"#dddddd\"/>\n";
      y += rowHeight + s.maxLanes * laneHeight + 8;
    }
    auto box = [&](const Interval &i, double boxTop, double boxHeight,
                   const char *fill, double opacity) {
      double x = left + i.start * scale;
      double w = std::max(0.5, (i.end - i.start) * scale);
      os << "<rect x=\"" << llvm::format("%.2f", x) << "\" y=\"" << boxTop
         << "\" width=\"" << llvm::format("%.2f", w) << "\" height=\""
         << boxHeight << "\" fill=\"" << fill << "\" fill-opacity=\""
         << opacity << "\" stroke=\"#333333\" stroke-width=\"0.4\"><title>"
         << escapeXml(i.label) << ": " << llvm::format("%.6g", i.start)
         << " - " << llvm::format("%.6g", i.end) << "</title></rect>\n";
    };
    for (const Interval &op : s.computes)
      box(op, rowTop[op.device], rowHeight, colour(op.device), 0.9);
    for (const Interval &t : s.transfers)
      box(t, rowTop[t.device] + rowHeight + 2 + t.lane * laneHeight,
          laneHeight - 2, colour(t.source), 0.6);
    // Time axis.
    os << "<line x1=\"" << left << "\" y1=\"" << y << "\" x2=\""
       << left + width << "\" y2=\"" << y << "\" stroke=\"black\"/>\n";
    for (int tick = 0; tick <= 4; ++tick) {
      double x = left + width * tick / 4;
      os << "<text x=\"" << x << "\" y=\"" << y + 14
         << "\" text-anchor=\"middle\">"
         << llvm::format("%.4g", s.makespan * tick / 4) << "</text>\n";
    }
    y += 50;
  }
  os << "</svg>\n";
  return success();
}
