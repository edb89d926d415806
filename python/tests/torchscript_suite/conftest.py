"""The switch and the recorder of the ported TorchScript-exporter suite (written for fxonnx).

``FXONNX_SUITE_EXPORTER``: ``torchscript`` | ``dynamo`` | ``fxonnx`` | ``fxonnx-dynamo`` (see
``suite_harness.py``). Without it the suite is not collected at all: it is a measurement
(``benches/torchscript_suite.py``), not one of the project's checks.

``FXONNX_SUITE_RESULTS``: a JSONL file; one line per test is appended with its outcome class:
``pass``, ``export fails``, ``ort fails``, ``wrong`` (outputs differ from eager beyond the test's
tolerance, or shapes/dtypes/counts differ), ``skipped`` (the suite's own skip decorators), ``other``
(the test body failed outside export / ONNX Runtime / comparison, e.g. an error it expects was not
raised). ``FXONNX_SUITE_RESULTS`` + ``.current`` names the test running now (for a watchdog).

Only the test call is changed: ``torch.onnx.export`` is the chosen exporter during the test (for
the tests that call it themselves), torch runs on one thread.
"""

from __future__ import annotations

import json
import os
import time

import pytest

_EXPORTER = os.environ.get("FXONNX_SUITE_EXPORTER", "")
collect_ignore_glob: list[str] = []
if not _EXPORTER:
    collect_ignore_glob = ["*.py"]
else:
    for _mod in ("parameterized", "expecttest", "torchvision", "onnxruntime", "onnx"):
        try:
            __import__(_mod)
        except ImportError:
            collect_ignore_glob = ["*.py"]
            break

if collect_ignore_glob == []:
    import torch

    torch.set_num_threads(1)
    import suite_harness

_RESULTS = os.environ.get("FXONNX_SUITE_RESULTS")


def _write(record: dict) -> None:
    if not _RESULTS:
        return
    with open(_RESULTS, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, default=str) + "\n")


def _set_current(text: str) -> None:
    if not _RESULTS:
        return
    with open(_RESULTS + ".current", "w", encoding="utf-8") as fh:
        fh.write(text)


@pytest.fixture(autouse=True)
def _suite_exporter(monkeypatch):
    """``torch.onnx.export`` inside a test is the exporter under test."""
    monkeypatch.setattr(torch.onnx, "export", suite_harness.body_export)
    yield


def _mode(item) -> str:
    cls = item.cls.__name__ if item.cls is not None else ""
    return "scripting" if "is_script_True" in cls else "tracing"


def pytest_runtest_setup(item):
    suite_harness.reset(item.nodeid)
    item._suite_t0 = time.monotonic()
    t0 = time.time()
    _set_current(json.dumps({"nodeid": item.nodeid, "t0": t0, "phase": "test"}))
    suite_harness.on_phase = lambda name: _set_current(json.dumps({"nodeid": item.nodeid, "t0": t0, "phase": name}))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if getattr(item, "_suite_recorded", False):
        return
    if not (rep.when == "call" or (rep.when == "setup" and not rep.passed)):
        return
    item._suite_recorded = True
    record = {
        "nodeid": item.nodeid,
        "test": item.name,
        "class": item.cls.__name__ if item.cls is not None else "",
        "exporter": _EXPORTER,
        "mode": _mode(item),
        "seconds": round(time.monotonic() - getattr(item, "_suite_t0", time.monotonic()), 3),
        "exports": suite_harness.STATE.exports,
        "exported": suite_harness.STATE.exported,
        "ort_runs": suite_harness.STATE.ort_runs,
    }
    if rep.skipped:
        reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        record.update(outcome="skipped", error=str(reason)[:500])
    elif rep.passed:
        record.update(outcome="pass")
    else:
        exc = call.excinfo.value if call.excinfo is not None else None
        record.update(suite_harness.classify_failure(exc))
    _write(record)


def pytest_runtest_teardown(item):
    suite_harness.on_phase = None
    _set_current("")
