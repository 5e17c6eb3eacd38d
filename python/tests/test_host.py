"""doppler.run places for this host by default: system="host" is the
description doppler-calibrate measures of the machine for the device
count, made once and cached (doppler.host)."""

import json
import os

import pytest
import torch

import doppler
from doppler import host
from conftest import needs_tools

pytestmark = needs_tools


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DOPPLER_CACHE_DIR", str(tmp_path))
    return tmp_path


def test_host_system_is_calibrated_once_and_cached(cache):
    path = host.host_system(2)
    assert os.path.dirname(path) == str(cache)
    with open(path) as f:
        description = json.load(f)
    assert sum(device.get("count", 1) for device in description["devices"]) == 2
    assert all(device["launch_overhead"] > 0 for device in description["devices"])
    stamp = os.stat(path).st_mtime_ns
    assert host.host_system(2) == path and os.stat(path).st_mtime_ns == stamp
    # Another device count is another file; refresh measures anew.
    assert host.host_system(1) != path
    assert host.host_system(2, refresh=True) == path
    assert sorted(os.listdir(cache)) == sorted(
        os.path.basename(p) for p in (path, host.host_system(1)))


def test_run_places_for_this_host_by_default(cache):
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU()).eval()
    x = torch.randn(4, 16)
    result = doppler.run(model, (x,), devices=2, repeat=1)
    assert result.placement.system == host.host_system(2)
    with torch.no_grad():
        assert torch.allclose(result.outputs, model(x), rtol=1e-5, atol=1e-6)
    # A preset is still a preset.
    assert doppler.run(model, (x,), devices=2, system="cpu4", repeat=1).placement.system == "cpu4"


def test_machine_key_names_the_tool_not_how_it_was_found(monkeypatch, tmp_path):
    # The same build found through a relative DOPPLER_BUILD_DIR, an absolute
    # one or a link to it is the same calibration.
    build = os.path.dirname(os.path.dirname(doppler.tools.find_tool("doppler-calibrate")))
    link = tmp_path / "build-link"
    link.symlink_to(os.path.abspath(build))
    keys = set()
    for directory in (os.path.abspath(build), os.path.relpath(build), str(link)):
        monkeypatch.setenv("DOPPLER_BUILD_DIR", directory)
        keys.add(host.machine_key())
    assert len(keys) == 1


def test_host_needs_the_cpu_backend_and_a_device():
    with pytest.raises(ValueError, match="CPU"):
        host.resolve_system("host", 2, backend="cuda")
    with pytest.raises(ValueError, match="at least 1"):
        host.host_system(0)


def test_calibration_without_grids_is_cached_apart(cache, monkeypatch):
    # The suite's setting (conftest): no GEMM-shape grids, a file of its own.
    monkeypatch.setenv("DOPPLER_CALIBRATE_GRIDS", "0")
    path = host.host_system(1)
    assert path.endswith("-1-nogrids.json")
    with open(path) as f:
        description = json.load(f)
    kinds = description["devices"][0]["kernels"]
    assert "conv" in kinds and "contraction" in kinds
    assert all("grid" not in kinds[kind] for kind in kinds), kinds
