#!/usr/bin/env python3
"""Check many exported ONNX models against operator-corpus cases, in one batch.

    python tests/check_cases.py MANIFEST.jsonl RESULTS.jsonl [--jobs 2] [--chunk 100] [--timeout 120]

MANIFEST: one JSON object per line,
    {"case": "abs/0", "onnx": ".../model.onnx", "inputs": ".../inputs.npz", "expected": ".../expected.npz",
     "tolerances": [{"rtol": 1e-4, "atol": 1e-5}, ...]}          (one tolerance per output_k)
RESULTS: one JSON object per manifest line, in manifest order,
    {"case", "checker_ok", "ort_ok", "numerics_ok", "passed", "error", "max_abs_diff"}
where "error" is null or one line per failed stage ("checker: ...", "onnxruntime: ...", "numerics: ...",
"crash: ...", "timeout: ..."), in that order, and "max_abs_diff" is the largest |actual - expected| over
the outputs that could be compared (null if none could; the string "inf" or "nan" if not finite).

A case passes when onnx.checker.check_model(path, full_check=True) passes and onnxruntime (CPU) run on
the inputs (the i-th graph input gets input_i) gives, for every output_k, the same shape and dtype and
values within tolerances[k], exact for integer and bool outputs. The comparison is check_onnx.compare and
the output pairing check_onnx.pair_outputs, so the fixture tests and the corpus follow the same rules.

Cases run in worker subprocesses, a chunk of cases per worker: the interpreter starts once per chunk, not
once per case, and a case that crashes its worker (segfault, abort, out of memory) or runs longer than
--timeout seconds fails alone, with that reason, while a new worker takes the rest of the chunk.
Needs onnx, onnxruntime and numpy only (never torch). Exit status 0 when every case got a result (passing
or not), 2 when the batch itself could not run.
"""
import argparse
import json
import math
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))


# ---------------------------------------------------------------------------------------------- worker side

