"""PyTorch's TorchScript-exporter test suite (test/onnx/test_pytorch_onnx_onnxruntime.py, v2.6.0,
ported in python/tests/torchscript_suite/) run with each exporter: the outcome of every test per
exporter and mode, in reports/torchscript.md (counts side by side, fxonnx's failures grouped by
cause) and reports/torchscript.json (per test).

    python benches/torchscript_suite.py                       # tracing, torchscript,dynamo,fxonnx-dynamo
    python benches/torchscript_suite.py --mode both --exporters torchscript
    python benches/torchscript_suite.py --sample 40 --exporters torchscript,dynamo
    python benches/torchscript_suite.py --filter 'test_rnn|lstm' --exporters fxonnx-dynamo
    python benches/torchscript_suite.py --report-only         # the report from the runs kept

Exporters: ``torchscript`` (torch.onnx.export(..., dynamo=False), the yardstick), ``dynamo``
(torch.onnx.export(..., dynamo=True)), ``fxonnx`` (fxonnx.export with the suite's arguments:
dynamo=False, fxonnx's TorchScript front end), ``fxonnx-dynamo`` (fxonnx.export(..., dynamo=True)).

Each (exporter, mode) runs in a pytest subprocess (``-p no:cacheprovider``, pytest-timeout's signal
timeout per test, one torch / ONNX Runtime thread); a watchdog kills a test that hangs in native
code past the timeout, or notes one that crashes the process, and goes on with the rest. Each run's
JSONL is kept in --work-dir ({exporter}-{mode}.jsonl); the report is made from every run kept there,
so exporters and modes can be run one at a time. ``--resume`` skips tests already recorded.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import pathlib
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
SUITE = ROOT / "python" / "tests" / "torchscript_suite"
TEST_FILE = SUITE / "test_pytorch_onnx_onnxruntime.py"
EXPORTERS = ("torchscript", "dynamo", "fxonnx", "fxonnx-dynamo")
TITLES = {
    "torchscript": "TorchScript exporter",
    "dynamo": "torch.onnx dynamo",
    "fxonnx": "fxonnx (dynamo=False)",
    "fxonnx-dynamo": "fxonnx (dynamo=True)",
}
OUTCOMES = ("pass", "export fails", "ort fails", "wrong", "other", "skipped")
CLASS = {
    "tracing": "TestONNXRuntime_opset_version_18_is_script_False_keep_initializers_as_inputs_False",
    "scripting": "TestONNXRuntime_opset_version_18_is_script_True_keep_initializers_as_inputs_False",
}


def _env(exporter: str | None, results: pathlib.Path | None) -> dict:
    env = dict(os.environ)
    env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", FXONNX_TEST_EDITABLE="1",
               PYTHONDONTWRITEBYTECODE="1", PYTHONWARNINGS="ignore")
    env.pop("CI", None)  # the suite's skip_in_ci would skip
    if exporter:
        env["FXONNX_SUITE_EXPORTER"] = exporter
    if results:
        env["FXONNX_SUITE_RESULTS"] = str(results)
    return env


def collect(mode: str) -> list[str]:
    cmd = ["nice", "-n", "10", sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q",
           str(TEST_FILE.relative_to(ROOT))]
    out = subprocess.run(cmd, cwd=ROOT, env=_env("torchscript", None), capture_output=True, text=True)
    ids = [ln.strip() for ln in out.stdout.splitlines() if "::" in ln and f"::{CLASS[mode]}::" in ln]
    if not ids:
        sys.exit(f"no tests collected for {mode}:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    return ids


def select(ids: list[str], pattern: str | None, sample: int | None, seed: int) -> list[str]:
    if pattern:
        rx = re.compile(pattern)
        ids = [i for i in ids if rx.search(i.rsplit("::", 1)[-1])]
    if sample and sample < len(ids):
        ids = sorted(random.Random(seed).sample(ids, sample), key=ids.index)
    return ids


def _read_jsonl(path: pathlib.Path) -> list[dict]:
    if not path.exists():
        return []
    out = []
    for ln in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(ln))
        except json.JSONDecodeError:
            pass
    return out


def run(exporter: str, mode: str, ids: list[str], work: pathlib.Path, timeout: int, resume: bool) -> float:
    """Runs the tests in pytest subprocesses until each has a record; returns the seconds taken."""
    results = work / f"{exporter}-{mode}.jsonl"
    current = pathlib.Path(str(results) + ".current")
    if not resume and results.exists():
        results.unlink()
    t0 = time.monotonic()
    crashes = 0
    while True:
        done = {r["nodeid"] for r in _read_jsonl(results)}
        todo = [i for i in ids if i not in done]
        if not todo:
            break
        print(f"[{exporter}/{mode}] {len(todo)} to run ({len(done & set(ids))} recorded)", flush=True)
        args_file = work / f"{exporter}-{mode}.args"
        args_file.write_text("\n".join(todo) + "\n")
        current.write_text("")
        log = open(work / f"{exporter}-{mode}.log", "a", encoding="utf-8")
        cmd = ["nice", "-n", "10", sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rN",
               "--no-header", "-W", "ignore", "--timeout", str(timeout), "--timeout-method", "signal",
               f"@{args_file}"]
        proc = subprocess.Popen(cmd, cwd=ROOT, env=_env(exporter, results), stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        killed = None
        while proc.poll() is None:
            time.sleep(3)
            try:
                cur = json.loads(current.read_text() or "null")
            except (OSError, json.JSONDecodeError):
                cur = None
            if cur and time.time() - cur["t0"] > timeout + 90:
                killed = cur
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        log.close()
        try:
            cur = killed or json.loads(current.read_text() or "null")
        except (OSError, json.JSONDecodeError):
            cur = None
        done = {r["nodeid"] for r in _read_jsonl(results)}
        if cur and cur.get("nodeid") and cur["nodeid"] not in done:
            ph = cur.get("phase") or "test"
            outcome = {"script": "export fails", "export": "export fails", "ort-load": "ort fails",
                       "ort-run": "ort fails", "compare": "wrong"}.get(ph, "other")
            why = (f"killed: still running after {timeout + 90}s" if killed
                   else f"the test process died (exit code {proc.returncode})")
            test = cur["nodeid"].rsplit("::", 1)[-1]
            rec = {"nodeid": cur["nodeid"], "test": test, "class": cur["nodeid"].split("::")[-2], "exporter": exporter,
                   "mode": mode, "seconds": round(time.time() - cur["t0"], 1), "outcome": outcome, "phase": ph,
                   "error": f"{'Hang' if killed else 'Crash'}: {why} (in phase {ph})", "detail": why,
                   "timeout": bool(killed), "crash": not killed}
            with open(results, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(rec) + "\n")
            crashes += 1
            if crashes > 50:
                sys.exit(f"[{exporter}/{mode}] more than 50 crashes: see {work}")
            continue
        if {i for i in todo if i not in done}:
            # the process ended without recording some tests and no test was running: give up on them
            missing = [i for i in todo if i not in done]
            with open(results, "a", encoding="utf-8") as fh:
                for nodeid in missing:
                    fh.write(json.dumps({"nodeid": nodeid, "test": nodeid.rsplit("::", 1)[-1], "exporter": exporter,
                                         "mode": mode, "outcome": "other", "phase": "harness",
                                         "error": f"not run: pytest exited with {proc.returncode}"}) + "\n")
            print(f"[{exporter}/{mode}] {len(missing)} tests not run (pytest exit {proc.returncode}); "
                  f"see {work / f'{exporter}-{mode}.log'}", flush=True)
            break
    return time.monotonic() - t0


# ----------------------------------------------------------------------------------------------
# Grouping fxonnx's failures by cause


def _text(r: dict) -> str:
    parts = [r.get("error") or "", r.get("detail") or ""]
    parts += list((r.get("strategies") or {}).values())
    return "\n".join(parts)


def _norm(text: str, n: int = 110) -> str:
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    text = re.sub(r"<class '(?:[\w.<>]+\.)?([\w]+)'>", r"<class \1>", text)
    text = re.sub(r"/tmp/\S+", "<file>", text)
    text = re.sub(r"0x[0-9a-fA-F]+", "0x…", text)
    text = re.sub(r"\b\d+(\.\d+)?\b", "N", text)
    text = re.sub(r"\s+", " ", text).strip()
    return text[:n] + ("…" if len(text) > n else "")


def _key_message(r: dict) -> str:
    """The message that says why: torch.onnx's exception summary, a CaptureError's first strategy's
    error, else the error's first line."""
    strategies = list((r.get("strategies") or {}).values())
    if strategies:
        return strategies[0].split("\n", 1)[0]
    detail = r.get("detail") or ""
    m = re.search(r"## Exception summary\s*\n\s*<class '([^']+)'>: ([^\n]*)", detail)
    if m:
        return f"{m.group(1).rsplit('.', 1)[-1]}: {m.group(2)}"
    return r.get("error") or ""


