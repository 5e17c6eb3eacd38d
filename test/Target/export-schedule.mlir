// RUN: doppler-opt %s --doppler-insert-transfers --doppler-simulate -o %t.mlir
// RUN: doppler-translate --export-chrome-trace %t.mlir -o %t.json
// RUN: %python %S/Inputs/check_trace.py %t.json | FileCheck %s --check-prefix=TRACE
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: doppler-translate --export-dot %t.mlir | FileCheck %s --check-prefix=DOT
// RUN: doppler-translate --export-svg-gantt %t.mlir | FileCheck %s --check-prefix=SVG
// RUN: not doppler-translate --export-chrome-trace %s 2>&1 | FileCheck %s --check-prefix=UNSIMULATED

// Four ops on three devices; %a moves to devices 1 and 2 (a copy lane each).
// TRACE: events: 6, lanes: 5, processes and threads: ['compute', 'copy in 0', 'device 0', 'device 1', 'device 2']
// JSON: "name": "b"
// JSON-NEXT: "ph": "X"
// JSON-NEXT: "pid": 1
// JSON-NEXT: "tid": 0
// JSON-NEXT: "ts": 12
// DOT: digraph doppler
// DOT: n1_0 [label="a\ndevice 0", fillcolor="#66c2a5"];
// DOT: shape=cds
// DOT: n1_0 -> n1_1;
// SVG: <svg xmlns="http://www.w3.org/2000/svg"
// SVG: @graph: makespan 15
// SVG: device 0
// SVG: <title>b: 12 - 15</title>
// SVG: <title>transfer a: 2 - 12</title>
// UNSIMULATED: error: 'doppler.task' op has no simulated schedule (doppler.device, doppler.start, doppler.end); run doppler-place and doppler-simulate first
func.func @graph() -> (!doppler.value, !doppler.value, !doppler.value) {
  %a = doppler.task "a" compute(2.0) transfer(10.0) {doppler.device = #doppler.device<0>}
  %b = doppler.task "b" (%a) compute(3.0) transfer(1.0) {doppler.device = #doppler.device<1>}
  %c = doppler.task "c" (%a) compute(4.0) transfer(1.0) {doppler.device = #doppler.device<0>}
  %d = doppler.task "d" (%a) compute(1.0) transfer(1.0) {doppler.device = #doppler.device<2>}
  return %b, %c, %d : !doppler.value, !doppler.value, !doppler.value
}
