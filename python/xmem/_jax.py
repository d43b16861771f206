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
not the timeline; 0.7 to 0.9 keep nothing of the kind. Given a ``Lowered``,
xmem then compiles it once more with XLA's dump switched on for that one
compilation, into a private temporary directory it removes, and reads the
dump, whose numbers are the dump's by construction.
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


def protos_of(compiled: Any) -> tuple[str, list[tuple[str, bytes]], str]:
    """The program's name, its protos (each named by the call that gave it)
    and which way they were found; an ``XmemError`` naming the jaxlib version
    when this jaxlib offers none of the known ways."""
    version = jaxlib_version()
    executable = _executable(compiled)
    stats = _memory_stats(compiled, executable)
    try:
        modules = list(executable.hlo_modules())
    except Exception:  # noqa: BLE001 - no executable, or one without modules
        modules = []
    name = str(modules[0].name) if modules else "compiled program"
    assignment = getattr(stats, "serialized_buffer_assignment_proto", None)
    if assignment and modules:
        protos = [
            (f"compiled.runtime_executable().hlo_modules()[{i}]", bytes(m.as_serialized_hlo_module_proto()))
            for i, m in enumerate(modules)
        ]
        return name, [*protos, (_ASSIGNMENT, bytes(assignment))], "serialized_buffer_assignment_proto + hlo_modules()"
    hlo_proto = getattr(stats, "serialized_hlo_proto", None)
    if hlo_proto:
        return name, [(_HLO_PROTO, bytes(hlo_proto))], "serialized_hlo_proto"
    raise XmemError(
        f"jaxlib {version}: this compiled program holds no buffer assignment xmem knows how to read "
        f"(memory_analysis() gave {type(stats).__name__} without serialized_buffer_assignment_proto or "
        f"serialized_hlo_proto{'' if modules else ', and the executable no hlo_modules()'}); dump the program "
        'with XLA_FLAGS="--xla_dump_to=DIR --xla_dump_hlo_as_proto" and pass DIR to xmem.report'
    )


#: The jaxlib versions seen leaving the trace out in this process: a Lowered
#: is then compiled with the dump at once, not compiled twice.
_LEAVE_TRACE_OUT: set[str] = set()