def one_line(text, limit=600):
    """Collapse a (possibly multi-line) message to one line: the report quotes first lines."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_case(entry, ort, np, onnx, check_onnx):
    """The result line of one manifest entry. Every stage failure is caught and recorded."""
    path = entry["onnx"]
    res = {"case": entry["case"], "checker_ok": False, "ort_ok": False, "numerics_ok": False, "passed": False,
           "error": None, "max_abs_diff": None}
    errors = []

    def scrub(msg):
        # Exported files live in a temporary folder: keep its path out of messages so reports are stable.
        return one_line(str(msg).replace(path, "<model.onnx>").replace(os.path.dirname(path), "<dir>"))

    try:
        onnx.checker.check_model(path, full_check=True)
        res["checker_ok"] = True
    except Exception as e:  # noqa: BLE001 - recorded; the numbers are still worth knowing
        errors.append("checker: " + scrub(f"{type(e).__name__}: {e}"))

    outs = None
    try:
        model = onnx.load(path, load_external_data=False)
        so = ort.SessionOptions()
        # One thread: the batch runs several workers on a shared machine, and results stay reproducible.
        so.intra_op_num_threads, so.inter_op_num_threads, so.log_severity_level = 1, 1, 3
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        initializers = {t.name for t in model.graph.initializer}
        graph_inputs = [i.name for i in model.graph.input if i.name not in initializers]
        onnx_names = [o.name for o in model.graph.output]
        with np.load(entry["inputs"]) as inputs:
            n_inputs = len([k for k in inputs.files if re.fullmatch(r"input_\d+", k)])
            if n_inputs != len(graph_inputs):
                raise ValueError(f"inputs.npz has {n_inputs} inputs but the ONNX graph has {len(graph_inputs)} "
                                 f"({graph_inputs})")
            feeds = {name: inputs[f"input_{i}"] for i, name in enumerate(graph_inputs)}
        outs = sess.run(None, feeds)
        res["ort_ok"] = True
    except Exception as e:  # noqa: BLE001
        errors.append("onnxruntime: " + scrub(f"{type(e).__name__}: {e}"))

    if outs is not None:
        try:
            tolerances = entry.get("tolerances") or []
            problems, diffs = [], []
            with np.load(entry["expected"]) as expected:
                pairs, _ignored = check_onnx.pair_outputs(onnx_names, expected, "model")
                for key, j in pairs:
                    if j is None:
                        problems.append(f"{key}: the ONNX model has no output for it ({len(onnx_names)} outputs)")
                        continue
                    k = int(key.rsplit("_", 1)[1]) if re.fullmatch(r"output_\d+", key) else -1
                    tol = tolerances[k] if 0 <= k < len(tolerances) else {}
                    rtol, atol = tol.get("rtol", check_onnx.DEFAULT[0]), tol.get("atol", check_onnx.DEFAULT[1])
                    problem, diff = check_onnx.compare(key, onnx_names[j], outs[j], expected[key], rtol, atol)
                    problems += [problem] if problem else []
                    diffs += [diff] if diff is not None else []
            worst = max(diffs) if diffs else None
            # Strict JSON has no inf/nan (a nan where a number was expected gives an infinite difference).
            res["max_abs_diff"] = worst if worst is None or math.isfinite(worst) else str(worst)
            if problems:
                errors.append("numerics: " + scrub("; ".join(problems)))
            else:
                res["numerics_ok"] = True
        except Exception as e:  # noqa: BLE001
            errors.append("numerics: " + scrub(f"{type(e).__name__}: {e}"))

    res["passed"] = res["checker_ok"] and res["ort_ok"] and res["numerics_ok"]
    res["error"] = "\n".join(errors) or None
    return res


def worker(chunk_path):
    """Check the entries of one chunk file, announcing each case before starting it."""
    # The protocol goes to a private copy of stdout; anything a library prints lands on stderr instead.
    proto = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.path.insert(0, HERE)
    import numpy as np
    import onnx
    import onnxruntime as ort

    import check_onnx

    with open(chunk_path) as f:
        entries = [json.loads(line) for line in f if line.strip()]
    for i, entry in enumerate(entries):
        print(json.dumps({"start": i}), file=proto, flush=True)
        result = check_case(entry, ort, np, onnx, check_onnx)
        print(json.dumps({"result": result}, allow_nan=False), file=proto, flush=True)
    return 0


# ---------------------------------------------------------------------------------------------- parent side

def failed_result(case, stage, message):
    return {"case": case, "checker_ok": False, "ort_ok": False, "numerics_ok": False, "passed": False,
            "error": f"{stage}: {message}", "max_abs_diff": None}


def describe_exit(code):
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


class BatchError(Exception):
    """The batch cannot go on (the worker cannot even start)."""


def run_chunk(entries, timeout, log, tmpdir):
    """Results of a list of manifest entries, restarting the worker after a crash or a timeout."""
    results = []
    pending = list(entries)
    failed_starts = 0
    while pending:
        fd, chunk_path = tempfile.mkstemp(suffix=".jsonl", dir=tmpdir)
        with os.fdopen(fd, "w") as f:
            f.writelines(json.dumps(e) + "\n" for e in pending)
        proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", chunk_path],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log, text=True)
        lines = queue.Queue()

        def pump(stream=proc.stdout, lines=lines):
            for line in stream:
                lines.put(line)
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        current, done, failure = None, 0, None
        while True:
            try:
                # The interpreter start and imports count against the first case's budget too.
                line = lines.get(timeout=timeout)
            except queue.Empty:
                proc.kill()
                failure = ("timeout", f"no result after {timeout:g} s (the worker was killed)")
                break
            if line is None:
                break
            try:
                msg = json.loads(line)
            except ValueError:
                continue  # not a protocol line (the worker's own stdout is redirected; be safe anyway)
            if "start" in msg:
                current = msg["start"]
            else:
                results.append(msg["result"])
                done, current = done + 1, None
        proc.wait()
        os.unlink(chunk_path)
        if done == len(pending):
            break
        if current is None:
            # The worker stopped, or hung, outside any case.
            why = failure[1] if failure else describe_exit(proc.returncode)
            if done == 0:
                # Before its first case: the environment (imports) or the machine, not a case. Retry once
                # in case the machine was to blame; twice in a row means the batch cannot run.
                failed_starts += 1
                if failed_starts >= 2:
                    raise BatchError(f"the checker worker stopped before its first case ({why}); see {log.name}")
                continue
            current = done  # between two cases: blame the next one so the loop always advances
        failed_starts = 0
        if failure is None:
            failure = ("crash", f"the checker process died on this case ({describe_exit(proc.returncode)})")
        results.append(failed_result(pending[current]["case"], *failure))
        pending = pending[current + 1:]
    return results


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("manifest", nargs="?")
    ap.add_argument("results", nargs="?")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes at once (default 2)")
    ap.add_argument("--chunk", type=int, default=100, help="cases per worker process (default 100)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds allowed per case (default 120)")
    ap.add_argument("--worker", metavar="CHUNK", help=argparse.SUPPRESS)
    ap.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = ap.parse_args(argv)
    if args.worker:
        return worker(args.worker)
    if not args.manifest or not args.results:
        ap.error("MANIFEST and RESULTS are required")

    try:  # fail fast, with one clear message, when the environment lacks a package
        import numpy  # noqa: F401
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError as e:
        print(f"check_cases: error: {e} ({sys.executable} needs onnx, onnxruntime and numpy)", file=sys.stderr)
        return 2
    try:
        with open(args.manifest) as f:
            entries = [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError) as e:
        print(f"check_cases: error: cannot read the manifest {args.manifest}: {e}", file=sys.stderr)
        return 2

    chunks = [entries[i:i + max(1, args.chunk)] for i in range(0, len(entries), max(1, args.chunk))]
    by_chunk = [None] * len(chunks)
    next_chunk, lock, errors = [0], threading.Lock(), []
    checked = [0]
    tmpdir = tempfile.mkdtemp(prefix="check_cases.")
    log_path = args.results + ".stderr.log"

    with open(log_path, "w") as log:
        def job():
            while True:
                with lock:
                    if errors or next_chunk[0] >= len(chunks):
                        return
                    k = next_chunk[0]
                    next_chunk[0] += 1
                try:
                    by_chunk[k] = run_chunk(chunks[k], args.timeout, log, tmpdir)
                except Exception as e:  # noqa: BLE001 - BatchError, or a bug here: stop the batch, say why
                    with lock:
                        errors.append(str(e) if isinstance(e, BatchError) else f"{type(e).__name__}: {e}")
                    return
                with lock:
                    checked[0] += len(chunks[k])
                    if not args.quiet:
                        print(f"check_cases: {checked[0]}/{len(entries)} checked", file=sys.stderr, flush=True)

        threads = [threading.Thread(target=job) for _ in range(max(1, args.jobs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    shutil.rmtree(tmpdir, ignore_errors=True)
    if errors:
        print(f"check_cases: error: {errors[0]}", file=sys.stderr)
        return 2
    with open(args.results, "w") as f:
        for chunk in by_chunk:
            f.writelines(json.dumps(r) + "\n" for r in chunk)
    return 0


if __name__ == "__main__":
    sys.exit(main())
