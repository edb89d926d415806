#!/usr/bin/env python3
"""torch.onnx's route to ONNX opsets below 18: export at opset 18, then onnx's version converter.

Needs a Python with torch, onnxscript, onnx, onnxruntime and numpy (never part of the build or tests):

    python benches/opset_route.py [--zoo ZOO_DIR] [--cases CASE ...] [--fixtures [--no-zoo]]
        [--checker CHECK_ONNX_PY] [--opsets 17 16 15 14 13] [--timeout 900] [--json reports/opset_route.json]
    python benches/opset_route.py --show reports/opset_route.json     # the tables of a saved run

fxonnx writes opsets below 18 natively. torch.onnx's dynamo exporter builds opset-18 graphs (its
torchlib is written against opset 18); an older opset is reached by converting the finished model
with `onnx.version_converter.convert_version`, which is also what `torch.onnx.export(...,
opset_version=N)` does for N < 18 (through onnxscript's fallback to the ONNX C API). This script
measures that route so that it can be compared with fxonnx's:

1. `torch.export.load(model.pt2)`, then `torch.onnx.export(ep, dynamo=True, opset_version=18)`
   (timed; the ExportedProgram is passed directly, as in benches/compare_torch.py);
2. for every target opset, `onnx.version_converter.convert_version(model18, target)` (timed), each
   from the opset-18 model, so that one failed step does not hide the next opsets;
3. every model, the opset-18 one included as the baseline, is checked: onnx.checker (full_check),
   then onnxruntime (CPU) on both input sets against torch's expected outputs.

Cases are zoo case folders (model.pt2, inputs.npz, expected.npz, inputs_alt.npz, expected_alt.npz,
meta.json; by default every case under --zoo), checked with the shared checker CHECK_ONNX_PY (the
tolerance of meta.json), and fixture archives tests/fixtures/NAME.pt2 (all of them with --fixtures,
or named in --cases; archives without NAME.inputs.npz / NAME.expected.npz are left out), checked in
this process with the input/output mapping and tolerances of tests/check_onnx.py.

Each case runs in a child process of its own, which appends one JSON line per step to a file as it
goes: a crash (the converter and onnxruntime are C++) or a timeout loses only the rest of that case.
Status per case and opset, the first step that failed (the later ones stay in the JSON): ok,
converter error, checker error, ORT load error, ORT run error, mismatch (tol_ratio = the worst
|actual - expected| / (atol + rtol |expected|), which passes iff <= 1), at opset 18 also load error
and export error; check error, crashed and timeout are failures of this script's own steps. Seconds
are the export's at opset 18 and the conversion's below; nodes are counted after inlining local
functions, subgraphs included.
"""
import argparse
import glob
import json
import logging
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
FIXTURES = os.path.join(REPO, "tests", "fixtures")
SOURCE_OPSET = 18
SOURCE_OPSET_KEY = str(SOURCE_OPSET)  # opsets are JSON object keys

# Short table cells for the statuses.
CELL = {"ok": "ok", "converter error": "conv-err", "checker error": "checker", "ORT load error": "ort-load",
        "ORT run error": "ort-run", "load error": "load-err", "export error": "export-err",
        "check error": "check-err", "crashed": "crash", "timeout": "timeout", "not run": "-"}


def first_line(text, limit=300):
    lines = str(text).strip().splitlines()
    return (lines[0] if lines else "")[:limit]


def error_text(e):
    """The innermost cause's type and first line: torch.onnx wraps the real error in a ConversionError
    whose own first line is the same generic sentence for every failure."""
    while e.__cause__ is not None:
        e = e.__cause__
    return f"{type(e).__name__}: {first_line(e)}"


# ---------------------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------------------

def zoo_case(folder):
    folder = os.path.abspath(folder)
    return {"name": os.path.basename(folder), "kind": "zoo", "dir": folder, "pt2": os.path.join(folder, "model.pt2")}


def fixture_case(pt2):
    """A fixture NAME.pt2 with NAME.inputs.npz / NAME.expected.npz (and the _alt pair when present)."""
    stem = os.path.abspath(pt2)[: -len(".pt2")]
    first = (f"{stem}.inputs.npz", f"{stem}.expected.npz")
    alt = (f"{stem}.inputs_alt.npz", f"{stem}.expected_alt.npz")
    if not all(map(os.path.exists, first)):
        return None
    sets = [first] + ([alt] if all(map(os.path.exists, alt)) else [])
    return {"name": os.path.basename(stem), "kind": "fixture", "pt2": stem + ".pt2", "sets": sets}


