// RUN: not doppler-opt %s --doppler-work-summary="output=/nonexistent/dir/summary.txt" 2>&1 | FileCheck %s
// CHECK: error: cannot open summary output '/nonexistent/dir/summary.txt'
func.func @f() {
  return
}
