"""The installed Python package against the Rust command line, on the shipped
fixtures: the `xmem` command the wheel installs behaves as the binary does,
and the API returns what the command prints with --format json.

Run in a venv where `pip install .` put the package:
    XMEM_BIN=target/debug/xmem python -m pytest python/tests
XMEM_BIN is the Rust binary to compare against (default: `xmem` on PATH,
which is then the installed command itself).
"""

import json
import os
import pickle
import shutil
import subprocess
import sys
from copy import deepcopy
from pathlib import Path

import pytest

import xmem

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
PROFILE = FIXTURES / "profiles" / "mlp_train" / "profile"
PAIR_BASE = FIXTURES / "profiles" / "pair_base" / "profile"
PAIR_NEW = FIXTURES / "profiles" / "pair_new" / "profile"
DEVICE_MEMORY = FIXTURES / "pprof" / "pair_base" / "device_memory_after_training.prof"
TORCH_SNAPSHOT = FIXTURES / "torch" / "h200" / "oom.pickle.gz"
TORCH_RING = FIXTURES / "torch" / "h200" / "ring.pickle.gz"
ALLOCATORS = FIXTURES / "profiles" / "tf_keras_fit" / "profile"
OOM_LOGS = sorted((FIXTURES / "oom-logs").glob("*.txt")) + sorted((FIXTURES / "oom-logs-extra").glob("*.txt"))

RUST_BIN = os.environ.get("XMEM_BIN") or shutil.which("xmem")
# The command this package installed, beside the venv's python.
INSTALLED = Path(sys.executable).with_name("xmem")


def run(command, *args, stdin=None):
    return subprocess.run([str(command), *map(str, args)], input=stdin, capture_output=True, check=False)


def cli(*args, stdin=None):
    return run(RUST_BIN, *args, stdin=stdin)


def cli_json(*args, stdin=None):
    result = cli(*args, "--format", "json", stdin=stdin)
    assert result.returncode != 2, result.stderr
    return json.loads(result.stdout), result.returncode


def assert_same_json(got, expected):
    assert got == expected
    # Keys in the command's order too, as json.dumps prints them.
    assert json.dumps(got) == json.dumps(expected)


def test_version_is_the_binarys_and_the_packages():
    installed = run(INSTALLED, "--version")
    assert installed.returncode == 0
    assert installed.stdout.decode() == f"xmem {xmem.__version__}\n"
    assert installed.stdout == cli("--version").stdout


@pytest.mark.parametrize(
    "args",
    [
        ["report", PROFILE, "--top", "3"],
        ["report", DEVICE_MEMORY, "--format", "markdown"],
        ["report", TORCH_SNAPSHOT, "--top", "3"],
        ["diff", TORCH_RING, TORCH_SNAPSHOT, "--fail-if-peak-grows", "10%"],
        ["list", PROFILE, "--format", "json"],
        ["diff", PAIR_BASE, PAIR_NEW, "--fail-if-peak-grows", "0%"],
        ["oom", OOM_LOGS[0]],
        ["report", FIXTURES / "no-such-profile"],
        ["report", PROFILE, "--top", "many"],
        ["--help"],
        ["report"],
        ["completions", "bash"],
    ],
    ids=lambda args: " ".join(map(str, args))[:60].replace(str(FIXTURES) + "/", ""),
)
def test_installed_command_is_the_binary(args):
    installed, binary = run(INSTALLED, *args), cli(*args)
    assert (installed.returncode, installed.stdout, installed.stderr) == (
        binary.returncode,
        binary.stdout,
        binary.stderr,
    )


@pytest.mark.parametrize(
    "inputs, options",
    [
        ([PROFILE], {}),
        ([PROFILE], {"module": "jit__normal", "memory_space": "hbm"}),
        ([DEVICE_MEMORY], {}),
        ([ALLOCATORS], {}),
        ([PAIR_BASE, DEVICE_MEMORY], {}),
        ([TORCH_SNAPSHOT], {}),
    ],
    ids=["profile", "module+space", "device-memory", "allocators", "two-inputs", "torch-snapshot"],
)
def test_report_is_the_commands_json(inputs, options):
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in options.items()]
    expected, _ = cli_json("report", *inputs, *flags)
    got = xmem.report(*inputs, **options)
    assert_same_json(got, expected)
    assert isinstance(got, dict) and got["schema"] == "xmem.report/1"


def test_a_result_pickles_as_its_dict():
    got = xmem.report(PROFILE)
    for copy in (pickle.loads(pickle.dumps(got)), deepcopy(got)):
        assert type(copy) is dict and copy == got


