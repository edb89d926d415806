#!/usr/bin/env python3
"""Run onnx.checker (full check) and ONNX Runtime's loader on every model a fuzzing run kept
(`FXONNX_FUZZ_SAVE=DIR fuzz/run.sh ...`): every model fxonnx writes from a mutant must be valid.

    python fuzz/check_models.py DIR

Prints the counts and each failure's first line; exits 1 if any model fails.
"""
import pathlib
import sys

import onnx
import onnxruntime as ort

ort.set_default_logger_severity(3)
models = sorted(pathlib.Path(sys.argv[1]).glob("*.onnx"))
bad = []
for m in models:
    try:
        proto = onnx.load(str(m))
        onnx.checker.check_model(proto, full_check=True)
        ort.InferenceSession(str(m), providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 - every failure is reported
        bad.append((m.name, str(e).strip().splitlines()[0][:200]))
print(f"{len(models)} models, {len(models) - len(bad)} pass onnx.checker (full) and load in ONNX Runtime, {len(bad)} fail")
for name, err in bad:
    print(f"  {name}: {err}")
sys.exit(1 if bad else 0)
