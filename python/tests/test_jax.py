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
from types import SimpleNamespace

import pytest

jax = pytest.importorskip("jax")

import xmem  # noqa: E402
from xmem import _jax  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from jax_programs import PROGRAMS as FUNCTIONS  # noqa: E402
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


def without_stacks(report):
    """A report less the Python stacks of its buffers."""
    for module in report["modules"]:
        for space in module["memory_spaces"]:
            for buffer in space["at_peak"]:
                buffer.pop("stack", None)
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
    with pytest.raises(xmem.XmemError, match=f"jaxlib {_jax.jaxlib_version()} on .*: .*XLA_FLAGS"):
        _jax.protos_of(object())


# What compiled.memory_analysis() held for a small grad program on an NVIDIA H200 with jaxlib 0.11.2
# (CUDA 13 plugin): XLA's totals, an empty buffer assignment, no HloProto.
H200_TOTALS = {
    "argument_size_in_bytes": 20971520,
    "output_size_in_bytes": 4194304,
    "alias_size_in_bytes": 0,
    "temp_size_in_bytes": 67109136,
    "serialized_buffer_assignment_proto": b"",
    "serialized_hlo_proto": None,
}

#: CompiledMemoryStats' totals, which a GPU's compiled program keeps.
TOTALS = [
    f"{host}{kind}_size_in_bytes"
    for host in ("", "host_")
    for kind in ("argument", "output", "alias", "temp", "generated_code")
]

#: The in-process programs are compared with the CPU dump of jax_programs.py.
on_cpu = pytest.mark.skipif(jax.default_backend() != "cpu", reason="compares with a CPU compilation")


def act_like_a_gpu(monkeypatch):
    """From here on every compiled program's memory_analysis() is what jaxlib 0.11.2 gives on a GPU: the
    CPU's own totals, but the buffer assignment empty bytes, no HloProto and no peak (the compilation
    with XLA's dump on too, as on the GPU)."""
    real = jax.stages.Compiled.memory_analysis

    def memory_analysis(self):
        stats = real(self)
        return SimpleNamespace(
            **{field: getattr(stats, field) for field in TOTALS},
            peak_memory_in_bytes=0,
            serialized_buffer_assignment_proto=b"",
            serialized_hlo_proto=None,
        )

    monkeypatch.setattr(jax.stages.Compiled, "memory_analysis", memory_analysis)


@on_cpu
@pytest.mark.parametrize("seen_before", [False, True])
def test_a_lowered_without_buffer_assignment_is_read_from_its_dump(compiled, monkeypatch, seen_before):
    """On a GPU a Lowered is compiled with XLA's dump on, whether or not this process has seen the jaxlib
    lack the buffer assignment before; the report is the dump's."""
    result, expected = with_dump(compiled, "mlp_step")
    function, args = FUNCTIONS["mlp_step"]
    act_like_a_gpu(monkeypatch)
    monkeypatch.setattr(_jax, "_NEEDS_DUMP", {_jax.jaxlib_version()} if seen_before else set())
    lowered = jax.jit(function).lower(*args)
    got = xmem.report(lowered)
    # Compiled here, not in the programs' own process: the frames that called the program differ.
    assert without_stacks(without_inputs(got, ids=False)) == without_stacks(without_inputs(expected, ids=False))
    assert got["warnings"] == [
        f"jaxlib {_jax.jaxlib_version()} on cpu keeps no buffer assignment in compiled.memory_analysis(): this "
        "report is of the program compiled with XLA's dump on, read from a private temporary directory"
    ]
    peak = expected["modules"][0]["memory_spaces"][0]["peak_bytes"]
    fit = xmem.fits(lowered, limit=peak)
    assert fit.fits is True and fit.checks[0]["exact"] and fit.checks[0]["peak_bytes"] == peak


