"""``xmem.report`` and ``xmem.fits`` of a compiled JAX program, in process,
before it runs: the optimized HLO module and its buffer assignment are read
from the ``jax.stages.Compiled`` object (a ``jax.stages.Lowered`` is compiled
first) and analysed by the same code as ``xmem report`` on the program's XLA
dump.

Where each jaxlib keeps them (checked on CPU; ``README.md`` has the table):

- ``compiled.memory_analysis().serialized_buffer_assignment_proto`` with
  ``compiled.runtime_executable().hlo_modules()[i].as_serialized_hlo_module_proto()``
  (jaxlib 0.6 on); the private ``compiled._executable.xla_executable`` when
  ``runtime_executable`` is missing.
- ``compiled.memory_analysis().serialized_hlo_proto``, the module and its
  buffer assignment in one HloProto (jaxlib 0.5 and before).

From jaxlib 0.7 on, XLA's CPU backend leaves the heap-simulator trace out of
that buffer assignment: 0.10 on keeps the buffers live at the peak
(``peak_buffers``), so the peak and the buffers at it are still exact, but
not the timeline; 0.7 to 0.9 keep nothing of the kind. On GPU (jaxlib 0.11,
CUDA) the buffer assignment is empty bytes and only XLA's totals remain
(``CompiledMemoryStats``). Given a ``Lowered``, xmem then compiles it once
more with XLA's dump switched on for that one compilation, into a private
temporary directory it removes, and reads the dump, whose numbers are the
dump's by construction. Given a ``Compiled`` without a buffer assignment,
``fits`` bounds the peak by those totals.
"""

from __future__ import annotations

import html
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Mapping, Optional, Union

from . import _native
from ._native import XmemError

Size = Union[int, str]
Limit = Union[Size, Mapping[Union[str, int], Size]]

#: The protos' names in error messages, as the calls that gave them.
_ASSIGNMENT = "compiled.memory_analysis().serialized_buffer_assignment_proto"
_HLO_PROTO = "compiled.memory_analysis().serialized_hlo_proto"

#: Memory-space statuses whose report is not the dump's: the trace is missing.
_TRACELESS = ("missing", "xla-peak-buffers")

#: How many buffers and source lines a verdict shows.
_TOP = 5


def is_stage(value: Any) -> bool:
    """Whether ``value`` is a ``jax.stages.Lowered`` or ``Compiled``, told
    without importing jax."""
    return any(
        cls.__module__.startswith("jax") and cls.__name__ in ("Lowered", "Compiled") for cls in type(value).__mro__
    )


def _is_lowered(stage: Any) -> bool:
    return any(cls.__name__ == "Lowered" for cls in type(stage).__mro__)


def jaxlib_version() -> str:
    try:
        import jaxlib

        return str(jaxlib.__version__)
    except (ImportError, AttributeError):
        from jax._src.lib import version_str

        return str(version_str)


def _executable(compiled: Any) -> Any:
    """The XLA executable: public where jax has ``runtime_executable``."""
    runtime_executable = getattr(compiled, "runtime_executable", None)
    executable = runtime_executable() if runtime_executable is not None else None
    if executable is None:
        executable = getattr(getattr(compiled, "_executable", None), "xla_executable", None)
    return executable


def _memory_stats(compiled: Any, executable: Any) -> Any:
    """``memory_analysis()``, or the executable's own stats where it fails."""
    stats = None
    try:
        stats = compiled.memory_analysis()
    except Exception:  # noqa: BLE001 - some backends raise NotImplementedError, others XlaRuntimeError
        stats = None
    if isinstance(stats, (list, tuple)):
        stats = stats[0] if stats else None
    if stats is None and executable is not None and hasattr(executable, "get_compiled_memory_stats"):
        stats = executable.get_compiled_memory_stats()
    return stats


def _proto(stats: Any, field: str) -> Optional[bytes]:
    """A serialized proto ``memory_analysis()`` holds, or ``None`` where it is
    missing or empty (jaxlib 0.11 on GPU gives ``b''`` for the assignment)."""
    value = getattr(stats, field, None)
    return bytes(value) if value else None


def _modules(executable: Any) -> list[Any]:
    """The executable's optimized HLO modules; none where it has no ``hlo_modules()``."""
    try:
        return list(executable.hlo_modules())
    except Exception:  # noqa: BLE001 - no executable, or one without modules
        return []