def test_report_str_and_html_are_the_commands_text_and_html():
    got = xmem.report(PROFILE, top=4)
    assert str(got) == cli("report", PROFILE, "--top", "4").stdout.decode()
    assert got.to_html() == cli("report", PROFILE, "--top", "4", "--format", "html").stdout.decode()
    assert got._repr_html_().startswith("<iframe")


@pytest.mark.parametrize("limit", ["0%", "1GiB", None])
def test_diff_is_the_commands_json_and_verdict(limit):
    flags = [f"--fail-if-peak-grows={limit}"] if limit else []
    expected, code = cli_json("diff", PAIR_BASE, PAIR_NEW, *flags)
    got = xmem.diff(PAIR_BASE, PAIR_NEW, fail_if_peak_grows=limit)
    assert_same_json(got, expected)
    assert (got["verdict"] == "fail") == (code == 1)
    assert str(got) == cli("diff", PAIR_BASE, PAIR_NEW, *flags).stdout.decode()


def test_a_crossed_limit_fails_the_diff():
    # pair_new's peak is larger than pair_base's.
    assert xmem.diff(PAIR_BASE, PAIR_NEW, fail_if_peak_grows="0%")["verdict"] == "fail"
    assert xmem.diff(PAIR_BASE, PAIR_NEW, fail_if_over=1)["verdict"] == "fail"


@pytest.mark.parametrize("log", OOM_LOGS, ids=lambda p: p.name)
def test_oom_is_the_commands_json(log):
    expected, _ = cli_json("oom", log)
    got = xmem.oom(log)
    assert_same_json(got, expected)
    assert xmem.oom(str(log)) == expected
    assert got._repr_markdown_() == cli("oom", log, "--format", "markdown").stdout.decode()


def test_oom_of_text_is_the_command_on_stdin():
    log = next(p for p in OOM_LOGS if xmem.oom(p)["events"])
    text = log.read_bytes()
    expected, _ = cli_json("oom", "-", stdin=text)
    expected["input"] = "<text>"
    assert xmem.oom(text) == expected
    assert xmem.oom(text.decode()) == expected


def test_oom_with_the_failed_programs_dump_is_the_commands_join():
    log = FIXTURES / "oom-gpu" / "adam_nodonate" / "output.log"
    dump = FIXTURES / "oom-gpu" / "adam_nodonate" / "xla_dump"
    expected, _ = cli_json("oom", log, "--with", dump)
    got = xmem.oom(log, with_=[dump])
    assert_same_json(got, expected)
    assert got["incidents"][0]["program_report"]["module"] == "jit_train_step(11275)"
    assert str(got) == cli("oom", log, "--with", dump).stdout.decode()
    # The log as text joins the same way.
    text = xmem.oom(log.read_bytes(), with_=[dump])
    assert text["incidents"] == expected["incidents"]


GIL_RELEASED = """
import sys, threading, xmem
fifo, log = sys.argv[1:]
found = []
reader = threading.Thread(target=lambda: found.append(xmem.oom(fifo)))
reader.start()
with open(fifo, "wb") as writer, open(log, "rb") as text:
    writer.write(text.read())
reader.join()
print(len(found[0]["events"]))
"""