@on_cpu
def test_a_compiled_without_buffer_assignment_fits_by_xlas_totals(compiled, monkeypatch):
    """A Compiled that holds only XLA's totals: the peak is at least its arguments and outputs and at most
    those with all its temporaries and code; the verdict is told where those bounds decide it."""
    _, expected = with_dump(compiled, "mlp_step")
    function, args = FUNCTIONS["mlp_step"]
    program = jax.jit(function).lower(*args).compile()
    stats = program.memory_analysis()
    # The program's own module names the verdict: the report of the same object, read before the GPU act.
    module = xmem.report(program)["modules"][0]
    act_like_a_gpu(monkeypatch)
    said = "on cpu: this compiled program holds no buffer assignment .*: serialized_buffer_assignment_proto empty, "
    with pytest.raises(xmem.XmemError, match=said + "serialized_hlo_proto missing.*pass the Lowered"):
        xmem.report(program)
    lower = stats.argument_size_in_bytes + stats.output_size_in_bytes - stats.alias_size_in_bytes
    upper = lower + stats.temp_size_in_bytes + stats.generated_code_size_in_bytes
    # The bounds hold the dump's peak, and the totals are the dump's always-live buffers.
    dumped = expected["modules"][0]["memory_spaces"][0]
    assert lower == dumped["breakdown"]["parameters"] + dumped["breakdown"]["outputs"]
    assert lower <= dumped["peak_bytes"] <= upper
    verdicts = {limit: xmem.fits(program, limit=limit) for limit in (lower - 1, upper - 1, upper)}
    for limit, fit in verdicts.items():
        (check,) = fit.checks
        assert fit.report is None and not check["exact"]
        assert (check["module"], check["program_id"]) == (module["name"], module["program_id"])
        assert (check["memory_space"], check["peak_bytes"], check["upper_bound_bytes"]) == ("hbm", lower, upper)
        text = str(fit)
        assert "pass the Lowered" in text and "XLA's totals (compiled.memory_analysis())" in text
    below, between, at = verdicts.values()
    assert below.fits is False and "peak at least (arguments and outputs)" in str(below) and "1 B over" in str(below)
    assert between.fits is None and "cannot tell" in str(between)
    assert at.fits is True and "fits, 0 B to spare" in str(at)
    assert f"{module['name']}({module['program_id']}) hbm" in str(at)


def test_a_stand_in_with_the_h200s_totals():
    """The totals one H200 gave, in an object that is nothing but them: no module, no jax."""

    class Compiled:
        def memory_analysis(self):
            return SimpleNamespace(**H200_TOTALS)

    lower, upper = 20971520 + 4194304, 20971520 + 4194304 + 67109136
    fit = _jax.fits(Compiled(), limit="64MiB")
    (check,) = fit.checks
    assert (check["module"], check["program_id"], check["peak_bytes"], check["upper_bound_bytes"]) == (
        "compiled program", None, lower, upper
    )
    assert fit.fits is None and "compiled program hbm: cannot tell: the peak is between 24.0 MiB" in str(fit)
    assert _jax.fits(Compiled(), limit=upper).fits is True
    assert _jax.fits(Compiled(), limit=lower - 1).fits is False
    # Empty bytes are no proto: the error says what the object held.
    with pytest.raises(xmem.XmemError, match="serialized_buffer_assignment_proto empty, serialized_hlo_proto missing"):
        _jax.protos_of(Compiled())


def test_xla_peak_and_host_totals_count_where_given():
    """XLA's own peak raises the lower bound where it is larger; host memory is a space of its own."""

    class Compiled:
        def memory_analysis(self):
            return SimpleNamespace(
                **H200_TOTALS,
                peak_memory_in_bytes=50 << 20,
                generated_code_size_in_bytes=1 << 20,
                host_argument_size_in_bytes=8 << 20,
                host_temp_size_in_bytes=2 << 20,
            )

    fit = _jax.fits(Compiled(), limit={"hbm": "200MiB", "host": "9MiB"})
    hbm, host = fit.checks
    assert (hbm["peak_bytes"], hbm["upper_bound_bytes"], hbm["fits"]) == (50 << 20, 92274960 + (1 << 20), True)
    assert hbm["bounds"]["lower"] == "XLA's peak_memory_in_bytes"
    assert (host["memory_space"], host["color"]) == ("host", 5)
    assert (host["peak_bytes"], host["upper_bound_bytes"]) == (8 << 20, 10 << 20)
    assert host["fits"] is None and fit.fits is None


def test_the_dump_files_read_are_the_optimized_modules(tmp_path):
    """What XLA's dump of one compilation holds, on CPU and on GPU (names from real dumps): only the
    optimized HloProtos, which carry the buffer assignment."""
    names = [
        "module_33734.jit_loss.sm_9.0a_gpu_after_optimizations.hlo.pb",
        "module_33734.jit_loss.sm_9.0a_gpu_after_optimizations-memory-usage-report.pb",
        "module_33734.jit_loss.before_optimizations.hlo.pb",
        "module_33734.jit_loss.after_spmd_partitioner.hlo.pb",
        "module_33734.jit_loss.thunk_metadata.pb",
        "module_0004.jit__lambda.cpu_after_optimizations.hlo.pb",
        "module_0004.jit__lambda.cpu_after_optimizations-memory-usage-report.pb",
        "module_0004.jit__lambda.debug_options",
    ]
    for name in names:
        (tmp_path / name).write_bytes(b"")
    assert [p.name for p in _jax.dumped_modules(tmp_path)] == [names[5], names[0]]
