# SPDX-License-Identifier: Apache-2.0
"""The `loomc` command an installed package puts on PATH (issue 16): pyproject's console script runs the
loomc executable carried in loom/bin/. It bundles the libloomrt tests' kernel IR for the host, and
`loomc --describe` reads the bundle back (checking its checksums)."""
import importlib.metadata
import os
import pathlib
import subprocess
import sys

import pytest

import loom
from loom import _loomc

KERNELS = pathlib.Path(__file__).resolve().parents[1] / "loomrt" / "kernels.loom"


def _installed() -> bool:
    try:
        importlib.metadata.distribution("loom-jit")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


@pytest.fixture(scope="module")
def loomc() -> str:
    if not _installed():
        pytest.skip("loom is not installed as a distribution here (a source tree): no console script")
    script = pathlib.Path(sys.executable).parent / "loomc"  # where pip put the console script
    assert script.is_file(), f"the loom-jit distribution has no `loomc` console script at {script}"
    return str(script)


def test_the_console_script_is_declared() -> None:
    if not _installed():
        pytest.skip("loom is not installed as a distribution here (a source tree)")
    eps = importlib.metadata.distribution("loom-jit").entry_points
    assert any(e.group == "console_scripts" and e.name == "loomc" and e.value == "loom._loomc:main" for e in eps)
    exe = _loomc.executable()
    assert os.access(exe, os.X_OK) and pathlib.Path(exe).parent.parent == pathlib.Path(loom.__file__).parent


def test_loomc_version_and_help(loomc: str) -> None:
    r = subprocess.run([loomc, "--version"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == f"loomc (loom {loom.__version__})", (r.stdout, r.stderr)
    r = subprocess.run([loomc, "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.startswith("usage: loomc")
    r = subprocess.run([loomc, "--no-such-option"], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "usage" in r.stderr  # a wrong command line says how to write it


def test_loomc_bundles_kernel_ir(loomc: str, tmp_path: pathlib.Path) -> None:
    out = tmp_path / "k.lbun"
    r = subprocess.run([loomc, str(KERNELS), "-o", str(out), "-t", "host", "-j", "1", "--no-progress", "-q"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert out.stat().st_size > 0
    r = subprocess.run([loomc, "--describe", str(out)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    names = [line.split()[1] for line in KERNELS.read_text().splitlines() if line.startswith("kernel ")]
    assert names and all(n in r.stdout for n in names), r.stdout
    out.write_bytes(out.read_bytes()[:-7])  # truncated: a clear error, no crash
    r = subprocess.run([loomc, "--describe", str(out)], capture_output=True, text=True, timeout=60)
    assert r.returncode not in (0, -11, -6) and r.stderr.strip()


def test_missing_executable_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(_loomc.os, "access", lambda path, mode: False)
    assert _loomc.main(["--version"]) == 127
    assert "no loomc executable" in capsys.readouterr().err