def test_the_gil_is_released_while_xmem_works(tmp_path):
    # xmem.oom waits in a thread for a log through a FIFO that only another
    # Python thread writes: holding the GIL while it waits would hang.
    log = OOM_LOGS[0]
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    done = subprocess.run([sys.executable, "-c", GIL_RELEASED, fifo, log], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == len(xmem.oom(log)["events"]) > 0


def test_plot_writes_the_commands_charts(tmp_path):
    binary = cli("plot", PROFILE, "-o", tmp_path / "cli")
    assert binary.returncode == 0, binary.stderr
    written = xmem.plot(PROFILE, tmp_path / "py")
    assert [Path(p).name for p in written] == [Path(p).name for p in binary.stdout.decode().splitlines()]
    for path in written:
        assert Path(path).read_bytes() == (tmp_path / "cli" / Path(path).name).read_bytes()


def bad_inputs(tmp_path):
    garbage = tmp_path / "garbage.xplane.pb"
    garbage.write_bytes(b"\x0a\xff\xff\xff\xff\x0f not a profile")
    empty = tmp_path / "empty.prof"
    empty.write_bytes(b"")
    return [
        (["report", tmp_path / "missing"], lambda: xmem.report(tmp_path / "missing")),
        (["report", garbage], lambda: xmem.report(garbage)),
        (["report", empty], lambda: xmem.report(empty)),
        (["report", PROFILE, "--module", "no_such_module"], lambda: xmem.report(PROFILE, module="no_such_module")),
        (["report", PROFILE, "--memory-space", "/["], lambda: xmem.report(PROFILE, memory_space="/[")),
        (["diff", PAIR_BASE, DEVICE_MEMORY], lambda: xmem.diff(PAIR_BASE, DEVICE_MEMORY)),
        (["oom", tmp_path / "missing.log"], lambda: xmem.oom(tmp_path / "missing.log")),
        (["plot", tmp_path / "missing", "-o", tmp_path], lambda: xmem.plot(tmp_path / "missing", tmp_path)),
    ]


def test_bad_input_raises_the_commands_one_line_error(tmp_path):
    for args, call in bad_inputs(tmp_path):
        binary = cli(*args)
        assert binary.returncode == 2, args
        with pytest.raises(xmem.XmemError) as raised:
            call()
        assert binary.stderr.decode().splitlines()[-1] == f"xmem: {raised.value}", args


def test_bad_option_raises():
    with pytest.raises(xmem.XmemError, match="invalid value 'many' for '--fail-if-over"):
        xmem.diff(PAIR_BASE, PAIR_NEW, fail_if_over="many")
    with pytest.raises(TypeError):
        xmem.report()


def cli_options(command):
    """The options `xmem COMMAND --help` lists, as {flag: default}: a switch
    defaults to False, an option without a default to None. --width and
    --color are the terminal's, for every command: the results render
    unwrapped and without colour."""
    import re

    options = {}
    flag = None
    for line in cli(command, "--help").stdout.decode().splitlines():
        stripped = line.strip()
        if line.startswith("      --") or line.startswith("  -"):
            name = stripped.split()[0] if stripped.startswith("--") else stripped.split(", ")[1].split()[0]
            flag = name[2:]
            options[flag] = None if "<" in stripped else False
        # clap's own `[default: 20]`, wherever the help wraps it; a default
        # described in words (`[default: a quarter of ...]`) is not a value.
        default = re.search(r"\[default: (\S+)\]", stripped)
        if flag and default and options[flag] is None:
            value = default.group(1)
            options[flag] = int(value) if value.isdigit() else value
    for terminal in ("width", "color", "help"):
        options.pop(terminal, None)
    return options


@pytest.mark.parametrize(
    "function, command, positional",
    [
        (xmem.report, "report", ["inputs"]),
        (xmem.diff, "diff", ["base", "new"]),
        (xmem.oom, "oom", ["path_or_text"]),
        (xmem.plot, "plot", ["input", "out_dir"]),
    ],
    ids=["report", "diff", "oom", "plot"],
)
def test_every_option_of_a_command_is_a_keyword_with_its_default(function, command, positional):
    import inspect
    from keyword import iskeyword

    parameters = inspect.signature(function).parameters
    keywords = {name: p.default for name, p in parameters.items() if p.kind == p.KEYWORD_ONLY}
    assert [name for name, p in parameters.items() if p.kind != p.KEYWORD_ONLY] == positional
    expected = {}
    for flag, default in cli_options(command).items():
        if command == "plot" and flag == "output":
            continue  # plot's -o DIR is its out_dir
        keyword = flag.replace("-", "_")
        expected[keyword + "_" if iskeyword(keyword) else keyword] = default
    assert keywords == expected


def test_report_takes_the_attribution_options():
    flags = ["--op-depth=2", "--at=ynn_fusion.6", "--peaks=2", "--peak-drop=20%", "--module=jit_train_step"]
    expected, _ = cli_json("report", PROFILE, *flags)
    got = xmem.report(PROFILE, op_depth=2, at="ynn_fusion.6", peaks=2, peak_drop="20%", module="jit_train_step")
    assert_same_json(got, expected)
    # Buffers at the peak are listed largest first, as the text lists them.
    sizes = [b["size_bytes"] for b in got["modules"][0]["memory_spaces"][0]["at_peak"]]
    assert sizes == sorted(sizes, reverse=True)


def test_diff_takes_min_peak():
    for min_peak in ("0", "1MiB"):
        expected, _ = cli_json("diff", PAIR_BASE, PAIR_NEW, "--fail-if-peak-grows=5%", f"--min-peak={min_peak}")
        assert_same_json(xmem.diff(PAIR_BASE, PAIR_NEW, fail_if_peak_grows="5%", min_peak=min_peak), expected)
    with pytest.raises(TypeError, match="min_peek"):
        xmem.diff(PAIR_BASE, PAIR_NEW, min_peek=0)


def test_output_writes_what_the_command_writes(tmp_path):
    for format in ("markdown", "pprof"):
        cli("report", PROFILE, f"--format={format}", "-o", tmp_path / f"cli.{format}")
        xmem.report(PROFILE, format=format, output=tmp_path / f"py.{format}")
        assert (tmp_path / f"py.{format}").read_bytes() == (tmp_path / f"cli.{format}").read_bytes()
