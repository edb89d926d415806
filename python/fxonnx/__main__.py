"""``python -m fxonnx``: the ``fxonnx`` command line (``python -m fxonnx export model.pt2 -o model.onnx``)."""

from ._cli import main

if __name__ == "__main__":
    main()
