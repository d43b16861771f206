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
import os
from importlib.metadata import version as _version
from typing import Any, Optional, Sequence, Union

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
      heap before each event), ``at_peak`` (every buffer live at the peak:
      ``instruction``, ``size_bytes``, ``unpadded_bytes``, ``shape``,
      ``category``, ``opcode``, ``op_name``, ``source`` file:line, ``stack``)
      and ``lifetimes`` (each buffer's first and last event).
    - ``allocators``: one per allocator with events in the profile (e.g.
      ``GPU_0_bfc``): ``host``, ``name``, ``peak_bytes`` and ``peak_time_ps``,
      ``capacity_bytes``, ``fragmentation_at_peak`` and ``at_peak`` (the
      allocations live at the peak: ``op_name``, ``allocation_bytes`` and
      ``requested_bytes`` of one allocation, ``occurrences``, ``shape``).
    - ``device_memory``: one per JAX device memory profile: ``total_bytes``,
      ``devices`` (bytes per device and kind) and ``top_sites`` (the Python
      functions that hold the most bytes).
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
      peak that crossed one.
    - ``base_inputs`` / ``new_inputs``: the paths compared.
    - ``modules``: one per matched module and memory space: ``name``,
      ``memory_space``, ``change`` (matched, added or removed),
      ``base_peak_bytes``, ``new_peak_bytes``, ``delta_bytes``,
      ``delta_ratio`` and ``buffers`` (the buffers at the peaks that changed,
      with ``base_bytes``, ``new_bytes`` and ``delta_bytes``).
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


def _flags(**options: Any) -> list[str]:
    """Keyword arguments as the command's flags: ``top=5`` is ``--top=5``."""
    return [f"--{name.replace('_', '-')}={value}" for name, value in options.items() if value is not None]


def report(
    *inputs: Path,
    module: Optional[Union[str, int]] = None,
    memory_space: Optional[Union[str, int]] = None,
    allocator: Optional[str] = None,
    top: Optional[int] = None,
) -> Report:
    """Analyses the inputs as ``xmem report`` does.

    Each input is an XProf log or run directory, an ``*.xplane.pb[.gz]``, an
    HLO proto (or an HloModuleProto with its BufferAssignmentProto), an XLA
    dump directory or a JAX device memory profile; or, on its own, a
    compiled JAX program (``jax.stages.Compiled``, or a ``jax.stages.Lowered``
    that is compiled), analysed in process before it runs, as ``xmem report``
    analyses its XLA dump.
    ``module`` is a name, a program id or ``/REGEX/``; ``memory_space`` is
    ``hbm``, ``vmem``, ``host``, ... or a colour number; ``allocator`` is a
    name such as ``GPU_0_bfc``; ``top`` is how many rows ``str()`` and the
    HTML report show (the dict always holds every buffer).
    """
    if not inputs:
        raise TypeError("report() needs at least one input")
    flags = _flags(module=module, memory_space=memory_space, allocator=allocator, top=top)
    if any(_jax.is_stage(i) for i in inputs):
        if len(inputs) > 1:
            raise TypeError("report() takes a compiled JAX program on its own")
        return Report(_jax.report_output(inputs[0], flags)[0])
    return Report(_native.report([*flags, "--", *(os.fspath(i) for i in inputs)]))


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
    return _jax.fits(compiled, device=device, limit=limit, flags=_flags(top=top))


def diff(
    base: Path,
    new: Path,
    *,
    fail_if_peak_grows: Optional[Size] = None,
    fail_if_over: Optional[Size] = None,
    module: Optional[Union[str, int]] = None,
    memory_space: Optional[Union[str, int]] = None,
    allocator: Optional[str] = None,
    top: Optional[int] = None,
) -> Diff:
    """Compares two inputs as ``xmem diff`` does.

    ``fail_if_peak_grows`` is a percentage (``"5%"``) or a size (``"64MiB"``,
    or bytes as an int); ``fail_if_over`` a size. A crossed limit is not an
    error: the result's ``verdict`` is ``"fail"``.
    """
    flags = _flags(
        fail_if_peak_grows=fail_if_peak_grows,
        fail_if_over=fail_if_over,
        module=module,
        memory_space=memory_space,
        allocator=allocator,
        top=top,
    )
    return Diff(_native.diff([*flags, "--", os.fspath(base), os.fspath(new)]))


def oom(
    path_or_text: Union[Path, str, bytes],
    *,
    with_: Optional[Sequence[Path]] = None,
    top: Optional[int] = None,
) -> Oom:
    """Explains the out-of-memory errors in a log, as ``xmem oom`` does.

    A path (``os.PathLike``, or a ``str`` without a line break) names the
    log file; ``bytes``, or a ``str`` with a line break, is the log itself.
    ``with_`` joins each incident with the failed program from these inputs
    (an XLA dump directory, a profile, an HLO proto), as ``--with`` does;
    ``top`` is how many rows of its tables ``str()`` shows.
    """
    flags = [f"--with={os.fspath(i)}" for i in with_ or ()] + _flags(top=top)
    if isinstance(path_or_text, bytes):
        return Oom(_native.oom_text("<text>", path_or_text, flags))
    if isinstance(path_or_text, str) and "\n" in path_or_text:
        return Oom(_native.oom_text("<text>", path_or_text.encode(), flags))
    return Oom(_native.oom([*flags, "--", os.fspath(path_or_text)]))


def plot(
    input: Path,
    out_dir: Path,
    *,
    module: Optional[Union[str, int]] = None,
    memory_space: Optional[Union[str, int]] = None,
    allocator: Optional[str] = None,
    top: Optional[int] = None,
) -> list[str]:
    """Writes SVG charts into ``out_dir`` (created if missing) as ``xmem plot``
    does, and returns the paths written."""
    flags = _flags(module=module, memory_space=memory_space, allocator=allocator, top=top)
    return _native.plot([f"--output={os.fspath(out_dir)}", *flags, "--", os.fspath(input)])
