"""Tool discovery: $DOPPLER_BUILD_DIR/bin, then <repo>/build/bin, then PATH."""

import os
import stat

import pytest

import doppler
from doppler import tools


def make_tool(directory, name="doppler-opt"):
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\necho fake\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def places(tmp_path, monkeypatch):
    """Three candidate places, none holding the tool yet."""
    env_build = tmp_path / "envbuild"
    repo = tmp_path / "repo"
    path_dir = tmp_path / "onpath"
    (repo / "python" / "doppler").mkdir(parents=True)
    (repo / "python" / "doppler" / "tools.py").write_text("# marker\n")
    path_dir.mkdir()
    monkeypatch.setattr(tools, "_REPO_ROOT", str(repo))
    monkeypatch.setenv("DOPPLER_BUILD_DIR", str(env_build))
    monkeypatch.setenv("PATH", str(path_dir))
    return env_build, repo, path_dir


def test_order_env_then_repo_then_path(places):
    env_build, repo, path_dir = places
    on_path = make_tool(str(path_dir))
    assert doppler.find_tool("doppler-opt") == on_path
    in_repo = make_tool(str(repo / "build" / "bin"))
    assert doppler.find_tool("doppler-opt") == in_repo
    in_env = make_tool(str(env_build / "bin"))
    assert doppler.find_tool("doppler-opt") == in_env


def test_not_executable_is_skipped(places):
    env_build, repo, path_dir = places
    (env_build / "bin").mkdir(parents=True)
    (env_build / "bin" / "doppler-opt").write_text("not executable")
    in_repo = make_tool(str(repo / "build" / "bin"))
    assert doppler.find_tool("doppler-opt") == in_repo


def test_not_found_names_every_place(places, monkeypatch):
    env_build, repo, path_dir = places
    with pytest.raises(doppler.ToolNotFoundError) as info:
        doppler.find_tool("doppler-opt")
    message = str(info.value)
    assert "doppler-opt" in message
    assert str(env_build / "bin" / "doppler-opt") in message
    assert str(repo / "build" / "bin" / "doppler-opt") in message
    assert "PATH" in message and "DOPPLER_BUILD_DIR" in message


def test_no_env_no_repo(places, monkeypatch, tmp_path):
    env_build, repo, path_dir = places
    monkeypatch.delenv("DOPPLER_BUILD_DIR")
    monkeypatch.setattr(tools, "_REPO_ROOT", str(tmp_path / "installed"))  # not a checkout
    assert tools.search_dirs() == []
    on_path = make_tool(str(path_dir))
    assert doppler.find_tool("doppler-opt") == on_path


def test_tool_failure_is_a_clear_error(places):
    env_build, repo, path_dir = places
    path = make_tool(str(env_build / "bin"), "doppler-run")
    with open(path, "w") as f:
        f.write("#!/bin/sh\necho 'doppler-run: error: broken' >&2\nexit 1\n")
    with pytest.raises(doppler.ToolError) as info:
        tools.run_tool("doppler-run", ["x.mlir"])
    assert "doppler-run: error: broken" in str(info.value)
    assert "exit status 1" in str(info.value)
