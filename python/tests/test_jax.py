"""xmem.report(compiled) and xmem.fits(compiled) against `xmem report` on the
XLA dump of the same compilation (XLA_FLAGS="--xla_dump_to=DIR
--xla_dump_hlo_as_proto"), for small programs compiled with JAX on the CPU;
the dump's own numbers equal XProf's (tests/it/memory_viewer_parity.rs).

Needs jax: CI installs the versions pinned in python/requirements-jax*.txt.
    XMEM_BIN=target/debug/xmem python -m pytest python/tests/test_jax.py
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

jax = pytest.importorskip("jax")

import xmem  # noqa: E402
from xmem import _jax  # noqa: E402

HERE = Path(__file__).resolve().parent
RUST_BIN = os.environ.get("XMEM_BIN") or shutil.which("xmem")
PROGRAMS = ["mlp_step", "nested", "scanned"]

# What a memory space without the heap-simulator trace still has exactly
# when XLA records its peak buffers (jaxlib 0.10 on).
AT_THE_PEAK = [
    "color",
    "name",
    "peak_bytes",
    "peak_unpadded_bytes",
    "indefinite_bytes",
    "total_allocation_bytes",
    "entry_parameters_bytes",
    "maybe_live_out_bytes",
    "breakdown",
    "at_peak_groups",
]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """The programs of jax_programs.py, compiled with XLA's dump on, and the dump."""
    out, dump = tmp_path_factory.mktemp("programs"), tmp_path_factory.mktemp("dump")
    env = {**os.environ, "XLA_FLAGS": f"--xla_dump_to={dump} --xla_dump_hlo_as_proto", "JAX_PLATFORMS": "cpu"}
    subprocess.run([sys.executable, str(HERE / "jax_programs.py"), str(out)], env=env, check=True)
    return {p.stem: json.loads(p.read_text()) for p in out.glob("*.json")}, dump


