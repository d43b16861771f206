"""Which way xmem finds a compiled program's protos with the jaxlib at hand,
and how its report compares with the XLA dump of the same compilation: one
row of the table in README.md ("Will it fit?"). Run it in a venv per jaxlib:

    pip install jax==X jaxlib==X ./   (or the xmem wheel)
    XMEM_BIN=target/debug/xmem python python/tests/jaxlib_ways.py
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

DUMP = tempfile.mkdtemp(prefix="xmem-jaxlib-ways-")
os.environ["XLA_FLAGS"] = f"--xla_dump_to={DUMP} --xla_dump_hlo_as_proto"

import jax  # noqa: E402

import xmem  # noqa: E402
from xmem import _jax  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from jax_programs import PROGRAMS  # noqa: E402

function, args = PROGRAMS["mlp_step"]
compiled = jax.jit(function).lower(*args).compile()
_, _, way = _jax.protos_of(compiled)
got = xmem.report(compiled)["modules"][0]
dumped = subprocess.run(
    [os.environ.get("XMEM_BIN", "xmem"), "report", DUMP, "--module", str(got["program_id"]), "--format", "json"],
    capture_output=True,
    check=True,
).stdout
expected = json.loads(dumped)["modules"][0]
space, dumped_space = got["memory_spaces"][0], expected["memory_spaces"][0]
lowered = xmem.report(jax.jit(function).lower(*args))["modules"][0]["memory_spaces"][0]
print(
    f"| {_jax.jaxlib_version()} | {way} | {space['heap_simulation']}: peak {space['peak_bytes']} "
    f"(dump {dumped_space['peak_bytes']}) | {lowered['heap_simulation']}: peak {lowered['peak_bytes']} |"
)