def _module_protos(modules: list[Any]) -> list[tuple[str, bytes]]:
    return [
        (f"compiled.runtime_executable().hlo_modules()[{i}]", bytes(m.as_serialized_hlo_module_proto()))
        for i, m in enumerate(modules)
    ]


def _platform(compiled: Any) -> str:
    """``cpu``, ``gpu``, ``tpu``: the platform of the program's first device, where it says."""
    executable = _executable(compiled)
    try:
        return str(list(executable.local_devices())[0].platform)
    except Exception:  # noqa: BLE001 - no executable, or one without devices
        return "an unknown platform"


class NoBufferAssignment(XmemError):
    """The compiled program holds no buffer assignment xmem can read;
    ``compiled`` is that program (its ``memory_analysis()`` may still hold
    XLA's totals)."""

    def __init__(self, message: str, compiled: Any) -> None:
        super().__init__(message)
        self.compiled = compiled


def protos_of(compiled: Any) -> tuple[str, list[tuple[str, bytes]], str]:
    """The program's name, its protos (each named by the call that gave it)
    and which way they were found; a :class:`NoBufferAssignment` naming the
    jaxlib version when this jaxlib offers none of the known ways."""
    executable = _executable(compiled)
    stats = _memory_stats(compiled, executable)
    modules = _modules(executable)
    name = str(modules[0].name) if modules else "compiled program"
    assignment = _proto(stats, "serialized_buffer_assignment_proto")
    if assignment and modules:
        way = "serialized_buffer_assignment_proto + hlo_modules()"
        return name, [*_module_protos(modules), (_ASSIGNMENT, assignment)], way
    hlo_proto = _proto(stats, "serialized_hlo_proto")
    if hlo_proto:
        return name, [(_HLO_PROTO, hlo_proto)], "serialized_hlo_proto"
    held = ", ".join(
        f"{field} {'missing' if getattr(stats, field, None) is None else 'empty'}"
        for field in ("serialized_buffer_assignment_proto", "serialized_hlo_proto")
    )
    raise NoBufferAssignment(
        f"jaxlib {jaxlib_version()} on {_platform(compiled)}: this compiled program holds no buffer assignment xmem "
        f"knows how to read (memory_analysis() gave {type(stats).__name__}: {held}"
        f"{'' if modules else '; and the executable no hlo_modules()'}); pass the Lowered (jax.jit(f).lower(...), "
        "without .compile()), which xmem compiles with XLA's dump on, or dump the program with "
        'XLA_FLAGS="--xla_dump_to=DIR --xla_dump_hlo_as_proto" and pass DIR to xmem.report',
        compiled,
    )


#: The jaxlib versions seen leaving the heap-simulator trace or the whole
#: buffer assignment out in this process: a Lowered is then compiled with the
#: dump at once, not compiled twice.
_NEEDS_DUMP: set[str] = set()


def dumped_modules(directory: Path) -> list[Path]:
    """The optimized HloProtos in an XLA dump of one compilation:
    ``module_ID.NAME.cpu_after_optimizations.hlo.pb`` on CPU (older jaxlibs:
    ``after_optimizations.hlo.pb``),
    ``module_ID.NAME.sm_9.0a_gpu_after_optimizations.hlo.pb`` on GPU; not the
    ``before_optimizations`` or per-pass protos (no buffer assignment) nor the
    ``-memory-usage-report.pb``."""
    return sorted(Path(directory).glob("*after_optimizations.hlo.pb"))


def _compile_with_dump(lowered: Any) -> tuple[Any, list[tuple[str, bytes]]]:
    """Compiles ``lowered`` with XLA's dump on for that compilation only, into
    a private temporary directory that is removed; returns the compiled
    program and the optimized HloProtos the dump held (none when JAX's
    compilation cache served the compilation, which then writes no dump)."""
    with tempfile.TemporaryDirectory(prefix="xmem-dump-") as directory:
        compiled = lowered.compile(compiler_options={"xla_dump_to": directory, "xla_dump_hlo_as_proto": True})
        return compiled, [(f"XLA dump: {f.name}", f.read_bytes()) for f in dumped_modules(Path(directory))]