def dump_report(dump, program_id):
    """`xmem report DIR --module ID` on the dump: the module of that compilation."""
    result = subprocess.run(
        [RUST_BIN, "report", str(dump), "--module", str(program_id), "--format", "json"], capture_output=True
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def with_dump(compiled, program):
    """What the program's process wrote of it, and `xmem report` of its module in the dump."""
    results, dump = compiled
    result = results[program]
    return result, dump_report(dump, result["program_id"])


def without_inputs(report, ids=True):
    """A report less what names the input (and, for another compilation, its ids)."""
    report = json.loads(json.dumps(report))
    report.pop("inputs")
    report.pop("warnings")
    for module in report["modules"]:
        module.pop("input")
        if not ids:
            module.pop("program_id")
            module.pop("module_id")
    return report


def spaces(report):
    return [(space["color"], space["name"]) for m in report["modules"] for space in m["memory_spaces"]]


@pytest.mark.parametrize("program", PROGRAMS)
def test_names_and_ids_are_the_dumps(compiled, program):
    result, expected = with_dump(compiled, program)
    got = result["compiled"]
    identity = lambda r: [(m["name"], m["program_id"], m["module_id"]) for m in r["modules"]]  # noqa: E731
    assert identity(got) == identity(expected)
    assert got["modules"][0]["name"] == result["name"]
    # A jit calling another: XLA inlines the inner one, and so does the dump.
    assert len(got["modules"]) == 1


@pytest.mark.parametrize("program", PROGRAMS)
def test_compiled_numbers_are_the_dumps_in_every_memory_space(compiled, program):
    result, expected = with_dump(compiled, program)
    got = result["compiled"]
    assert spaces(got) == spaces(expected)
    statuses = {s["heap_simulation"] for m in got["modules"] for s in m["memory_spaces"]}
    if not statuses & {"missing", "xla-peak-buffers"}:
        # The buffer assignment holds its heap-simulator trace: every figure is the dump's.
        assert without_inputs(got) == without_inputs(expected)
        return
    assert any(f"jaxlib {result['jaxlib']}" in w for w in got["warnings"]), got["warnings"]
    pairs = zip(
        (s for m in got["modules"] for s in m["memory_spaces"]),
        (s for m in expected["modules"] for s in m["memory_spaces"]),
    )
    for space, dumped in pairs:
        if space["heap_simulation"] == "missing":
            # jaxlib 0.7 to 0.9: only the always-live buffers and the allocations are known.
            assert space["peak_bytes"] <= dumped["peak_bytes"] <= space["total_allocation_bytes"]
        elif space["heap_simulation"] == "xla-peak-buffers":
            # XLA's record of the buffers at the peak is XProf's, plus any buffer XLA placed in the
            # allocation outside the heap simulation (the dump's trace never names it).
            ours = {b["logical_buffer_id"]: b for b in space["at_peak"]}
            theirs = {b["logical_buffer_id"]: b for b in dumped["at_peak"]}
            simulated = {span["logical_buffer_id"] for span in dumped["lifetimes"]}
            extra = ours.keys() - theirs.keys()
            assert theirs.keys() <= ours.keys() and not extra & simulated
            assert all(ours[i] == theirs[i] for i in theirs)
            extra_bytes = sum(ours[i]["size_bytes"] for i in extra)
            assert space["peak_bytes"] == dumped["peak_bytes"] + extra_bytes
            if not extra:
                assert {k: space[k] for k in AT_THE_PEAK} == {k: dumped[k] for k in AT_THE_PEAK}
        else:
            assert space == dumped


@pytest.mark.parametrize("program", PROGRAMS)
def test_lowered_is_the_dump_of_its_compilation(compiled, program):
    result, expected = with_dump(compiled, program)
    got = result["lowered"]
    # A Lowered is compiled again where the jaxlib leaves the trace out, under another module id.
    assert without_inputs(got, ids=False) == without_inputs(expected, ids=False)
    statuses = {s["heap_simulation"] for m in got["modules"] for s in m["memory_spaces"]}
    assert not statuses & {"missing", "xla-peak-buffers"}


@pytest.mark.parametrize("program", PROGRAMS)
def test_fits_compares_each_peak_with_the_limit(compiled, program):
    result, expected = with_dump(compiled, program)
    peak = expected["modules"][0]["memory_spaces"][0]["peak_bytes"]
    below, at = result["fits_below_peak"], result["fits_at_peak"]
    check = below["checks"][0]
    assert (check["memory_space"], check["color"], check["limit_bytes"]) == ("hbm", 0, check["peak_bytes"] - 1)
    assert below["fits"] is False and check["over_bytes"] == 1
    assert "does NOT fit" in below["text"] and "1 B over the limit" in below["text"]
    assert below["html"].startswith('<div class="xmem-fit">') and "does NOT fit" in below["html"]
    if check["exact"]:
        # XLA's own peak (jaxlib 0.10 on, see above) may add buffers outside the heap simulation.
        assert check["peak_bytes"] >= peak
        assert at["fits"] is True and at["checks"][0]["over_bytes"] == 0
        assert "fits, 0 B to spare" in at["text"]
        # The largest buffer at the peak leads the list.
        largest = max(b["size_bytes"] for b in result["compiled"]["modules"][0]["memory_spaces"][0]["at_peak"])
        assert check["largest"][0]["size_bytes"] == largest
    else:
        # Only the always-live buffers are known: between them and the allocations it cannot tell.
        assert at["fits"] is None and "cannot tell" in at["text"]


def test_a_training_step_over_the_limit_gets_donation_and_remat_hints(compiled):
    results, _ = compiled
    check = results["mlp_step"]["fits_below_peak"]["checks"][0]
    if not check["exact"]:
        pytest.skip("this jaxlib leaves out what the hints need")
    hints = "\n".join(check["hints"])
    # The step returns new parameters shaped like the old ones, none donated; its activations are temporaries.
    assert "donate_argnums" in hints and "params[0]" in hints
    assert "jax.checkpoint" in hints and "jax_programs.py" in hints


def test_bare_protos_saved_from_python_are_read_by_the_command(tmp_path):
    """What the compiled program holds, saved as two files, is one input to `xmem report`."""
    lowered = jax.jit(lambda x, w: jax.numpy.tanh(x @ w) @ w.T).lower(jax.numpy.ones((64, 128)), jax.numpy.ones((128, 32)))
    name, protos, path = _jax.protos_of(lowered.compile())
    if path != "serialized_buffer_assignment_proto + hlo_modules()":
        pytest.skip(f"jaxlib {_jax.jaxlib_version()} gives one HloProto")
    (module, module_bytes), (assignment, assignment_bytes) = protos
    (tmp_path / "module.pb").write_bytes(module_bytes)
    (tmp_path / "assignment.pb").write_bytes(assignment_bytes)
    expected = without_inputs(xmem.report(lowered.compile()))
    for inputs in ([tmp_path / "module.pb", tmp_path / "assignment.pb"], [tmp_path]):
        result = subprocess.run([RUST_BIN, "report", *map(str, inputs), "--format", "json"], capture_output=True)
        assert result.returncode == 0, result.stderr
        assert without_inputs(json.loads(result.stdout)) == expected
    # The assignment alone says what it lacks.
    alone = subprocess.run([RUST_BIN, "report", str(tmp_path / "assignment.pb")], capture_output=True)
    assert alone.returncode == 2 and b"pass the HloModuleProto" in alone.stderr


def test_a_limit_is_bytes_a_size_or_one_per_memory_space():
    cpu = jax.devices("cpu")[0]
    assert _jax._limits("16GiB", None, cpu)[0] == {0: 16 << 30}
    assert _jax._limits(1000, None, cpu)[0] == {0: 1000}
    assert _jax._limits({"hbm": "1MiB", 5: 2048}, None, cpu)[0] == {"hbm": 1 << 20, 5: 2048}
    with pytest.raises(TypeError):
        _jax._limits(1.5, None, cpu)
    with pytest.raises(xmem.XmemError):
        _jax._limits("lots", None, cpu)
    # Without one, a CPU program may have the host's available memory.
    limit, source, _ = _jax.device_limit(cpu)
    assert limit > 0 and "MemAvailable" in source


def test_without_a_known_way_the_error_names_the_jaxlib_version():
    with pytest.raises(xmem.XmemError, match=f"jaxlib {_jax.jaxlib_version()}: .*XLA_FLAGS"):
        _jax.protos_of(object())