def find_cases(args, ap):
    cases = []
    if args.cases:
        for path in args.cases:
            if os.path.isdir(path) and os.path.exists(os.path.join(path, "model.pt2")):
                cases.append(zoo_case(path))
            elif path.endswith(".pt2") and fixture_case(path):
                cases.append(fixture_case(path))
            else:
                ap.error(f"{path}: neither a zoo case folder (with model.pt2) nor a fixture NAME.pt2 "
                         "with NAME.inputs.npz and NAME.expected.npz")
    elif not args.fixtures or args.zoo_too:
        folders = sorted(glob.glob(os.path.join(args.zoo, "*", "model.pt2")))
        cases += [zoo_case(os.path.dirname(p)) for p in folders]
    if args.fixtures:
        # Only the archives directly under tests/fixtures: tests/fixtures/bad holds malformed ones.
        found = [fixture_case(p) for p in sorted(glob.glob(os.path.join(FIXTURES, "*.pt2")))]
        cases += [c for c in found if c]
    return cases


# ---------------------------------------------------------------------------------------------------
# Worker: one case, in a child process
# ---------------------------------------------------------------------------------------------------

def count_nodes(model):
    """Nodes after inlining model-local functions (torch.onnx may keep some), subgraphs included."""
    import onnx
    from onnx import inliner

    try:
        model = inliner.inline_local_functions(model)
    except Exception:  # noqa: BLE001 - count what is there
        pass

    def walk(graph):
        n = 0
        for node in graph.node:
            n += 1
            for a in node.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    n += walk(a.g)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    n += sum(walk(g) for g in a.graphs)
        return n

    return walk(model.graph)


def check_zoo(path, spec, checker):
    """Run the shared checker (its own process, like every other exporter's model is checked)."""
    p = subprocess.run([sys.executable, checker, path, spec["dir"], "--no-time"], capture_output=True, text=True)
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if not lines:
        return {"status": "check error", "detail": f"checker exited {p.returncode}: {first_line(p.stderr[-2000:])}"}
    r = json.loads(lines[-1])
    if "fatal_error" in r:
        return {"status": "check error", "detail": "checker: " + first_line(r["fatal_error"].splitlines()[-1])}
    keep = ("checker_ok", "ort_load_ok", "ort_ok", "dyn_ok", "max_abs_err", "alt_max_abs_err", "tol_ratio",
            "alt_tol_ratio", "rtol", "atol", "checker_error", "ort_load_error", "ort_error", "dyn_error")
    rec = {k: r[k] for k in keep if r.get(k) is not None}
    ratios = [r[k] for k in ("tol_ratio", "alt_tol_ratio") if r.get(k) is not None]
    rec["tol_ratio_max"] = max(ratios) if ratios else None
    run_error = r.get("ort_error") if not r.get("ort_ran") else r.get("dyn_error") if not r.get("dyn_ran") else None
    # The first step that failed names the status; the later ones stay in the record.
    if not r.get("checker_ok"):
        rec.update(status="checker error", detail=first_line(r.get("checker_error")))
    elif not r.get("ort_load_ok"):
        rec.update(status="ORT load error", detail=first_line(r.get("ort_load_error")))
    elif run_error:
        rec.update(status="ORT run error", detail=first_line(run_error))
    elif not (r.get("ort_ok") and r.get("dyn_ok")):
        rec.update(status="mismatch", detail=first_line(r.get("ort_error") or r.get("dyn_error")))
    else:
        rec["status"] = "ok"
    return rec


def tol_ratio(actual, expected, rtol, atol):
    """max |actual - expected| / (atol + rtol |expected|) over float elements (NaN matching NaN and equal
    infinities count as exact), the measure check_onnx.py's np.isclose passes iff <= 1; None otherwise."""
    import numpy as np

    a, e = np.asarray(actual), np.asarray(expected)
    if e.dtype.kind not in "fc" or a.shape != e.shape or e.size == 0:
        return None
    wide = np.complex128 if e.dtype.kind == "c" else np.float64
    a, e = a.astype(wide), e.astype(wide)
    with np.errstate(invalid="ignore", divide="ignore"):
        same = (a == e) | (np.isnan(a) & np.isnan(e))
        diff = np.where(same, 0.0, np.nan_to_num(np.abs(a - e), nan=np.inf))
        return float((diff / (atol + rtol * np.abs(e))).max())