def _dumped_note(compiled: Any) -> str:
    """Why a report is of the program's dump: what the compiled object lacks."""
    version = jaxlib_version()
    stats = _memory_stats(compiled, _executable(compiled))
    lacks = (
        f"leaves the heap-simulator trace out of {_ASSIGNMENT}"
        if _proto(stats, "serialized_buffer_assignment_proto") or _proto(stats, "serialized_hlo_proto")
        else f"on {_platform(compiled)} keeps no buffer assignment in compiled.memory_analysis()"
    )
    return (
        f"jaxlib {version} {lacks}: this report is of the program compiled with XLA's dump on, read from a "
        "private temporary directory"
    )


def _traceless(report: Mapping[str, Any]) -> list[str]:
    """The statuses of the memory spaces whose heap-simulator trace is missing."""
    return [
        space["heap_simulation"]
        for module in report.get("modules", [])
        for space in module.get("memory_spaces", [])
        if space.get("heap_simulation") in _TRACELESS
    ]


def report_output(stage: Any, flags: list[str]) -> tuple[_native.Output, Any]:
    """``xmem report`` of a ``Lowered`` or ``Compiled`` program, with the
    command's ``flags``, and the compiled program it read; a
    :class:`NoBufferAssignment` where the program holds none and no dump
    could stand in (a ``Compiled``, or a ``Lowered`` whose compilation JAX's
    cache served)."""
    version = jaxlib_version()
    lowered = stage if _is_lowered(stage) else None
    kind = "Lowered" if lowered is not None else "Compiled"

    def build(compiled: Any, protos: list[tuple[str, bytes]], warnings: list[str]) -> _native.Output:
        modules = _modules(_executable(compiled))
        name = str(modules[0].name) if modules else "compiled program"
        return _native.report_protos([*flags, "--", f"{name} (jax.stages.{kind})"], protos, warnings)

    dumped: Optional[list[tuple[str, bytes]]] = None
    if lowered is not None and version in _NEEDS_DUMP:
        compiled, dumped = _compile_with_dump(lowered)
        if dumped:
            return build(compiled, dumped, [_dumped_note(compiled)]), compiled
    else:
        compiled = lowered.compile() if lowered is not None else stage
    try:
        _, protos, _ = protos_of(compiled)
    except NoBufferAssignment as missing:
        _NEEDS_DUMP.add(version)
        if lowered is None:
            raise
        if dumped is None:
            compiled, dumped = _compile_with_dump(lowered)
        if dumped:
            return build(compiled, dumped, [_dumped_note(compiled)]), compiled
        raise NoBufferAssignment(
            f"{missing}; the compilation that would have dumped it was served from JAX's compilation cache", compiled
        ) from None
    output = build(compiled, protos, [])
    missing_trace = _traceless(output.value())
    if not missing_trace:
        return output, compiled
    _NEEDS_DUMP.add(version)
    if lowered is not None:
        recompiled, dumped = (compiled, []) if dumped is not None else _compile_with_dump(lowered)
        if dumped:
            return build(recompiled, dumped, [_dumped_note(recompiled)]), recompiled
        return build(
            compiled,
            protos,
            [
                f"jaxlib {version} leaves the heap-simulator trace out of {_ASSIGNMENT}, and the compilation "
                "that would have dumped it was served from JAX's compilation cache"
            ],
        ), compiled
    what = (
        "the peak and the buffers at it are XLA's own record, without a timeline"
        if "missing" not in missing_trace
        else "the peak counts only parameters, outputs and constants"
    )
    return build(
        compiled,
        protos,
        [
            f"jaxlib {version} leaves the heap-simulator trace out of {_ASSIGNMENT}: {what}; pass the Lowered "
            "(jax.jit(f).lower(...), without .compile()) for the full report"
        ],
    ), compiled


def _size(value: Size) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(f"a size is bytes (int) or a string such as '16GiB', not {value!r}")
    return int(value) if isinstance(value, int) else _native.parse_size(value)


def _bytes(value: int) -> str:
    return _native.human_bytes(value) if value >= 0 else "-" + _native.human_bytes(-value)


_ENVIRONMENT = ("XLA_PYTHON_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_PYTHON_CLIENT_ALLOCATOR")


