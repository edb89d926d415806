"""The exporter switch and the outcome recording of the ported TorchScript-exporter suite.

Not copied from PyTorch: written for fxonnx. The suite's ``run_test`` (``onnx_test_common.py``)
calls ``verify`` below instead of torch 2.6's ``torch.onnx.verification.verify``. ``verify`` is
torch 2.15's ``torch.onnx._internal.torchscript_exporter.verification.verify`` (the same code as
2.6's public one, moved there when it was deprecated) with two changes only:

* the export: ``export_with`` calls the exporter named by ``FXONNX_SUITE_EXPORTER`` with the
  arguments the suite passes, unchanged:

  - ``torchscript``: ``torch.onnx.export(..., dynamo=False)`` (the yardstick; the one test that
    passes the legacy ``fixed_batch_size=True`` goes through ``utils._export`` as 2.6's verify did),
  - ``dynamo``: ``torch.onnx.export(..., dynamo=True)``,
  - ``fxonnx``: ``fxonnx.export(...)`` with the suite's arguments as they are; in torch 2.6 (the
    suite's torch) ``torch.onnx.export`` meant ``dynamo=False``, so that is what is passed,
  - ``fxonnx-dynamo``: ``fxonnx.export(..., dynamo=True)``.

  The model is written to a file in a temporary folder (not a ``BytesIO``), so that an exporter
  that keeps the weights beside the model (``external_data``) is read back as it wrote it.
  ``fixed_batch_size`` is not an argument of ``torch.onnx.export`` / ``fxonnx.export``: dropped
  for the other exporters.

* the inputs fed to ONNX Runtime: the TorchScript exporter removes unused inputs, which the suite
  says with ``remained_onnx_input_idx``; the dynamo exporters keep them. For an exporter other than
  ``torchscript``, when the model's inputs (initializers fed as inputs left out) are as many as
  all the flattened inputs, all are fed; else the suite's own choice is fed (the suite's code,
  unchanged, for ``torchscript``).

The comparison is the suite's own (``_compare_onnx_pytorch_outputs``: ``assert_close`` with the
test's ``rtol``/``atol``, shapes and dtypes checked unless the test says not), for the main
inputs and every ``additional_test_inputs`` set. ONNX Runtime runs with one thread.

Each step runs inside ``phase(...)``, which remembers the step where an exception came from; the
conftest turns that into the test's outcome class (export fails / ort fails / wrong / other).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import tempfile
import traceback

import torch
from torch.onnx._internal.torchscript_exporter import utils as _ts_utils
from torch.onnx._internal.torchscript_exporter import verification as _V

EXPORTERS = ("torchscript", "dynamo", "fxonnx", "fxonnx-dynamo")
EXPORTER = os.environ.get("FXONNX_SUITE_EXPORTER", "")

# torch.onnx.export as torch ships it: the conftest swaps torch.onnx.export for ``body_export``
# during each test (tests that call torch.onnx.export themselves), so keep the original here.
_torch_onnx_export = torch.onnx.export


@dataclasses.dataclass
class _State:
    nodeid: str = ""
    stack: list = dataclasses.field(default_factory=list)
    failures: list = dataclasses.field(default_factory=list)  # (phase, exception, detail)
    exports: int = 0
    exported: int = 0
    ort_runs: int = 0
    in_export: bool = False


STATE = _State()


def reset(nodeid: str = "") -> None:
    global STATE
    STATE = _State(nodeid=nodeid)


def current_phase() -> str | None:
    return STATE.stack[-1] if STATE.stack else None


on_phase = None  # set by the conftest: called with the phase entered (for the watchdog's file)


@contextlib.contextmanager
def phase(name: str):
    STATE.stack.append(name)
    if on_phase is not None:
        on_phase(name)
    try:
        yield
    except BaseException as e:  # noqa: BLE001 - remembered, then raised again as it was
        if not any(f[1] is e for f in STATE.failures):
            STATE.failures.append((name, e, _detail(e)))
        raise
    finally:
        STATE.stack.pop()


def _detail(e: BaseException, limit: int = 4000) -> str:
    """The exception and its causes, as text (for the grouping of failure reasons)."""
    parts = []
    seen = set()
    cur: BaseException | None = e
    while cur is not None and id(cur) not in seen and len(parts) < 6:
        seen.add(id(cur))
        parts.append(f"{type(cur).__module__}.{type(cur).__qualname__}: {cur}")
        cur = cur.__cause__ or cur.__context__
    text = "\n--- caused by ---\n".join(parts)
    if len(text) > limit:
        text = text[:limit] + " ..."
    return text


def _fields(e: BaseException) -> dict:
    """fxonnx's error fields (``stage``, ``node``, ``target``; a CaptureError's strategies)."""
    out = {}
    for c in _chain(e):
        for k in ("stage", "node", "target"):
            v = getattr(c, k, None)
            if v is not None and k not in out:
                out[k] = str(v)[:300]
        errors = getattr(c, "errors", None)
        if isinstance(errors, dict) and errors and "strategies" not in out:
            out["strategies"] = {str(k): f"{type(v).__name__}: {v}"[:1500] for k, v in errors.items()}
    return out


def _tail(e: BaseException) -> str:
    tb = traceback.extract_tb(e.__traceback__)
    return " <- ".join(f"{os.path.basename(f.filename)}:{f.lineno}:{f.name}" for f in tb[-4:][::-1])


# ----------------------------------------------------------------------------------------------
# The export


def export_with(model, args, f, **kwargs):
    """The chosen exporter, called with the suite's arguments (torch 2.6 semantics: no ``dynamo``
    argument meant the TorchScript exporter)."""
    if EXPORTER not in EXPORTERS:
        raise RuntimeError(f"FXONNX_SUITE_EXPORTER={EXPORTER!r}: choose one of {', '.join(EXPORTERS)}")
    dynamo = kwargs.pop("dynamo", False)
    fixed_batch_size = kwargs.pop("fixed_batch_size", False)
    STATE.exports += 1
    saved = STATE.in_export
    STATE.in_export = True
    try:
        with phase("export"):
            if EXPORTER == "torchscript":
                if fixed_batch_size:
                    result = _ts_utils._export(model, args, f, fixed_batch_size=True, **kwargs)
                else:
                    result = _torch_onnx_export(model, args, f, dynamo=False, **kwargs)
            elif EXPORTER == "dynamo":
                result = _torch_onnx_export(model, args, f, dynamo=True, **kwargs)
            else:
                import fxonnx

                result = fxonnx.export(model, args, f, dynamo=True if EXPORTER == "fxonnx-dynamo" else dynamo,
                                       **kwargs)
    finally:
        STATE.in_export = saved
    STATE.exported += 1
    return result


def body_export(model, args=(), f=None, **kwargs):
    """``torch.onnx.export`` as the test bodies that call it themselves see it."""
    if STATE.in_export:  # an exporter calling torch.onnx.export inside: leave it alone
        return _torch_onnx_export(model, args, f, **kwargs)
    return export_with(model, args, f, **kwargs)


# ----------------------------------------------------------------------------------------------
# ONNX Runtime, as torch's verification runs it (one thread here)


def _ort_session(model, ort_providers=_V._ORT_PROVIDERS):
    import onnxruntime

    with phase("ort-load"):
        so = onnxruntime.SessionOptions()
        so.log_severity_level = 3
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        return onnxruntime.InferenceSession(
            model if isinstance(model, str) else model.getvalue(), so, providers=list(ort_providers or _V._ORT_PROVIDERS)
        )


def _run_onnx(onnx_session, inputs):
    with phase("ort-run"):
        out = _V._run_onnx(onnx_session, inputs)
    STATE.ort_runs += 1
    return out


def _required_input_count(onnx_session, model_path) -> int:
    names = [i.name for i in onnx_session.get_inputs()]
    if not isinstance(model_path, str):
        return len(names)
    try:
        import onnx

        proto = onnx.load(model_path, load_external_data=False)
        inits = {i.name for i in proto.graph.initializer}
        return len([n for n in names if n not in inits])
    except Exception:  # noqa: BLE001
        return len(names)


def _inputs_for_onnx(onnx_session, model_f, input_args, input_kwargs, options):
    """The suite's inputs for the model (torchscript: the suite's code as it is). Another exporter's
    model may keep the inputs TorchScript removes (``remained_onnx_input_idx``), take a dict's
    values without its tensor keys, and fold Python numbers: the first of these candidates with as
    many inputs as the model wants is fed: every flattened input, the tensor leaves of the inputs'
    pytree, the flattened inputs less the Python numbers, the suite's choice."""
    suite_choice = _V._prepare_input_for_onnx(input_args, input_kwargs, options.remained_onnx_input_idx, options.flatten)
    if EXPORTER == "torchscript":
        return suite_choice
    from torch.utils import _pytree

    wanted = _required_input_count(onnx_session, model_f)
    every = _V._prepare_input_for_onnx(input_args, input_kwargs, None, options.flatten)
    pt_args, pt_kwargs = _V._prepare_input_for_pytorch(input_args, input_kwargs)
    leaves = [x for x in _pytree.tree_leaves((pt_args, pt_kwargs)) if isinstance(x, torch.Tensor)]
    tensors = [x for x in every if not isinstance(x, (bool, int, float))] if isinstance(every, (list, tuple)) else every
    for candidate in (every, leaves, tensors, suite_choice):
        if isinstance(candidate, (list, tuple)) and len(candidate) == wanted:
            return list(candidate)
    return suite_choice