def _compile_with_dump(lowered: Any) -> tuple[Any, list[tuple[str, bytes]]]:
    """Compiles ``lowered`` with XLA's dump on for that compilation only, into
    a private temporary directory that is removed; returns the compiled
    program and the optimized HloProtos the dump held (none when JAX's
    compilation cache served the compilation, which then writes no dump)."""
    with tempfile.TemporaryDirectory(prefix="xmem-dump-") as directory:
        compiled = lowered.compile(compiler_options={"xla_dump_to": directory, "xla_dump_hlo_as_proto": True})
        files = sorted(Path(directory).glob("*after_optimizations.hlo.pb"))
        return compiled, [(f"XLA dump: {f.name}", f.read_bytes()) for f in files]


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
    command's ``flags``, and the compiled program it read."""
    version = jaxlib_version()
    lowered = stage if _is_lowered(stage) else None
    kind = "Lowered" if lowered is not None else "Compiled"
    dumped_note = (
        f"jaxlib {version} leaves the heap-simulator trace out of {_ASSIGNMENT}: this report is of the program "
        "compiled with XLA's dump on, read from a private temporary directory"
    )
    dump_tried = lowered is not None and version in _LEAVE_TRACE_OUT
    if dump_tried:
        compiled, dumped = _compile_with_dump(lowered)
        if dumped:
            name, _, _ = protos_of(compiled)
            return _native.report_protos([*flags, "--", f"{name} (jax.stages.{kind})"], dumped, [dumped_note]), compiled
    else:
        compiled = lowered.compile() if lowered is not None else stage
    name, protos, _ = protos_of(compiled)

    def build(protos: list[tuple[str, bytes]], warnings: list[str]) -> _native.Output:
        return _native.report_protos([*flags, "--", f"{name} (jax.stages.{kind})"], protos, warnings)

    output = build(protos, [])
    missing = _traceless(output.value())
    if not missing:
        return output, compiled
    _LEAVE_TRACE_OUT.add(version)
    if lowered is not None:
        recompiled, dumped = (compiled, []) if dump_tried else _compile_with_dump(lowered)
        if dumped:
            return build(dumped, [dumped_note]), recompiled
        return build(
            protos,
            [
                f"jaxlib {version} leaves the heap-simulator trace out of {_ASSIGNMENT}, and the compilation "
                "that would have dumped it was served from JAX's compilation cache"
            ],
        ), compiled
    what = (
        "the peak and the buffers at it are XLA's own record, without a timeline"
        if "missing" not in missing
        else "the peak counts only parameters, outputs and constants"
    )
    return build(
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
    ``program_id``, ``memory_space``, ``color``, ``peak_bytes``,
    ``limit_bytes``, ``over_bytes`` (peak minus limit: negative is headroom),
    ``fits`` (``None`` when the proto cannot tell), ``exact`` (``False`` where
    the heap-simulator trace is missing: then ``peak_bytes`` counts only
    always-live buffers and ``upper_bound_bytes`` all the space's
    allocations), ``hints`` (what would lower the peak, where it does not fit)."""


class Fit:
    """Whether a compiled program fits: ``xmem.fits(...)``.

    ``fits`` is ``True``, ``False``, or ``None`` when the proto cannot tell
    (or no limit applies to any memory space); ``bool(fit)`` is ``fits is
    True``. ``checks`` holds one :class:`Check` per memory space with a limit,
    ``limit_source`` says where the limit came from, ``report`` is the
    program's :class:`xmem.Report`. ``str()`` is the verdict as text; a
    notebook shows it as HTML.
    """

    def __init__(self, report: Any, limits: Mapping[Union[str, int], int], source: str, in_use: Optional[int]) -> None:
        self.report = report
        self.limit_source = source
        self.bytes_in_use = in_use
        self.checks: list[Check] = []
        self.unchecked: list[str] = []
        for module in report["modules"]:
            for space in module["memory_spaces"]:
                self._check(module, space, limits)
        verdicts = [c["fits"] for c in self.checks]
        self.fits: Optional[bool] = (
            False if False in verdicts else None if (None in verdicts or not verdicts) else True
        )

    def _check(self, module: Mapping[str, Any], space: Mapping[str, Any], limits: Mapping[Union[str, int], int]) -> None:
        limit = _limit_of(space, limits)
        where = f"{module['name']}({module['program_id']}) {space['name']}"
        if limit is None:
            self.unchecked.append(f"{where}: {_bytes(space['peak_bytes'])} (no limit for this memory space)")
            return
        exact = space["heap_simulation"] != "missing"
        peak = space["peak_bytes"]
        upper = peak if exact else max(peak, space["total_allocation_bytes"])
        fits = True if upper <= limit else False if peak > limit else None
        check = Check(
            module=module["name"],
            program_id=module["program_id"],
            memory_space=space["name"],
            color=space["color"],
            peak_bytes=peak,
            limit_bytes=limit,
            over_bytes=peak - limit,
            fits=fits,
            exact=exact,
            upper_bound_bytes=upper,
            largest=_largest(space),
            by_source=space.get("at_peak_groups", {}).get("by_source", [])[:_TOP],
            hints=_hints(module, space, peak - limit) if fits is False else [],
        )
        self.checks.append(check)

    def __bool__(self) -> bool:
        return self.fits is True

    def __repr__(self) -> str:
        return f"<xmem.Fit fits={self.fits} checks={len(self.checks)}>"

    def _headline(self, check: Check) -> str:
        where = f"{check['module']}({check['program_id']}) {check['memory_space']}"
        peak, limit = _bytes(check["peak_bytes"]), _bytes(check["limit_bytes"])
        if check["fits"] is None:
            return (
                f"{where}: cannot tell: the peak is between {peak} (parameters, outputs and constants) and "
                f"{_bytes(check['upper_bound_bytes'])} (all its allocations), the limit {limit}"
            )
        if check["fits"]:
            return f"{where}: peak {peak} of {limit}: fits, {_bytes(-check['over_bytes'])} to spare"
        return f"{where}: peak {peak}, {_bytes(check['over_bytes'])} over the limit of {limit}"

    def lines(self) -> list[tuple[str, list[str]]]:
        """The verdict as sections of lines: what ``str()`` and the HTML show."""
        verdict = {True: "fits", False: "does NOT fit", None: "cannot tell whether it fits"}[self.fits]
        programs = ", ".join(dict.fromkeys(m["name"] for m in self.report["modules"])) or "the program"
        limits = ", ".join(dict.fromkeys(_bytes(c["limit_bytes"]) for c in self.checks)) or "none"
        head = [f"Limit: {limits}, {self.limit_source}"]
        if self.bytes_in_use:
            head.append(f"Already in use on the device: {_bytes(self.bytes_in_use)} (other arrays live now)")
        head += [self._headline(c) for c in self.checks]
        head += [f"{u}" for u in self.unchecked]
        sections: list[tuple[str, list[str]]] = [(f"{programs} {verdict}", head)]
        for check in self.checks:
            where = f"{check['module']}({check['program_id']}) {check['memory_space']}"
            if not check["exact"]:
                sections.append((f"{where}: why it cannot be told", [w for w in self.report["warnings"]]))
            rows = [
                f"{_bytes(b['size_bytes']):>10}  {b['category']:<11} {b['shape']}  {_buffer_name(b)}"
                + (f"  {b['source']}" if b.get("source") else "")
                for b in check["largest"]
            ]
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

    output, compiled = report_output(stage, flags or [])
    limits, source, in_use = _limits(limit, compiled, device)
    return Fit(Report(output), limits, source, in_use)
