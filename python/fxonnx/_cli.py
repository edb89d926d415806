"""The ``fxonnx`` command that ``pip install`` puts on the PATH: the Rust command line itself, and,
for a TorchScript program (a file ``torch.jit.save`` wrote), the TorchScript front end, which needs
Python and torch:

    fxonnx export model.pt -o model.onnx --example inputs.npz [--input-names x] [--output-names y]
                  [--dynamic-axes x:0=batch,1 --dynamic-axes y:0] [--opset 18] [--external-data]
                  [--no-optimize] [--target onnxruntime] [--report]

``--example`` holds the inputs to convert on, in order: an ``.npz`` (arrays ``input_0``,
``input_1``, ... or in the file's order) or a ``.pt`` file of ``torch.save((x, y))``.
"""

import argparse
import sys

from ._fxonnx import cli


def main() -> None:
    argv = sys.argv[1:]
    if len(argv) >= 2 and argv[0] == "export" and _is_torchscript(argv[1]):
        sys.exit(_export_torchscript(argv[1:]))
    sys.exit(cli(["fxonnx", *argv]))


def _is_torchscript(path: str) -> bool:
    from ._api import _is_torchscript_file

    return _is_torchscript_file(path)


def _dynamic_axes(specs: list[str]) -> dict:
    """``x:0=batch,1`` (repeatable) as torch.onnx's ``dynamic_axes``: ``{"x": {0: "batch", 1: "x_dynamic_axes_2"}}``."""
    out: dict = {}
    for spec in specs:
        name, _, axes = spec.partition(":")
        if not axes:
            raise SystemExit(f"error: --dynamic-axes {spec}: give NAME:AXIS[=DIM][,AXIS[=DIM]...]")
        named = {}
        for k, item in enumerate(axes.split(",")):
            axis, _, dim = item.partition("=")
            named[int(axis)] = dim or f"{name}_dynamic_axes_{k + 1}"
        out[name] = named
    return out


def _examples(path: str) -> tuple:
    import numpy as np
    import torch

    if path.endswith(".npz"):
        with np.load(path) as data:
            keys = sorted(data.files, key=lambda k: (not k.startswith("input_"), int(k[6:]) if k[6:].isdigit() else 0))
            return tuple(torch.from_numpy(data[k]) for k in keys)
    loaded = torch.load(path, weights_only=True)
    return tuple(loaded) if isinstance(loaded, (list, tuple)) else (loaded,)


def _export_torchscript(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="fxonnx export", description="Export a TorchScript program to ONNX.")
    parser.add_argument("model", help="the file torch.jit.save wrote")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--example", required=True, help="the inputs to convert on (.npz or torch.save'd .pt)")
    parser.add_argument("--input-names", default="")
    parser.add_argument("--output-names", default="")
    parser.add_argument("--dynamic-axes", action="append", default=[], metavar="NAME:AXIS[=DIM],...")
    parser.add_argument("--opset", type=int, default=None)
    parser.add_argument("--external-data", action="store_true")
    parser.add_argument("--no-optimize", action="store_true")
    parser.add_argument("--target", default="onnx")
    parser.add_argument("--report", action="store_true")
    a = parser.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("error: converting a TorchScript program needs torch: pip install fxonnx[torch]", file=sys.stderr)
        return 1
    from . import _api, _errors

    split = [n for n in a.input_names.split(",") if n] or None
    try:
        _api.export(torch.jit.load(a.model), _examples(a.example), a.output, dynamo=False, input_names=split,
                    output_names=[n for n in a.output_names.split(",") if n] or None,
                    dynamic_axes=_dynamic_axes(a.dynamic_axes) or None, opset_version=a.opset,
                    external_data=a.external_data, optimize=not a.no_optimize, target=a.target, report=a.report,
                    verbose=False)
    except _errors.ExportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    main()