def check_fixture(path, spec):
    """onnx.checker + onnxruntime on every input set, with tests/check_onnx.py's mapping of npz keys to
    ONNX inputs and outputs (constant inputs skipped, mutation outputs paired) and its tolerances."""
    import numpy as np
    import onnx

    sys.path.insert(0, os.path.join(REPO, "tests"))
    import check_onnx as tc  # tests/check_onnx.py

    rec = {}
    try:
        onnx.checker.check_model(path, full_check=True)
        rec["checker_ok"] = True
    except Exception as e:  # noqa: BLE001 - record, and still run the numbers
        rec.update(checker_ok=False, checker_error=f"{type(e).__name__}: {first_line(e, 1000)}")
    model = onnx.load(path, load_external_data=False)
    rtol, atol, source = tc.case_tolerance(argparse.Namespace(pt2=spec["pt2"], samples=None, rtol=None, atol=None),
                                           model)
    rec.update(rtol=rtol, atol=atol, tolerance_from=source)
    try:
        run, rec["backend"], _ = tc.make_runner(path, model, False)
        rec["ort_load_ok"] = True
    except Exception as e:  # noqa: BLE001
        rec.update(ort_load_ok=False, ort_load_error=f"{type(e).__name__}: {first_line(e, 1000)}")
        run = None
    names = [o.name for o in model.graph.output]
    problems, run_error, ratios = [], None, []
    if run is not None:
        try:
            leaves = tc.archive_leaves(spec["pt2"], "model")
            for inputs_path, expected_path in spec["sets"]:
                with np.load(inputs_path) as inputs, np.load(expected_path) as expected:
                    feeds, _ = tc.make_feeds(model, leaves, inputs)
                    outs = run(feeds)
                    pairs, _ = tc.pair_outputs(names, expected, "model")
                    for key, j in pairs:
                        if j is None:
                            problems.append(f"{key}: the ONNX model has no output for it")
                            continue
                        problem, _ = tc.compare(key, names[j], outs[j], expected[key], rtol, atol)
                        problems += [problem] if problem else []
                        ratios.append(tol_ratio(outs[j], expected[key], rtol, atol))
        except (Exception, SystemExit) as e:  # noqa: BLE001 - archive_leaves exits on a malformed archive
            run_error = f"{type(e).__name__}: {first_line(e)}"
    ratios = [r for r in ratios if r is not None]
    rec["tol_ratio_max"] = max(ratios) if ratios else None
    if problems:
        rec["problems"] = [first_line(p, 500) for p in problems[:5]]
    if not rec["checker_ok"]:
        rec.update(status="checker error", detail=first_line(rec["checker_error"]))
    elif not rec["ort_load_ok"]:
        rec.update(status="ORT load error", detail=first_line(rec["ort_load_error"]))
    elif run_error:
        rec.update(status="ORT run error", detail=run_error)
    elif problems:
        rec.update(status="mismatch", detail=first_line(problems[0]))
    else:
        rec["status"] = "ok"
    return rec


