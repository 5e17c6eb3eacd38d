"""Zoo models across processes: torchvision's ResNet-18 and Hugging Face's
GPT-2 at the zoo's small configurations (doppler.zoo, random weights),
imported once, placed on 4 CPU devices and run by doppler.run_program in
one process and on 2 and 4 MPI ranks (nodes=R: mpirun starts the ranks,
runtime/README.md "Across processes (MPI)"), and placed on 8 and run on 4
ranks of 2 devices each. The ranks' outputs equal the one process's within
1e-6 relative, and both equal PyTorch eager within the zoo's tolerance.

Skipped where mpirun is missing, the tools are not built (or built without
MPI), or the model's library is not installed. The placement is
critical-path (deterministic), so every run executes the same program.
"""

import shutil

import pytest

import doppler
from conftest import needs_tools
from doppler import api, zoo

needs_mpirun = pytest.mark.skipif(shutil.which("mpirun") is None,
                                  reason="mpirun (Open MPI) is not installed")


def _run(program, nodes=None, devices=4):
    try:
        return api.run_program(program, devices=devices, system=f"cpu{devices}",
                               policy="critical-path", repeat=1, nodes=nodes)
    except doppler.ToolError as error:
        if "this build has no MPI" in str(error):
            pytest.skip("the tools are built without MPI")
        raise


@needs_tools
@needs_mpirun
@pytest.mark.parametrize("name", ["resnet18", "gpt2"])
def test_zoo_model_on_ranks_equals_one_process(name):
    pytest.importorskip(zoo.MODELS[name][0])
    model, inputs = zoo.build(name)
    program = doppler.exported(model, inputs)
    one = _run(program)
    expected = model(*inputs)
    assert zoo.relative_error(one.outputs, expected) <= 1e-4
    for ranks in (2, 4):
        many = _run(program, nodes=ranks)
        error = zoo.relative_error(many.outputs, one.outputs)
        assert error <= 1e-6, f"{name} on {ranks} ranks: relative error {error:.3g}"
        assert many.measured_makespan > 0
    one = _run(program, devices=8)
    many = _run(program, nodes=4, devices=8)
    error = zoo.relative_error(many.outputs, one.outputs)
    assert error <= 1e-6, f"{name} on 4 ranks x 2 devices: relative error {error:.3g}"


def test_nodes_must_be_a_positive_count():
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(doppler.DopplerError, match="nodes: expected a positive number"):
            api.run_program(None, nodes=bad)
