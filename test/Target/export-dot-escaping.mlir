// RUN: doppler-translate --export-dot %s | FileCheck %s
// Names written into the DOT graph are escaped as Graphviz strings: a
// quote or a backslash in a function or task name cannot end the string
// or start an escape sequence.

// CHECK: label="@we\"ird\\name";
// CHECK: [label="say \"hi\" \\ bye\ndevice 0", fillcolor=
// CHECK: [label="b\ndevice 1", fillcolor=
func.func @"we\"ird\\name"() -> (!doppler.value, !doppler.value) {
  %a = doppler.task "say \"hi\" \\ bye" compute(2.0) transfer(1.0) {doppler.device = #doppler.device<0>}
  %b = doppler.task "b" (%a) compute(3.0) transfer(1.0) {doppler.device = #doppler.device<1>}
  return %a, %b : !doppler.value, !doppler.value
}