class _LoggedErrors(logging.Handler):
    """Collects the exceptions attached to log records."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.errors = []

    def emit(self, record):
        if record.exc_info and record.exc_info[1] is not None:
            self.errors.append(record.exc_info[1])


def worker(spec, out_path, tmp, checker, opsets):
    import warnings

    warnings.filterwarnings("ignore")

    def emit(rec):
        with open(out_path, "a") as f:
            f.write(json.dumps(rec) + "\n")

    import onnx
    import onnxruntime
    import onnxscript
    import torch
    from onnx import version_converter

    emit({"versions": {"torch": torch.__version__, "onnx": onnx.__version__, "onnxruntime": onnxruntime.__version__,
                       "onnxscript": onnxscript.__version__, "python": platform.python_version()}})

    def check(model, opset, seconds):
        rec = {"opset": opset, "seconds": round(seconds, 3)}
        try:
            rec["nodes"] = count_nodes(model)
            rec["opset_import"] = {(o.domain or "ai.onnx"): o.version for o in model.opset_import}
            path = os.path.join(tmp, f"opset{opset}.onnx")
            onnx.save_model(model, path)
            t = time.perf_counter()
            rec.update(check_zoo(path, spec, checker) if spec["kind"] == "zoo" else check_fixture(path, spec))
            rec["check_s"] = round(time.perf_counter() - t, 3)
            os.remove(path)
        except Exception as e:  # noqa: BLE001 - this script's own step failed (e.g. saving a model over 2 GB)
            rec.update(status="check error", detail=f"{type(e).__name__}: {first_line(e)}")
        emit(rec)

    # torch.export.load logs the real deserialization error and raises a generic one ("check the
    # warnings above"): keep the logged exception for the record.
    logged = _LoggedErrors()
    logging.getLogger("torch.export").addHandler(logged)
    try:
        t = time.perf_counter()
        ep = torch.export.load(spec["pt2"])
        emit({"load_s": round(time.perf_counter() - t, 3)})
    except Exception as e:  # noqa: BLE001
        detail = error_text(e) + (f" (logged: {error_text(logged.errors[-1])})" if logged.errors else "")
        emit({"opset": SOURCE_OPSET, "status": "load error", "detail": detail})
        return
    finally:
        logging.getLogger("torch.export").removeHandler(logged)
    try:
        t = time.perf_counter()
        program = torch.onnx.export(ep, dynamo=True, opset_version=SOURCE_OPSET, verbose=False)
        seconds = time.perf_counter() - t
        model = program.model_proto
    except Exception as e:  # noqa: BLE001
        emit({"opset": SOURCE_OPSET, "status": "export error", "detail": error_text(e),
              "seconds": round(time.perf_counter() - t, 3)})
        return
    del ep, program  # only the ModelProto is needed from here on
    check(model, SOURCE_OPSET, seconds)
    for target in opsets:
        t = time.perf_counter()
        try:
            converted = version_converter.convert_version(model, target)
        except Exception as e:  # noqa: BLE001
            emit({"opset": target, "status": "converter error", "detail": f"{type(e).__name__}: {first_line(e)}",
                  "seconds": round(time.perf_counter() - t, 3)})
            continue
        check(converted, target, time.perf_counter() - t)
        del converted


# ---------------------------------------------------------------------------------------------------
# Parent: one child per case, the JSON report, the table
# ---------------------------------------------------------------------------------------------------

def run_case(spec, args):
    """Run one case in a child; returns (case record, versions or None)."""
    all_opsets = [SOURCE_OPSET] + args.opsets
    record = {"case": spec["name"], "kind": spec["kind"], "pt2": spec["pt2"], "opsets": {}}
    with tempfile.TemporaryDirectory(prefix="opset_route_") as tmp:
        out_path = os.path.join(tmp, "steps.jsonl")
        argv = [sys.executable, os.path.abspath(__file__), "--worker", json.dumps(spec), "--worker-out", out_path,
                "--worker-tmp", tmp, "--checker", args.checker, "--opsets", *map(str, args.opsets)]
        t = time.perf_counter()
        # A session of its own, so that a timeout can end the child and the checker it may be running.
        child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                 start_new_session=True)
        try:
            _, stderr = child.communicate(timeout=args.timeout)
            ended = None if child.returncode == 0 else ("crashed", f"the child exited {child.returncode}")
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            _, stderr = child.communicate()
            ended = ("timeout", f"the child ran over {args.timeout:g} s")
        record["wall_s"] = round(time.perf_counter() - t, 1)
        steps = [json.loads(l) for l in open(out_path)] if os.path.exists(out_path) else []
    versions = None
    for step in steps:
        if "versions" in step:
            versions = step["versions"]
        elif "opset" in step:
            record["opsets"][str(step.pop("opset"))] = step
        else:
            record.update(step)
    if record["opsets"].get(SOURCE_OPSET_KEY, {}).get("seconds") is not None:
        record["export_s"] = record["opsets"][SOURCE_OPSET_KEY]["seconds"]
    if ended:
        record["child"] = ended[1] + (f"; stderr: {first_line(stderr.strip().splitlines()[-1])}" if stderr.strip() else "")
    # Opsets the child never reached: after a crash or timeout, or when there was no opset-18 model.
    no_source = record["opsets"].get(SOURCE_OPSET_KEY, {}).get("status") in ("load error", "export error")
    missing = [o for o in map(str, all_opsets) if o not in record["opsets"]]
    for k, opset in enumerate(missing):
        if ended and k == 0:  # the step the child died in
            rec = {"status": ended[0], "detail": record["child"]}
        elif ended:
            rec = {"status": "not run", "detail": "the child died at an earlier opset"}
        else:
            rec = {"status": "not run", "detail": "no opset-18 model" if no_source else "the child ended early"}
        record["opsets"][opset] = rec
    return record, versions


def cell(rec):
    status, ratio = rec.get("status", "?"), rec.get("tol_ratio_max")
    if status == "mismatch":
        # Over tolerance by this factor; a mismatch within it is a missing output, a shape or an integer.
        return f"tol x{ratio:.3g}" if ratio is not None and ratio > 1 else "mismatch"
    return CELL.get(status, status)


def table(cases, opsets):
    """Two plain-text tables: status, then seconds / nodes (the export's at 18, the conversion's below)."""
    cols = [str(o) for o in [SOURCE_OPSET] + opsets]
    width = max([len(c["case"]) for c in cases] + [4])
    out = ["status (opset 18: torch.onnx.export; below: onnx.version_converter from it; the first step that "
           "failed: conv-err = converter, checker = onnx.checker, ort-load / ort-run = onnxruntime, "
           "tol xN = N times over tolerance, - = not run)",
           f"{'case':<{width}}  " + "  ".join(f"{c:>10}" for c in cols)]
    for c in cases:
        out.append(f"{c['case']:<{width}}  " + "  ".join(f"{cell(c['opsets'][o]):>10}" for o in cols))

    def secs_nodes(rec):
        s, n = rec.get("seconds"), rec.get("nodes")
        return "-" if s is None else f"{s:.2f}s/{n}" if n is not None else f"{s:.2f}s"

    out += ["", "seconds / nodes", f"{'case':<{width}}  " + "  ".join(f"{c:>12}" for c in cols)]
    for c in cases:
        out.append(f"{c['case']:<{width}}  " + "  ".join(f"{secs_nodes(c['opsets'][o]):>12}" for o in cols))

    # Every distinct failure once, with where it happened.
    where = {}
    for c in cases:
        for o in cols:
            rec = c["opsets"][o]
            if rec.get("status") not in ("ok", "not run"):
                key = (rec["status"], rec.get("detail") or "")
                where.setdefault(key, []).append(f"{c['case']}@{o}")
    if where:
        out += ["", "failures"]
        for (status, detail), places in where.items():
            out.append(f"- {status}: {detail}\n    {', '.join(places)}")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--zoo", default=os.environ.get("FXONNX_ZOO", "/work/zoo"),
                    help="folder of zoo case folders, all run unless --cases is given (default $FXONNX_ZOO or /work/zoo)")
    ap.add_argument("--cases", nargs="+", metavar="CASE", help="zoo case folders and/or fixture NAME.pt2 files")
    ap.add_argument("--fixtures", action="store_true",
                    help="also every fixture tests/fixtures/NAME.pt2 with NAME.inputs.npz and NAME.expected.npz")
    ap.add_argument("--no-zoo", dest="zoo_too", action="store_false",
                    help="with --fixtures: the fixtures only")
    ap.add_argument("--checker", default="/work/shared/tools/check_onnx.py",
                    help="the shared check_onnx.py used for zoo cases")
    ap.add_argument("--opsets", type=int, nargs="+", default=[17, 16, 15, 14, 13],
                    help="target opsets, each converted from the opset-18 export")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per case (the child is killed after)")
    ap.add_argument("--json", default=os.path.join(REPO, "reports", "opset_route.json"), help="where the JSON goes")
    ap.add_argument("--show", metavar="JSON", help="only print the tables of a saved report")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--worker-out", help=argparse.SUPPRESS)
    ap.add_argument("--worker-tmp", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.worker:
        worker(json.loads(args.worker), args.worker_out, args.worker_tmp, args.checker, args.opsets)
        return 0
    if args.show:
        report = json.load(open(args.show))
        print(table(report["cases"], report["target_opsets"]))
        return 0

    cases = find_cases(args, ap)
    if not cases:
        ap.error("no cases found")
    if any(c["kind"] == "zoo" for c in cases) and not os.path.exists(args.checker):
        ap.error(f"{args.checker}: no such checker (zoo cases need the shared check_onnx.py)")
    report = {"tool": "benches/opset_route.py", "command": " ".join(sys.argv),
              "date": time.strftime("%Y-%m-%d %H:%M:%S"), "cpus": os.cpu_count(), "source_opset": SOURCE_OPSET,
              "target_opsets": args.opsets, "converter": "onnx.version_converter.convert_version",
              "versions": None, "cases": []}
    start = time.perf_counter()
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    for i, spec in enumerate(cases, 1):
        record, versions = run_case(spec, args)
        report["versions"] = report["versions"] or versions
        report["cases"].append(record)
        report["total_s"] = round(time.perf_counter() - start, 1)
        # Written after every case, so that an interrupted run keeps what it measured.
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
        cells = " ".join(f"{o}:{cell(record['opsets'][str(o)])}" for o in [SOURCE_OPSET] + args.opsets)
        print(f"[{i}/{len(cases)}] {spec['name']} ({record['wall_s']} s) {cells}", flush=True)
    print()
    print(table(report["cases"], args.opsets))
    print(f"\n{len(cases)} cases in {report['total_s']} s; JSON: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