def _memory_available() -> Optional[int]:
    """The host's ``MemAvailable``: what a CPU program can have."""
    try:
        text = Path("/proc/meminfo").read_text()
    except OSError:
        return None
    found = re.search(r"^MemAvailable:\s+(\d+) kB", text, re.MULTILINE)
    return int(found.group(1)) * 1024 if found else None


def device_limit(device: Any) -> tuple[int, str, Optional[int]]:
    """The memory JAX will let a program of ``device`` use, where it comes
    from, and the bytes already in use there when the device says: its
    ``memory_stats()["bytes_limit"]`` (which the memory fraction and
    allocator settings shape), else for a CPU the host's available memory."""
    settings = ", ".join(f"{k}={os.environ[k]}" for k in _ENVIRONMENT if k in os.environ)
    settings = f"; {settings}" if settings else ""
    try:
        stats = device.memory_stats()
    except Exception:  # noqa: BLE001 - a backend without memory stats raises
        stats = None
    if stats and stats.get("bytes_limit"):
        return int(stats["bytes_limit"]), f"{device} memory_stats()['bytes_limit']{settings}", stats.get("bytes_in_use")
    if getattr(device, "platform", "") == "cpu":
        available = _memory_available()
        if available:
            return available, f"{device}: the host's available memory (MemAvailable){settings}", None
    raise XmemError(
        f"{device} reports no memory limit (memory_stats() has no bytes_limit{settings}): "
        "pass limit=, e.g. xmem.fits(compiled, limit='16GiB')"
    )


def _device_of(compiled: Any, device: Any) -> Any:
    if device is not None:
        return device
    executable = _executable(compiled)
    devices = list(executable.local_devices()) if executable is not None and hasattr(executable, "local_devices") else []
    if devices:
        return devices[0]
    import jax

    return jax.devices()[0]


def _limits(limit: Optional[Limit], compiled: Any, device: Any) -> tuple[dict[Union[str, int], int], str, Optional[int]]:
    """Limits by memory space: a size is the device memory's (colour 0), a
    mapping names each space by name or colour."""
    if isinstance(limit, Mapping):
        return {k: _size(v) for k, v in limit.items()}, "as given", None
    if limit is not None:
        return {0: _size(limit)}, "as given", None
    size, source, in_use = device_limit(_device_of(compiled, device))
    return {0: size}, source, in_use


def _limit_of(space: Mapping[str, Any], limits: Mapping[Union[str, int], int]) -> Optional[int]:
    for key in (space["name"], space["color"]):
        if key in limits:
            return limits[key]
    return None


def _largest(space: Mapping[str, Any], top: int = _TOP) -> list[Mapping[str, Any]]:
    return sorted(space.get("at_peak", []), key=lambda b: -b["size_bytes"])[:top]


def _temporaries_by_source(space: Mapping[str, Any]) -> list[tuple[str, int]]:
    by_source: dict[str, int] = {}
    for buffer in space.get("at_peak", []):
        if buffer["category"] == "temporary":
            key = buffer.get("source") or buffer.get("op_name") or buffer["instruction"]
            by_source[key] = by_source.get(key, 0) + buffer["size_bytes"]
    return sorted(by_source.items(), key=lambda kv: -kv[1])


class Check(dict):
    """One memory space of one module against its limit. Keys: ``module``,
    ``program_id`` (``None`` where the module is unknown), ``memory_space``,
    ``color``, ``peak_bytes``, ``limit_bytes``, ``over_bytes`` (peak minus
    limit: negative is headroom), ``fits`` (``None`` when the bounds cannot
    tell), ``exact`` (``False`` where only bounds of the peak are known: then
    ``peak_bytes`` is the lower bound and ``upper_bound_bytes`` the upper,
    ``None`` where unknown), ``bounds`` (what the two bounds count, where not
    exact), ``largest`` and ``by_source`` (the buffers and source lines at the
    peak, where known), ``figures`` (XLA's totals, where they are all there is)
    and ``hints`` (what would lower the peak, where it does not fit)."""


#: What bounds the peak of a memory space whose heap-simulator trace is
#: missing (jaxlib 0.7 to 0.9 on CPU).
_TRACELESS_BOUNDS = {"lower": "parameters, outputs and constants", "upper": "all its allocations"}

