"""xmem from Python: what was alive at the memory peak of a JAX, TensorFlow or
XLA program, computed in process by the same code as the ``xmem`` command.

``report``, ``diff`` and ``oom`` return the JSON the command prints with
``--format json`` as Python objects (a ``dict``); ``str()`` of the result is
the command's text output, and a notebook shows it as the HTML report
(``report``) or the Markdown output (``diff``, ``oom``). ``plot`` writes SVG
charts. A failure raises ``XmemError`` with the command's one-line message.
Sizes are exact integer bytes. The JSON schemas (``xmem.report/1``,
``xmem.diff/1``, ``xmem.oom/1``) only ever gain keys.
"""

from __future__ import annotations

import html
import inspect
import os
from keyword import iskeyword
from importlib.metadata import version as _version
from typing import Any, Optional, Union

from . import _jax, _native
from ._jax import Fit
from ._native import XmemError

__all__ = ["Report", "Diff", "Oom", "Fit", "XmemError", "report", "diff", "oom", "plot", "fits"]
__version__ = _version("xmem")

Path = Union[str, "os.PathLike[str]"]
Size = Union[int, str]


class _Output(dict[str, Any]):
    """A command's JSON output as a dict, with the command's other outputs."""

    __slots__ = ("_output",)

    def __init__(self, output: _native.Output) -> None:
        super().__init__(output.value())
        self._output = output

    def __str__(self) -> str:
        """The command's text output for the same inputs and options."""
        return self._output.render("text")

    def to_markdown(self) -> str:
        """The command's ``--format markdown`` output."""
        return self._output.render("markdown")

    def __reduce__(self) -> tuple[type[dict[str, Any]], tuple[dict[str, Any]]]:
        # A pickle or copy is the plain dict: the rendering stays in this process.
        return (dict, (dict(self),))


class Report(_Output):
    """``xmem report --format json`` (schema ``xmem.report/1``) as a dict.

    Keys:

    - ``schema``: ``"xmem.report/1"``; ``inputs``: the paths read.
    - ``modules``: one per HLO module, largest peak first: ``name``,
      ``program_id`` (XProf's id: the program fingerprint, else the module
      id), ``problem`` (why it could not be analysed, else ``None``) and
      ``memory_spaces``, one per memory space (buffer colour) with
      ``color``, ``name`` (``hbm``, ``vmem``, ``host``, ...), ``peak_bytes``
      and ``peak_unpadded_bytes`` (the heap at its first maximum, as XProf's
      Memory Viewer), ``peak_position`` and ``peak_instruction`` (the
      heap-simulator event where it happens), ``indefinite_bytes``
      (always-live: parameters, outputs, constants), ``breakdown`` (bytes at
      the peak by category), ``heap_bytes`` / ``unpadded_heap_bytes`` (the
      heap before each event), ``at_peak`` (every buffer live at the peak,
      largest first as the text lists them: ``instruction``, ``size_bytes``,
      ``unpadded_bytes``, ``shape``, ``category``, ``opcode``, ``op_name``,
      ``source`` file:line, ``stack``) and ``lifetimes`` (each buffer's
      first and last event).
    - ``allocators``: one per allocator with events in the profile (e.g.
      ``GPU_0_bfc``): ``host``, ``name``, ``peak_bytes`` and ``peak_time_ps``,
      ``capacity_bytes``, ``fragmentation_at_peak`` and ``at_peak`` (the
      allocations live at the peak, largest first: ``op_name``,
      ``allocation_bytes`` and ``requested_bytes`` of one allocation,
      ``occurrences``, ``shape``, and what made them: ``program``
      (``jit_step(40)``), ``attribution`` (``temp-allocation``, ``output``,
      ``parameter``, ``during-execution``, ``outside-programs``, ``op``) and
      ``made_in``).
    - ``device_memory``: one per JAX device memory profile: ``total_bytes``,
      ``devices`` (bytes per device and kind), ``top_sites`` (the Python
      functions that hold the most bytes, each stack's bytes blamed on its
      innermost frame of the user's code) and ``stacks`` (whole stacks,
      heaviest first).
    - ``torch_snapshots``: one per device of each PyTorch memory snapshot
      (``torch.cuda.memory._dump_snapshot``): ``device`` (``cuda:0``, or
      ``host`` for pinned memory), ``peak_bytes`` and ``peak_time_us`` (the
      most bytes active at once, replayed from the allocator's trace: PyTorch's
      ``active_bytes.all.peak``), ``live_at_end_bytes``, ``reserved_bytes``,
      ``at_peak`` (every block live at the peak: ``size_bytes``,
      ``requested_bytes``, ``user_frame``, ``frames``),
      ``at_peak_by_user_frame``, ``segments`` (reserved, free, largest free
      block, expandable segments) and ``oom`` (``None``, or the failure:
      ``requested_bytes``, ``device_free_bytes``, ``live_bytes``, ``cause``,
      ``explanation``, ``at_oom`` by user frame).
    - ``warnings`` and ``notes``: what could not be read, and facts about
      the input as a whole.

    In a notebook it displays as the HTML report.
    """

    __slots__ = ()

    def to_html(self) -> str:
        """The command's ``--format html`` output: a self-contained page."""
        return self._output.render("html")

    def _repr_html_(self) -> str:
        # An iframe keeps the page's styles out of the notebook's.
        return (
            '<iframe style="width:100%;height:640px;border:0" srcdoc="'
            + html.escape(self.to_html(), quote=True)
            + '"></iframe>'
        )