_OP = re.compile(r"OpOverload\(op='([^']+)', overload='([^']+)'\)")


def cause(r: dict) -> str:
    """A short cause for a failed test, from its first error line and its causes."""
    t = _text(r)
    low = t.lower()
    out = r["outcome"]
    key = _key_message(r)
    if r.get("timeout"):
        return f"{out}: timeout (phase {r.get('phase')})"
    if r.get("crash"):
        return f"{out}: process crash (phase {r.get('phase')})"
    if out == "wrong":
        err = (r.get("error") or "").lower()
        if "number of outputs differ" in low:
            return "wrong: number of outputs differs"
        if "'shape' do not match" in err:
            return "wrong: output shape differs"
        if "dtype" in err:
            return "wrong: output dtype differs"
        if r.get("phase") == "test":
            return "wrong: the test's own check of ONNX Runtime's outputs"
        return "wrong: values differ"
    if out == "export fails":
        if "dynamo=false" in low and "optionserror" in low:
            return "export fails: dynamo=False refused"
        if r.get("phase") == "script":
            return "export fails: torch.jit.script failed"
        if re.search(r"scriptmodule|scriptfunction|scriptobject|torch\.jit\.(?:script|trace)d?\b", low):
            return "export fails: capture: model is a ScriptModule / ScriptFunction"
        if re.search(r"packedsequence|pack_padded|packed_sequence", key.lower()) or re.search(
                r"(?<!without_)sequence_lengths|variable_length_sequences|packed", r.get("test", "")):
            return "export fails: capture: packed sequence (RNN)"
        if re.search(r"quantiz|qint8|quint8|qint32|packed_params|qscheme|quantized::", low) or re.match(
                r"test_(quantiz|qat_)", r.get("test", "")):
            return "export fails: quantized model"
        if re.search(r"data-dependent|data dependent|guardondatadependent|unbacked|could not guard|"
                     r"could not extract specialized integer", low):
            return "export fails: capture: data-dependent shape/value"
        if "failed to convert 'dynamic_axes' to 'dynamic_shapes'" in low:
            return "export fails: dynamic_axes could not be turned into dynamic_shapes"
        if "constraints violated" in low or "conflicts between user-specified ranges and inferred ranges" in low:
            return "export fails: capture: a dynamic axis is static in the model (range conflicts / constraints violated)"
        m = _OP.search(t)
        if r.get("error_type") == "UnsupportedOpsError" or "unsupportedopserror" in low or (m and "no onnx function" in low):
            op = r.get("target") or (f"{m.group(1)}.{m.group(2)}" if m else "?")
            return f"export fails: unsupported op {op}"
        if r.get("error_type") == "TranslationError":
            msg = re.sub(r"node `[^`]*`\s*(\([^)]*\))?:?\s*", "", (r.get("error") or "").split(":", 1)[-1])
            return f"export fails: translation of {r.get('target') or '?'}: {_norm(msg, 90)}"
        if r.get("stage") == "capture" or "torchexporterror" in low or "failed to export the model with torch.export" in low:
            return f"export fails: capture: other ({_norm(key)})"
        return f"export fails: {_norm(key, 130)}"
    if out == "ort fails":
        err = re.sub(r"inputs: \[.*", "", r.get("error") or "", flags=re.S)
        return f"ort fails: {_norm(err, 140)}"
    if out == "other":
        return f"other: {_norm(r.get('error') or '', 140)}"
    return out


