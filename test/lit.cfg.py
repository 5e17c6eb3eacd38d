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
config.substitutions.append(("%doppler_obj_root", config.doppler_obj_root))

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

# Runs across processes (test/Mpi): the runtime built with MPI and an
# mpirun to start the ranks. As root, Open MPI needs the two variables.
import shutil
if config.doppler_has_mpi and shutil.which("mpirun"):
    config.available_features.add("mpi")
    config.substitutions.append(
        ("%mpirun", "env OMPI_ALLOW_RUN_AS_ROOT=1 "
         "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader,tcp "
         "mpirun --oversubscribe --bind-to none"))

# The learned policy (libDopplerLearning.so, built with LibTorch).
if config.doppler_has_learning:
    config.available_features.add("learning")

# Built with -DDOPPLER_SANITIZE=address;undefined (scripts/sanitize.sh full):
# "UNSUPPORTED: asan" marks the few tests that cannot run instrumented.
# Debian's mlir-opt and mlir-runner are not instrumented: to load our
# instrumented plugin or runtime library they need the ASan runtime loaded
# first (LD_PRELOAD).
host_tool_prefix = ""
if "address" in config.doppler_sanitize:
    config.available_features.add("asan")
    import subprocess
    asan_runtime = subprocess.run(
        [config.doppler_cxx_compiler, "-print-file-name=libasan.so"],
        capture_output=True, text=True).stdout.strip()
    host_tool_prefix = "env LD_PRELOAD=" + asan_runtime + " "
    config.substitutions.append(
        (r"(?<![\w/.-])mlir-runner(?= )", host_tool_prefix + "mlir-runner"))

# IREE 3.13 (iree-compile, iree-run-module, numpy), installed by
# scripts/setup_iree.sh into build/iree-venv (DOPPLER_IREE_VENV overrides):
# the test/Integration/IREE tests need it.
iree_venv = os.environ.get("DOPPLER_IREE_VENV",
                           os.path.join(config.doppler_obj_root, "iree-venv"))
iree_bin = os.path.join(iree_venv, "bin")
if all(os.access(os.path.join(iree_bin, tool), os.X_OK)
       for tool in ("iree-compile", "iree-run-module", "python")):
    config.available_features.add("iree")
config.substitutions.append(("%iree_bin", iree_bin))
config.substitutions.append(("%iree_python", os.path.join(iree_bin, "python")))
# Each integration test appends its result line (errors, placement honoured,
# dispatches per device) here; scripts/test.sh prints the file.
config.substitutions.append(
    ("%iree_summary", os.path.join(config.doppler_obj_root, "iree-summary.txt")))
config.substitutions.append(("%doppler_tools", config.doppler_tools_dir))
# The placement policy of integration tests: the learned one when built.
config.substitutions.append(
    ("%doppler_policy",
     "doppler" if config.doppler_has_learning else "critical-path"))

# Debian's stock mlir-opt with Doppler loaded as plugins (tools/doppler-plugins).
stock_mlir_opt = os.path.join(config.llvm_tools_dir, "mlir-opt")
doppler_plugin = os.path.join(config.doppler_obj_root, "lib", "DopplerPlugin.so")
if os.path.exists(stock_mlir_opt):
    config.available_features.add("stock-mlir-opt")
config.substitutions.append(("%stock_mlir_opt", host_tool_prefix + stock_mlir_opt))
config.substitutions.append(("%doppler_plugin", doppler_plugin))
