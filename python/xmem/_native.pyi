"""Type hints of the extension module; use the functions of ``xmem`` instead."""

from typing import Any, Optional

class XmemError(Exception):
    """An xmem command failed; the message is the line the command line prints after ``xmem: ``."""

class Output:
    """What a command computed."""

    def value(self) -> dict[str, Any]:
        """The JSON the command prints with ``--format json``, as Python objects."""
    def render(self, format: str) -> str:
        """What the command prints with ``--format FORMAT`` (text, markdown, json or html)."""
    def write(self, path: str, format: str) -> None:
        """Writes what the command writes with ``--format FORMAT -o PATH`` (pprof included)."""

def run_cli(argv: list[str]) -> int:
    """Runs the ``xmem`` command line on ``argv`` (the first item is the program's name); returns its exit code."""

def report(args: list[str]) -> Output:
    """``xmem report ARGS``."""

def report_protos(args: list[str], protos: list[tuple[str, bytes]], warnings: list[str]) -> Output:
    """``xmem report ARGS`` of protos given as bytes (HloProtos, HloModuleProtos and BufferAssignmentProtos), each named for errors."""

def parse_size(text: str) -> int:
    """A size as the command line reads one (``16GiB``, ``512M``): binary units."""

def human_bytes(bytes: int) -> str:
    """Bytes as the command line prints them (``16.0 GiB``)."""

def diff(args: list[str]) -> Output:
    """``xmem diff ARGS``."""

def oom(args: list[str]) -> Output:
    """``xmem oom ARGS``."""

def oom_text(name: str, text: bytes, args: list[str] = ...) -> Output:
    """The errors in a log given as its text; ``name`` stands for the file name in the result."""

def plot(args: list[str]) -> list[str]:
    """``xmem plot ARGS``: the paths of the charts written."""

def options(command: str) -> list[tuple[str, Optional[str], bool]]:
    """The options of a command: (long flag, default, whether it takes a value)."""