def _compare_onnx_pytorch_model(pt_model, onnx_model_f, input_args, input_kwargs, additional_test_inputs, options):
    """torch's ``_compare_onnx_pytorch_model``, each step in its phase."""
    onnx_session = _ort_session(onnx_model_f, (options.backend.value,))

    def compare_onnx_pytorch_model_with_input(input_args, input_kwargs) -> None:
        pt_args, pt_kwargs = _V._prepare_input_for_pytorch(input_args, input_kwargs)
        with phase("eager"):
            pt_model_copy = _V._try_clone_model(pt_model)
            pt_outs = pt_model_copy(*pt_args, **pt_kwargs)
        onnx_inputs = _inputs_for_onnx(onnx_session, onnx_model_f, input_args, input_kwargs, options)
        onnx_outs = _run_onnx(onnx_session, onnx_inputs)
        with phase("compare"):
            _V._compare_onnx_pytorch_outputs(onnx_outs=onnx_outs, pt_outs=pt_outs, options=options)

    compare_onnx_pytorch_model_with_input(input_args, input_kwargs)
    if additional_test_inputs:
        for test_input_args in additional_test_inputs:
            compare_onnx_pytorch_model_with_input(test_input_args, {})


VerificationOptions = _V.VerificationOptions


def verify(
    model,
    input_args,
    input_kwargs=None,
    do_constant_folding=True,
    dynamic_axes=None,
    input_names=None,
    output_names=None,
    training=torch.onnx.TrainingMode.EVAL,
    opset_version=None,
    keep_initializers_as_inputs=True,
    verbose=False,
    fixed_batch_size=False,
    use_external_data=False,
    additional_test_inputs=None,
    options=None,
) -> None:
    """torch's ``verification.verify`` with the export done by ``export_with``."""
    del use_external_data  # the model always goes to a file here
    if options is None:
        options = VerificationOptions()
    if training == torch.onnx.TrainingMode.TRAINING:
        model.train()
    elif training == torch.onnx.TrainingMode.EVAL:
        model.eval()
    with torch.no_grad(), tempfile.TemporaryDirectory(prefix="fxonnx_suite_") as tmp:
        model_f = os.path.join(tmp, "model.onnx")
        inputs_for_export = _V._prepare_input_for_export(input_args, input_kwargs)
        model_copy = _V._try_clone_model(model)
        extra = {"fixed_batch_size": True} if fixed_batch_size else {}
        export_with(
            model,
            inputs_for_export,
            model_f,
            opset_version=opset_version,
            do_constant_folding=do_constant_folding,
            keep_initializers_as_inputs=keep_initializers_as_inputs,
            dynamic_axes=dynamic_axes,
            input_names=input_names,
            output_names=output_names,
            training=training,
            verbose=verbose,
            **extra,
        )
        _compare_onnx_pytorch_model(
            pt_model=model_copy,
            onnx_model_f=model_f,
            input_args=input_args,
            input_kwargs=input_kwargs,
            additional_test_inputs=additional_test_inputs,
            options=options,
        )