#: CompiledMemoryStats' fields by memory space: device memory (colour 0) and
#: host memory (colour 5, the ``host_`` fields).
_STATS_SPACES = (("hbm", 0, ""), ("host", 5, "host_"))


def _verdict(lower: int, upper: Optional[int], limit: int) -> Optional[bool]:
    """Fits where the upper bound of the peak does; does not where the lower
    bound is over; else cannot tell (an exact peak is both bounds)."""
    if upper is not None and upper <= limit:
        return True
    return False if lower > limit else None


def _stats_spaces(compiled: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The module of a compiled program that holds no buffer assignment, and
    bounds of each memory space's peak from XLA's totals
    (``memory_analysis()``, a CompiledMemoryStats): at least the arguments and
    outputs (an output aliased to an argument counted once), or XLA's own
    ``peak_memory_in_bytes`` where it gives one and it is larger; at most those
    with all the temporaries and the generated code and constants. No memory
    space where there are no totals."""
    executable = _executable(compiled)
    stats = _memory_stats(compiled, executable)
    modules = _modules(executable)
    ids = _native.module_ids(_module_protos(modules[:1])) if modules else []
    name, program_id = ids[0] if ids else ("compiled program", None)
    module: dict[str, Any] = {"name": name, "program_id": program_id}
    if stats is None:
        return module, []

    def total(field: str) -> int:
        value = getattr(stats, field, None)
        return int(value) if value is not None else 0

    spaces = []
    for space, color, prefix in _STATS_SPACES:
        arguments, outputs, aliased, temporaries, code = (
            total(f"{prefix}{kind}_size_in_bytes") for kind in ("argument", "output", "alias", "temp", "generated_code")
        )
        if color != 0 and not (arguments or outputs or temporaries):
            continue
        always_live = arguments + outputs - aliased
        xla_peak = total("peak_memory_in_bytes") if color == 0 else 0
        lower = max(always_live, xla_peak)
        upper = None if code < 0 else max(lower, always_live + temporaries + code)
        figures = [
            f"{_bytes(arguments):>10}  arguments",
            f"{_bytes(outputs):>10}  outputs",
            f"{_bytes(aliased):>10}  outputs aliased to arguments (donated), counted once",
            f"{_bytes(temporaries):>10}  temporaries, all of them (which are live at the peak is not known)",
            f"{_bytes(code) if code >= 0 else 'unknown':>10}  generated code and constants",
        ]
        if xla_peak > 0:
            figures.append(f"{_bytes(xla_peak):>10}  XLA's peak_memory_in_bytes")
        spaces.append(
            {
                "name": space,
                "color": color,
                "peak_bytes": lower,
                "upper_bound_bytes": upper,
                "bounds": {
                    "lower": "XLA's peak_memory_in_bytes" if xla_peak > always_live else "arguments and outputs",
                    "upper": "with all the temporaries, generated code and constants",
                },
                "figures": figures,
            }
        )
    return module, spaces


def _where(check: Mapping[str, Any]) -> str:
    program = check["module"] if check["program_id"] is None else f"{check['module']}({check['program_id']})"
    return f"{program} {check['memory_space']}"


class Fit:
    """Whether a compiled program fits: ``xmem.fits(...)``.

    ``fits`` is ``True``, ``False``, or ``None`` when the bounds cannot tell
    (or no limit applies to any memory space); ``bool(fit)`` is ``fits is
    True``. ``checks`` holds one :class:`Check` per memory space with a limit,
    ``limit_source`` says where the limit came from, ``report`` is the
    program's :class:`xmem.Report` (``None`` where the compiled program holds
    no buffer assignment: then the checks bound the peak by XLA's totals),
    ``warnings`` says what the evidence lacks. ``str()`` is the verdict as
    text; a notebook shows it as HTML.
    """

    def __init__(
        self,
        report: Any,
        spaces: list[tuple[Mapping[str, Any], Mapping[str, Any]]],
        warnings: list[str],
        limits: Mapping[Union[str, int], int],
        source: str,
        in_use: Optional[int],
    ) -> None:
        self.report = report
        self.warnings = warnings
        self.limit_source = source
        self.bytes_in_use = in_use
        self.programs = list(dict.fromkeys(module["name"] for module, _ in spaces))
        self.checks: list[Check] = []
        self.unchecked: list[str] = []
        for module, space in spaces:
            self._check(module, space, limits)
        verdicts = [c["fits"] for c in self.checks]
        self.fits: Optional[bool] = (
            False if False in verdicts else None if (None in verdicts or not verdicts) else True
        )

    def _check(self, module: Mapping[str, Any], space: Mapping[str, Any], limits: Mapping[Union[str, int], int]) -> None:
        limit = _limit_of(space, limits)
        check = Check(module=module["name"], program_id=module["program_id"], memory_space=space["name"])
        if limit is None:
            self.unchecked.append(f"{_where(check)}: {_bytes(space['peak_bytes'])} (no limit for this memory space)")
            return
        bounds = space.get("bounds") or (_TRACELESS_BOUNDS if space.get("heap_simulation") == "missing" else None)
        peak = space["peak_bytes"]
        if bounds is None:
            upper: Optional[int] = peak
        elif "upper_bound_bytes" in space:
            upper = space["upper_bound_bytes"]
        else:
            upper = max(peak, space["total_allocation_bytes"])
        fits = _verdict(peak, upper, limit)
        check.update(
            color=space["color"],
            peak_bytes=peak,
            limit_bytes=limit,
            over_bytes=peak - limit,
            fits=fits,
            exact=bounds is None,
            upper_bound_bytes=upper,
            bounds=bounds,
            largest=_largest(space),
            by_source=space.get("at_peak_groups", {}).get("by_source", [])[:_TOP],
            figures=space.get("figures", []),
            # XLA's totals alone say nothing of what would lower the peak.
            hints=_hints(module, space, peak - limit) if fits is False and "breakdown" in space else [],
        )
        self.checks.append(check)

    def __bool__(self) -> bool:
        return self.fits is True

    def __repr__(self) -> str:
        return f"<xmem.Fit fits={self.fits} checks={len(self.checks)}>"

    def _headline(self, check: Check) -> str:
        where, peak, limit = _where(check), _bytes(check["peak_bytes"]), _bytes(check["limit_bytes"])
        bounds = check["bounds"]
        upper = check["upper_bound_bytes"]
        if check["fits"] is None:
            return (
                f"{where}: cannot tell: the peak is between {peak} ({bounds['lower']}) and "
                f"{'an unknown size' if upper is None else _bytes(upper)} ({bounds['upper']}), the limit {limit}"
            )
        if check["fits"] and bounds is None:
            return f"{where}: peak {peak} of {limit}: fits, {_bytes(-check['over_bytes'])} to spare"
        if check["fits"]:
            return (
                f"{where}: peak at most {_bytes(upper)} ({bounds['upper']}) of {limit}: fits, "
                f"{_bytes(check['limit_bytes'] - upper)} to spare"
            )
        at_least = "" if bounds is None else f" at least ({bounds['lower']})"
        return f"{where}: peak{at_least} {peak}, {_bytes(check['over_bytes'])} over the limit of {limit}"

    def lines(self) -> list[tuple[str, list[str]]]:
        """The verdict as sections of lines: what ``str()`` and the HTML show."""
        verdict = {True: "fits", False: "does NOT fit", None: "cannot tell whether it fits"}[self.fits]
        programs = ", ".join(self.programs) or "the program"
        limits = ", ".join(dict.fromkeys(_bytes(c["limit_bytes"]) for c in self.checks)) or "none"
        head = [f"Limit: {limits}, {self.limit_source}"]
        if self.bytes_in_use:
            head.append(f"Already in use on the device: {_bytes(self.bytes_in_use)} (other arrays live now)")
        head += [self._headline(c) for c in self.checks]
        head += [f"{u}" for u in self.unchecked]
        sections: list[tuple[str, list[str]]] = [(f"{programs} {verdict}", head)]
        for check in self.checks:
            where = _where(check)
            if not check["exact"]:
                sections.append((f"{where}: why only bounds of the peak are known", list(self.warnings)))
            if check["figures"]:
                sections.append((f"{where}: XLA's totals (compiled.memory_analysis())", check["figures"]))
            rows = [
                f"{_bytes(b['size_bytes']):>10}  {b['category']:<11} {b['shape']}  {_buffer_name(b)}"
                + (f"  {b['source']}" if b.get("source") else "")
                for b in check["largest"]
            ]
            if rows:
                known = "at the peak" if check["exact"] else "always live (the temporaries are not known)"
                sections.append((f"{where}: largest buffers {known}", rows))
            lines = [
                f"{_bytes(g['bytes']):>10}  {g['key']} ({g['count']} buffer{'' if g['count'] == 1 else 's'})"
                for g in check["by_source"]
            ]
            if lines:
                sections.append((f"{where}: source lines that hold the most at the peak", lines))
            if check["hints"]:
                sections.append((f"{where}: what would lower the peak", check["hints"]))
        return sections

    def __str__(self) -> str:
        out = []
        for title, lines in self.lines():
            out.append(title)
            out.extend(f"  {line}" for line in lines)
        return "\n".join(out) + "\n"

    def _repr_html_(self) -> str:
        colour = {True: "#1a7f37", False: "#cf222e", None: "#9a6700"}[self.fits]
        parts = []
        for i, (title, lines) in enumerate(self.lines()):
            style = f' style="color:{colour}"' if i == 0 else ""
            parts.append(f"<h4{style}>{html.escape(title)}</h4>")
            parts.append("<pre>" + "\n".join(html.escape(line) for line in lines) + "</pre>")
        return '<div class="xmem-fit">' + "".join(parts) + "</div>"


def _buffer_name(buffer: Mapping[str, Any]) -> str:
    """A parameter by the name the user gave it (JAX: its pytree path), anything else by its instruction."""
    if buffer["category"] == "parameter" and buffer.get("op_name"):
        return str(buffer["op_name"])
    return str(buffer["instruction"])


def _hints(module: Mapping[str, Any], space: Mapping[str, Any], over: int) -> list[str]:
    """What would lower the peak by ``over`` bytes, from what the report
    shows: donation where parameters could become outputs, remat where
    temporaries are live at the peak, and when neither can be enough, that
    the always-live buffers themselves must shrink."""
    hints = []
    candidates = module.get("donation_candidates", []) if space["color"] == 0 else []
    if candidates:
        saved = sum(c["bytes_at_most"] for c in candidates)
        names = ", ".join(c["parameter"] for c in candidates[:3]) + (", ..." if len(candidates) > 3 else "")
        enough = "enough on its own" if saved >= over else "not enough on its own"
        hints.append(
            f"Donate: jax.jit(..., donate_argnums=...) for {names} lets XLA write outputs into their buffers: "
            f"up to {_bytes(saved)} ({enough})"
        )
    temporaries = space["breakdown"]["temporaries"]
    if temporaries > 0:
        lines = ", ".join(f"{key} ({_bytes(size)})" for key, size in _temporaries_by_source(space)[:3])
        enough = (
            "they are more than the excess"
            if temporaries >= over
            else "all of them are less than the excess: remat alone cannot make it fit"
        )
        hints.append(
            f"Rematerialise: {_bytes(temporaries)} of the peak are temporaries, most from {lines}; "
            f"jax.checkpoint (jax.remat) on that code recomputes them instead of keeping them ({enough})"
        )
    always_live = space["breakdown"]["parameters"] + space["breakdown"]["outputs"] + space["breakdown"]["constants"]
    if always_live > space["peak_bytes"] - over:
        hints.append(
            f"Parameters, outputs and constants alone take {_bytes(always_live)}, over the limit: shard them over "
            "more devices, keep them in a smaller type (bf16), or use a smaller batch"
        )
    return hints


def fits(stage: Any, device: Any = None, limit: Optional[Limit] = None, flags: Optional[list[str]] = None) -> Fit:
    """See :func:`xmem.fits`."""
    from . import Report

    try:
        output, compiled = report_output(stage, flags or [])
    except NoBufferAssignment as missing:
        module, spaces = _stats_spaces(missing.compiled)
        if not spaces:
            raise
        limits, source, in_use = _limits(limit, missing.compiled, device)
        return Fit(None, [(module, space) for space in spaces], [str(missing)], limits, source, in_use)
    report = Report(output)
    limits, source, in_use = _limits(limit, compiled, device)
    spaces = [(module, space) for module in report["modules"] for space in module["memory_spaces"]]
    return Fit(report, spaces, report["warnings"], limits, source, in_use)
