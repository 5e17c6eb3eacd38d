# Unity builds (CMAKE_UNITY_BUILD=ON: each target's sources compiled a few
# at a time as one translation unit). scripts/build.sh builds build/ so
# (the whole tree: 832 s of CPU instead of 1,506 s from scratch), and
# scripts/sanitize.sh its MLIR-free trees (539 s instead of 825 s): parsing
# the same headers (MLIR's, LibTorch's, GoogleTest's, the standard
# library's) once per source dominated, and the tests pass alike.
#
# These sources define file-local names (anonymous namespaces, statics)
# that another source of their target defines too, so they are compiled on
# their own: lib/Support/Window.cpp (setError, beside Support's inline one),
# runtime/lib/Transport.cpp (Reader), runtime/lib/CpuWindow.cpp (its
# per-thread scratch), and three Placement test files (kDataDir, jsonError,
# toVector). A new clash shows as a redefinition error in a Unity/*.cxx
# file of that tree: add the file here, or give the name a file-specific one.
if(NOT CMAKE_UNITY_BUILD)
  return()
endif()
set_source_files_properties(lib/Support/Window.cpp
  DIRECTORY lib/Support PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
set_source_files_properties(runtime/lib/Transport.cpp runtime/lib/CpuWindow.cpp
  DIRECTORY runtime PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
set_source_files_properties(unittests/Placement/SimulatorTest.cpp
  unittests/Placement/KernelCostsTest.cpp unittests/Placement/EnvironmentTest.cpp
  DIRECTORY unittests/Placement PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
