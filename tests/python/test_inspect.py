# SPDX-License-Identifier: Apache-2.0
"""loom.inspect's AMD code objects and compile times (issue 17), checked against what they must be
independently of Loom: the ELF header of an AMD code object (e_machine EM_AMDGPU, the chip's
EF_AMDGPU_MACH number from LLVM's ELF.h), the assembly's target line, the wave size of the chip family,
and timings that are positive numbers adding up to their total."""
import os
import re
import struct

import numpy as np
import pytest

import loom

EM_AMDGPU = 224
EF_AMDGPU_MACH = {"gfx90a": 0x3F, "gfx942": 0x4C, "gfx1100": 0x41}  # llvm/BinaryFormat/ELF.h
PASSES = ("fold", "onehot", "push_views", "fuse", "lower", "complex_parts", "collapse")  # passes/pipeline.c


def expr():
    x = loom.asarray(np.linspace(0, 1, 1000, dtype=np.float32))
    return loom.exp(-x * x) * 2 + (x + 1).sum()  # a reduction phase, then a map phase using it


def kernel_names(kernels_ir):
    return re.findall(r"^kernel (\w+)", kernels_ir, re.M)


def amdgpu_or_skip(y, **kw):
    text = loom.inspect(y, what="amdgpu", **kw)["amdgpu"]
    if text.startswith("unavailable"):
        pytest.skip(text)
    return text


@pytest.mark.parametrize("chip", [None, "gfx90a", "gfx1100"])
def test_amdgpu_assembly_for_the_chip(chip, tmp_path, monkeypatch):
    monkeypatch.setenv("LOOM_DUMP_AMDGPU_DIR", str(tmp_path))  # keeps each code object (read at the call)
    y = expr()
    names = kernel_names(loom.inspect(y, what="kernels")["kernels"])
    assert len(names) >= 1, names
    text = amdgpu_or_skip(y, amdgpu_chip=chip)
    want = chip or os.environ.get("LOOM_DUMP_AMDGPU_CHIP") or "gfx942"
    assert re.findall(r"^; kernel (\w+) \((\w+),", text, re.M) == [(n, want) for n in names]
    assert f'.amdgcn_target "amdgcn-amd-amdhsa--{want}' in text
    assert text.count(".amdhsa_kernel ") >= len(names) and "s_endpgm" in text
    wave32 = re.findall(r"\.amdhsa_wavefront_size32 (\d)", text)
    assert set(wave32) <= {"1" if want.startswith("gfx1") else "0"}  # RDNA runs 32-wide waves, CDNA 64
    objects = sorted(tmp_path.glob(f"*.{want}.co"))
    assert len(objects) == len(names), list(tmp_path.iterdir())
    for co in objects:
        head = co.read_bytes()[:64]
        assert head[:4] == b"\x7fELF" and head[4] == 2  # 64-bit ELF
        e_machine, = struct.unpack_from("<H", head, 18)
        e_flags, = struct.unpack_from("<I", head, 48)
        assert e_machine == EM_AMDGPU and e_flags & 0xFF == EF_AMDGPU_MACH[want], (co.name, e_machine, hex(e_flags))
    assert y._lazy  # nothing ran
    np.testing.assert_allclose(loom.asnumpy(y), np.exp(-np.linspace(0, 1, 1000) ** 2) * 2 +
                               (np.linspace(0, 1, 1000) + 1).sum(), rtol=1e-5)


def test_ptx_for_the_arch():
    text = loom.inspect(expr(), what="ptx", ptx_arch="sm_80")["ptx"]
    if text.startswith("unavailable"):
        pytest.skip(text)
    n = len(kernel_names(loom.inspect(expr(), what="kernels")["kernels"]))
    assert text.count("// kernel ") == n and text.count("(sm_80)") == n
    assert re.findall(r"^\.target (\w+)", text, re.M) == ["sm_80"] * n


def test_compile_times_are_positive_and_add_up():
    y = expr()
    names = kernel_names(loom.inspect(y, what="kernels")["kernels"])
    text = loom.inspect(y, what="time", ptx_arch="sm_80", amdgpu_chip="gfx90a")["time"]
    passes = dict(re.findall(r"^# time (\w+) ([\d.]+) ms$", text, re.M))
    assert set(passes) == set(PASSES) and all(float(v) >= 0 for v in passes.values()), text
    assert sum(float(v) for v in passes.values()) > 0
    host = dict(re.findall(r"^# time kernel (\w+) host ([\d.]+) ms$", text, re.M))
    assert sorted(host) == sorted(names) and all(float(v) > 0 for v in host.values()), text
    for arch, phases in (("sm_80", 4), ("gfx90a", 4)):
        lines = re.findall(rf"^# time kernel (\w+) {arch} ([\d.]+) ms \((.*)\)$", text, re.M)
        if not lines:  # this build has no such target, or no math library for it: the text says why
            assert "unavailable" in text or arch not in text, text
            continue
        assert sorted(n for n, _, _ in lines) == sorted(names)
        for _, total, parts in lines:
            nums = [float(v) for v in re.findall(r"[\d.]+", parts)]
            assert len(nums) == phases and float(total) > 0
            assert abs(sum(nums) - float(total)) <= 0.002 * phases, (total, parts)  # each rounded to 0.001


def test_a_library_call_has_no_compile_time():
    a = loom.asarray(np.eye(4, dtype=np.float32))
    text = loom.inspect(a @ a, what="time")["time"]
    assert re.search(r"^# time kernel \w+ is a library call", text, re.M), text


def test_bad_architectures_say_what_to_pass():
    y = expr()
    for what in ("ptx", "time"):
        with pytest.raises(ValueError, match=r"sm_<major><minor>"):
            loom.inspect(y, what=what, ptx_arch="80")
        with pytest.raises(ValueError, match=r"unknown chip 'gfx999' \(Loom knows .*gfx942"):
            loom.inspect(y, what="amdgpu" if what == "ptx" else what, amdgpu_chip="gfx999")
    with pytest.raises(TypeError, match="ptx_arch must be a str"):
        loom.inspect(y, ptx_arch=80)
    assert y._lazy