class Diff(_Output):
    """``xmem diff --format json`` (schema ``xmem.diff/1``) as a dict.

    Keys:

    - ``verdict``: ``"pass"`` or ``"fail"`` (a limit was crossed; the command
      exits 1 then); ``limits``: the limits checked; ``violations``: each
      peak that crossed one; ``min_peak``: the size under which peaks were
      not judged (``bytes``, ``default``, ``not_judged``).
    - ``base_inputs`` / ``new_inputs``: the paths compared.
    - ``modules``: one per matched module and memory space, largest change
      first: ``name``, ``memory_space``, ``change`` (matched, added or
      removed), ``base_peak_bytes``, ``new_peak_bytes``, ``delta_bytes``,
      ``delta_ratio``, ``buffers`` (the buffers at the peaks that changed,
      largest change first, with ``base_bytes``, ``new_bytes``,
      ``delta_bytes`` and ``matched_by``: how the two runs' buffers were
      found to be the same) and ``matched_by`` (how many were matched each way).
    - ``allocators``, ``device_memory`` and ``torch_snapshots``: the same for
      allocator peaks, JAX device memory profiles and the devices of PyTorch
      memory snapshots (``owners``: what grew at the peak, by user frame);
      ``warnings``.

    In a notebook it displays as the Markdown output.
    """

    __slots__ = ()

    def _repr_markdown_(self) -> str:
        return self.to_markdown()


class Oom(_Output):
    """``xmem oom --format json`` (schema ``xmem.oom/1``) as a dict.

    Keys:

    - ``input``: the log's path (``"<text>"`` for a log given as text);
      ``lines``: how many lines it has.
    - ``events``: one per out-of-memory message: ``kind``
      (``compile-time-oom``, ``bfc-allocator-oom``, ``pytorch-cuda-oom``,
      ...), ``error_code`` (the XLA code, e.g. ``E1000``), ``memory_space``,
      ``used_bytes``, ``capacity_bytes``, ``exceeded_by_bytes``,
      ``requested_bytes``, ``free_bytes``, ``allocations`` (the largest ones
      the log lists: ``size_bytes``, ``op_name``, ``shape``, ...), ``line``
      (where the message starts), ``summary`` and ``advice`` (what to
      change), ``program`` (the XLA executable the failure names),
      ``allocator``, ``limit_bytes`` (a pool or cap below the device),
      ``device_bytes``, ``held_by`` (the allocator's memory by the program
      holding it), ``user_frame`` (your line in the traceback) and
      ``phase`` (``compile``, ``autotune``, ``runtime``, ``host``). A fact
      the log does not state is ``None``, never guessed.
    - ``incidents``: the events of one failure together: ``title`` (the
      cause the facts support), ``cause``, ``program``, ``user_frame``,
      ``advice`` and, with ``with_``, ``program_report``: the failed
      program's memory space as in ``xmem.report/1``, how it was matched
      (or why none was), its peak against the log's limit and the change
      that saves the most.

    In a notebook it displays as the Markdown output.
    """

    __slots__ = ()

    def _repr_markdown_(self) -> str:
        return self.to_markdown()


