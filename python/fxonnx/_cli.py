"""The ``fxonnx`` command that ``pip install`` puts on the PATH: the Rust command line itself."""

import sys

from ._fxonnx import cli


def main() -> None:
    sys.exit(cli(["fxonnx", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
