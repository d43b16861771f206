"""Small JAX programs compiled on the CPU, for test_jax.py, run in a process of
their own so that XLA's dump (XLA_FLAGS, set by the test) covers every
compilation from the start:

    python jax_programs.py OUT_DIR

For each program it writes OUT_DIR/<program>.json: the program's module name
and id, xmem.report() of its Compiled and of its Lowered, and xmem.fits() of
its Compiled against a limit one byte below the peak and one at it.
"""

import json
import sys
from pathlib import Path

import jax
import jax.numpy as jnp

import xmem
from xmem import _jax


def mlp_loss(params, x, y):
    h = x
    for w in params:
        h = jnp.tanh(h @ w)
    return ((h - y) ** 2).mean()


def mlp_step(params, x, y):
    grads = jax.grad(mlp_loss)(params, x, y)
    return [p - 0.1 * g for p, g in zip(params, grads)]


@jax.jit
def encode(x, w):
    return jax.nn.relu(x @ w)


def nested(x, w, v):
    """A jit calling another jit: XLA inlines the inner one into this module."""
    return (encode(x, w) @ v).sum(), encode(x * 2, w)


def scanned(carry, xs):
    """A loop: its body is a computation of its own in the module."""

    def body(c, x):
        c = jnp.tanh(c @ x)
        return c, c.sum()

    return jax.lax.scan(body, carry, xs)


PROGRAMS = {
    "mlp_step": (
        mlp_step,
        ([jnp.ones((256, 256)) for _ in range(3)], jnp.ones((512, 256)), jnp.ones((512, 256))),
    ),
    "nested": (nested, (jnp.ones((128, 256)), jnp.ones((256, 512)), jnp.ones((512, 64)))),
    "scanned": (scanned, (jnp.ones((64, 64)), jnp.ones((8, 64, 64)))),
}


def main(out: Path) -> None:
    for name, (function, args) in PROGRAMS.items():
        lowered = jax.jit(function).lower(*args)
        compiled = lowered.compile()
        _, _, path = _jax.protos_of(compiled)
        report = xmem.report(compiled)
        module = report["modules"][0]
        peak = module["memory_spaces"][0]["peak_bytes"]
        below, at = xmem.fits(compiled, limit=peak - 1), xmem.fits(compiled, limit=peak)
        result = {
            "jaxlib": _jax.jaxlib_version(),
            "path": path,
            "name": module["name"],
            "program_id": module["program_id"],
            "compiled": report,
            "compiled_text": str(report),
            "lowered": xmem.report(jax.jit(function).lower(*args)),
            "fits_below_peak": {"fits": below.fits, "checks": below.checks, "text": str(below), "html": below._repr_html_()},
            "fits_at_peak": {"fits": at.fits, "checks": at.checks, "text": str(at)},
        }
        (out / f"{name}.json").write_text(json.dumps(result, default=str))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