class _Option:
    """One option of a command, as a Python keyword: ``--op-depth`` is ``op_depth``."""

    __slots__ = ("flag", "keyword", "default", "takes_value")

    def __init__(self, flag: str, default: Optional[str], takes_value: bool) -> None:
        self.flag = flag
        keyword = flag.replace("-", "_")
        # `--with` is `with_`: a flag that is a Python keyword gets an underscore.
        self.keyword = keyword + "_" if iskeyword(keyword) else keyword
        self.takes_value = takes_value
        # A switch is off by default; a number keeps its type (`top=20`), other defaults their text.
        self.default: Any = default
        if not takes_value:
            self.default = False
        elif default is not None and default.isdigit():
            self.default = int(default)

    def args(self, value: Any) -> list[str]:
        """The command-line arguments for ``value``."""
        if not self.takes_value:
            return [f"--{self.flag}"] if value else []
        if value is None:
            return []
        values = value if isinstance(value, (list, tuple)) else [value]
        return [f"--{self.flag}={os.fspath(v) if isinstance(v, os.PathLike) else v}" for v in values]


def _options(command: str, taken: tuple[str, ...] = ()) -> dict[str, _Option]:
    """Every option of ``command`` but the flags ``taken`` (which its
    function takes as positional parameters), read from the command line's
    own definitions: one mapping from flags to keywords, so each function
    takes each option with the command's name and default."""
    return {
        option.keyword: option
        for option in (_Option(*spec) for spec in _native.options(command))
        if option.flag not in taken
    }


def _signature(*positional: inspect.Parameter, options: dict[str, _Option], returns: Any) -> inspect.Signature:
    keywords = [
        inspect.Parameter(option.keyword, inspect.Parameter.KEYWORD_ONLY, default=option.default)
        for option in options.values()
    ]
    return inspect.Signature([*positional, *keywords], return_annotation=returns)


def _args(function: str, options: dict[str, _Option], given: dict[str, Any]) -> list[str]:
    """The command-line flags for the keywords ``given`` to ``function``."""
    args = []
    for keyword, value in given.items():
        option = options.get(keyword)
        if option is None:
            raise TypeError(f"{function}() got an unexpected keyword argument {keyword!r}")
        args.extend(option.args(value))
    return args


def _written(output: _native.Output, given: dict[str, Any]) -> _native.Output:
    """With ``output=``, writes the result as the command does with ``-o`` (in ``format``)."""
    if given.get("output") is not None:
        output.write(os.fspath(given["output"]), given.get("format") or "text")
    return output


_P = inspect.Parameter
_REPORT = _options("report")
_DIFF = _options("diff")
_OOM = _options("oom")
_PLOT = _options("plot", taken=("output",))


def report(*inputs: Path, **options: Any) -> Report:
    """Analyses the inputs as ``xmem report`` does.

    Each input is an XProf log or run directory, an ``*.xplane.pb[.gz]``, an
    HLO proto (or an HloModuleProto with its BufferAssignmentProto), an XLA
    dump directory or a JAX device memory profile; or, on its own, a
    compiled JAX program (``jax.stages.Compiled``, or a ``jax.stages.Lowered``
    that is compiled), analysed in process before it runs, as ``xmem report``
    analyses its XLA dump. Every option of ``xmem report`` is a keyword,
    named as the flag without its dashes (``--op-depth`` is ``op_depth``)
    and with its default: ``module`` (a name, a program id or ``/REGEX/``),
    ``memory_space`` (``hbm``, ``vmem``, ``host``, ... or a colour number),
    ``allocator`` (``GPU_0_bfc``), ``top`` (rows ``str()`` and the HTML
    report show; the dict always holds every buffer), ``all``, ``op_depth``,
    ``at``, ``peaks``, ``peak_drop``, ``run``, ``max_input_size``,
    ``strict``, and ``output`` with ``format``, which also write the result
    to a file as ``-o`` does (``format="pprof"`` included).
    ``inspect.signature`` lists them; ``help(xmem.Report)`` says what the
    keys of the result mean.
    """
    if not inputs:
        raise TypeError("report() needs at least one input")
    args = _args("report", _REPORT, options)
    if any(_jax.is_stage(i) for i in inputs):
        if len(inputs) > 1:
            raise TypeError("report() takes a compiled JAX program on its own")
        return Report(_written(_jax.report_output(inputs[0], args)[0], options))
    return Report(_written(_native.report([*args, "--", *(os.fspath(i) for i in inputs)]), options))