# ----------------------------------------------------------------------------------------------
# Outcome classes

PHASE_OUTCOME = {
    "script": "export fails",
    "export": "export fails",
    "ort-load": "ort fails",
    "ort-run": "ort fails",
    "compare": "wrong",
}


def _chain(e: BaseException):
    seen = set()
    cur = e
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        yield cur
        cur = cur.__cause__ or cur.__context__


def classify_failure(exc: BaseException | None) -> dict:
    """The outcome class of a failed test from the exception pytest saw."""
    text = f"{type(exc).__name__}: {exc}" if exc is not None else "(no exception)"
    if exc is not None and "Timeout" in text.split("\n", 1)[0] and type(exc).__name__ in ("Failed", "TimeoutError"):
        ph = current_phase() or (STATE.failures[-1][0] if STATE.failures else "test")
        return {"phase": ph, "outcome": PHASE_OUTCOME.get(ph, "other"), "timeout": True,
                "error": text.split("\n", 1)[0], "detail": text[:4000]}
    if exc is not None:
        chain = list(_chain(exc))
        for ph, e, detail in reversed(STATE.failures):
            if any(c is e for c in chain):
                return {"phase": ph, "outcome": PHASE_OUTCOME.get(ph, "other"), "error": _first_line(e),
                        "error_type": type(e).__name__, "detail": detail, "where": _tail(e), **_fields(e)}
    # the test body itself failed (an assertion of its own, an error that did not happen, ...)
    outcome = "other"
    if isinstance(exc, AssertionError) and STATE.ort_runs > 0 and "not raised" not in str(exc):
        outcome = "wrong"  # the body's own check of ONNX Runtime's outputs
    return {"phase": "test", "outcome": outcome, "error": _first_line(exc) if exc is not None else text,
            "error_type": type(exc).__name__, "detail": _detail(exc) if exc is not None else text,
            "where": _tail(exc) if exc is not None else ""}


def _first_line(e: BaseException) -> str:
    msg = str(e).strip()
    line = next((ln.strip() for ln in msg.splitlines() if ln.strip()), "")
    return f"{type(e).__name__}: {line}"[:500]
