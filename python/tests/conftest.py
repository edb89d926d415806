import sys
import pathlib

# The tests import the installed package, never the source folder beside them.
here = str(pathlib.Path(__file__).resolve().parents[1])
sys.path[:] = [p for p in sys.path if pathlib.Path(p or ".").resolve() != pathlib.Path(here)]