def fits(
    compiled: Any,
    device: Any = None,
    limit: Optional[Union[Size, dict[Union[str, int], Size]]] = None,
    *,
    top: Optional[int] = None,
) -> Fit:
    """Whether a compiled JAX program (``jax.stages.Compiled``, or a
    ``jax.stages.Lowered`` that is compiled) fits in memory, told before it
    runs: the peak of each memory space, as ``report(compiled)`` gives it,
    against its limit.

    ``limit`` is a size (bytes, or ``"16GiB"``) for the device memory (colour
    0), or a dict of sizes by memory-space name or colour. Without it the
    limit is what JAX gives a program on ``device`` (default: the program's
    first device): its ``memory_stats()["bytes_limit"]``, which
    ``XLA_PYTHON_CLIENT_MEM_FRACTION`` and the allocator settings shape, or
    on a CPU the host's available memory. The result says whether it fits,
    by how much it does not, the largest buffers and source lines at the
    peak, and what donation or remat could save; ``str()`` is that as text
    and a notebook shows it as HTML.
    """
    return _jax.fits(compiled, device=device, limit=limit, flags=_REPORT["top"].args(top))


def diff(base: Path, new: Path, **options: Any) -> Diff:
    """Compares two inputs as ``xmem diff`` does.

    Every option of ``xmem diff`` is a keyword, with its default:
    ``fail_if_peak_grows`` is a percentage (``"5%"``) or a size
    (``"64MiB"``, or bytes as an int); ``fail_if_over`` a size;
    ``min_peak`` the size under which peaks are not judged (default: 1% of
    the largest, at least 1 MiB; ``0`` judges all); ``module``,
    ``memory_space``, ``allocator``, ``top``, ``all``, ``run``,
    ``max_input_size``, ``strict``, ``output`` and ``format``. A crossed
    limit is not an error: the result's ``verdict`` is ``"fail"``.
    """
    args = _args("diff", _DIFF, options)
    return Diff(_written(_native.diff([*args, "--", os.fspath(base), os.fspath(new)]), options))


def oom(path_or_text: Union[Path, str, bytes], **options: Any) -> Oom:
    """Explains the out-of-memory errors in a log, as ``xmem oom`` does.

    A path (``os.PathLike``, or a ``str`` without a line break) names the
    log file; ``bytes``, or a ``str`` with a line break, is the log itself.
    Every option of ``xmem oom`` is a keyword, with its default: ``with_``
    (``--with``) joins each incident with the failed program from these
    inputs (an XLA dump directory, a profile, an HLO proto; a path or a list
    of them), ``top`` is how many rows of its tables ``str()`` shows, and
    ``max_input_size``, ``output`` and ``format`` are as for the command.
    """
    args = _args("oom", _OOM, options)
    if isinstance(path_or_text, (bytes, str)) and (isinstance(path_or_text, bytes) or "\n" in path_or_text):
        text = path_or_text.encode() if isinstance(path_or_text, str) else path_or_text
        return Oom(_written(_native.oom_text("<text>", text, args), options))
    return Oom(_written(_native.oom([*args, "--", os.fspath(path_or_text)]), options))


def plot(input: Path, out_dir: Path, **options: Any) -> list[str]:
    """Writes SVG charts into ``out_dir`` (created if missing) as ``xmem plot``
    does, and returns the paths written. Every other option of ``xmem plot``
    is a keyword, with its default (``module``, ``memory_space``,
    ``allocator``, ``top``, ``all``, ``run``, ``max_input_size``, ``strict``)."""
    args = _args("plot", _PLOT, options)
    return _native.plot([f"--output={os.fspath(out_dir)}", *args, "--", os.fspath(input)])


report.__signature__ = _signature(  # type: ignore[attr-defined]
    _P("inputs", _P.VAR_POSITIONAL), options=_REPORT, returns=Report
)
diff.__signature__ = _signature(  # type: ignore[attr-defined]
    _P("base", _P.POSITIONAL_OR_KEYWORD), _P("new", _P.POSITIONAL_OR_KEYWORD), options=_DIFF, returns=Diff
)
oom.__signature__ = _signature(  # type: ignore[attr-defined]
    _P("path_or_text", _P.POSITIONAL_OR_KEYWORD), options=_OOM, returns=Oom
)
plot.__signature__ = _signature(  # type: ignore[attr-defined]
    _P("input", _P.POSITIONAL_OR_KEYWORD), _P("out_dir", _P.POSITIONAL_OR_KEYWORD), options=_PLOT, returns=list[str]
)
