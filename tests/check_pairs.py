#!/usr/bin/env python3
"""Run each pair of models in DIR (`<case>/a.onnx`, the graph as generated, and `<case>/b.onnx`, the
same graph optimized by fxonnx) in ONNX Runtime on the same random inputs, and compare every output:
the optimizer's rewrites must not change results. Symbolic dims (`N`) are tried at 1, 2 and 3. ONNX
Runtime's own graph optimizations are off: the models run as written.

    python tests/check_pairs.py DIR

Prints one JSON line: cases, evaluated, skipped (the original has no ONNX Runtime kernel: not the
optimizer's concern), and each failure (the optimized model does not load, or an output differs).
Exits 1 if any failed. Used by tests/optimizer_props.rs and, on pairs a fuzzing run kept
(`FXONNX_FUZZ_SAVE=DIR fuzz/run.sh 60 optimizer`), by hand.
"""
import json
import pathlib
import sys

import numpy as np
import onnx
import onnxruntime as ort

ort.set_default_logger_severity(3)
TYPES = {
    "tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(float16)": np.float16,
    "tensor(int64)": np.int64, "tensor(int32)": np.int32, "tensor(bool)": np.bool_,
}


def session(path):
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def inputs(sess, n, rng):
    feed = {}
    for i in sess.get_inputs():
        shape = [d if isinstance(d, int) else n for d in i.shape]
        t = TYPES[i.type]
        if t is np.bool_:
            feed[i.name] = rng.integers(0, 2, size=shape).astype(np.bool_)
        elif np.issubdtype(t, np.integer):
            feed[i.name] = rng.integers(-4, 5, size=shape).astype(t)
        else:
            feed[i.name] = rng.uniform(-2, 2, size=shape).astype(t)
    return feed


def has_narrow_floats(path):
    """Whether the graph computes anything in float32 or float16 (a double output may come from it)."""
    g = onnx.load(str(path)).graph
    types = [v.type.tensor_type.elem_type for v in [*g.input, *g.value_info, *g.output]]
    types += [t.data_type for t in g.initializer]
    types += [a.i for n in g.node if n.op_type == "Cast" for a in n.attribute if a.name == "to"]
    return any(t in (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16) for t in types)


def differs(a, b, narrow):
    if a.shape != b.shape or a.dtype != b.dtype:
        return f"shape/type {a.shape} {a.dtype} vs {b.shape} {b.dtype}"
    if not np.issubdtype(a.dtype, np.floating):
        return None if np.array_equal(a, b) else f"max diff {np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))}"
    # Rewrites reassociate (a fused norm, a folded BatchNormalization): float32's rounding, and
    # float16's, in doubles too where they were computed in float32 first.
    tol = 2e-2 if a.dtype == np.float16 else (1e-9 if a.dtype == np.float64 and not narrow else 1e-3)
    if np.allclose(a, b, rtol=tol, atol=tol, equal_nan=True):
        return None
    bad = ~np.isclose(a, b, rtol=tol, atol=tol, equal_nan=True)
    return f"{int(bad.sum())} of {a.size} differ, e.g. {a[bad].flat[0]!r} vs {b[bad].flat[0]!r}"


def main(folder):
    cases = sorted(p for p in pathlib.Path(folder).iterdir() if (p / "a.onnx").exists())
    evaluated, skipped, failures = 0, 0, []
    for k, case in enumerate(cases):
        try:
            a = session(case / "a.onnx")
        except Exception as e:  # noqa: BLE001 - a kernel ONNX Runtime lacks: not the optimizer's
            skipped += 1
            continue
        try:
            b = session(case / "b.onnx")
        except Exception as e:  # noqa: BLE001
            failures.append((case.name, f"the optimized model does not load: {str(e).splitlines()[0][:300]}"))
            continue
        names = [o.name for o in a.get_outputs()]
        if names != [o.name for o in b.get_outputs()]:
            failures.append((case.name, f"outputs {names} became {[o.name for o in b.get_outputs()]}"))
            continue
        symbolic = any(not isinstance(d, int) for i in a.get_inputs() for d in i.shape)
        narrow = has_narrow_floats(case / "a.onnx")
        ok = True
        for n in (1, 2, 3) if symbolic else (2,):
            feed = inputs(a, n, np.random.default_rng(k * 7 + n))
            try:
                want = a.run(None, feed)
            except Exception:  # noqa: BLE001 - a run ONNX Runtime refuses (no kernel for a type)
                ok = None
                break
            try:
                got = b.run(None, feed)
            except Exception as e:  # noqa: BLE001
                failures.append((case.name, f"N={n}: the optimized model fails: {str(e).splitlines()[0][:300]}"))
                ok = False
                break
            for name, x, y in zip(names, want, got):
                why = differs(np.asarray(x), np.asarray(y), narrow)
                if why:
                    failures.append((case.name, f"N={n}: output {name}: {why}"))
                    ok = False
            if not ok:
                break
        if ok is None:
            skipped += 1
        else:
            evaluated += 1
    print(json.dumps({"cases": len(cases), "evaluated": evaluated, "skipped": skipped, "failures": failures}))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