def expecting_tests() -> set[str]:
    """The suite's test functions whose body expects an error (``assertRaises...``)."""
    import ast

    names = set()
    for node in ast.walk(ast.parse(TEST_FILE.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            if any(isinstance(n, ast.Attribute) and n.attr.startswith("assertRaises") for n in ast.walk(node)):
                names.add(node.name)
    return names


def _expects_error(test: str, names: set[str]) -> bool:
    return any(test == n or test.startswith(n + "_") for n in names)


def kind(r: dict) -> str:
    """The cause's family: the categories the report sums."""
    c = cause(r)
    for prefix, name in (
        ("export fails: dynamo=False refused", "dynamo=False refused"),
        ("export fails: torch.jit.script failed", "torch.jit.script failed"),
        ("export fails: capture: model is a ScriptModule", "model is a ScriptModule / ScriptFunction"),
        ("export fails: capture: packed sequence", "capture: packed sequence (RNN)"),
        ("export fails: quantized model", "quantized model"),
        ("export fails: capture: data-dependent", "capture: data-dependent shape/value"),
        ("export fails: capture: a dynamic axis is static", "capture: a dynamic axis is static in the model"),
        ("export fails: dynamic_axes could not", "dynamic_axes not convertible to dynamic_shapes"),
        ("export fails: capture: other", "capture: other"),
        ("export fails: unsupported op", "unsupported op"),
        ("export fails: translation", "translation refused"),
        ("export fails", "export fails: other"),
        ("ort fails", "ONNX Runtime fails"),
        ("wrong", "wrong (silently)"),
        ("other", "other (test body)"),
    ):
        if c.startswith(prefix):
            return name
    return c


# ----------------------------------------------------------------------------------------------
# Report


def load(work: pathlib.Path) -> dict:
    runs = {}
    for path in sorted(work.glob("*-*.jsonl")):
        exporter, mode = path.stem.rsplit("-", 1)
        if exporter in EXPORTERS and mode in CLASS:
            recs = {}
            for r in _read_jsonl(path):
                recs[r["nodeid"]] = r  # a later record of a test wins
            runs[(exporter, mode)] = recs
    return runs


# The tests only the TorchScript exporter passes that fxonnx does not pass on purpose: each asserts
# that exporter's refusal or its wrong binding, where fxonnx's model matches eager.
DELIBERATE = {
    "test_lstm_proj_no_hidden": "expects the export to raise: the TorchScript exporter has no LSTM with "
                                "`proj_size`; fxonnx exports one that matches eager",
    "test_interpolate_adaptive_pooling_error": "expects the export to raise: the TorchScript exporter has no area "
                                               "interpolation (adaptive average pooling) to a size that is not a "
                                               "multiple of the input's; fxonnx exports one that matches eager",
    "test_all_optional_default_tensor_script": "expects ONNX Runtime's outputs to differ from eager's: the "
                                               "TorchScript exporter feeds the keyword input `y` to the first "
                                               "optional parameter, `x`; fxonnx feeds it to `y` and matches eager",
}


def report(work: pathlib.Path, out_md: pathlib.Path, out_json: pathlib.Path, times: dict) -> None:
    runs = load(work)
    meta_path = work / "meta.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    meta.setdefault("times", {}).update({f"{e}-{m}": round(s) for (e, m), s in times.items()})
    meta_path.write_text(json.dumps(meta, indent=1))
    try:
        import torch, onnxruntime  # noqa: E401

        versions = f"torch {torch.__version__}, onnxruntime {onnxruntime.__version__}"
    except Exception:  # noqa: BLE001
        versions = ""
    lines = [
        "# PyTorch's TorchScript-exporter suite, per exporter",
        "",
        "PyTorch v2.6.0's `test/onnx/test_pytorch_onnx_onnxruntime.py` (ported in `python/tests/torchscript_suite/`,",
        "test bodies unchanged), opset 18, each test's `run_test` exporting with the exporter of the column and",
        "checking ONNX Runtime against eager with the suite's own comparator, tolerances and every",
        "`additional_test_inputs` set. Made by `benches/torchscript_suite.py`"
        + (f" ({versions}, {datetime.date.today()})." if versions else "."),
        "",
        "Columns: **TorchScript exporter** = `torch.onnx.export(..., dynamo=False)` (the yardstick); **torch.onnx dynamo** =",
        "`torch.onnx.export(..., dynamo=True)`; **fxonnx (dynamo=False)** = `fxonnx.export` with the suite's arguments as",
        "they are (torch 2.6's `torch.onnx.export` meant `dynamo=False`: fxonnx's TorchScript front end); **fxonnx (dynamo=True)** =",
        "`fxonnx.export(..., dynamo=True)`.",
        "",
        "Outcomes: *pass*; *export fails* (the exporter raised; in scripting mode also `torch.jit.script`); *ort fails*",
        "(ONNX Runtime cannot load or run the model, including inputs of another shape than the exported static one);",
        "*wrong* (exported and ran, but outputs differ from eager beyond the test's tolerance, or their shape, dtype or",
        "number differ: silently wrong); *other* (the test body failed elsewhere, e.g. an error it expects was not",
        "raised, or a crash outside export / ONNX Runtime); *skipped* (the suite's own skip decorators).",
        "",
        "Harness: the suite's class for opset 18 with `keep_initializers_as_inputs=False`; the model is written to a file;",
        "for the dynamo exporters ONNX Runtime is fed every input when the model kept the inputs TorchScript drops",
        "(`remained_onnx_input_idx`), see `suite_harness.py`. Runs: `nice -n 10`, one torch and ONNX Runtime thread, per-test",
        "timeout 300 s, on a 2-core machine shared with other work (some runs concurrent): run times are rough.",
        "",
    ]
    for mode in ("tracing", "scripting"):
        cols = [e for e in EXPORTERS if (e, mode) in runs]
        if not cols:
            continue
        lines += [f"## {mode.capitalize()} mode", ""]
        lines.append("| outcome | " + " | ".join(TITLES[e] for e in cols) + " |")
        lines.append("| --- |" + " ---: |" * len(cols))
        counts = {e: collections.Counter(r["outcome"] for r in runs[(e, mode)].values()) for e in cols}
        for o in OUTCOMES:
            lines.append(f"| {o} | " + " | ".join(str(counts[e].get(o, 0)) for e in cols) + " |")
        lines.append("| **total** | " + " | ".join(str(sum(counts[e].values())) for e in cols) + " |")
        vac = {e: sum(1 for r in runs[(e, mode)].values() if r["outcome"] == "pass" and r.get("exports") == 0)
               for e in cols}
        lines.append("| pass without an export ¹ | " + " | ".join(str(vac[e]) for e in cols) + " |")
        hung = {e: sum(1 for r in runs[(e, mode)].values() if r.get("timeout") or r.get("crash")) for e in cols}
        lines.append("| of which timeouts / crashes | " + " | ".join(str(hung[e]) for e in cols) + " |")
        secs = {e: meta.get("times", {}).get(f"{e}-{mode}") for e in cols}
        lines.append("| run time (s) | " + " | ".join(str(secs[e] or "–") for e in cols) + " |")
        lines.append("")
        lines.append("¹ The test's model is a `ScriptModule` that `run_test` only exports in scripting mode (or the "
                     "test exports nothing itself): it passes without an export in tracing mode, for every exporter.")
        lines.append("")
        if ("torchscript", mode) in runs:
            ts = runs[("torchscript", mode)]
            comp = []
            for e in cols:
                if e == "torchscript":
                    continue
                other = runs[(e, mode)]
                common = set(ts) & set(other)
                both = sum(1 for n in common if ts[n]["outcome"] == "pass" and other[n]["outcome"] == "pass")
                ts_only = sum(1 for n in common if ts[n]["outcome"] == "pass" and other[n]["outcome"] != "pass")
                e_only = sum(1 for n in common if ts[n]["outcome"] != "pass" and other[n]["outcome"] == "pass")
                comp.append(f"| {TITLES[e]} | {both} | {ts_only} | {e_only} |")
            if comp:
                lines += ["Against the TorchScript exporter (same tests):", "",
                          "| exporter | both pass | only TorchScript passes | only this exporter passes |",
                          "| --- | ---: | ---: | ---: |", *comp, ""]
            if ("fxonnx", mode) in runs:
                other = runs[("fxonnx", mode)]
                only = sorted({ts[n]["test"] for n in set(ts) & set(other)
                               if ts[n]["outcome"] == "pass" and other[n]["outcome"] != "pass"})
                if only:
                    lines += [f"Only the TorchScript exporter passes, against {TITLES['fxonnx']} ({len(only)}):", ""]
                    lines += [f"- `{t}`: {DELIBERATE.get(t, 'not converted yet (see the failures below)')}"
                              for t in only]
                    lines.append("")
    # failures by kind, side by side
    kinds_cols = [(e, m) for m in CLASS for e in EXPORTERS if (e, m) in runs and e != "torchscript"]
    if kinds_cols:
        table = {}
        for key in kinds_cols:
            for r in runs[key].values():
                if r["outcome"] in ("pass", "skipped"):
                    continue
                table.setdefault(kind(r), collections.Counter())[key] += 1
        lines += ["## Failures by kind", "",
                  "| kind | " + " | ".join(f"{TITLES[e]} ({m})" for e, m in kinds_cols) + " |",
                  "| --- |" + " ---: |" * len(kinds_cols)]
        for k, cnt in sorted(table.items(), key=lambda kv: -sum(kv[1].values())):
            lines.append(f"| {k} | " + " | ".join(str(cnt.get(c, 0)) for c in kinds_cols) + " |")
        lines.append("")
    # grouped causes
    for (e, mode) in sorted(runs, key=lambda k: (list(CLASS).index(k[1]), EXPORTERS.index(k[0]))):
        recs = runs[(e, mode)]
        failed = [r for r in recs.values() if r["outcome"] not in ("pass", "skipped")]
        if not failed:
            continue
        fx = e.startswith("fxonnx")
        groups = collections.defaultdict(list)
        for r in failed:
            groups[cause(r)].append(r["test"])
        lines += [f"## {'Failures' if fx else 'Failures (for comparison)'}: {TITLES[e]}, {mode} mode", ""]
        lines += ["| cause (first error line, grouped) | tests | examples |", "| --- | ---: | --- |"]
        limit = None if fx else 25
        items = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        for c, tests in items[:limit]:
            ex = ", ".join(f"`{t}`" for t in sorted(tests)[:3])
            lines.append(f"| {c.replace('|', '/')} | {len(tests)} | {ex} |")
        if limit and len(items) > limit:
            rest = sum(len(t) for _, t in items[limit:])
            lines.append(f"| ({len(items) - limit} more causes) | {rest} | |")
        expecting = expecting_tests()
        refused = sorted(r["test"] for r in failed if r["outcome"] == "export fails" and _expects_error(r["test"], expecting)
                         and "dynamo=False" not in (r.get("error") or ""))
        if refused:
            lines += ["", f"Export failures in tests whose body expects an error (`assertRaises`: the exporter raised, "
                          f"maybe not the type the test expects) ({len(refused)}): "
                      + ", ".join(f"`{t}`" for t in refused)]
        wrong = sorted(r["test"] for r in failed if r["outcome"] == "wrong")
        if wrong:
            lines += ["", f"Silently wrong ({len(wrong)}): " + ", ".join(f"`{t}`" for t in wrong)]
        lines.append("")
    out_md.write_text("\n".join(lines) + "\n", encoding="utf-8")
    # per test: {test: {"exporter/mode": outcome, or {outcome, phase, error, cause} for a failure}}
    slim: dict = {}
    for (e, mode), recs in sorted(runs.items()):
        for n, r in recs.items():
            test = r.get("test", n.rsplit("::", 1)[-1])
            if r["outcome"] in ("pass", "skipped"):
                row = r["outcome"] if not (r["outcome"] == "pass" and r.get("exports") == 0) else "pass (no export)"
            else:
                row = {"outcome": r["outcome"], "cause": cause(r)}
                if not re.search(r"dynamo=False refused|model is a ScriptModule", row["cause"]):
                    row["error"] = (r.get("error") or "")[:160]
                for k in ("target", "timeout", "crash"):
                    if r.get(k):
                        row[k] = r[k]
            slim.setdefault(test, {})[f"{e}/{mode}"] = row
    head = {"suite": "pytorch v2.6.0 test/onnx/test_pytorch_onnx_onnxruntime.py", "opset": 18, "versions": versions,
            "times": meta.get("times", {})}
    body = ",\n".join(f" {json.dumps(t)}: {json.dumps(rows, separators=(',', ':'))}" for t, rows in sorted(slim.items()))
    out_json.write_text(json.dumps(head)[:-1] + ', "results": {\n' + body + "\n}}\n", encoding="utf-8")
    print(f"wrote {out_md} and {out_json}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--exporters", default="torchscript,dynamo,fxonnx-dynamo",
                    help=f"comma-separated, of {', '.join(EXPORTERS)}")
    ap.add_argument("--mode", choices=("tracing", "scripting", "both"), default="tracing")
    ap.add_argument("--sample", type=int, help="run N tests picked at random (seeded) from those selected")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--filter", help="regex on the test name")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per test")
    ap.add_argument("--work-dir", default=os.path.join(tempfile.gettempdir(), "fxonnx_torchscript_suite"),
                    help="where each run's JSONL and log are kept")
    ap.add_argument("--resume", action="store_true", help="keep the tests already recorded in a run's JSONL")
    ap.add_argument("--report-only", action="store_true", help="only write the report from the runs kept")
    ap.add_argument("--out", default=str(ROOT / "reports" / "torchscript.md"))
    ap.add_argument("--check", metavar="BASELINE.json",
                    help="after the runs, fail (exit 1) where an exporter does worse than in BASELINE (a "
                         "reports/torchscript.json): a test it passed there not passed now, or a test silently "
                         "wrong now that was not there")
    args = ap.parse_args()
    work = pathlib.Path(args.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    out_md = pathlib.Path(args.out)
    out_json = out_md.with_suffix(".json")
    times = {}
    if not args.report_only:
        exporters = [e.strip() for e in args.exporters.split(",") if e.strip()]
        bad = [e for e in exporters if e not in EXPORTERS]
        if bad:
            sys.exit(f"unknown exporters {bad}: choose from {EXPORTERS}")
        modes = ("tracing", "scripting") if args.mode == "both" else (args.mode,)
        for mode in modes:
            ids = select(collect(mode), args.filter, args.sample, args.seed)
            print(f"{mode}: {len(ids)} tests", flush=True)
            for e in exporters:
                secs = run(e, mode, ids, work, args.timeout, args.resume)
                times[(e, mode)] = secs
                recs = load(work).get((e, mode), {})
                c = collections.Counter(r["outcome"] for n, r in recs.items() if n in set(ids))
                print(f"[{e}/{mode}] {secs:.0f}s: " + ", ".join(f"{o} {c.get(o, 0)}" for o in OUTCOMES), flush=True)
                report(work, out_md, out_json, times)
    report(work, out_md, out_json, times)
    if args.check:
        sys.exit(check(work, pathlib.Path(args.check)))


def check(work: pathlib.Path, baseline_path: pathlib.Path) -> int:
    """Each run kept in ``work`` against the same exporter and mode in the baseline report: the
    tests run now that passed there must pass, and none may be silently wrong that was not."""
    baseline = json.loads(baseline_path.read_text(encoding="utf-8"))["results"]
    problems = []
    checked = 0
    for (e, mode), recs in sorted(load(work).items()):
        key = f"{e}/{mode}"
        for n, r in recs.items():
            test = r.get("test", n.rsplit("::", 1)[-1])
            before = baseline.get(test, {}).get(key)
            if before is None:
                continue
            checked += 1
            was = before if isinstance(before, str) else before.get("outcome")
            now = r["outcome"]
            if was.startswith("pass") and now != "pass":
                problems.append(f"{key} {test}: passed in the baseline, now {now}: {(r.get('error') or '')[:200]}")
            if now == "wrong" and was != "wrong":
                problems.append(f"{key} {test}: silently wrong (was {was})")
    print(f"checked {checked} outcomes against {baseline_path}: {len(problems)} worse")
    for p in problems:
        print("  " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    main()
