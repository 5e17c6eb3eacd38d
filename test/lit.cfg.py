# -*- Python -*-
# lit configuration of Doppler's regression tests (doppler-opt, tools).

import os

import lit.formats
from lit.llvm import llvm_config

config.name = "Doppler"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Unit", "Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.doppler_obj_root, "test")

llvm_config.use_default_substitutions()  # FileCheck, not, count
config.substitutions.append(("%shared_data", config.doppler_shared_data_dir))
config.substitutions.append(("%doppler_src", config.doppler_src_root))

# Our tools first, then LLVM's (FileCheck lives in /usr/lib/llvm-22/bin).
llvm_config.with_environment("PATH", config.doppler_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tools = ["doppler-opt", "doppler-place", "doppler-interpret", "doppler-run",
         "doppler-run-plan", "doppler-calibrate", "doppler-train"]
llvm_config.add_tool_substitutions(tools, [config.doppler_tools_dir])

# The runtime's C API as a shared library (mlir-runner --shared-libs=...).
config.substitutions.append(
    ("%doppler_rt_c_lib",
     os.path.join(config.doppler_obj_root, "lib", "libDopplerRuntimeC.so")))
if os.path.exists(os.path.join(config.llvm_tools_dir, "mlir-runner")):
    config.available_features.add("mlir-runner")

if config.doppler_has_cuda:
    config.available_features.add("cuda")

# The learned policy (libDopplerLearning.so, built with LibTorch).
if config.doppler_has_learning:
    config.available_features.add("learning")
