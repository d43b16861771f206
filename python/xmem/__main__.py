"""The ``xmem`` command (and ``python -m xmem``): the Rust command line, run in
this process by the extension module, with the same flags, output and exit
codes as the ``xmem`` binary."""

import signal
import sys

from . import _native


def main() -> int:
    # Ctrl-C stops xmem at once, as it stops the binary: Python's own handler
    # would wait for the Rust code to return before raising KeyboardInterrupt.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    return _native.run_cli(["xmem", *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
