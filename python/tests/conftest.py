import os
import pathlib
import sys

# The tests import the installed package, never the source folder beside them (unless the
# package is installed editable, `maturin develop`, and FXONNX_TEST_EDITABLE=1 says so).
here = str(pathlib.Path(__file__).resolve().parents[1])
if not os.environ.get("FXONNX_TEST_EDITABLE"):
    sys.path[:] = [p for p in sys.path if pathlib.Path(p or ".").resolve() != pathlib.Path(here)]


def pytest_configure(config):
    config.addinivalue_line("markers", "torch_onnx: runs torch.onnx.export itself (the yardstick of the port)")
    config.addinivalue_line("markers", "slow: a test that takes more than a few seconds")
