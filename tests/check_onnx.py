#!/usr/bin/env python3
"""Check one ONNX model exported by fxonnx against a .pt2 case (inputs + eager outputs).

    python tests/check_onnx.py MODEL.onnx --pt2 CASE.pt2 --inputs CASE.inputs.npz --expected CASE.expected.npz
        [--inputs CASE.inputs_alt.npz --expected CASE.expected_alt.npz ...]
        [--rtol R --atol A] [--model-name model] [--reference] [--samples samples.json]
        [--nodes CASE.nodes.npz]

Needs onnx, onnxruntime and numpy only (never torch). Steps:
1. onnx.checker.check_model(path, full_check=True) (by path, so external data works).
2. Inputs: npz keys input_0, input_1, ... are the leaves of the program's in_spec. The i-th leaf is the
   i-th input spec of kind user_input or constant_input in models/<model-name>.json (read with zipfile);
   constant_input leaves are baked into the graph and skipped, the rest map in order onto the ONNX graph
   inputs. A 0-d array whose dtype differs from the ONNX input only in width (int64 -> int32,
   float64 -> float32) is cast; any other dtype or rank mismatch fails before running.
3. Outputs: the first ONNX outputs are the user outputs, compared with output_0, output_1, ... (or
   <model-name>_output_i for a model other than "model"). Mutation keys of expected.npz
   (buffer_mutation_<fqn>, user_input_mutation_<name>, listed in samples.json "extra_expected") are
   compared with the later ONNX outputs: an output with exactly that name, else the next unclaimed one in
   order. Other ONNX outputs are ignored and counted. Shapes and dtypes must match; floats must satisfy
   np.isclose(actual, expected, rtol, atol, equal_nan=True), integers and bools must be equal.
4. Backend: onnxruntime (CPU), or onnx.reference.ReferenceEvaluator with --reference, or automatically
   when onnxruntime has no kernel (NOT_IMPLEMENTED) for a model that contains bfloat16.
Tolerance: --rtol/--atol, else "rtol"/"atol" of the case in samples.json (found next to the .pt2 unless
--samples is given; the case name is the .pt2 file name without extension), else rtol 1e-4 / atol 1e-5,
widened for models that use bfloat16 (2e-2 / 4e-3) or float16 (4e-3 / 1e-3), see LOW_PRECISION.
With --nodes (a model exported with --debug-outputs): every FX node value torch computed on the first
input set (benches/node_diff.py --save-reference) is compared with the model's `debug:<node>` output.
Prints one JSON line per input set; exits 1 if anything failed.
"""
import argparse
import json
import os
import re
import sys
import zipfile

import numpy as np
import onnx
from onnx import TensorProto, helper

DEFAULT = (1e-4, 1e-5)  # rtol, atol
# Models that compute in 16-bit floats get one rounding of their mantissa (8 bits for bfloat16, 11 for
# float16) per op, so their default tolerance is wider: (elem type, name, rtol, atol), first match wins.
LOW_PRECISION = [(TensorProto.BFLOAT16, "bfloat16", 2e-2, 4e-3), (TensorProto.FLOAT16, "float16", 4e-3, 1e-3)]
MUTATION_PREFIXES = ("buffer_mutation_", "user_input_mutation_")


def archive_leaves(pt2_path, model_name):
    """[(leaf name, is_constant)] for the in_spec leaves of one program of the archive."""
    with zipfile.ZipFile(pt2_path) as z:
        entries = [n for n in z.namelist() if n.endswith(f"/models/{model_name}.json")]
        if len(entries) != 1:
            sys.exit(f"error: {pt2_path}: expected one entry */models/{model_name}.json, found {entries}")
        program = json.loads(z.read(entries[0]))
    leaves = []
    for spec in program["graph_module"]["signature"]["input_specs"]:
        (kind, body), = spec.items()
        if kind == "constant_input":
            leaves.append((body["name"], True))
        elif kind == "user_input":
            (_, arg), = body["arg"].items()  # as_tensor {name}, as_sym_int {as_name}, ...
            leaves.append((isinstance(arg, dict) and (arg.get("name") or arg.get("as_name")) or "?", False))
    return leaves


def case_tolerance(args, model):
    """(rtol, atol, source): command line, else samples.json, else a default fit for the model's dtypes."""
    types = elem_types(model)
    name, rtol, atol = next(((n, r, a) for t, n, r, a in LOW_PRECISION if t in types), ("default", *DEFAULT))
    source = name if name == "default" else f"{name} default"
    samples = args.samples or os.path.join(os.path.dirname(os.path.abspath(args.pt2)), "samples.json")
    if os.path.exists(samples):
        case = os.path.splitext(os.path.basename(args.pt2))[0]
        entry = next((s for s in json.load(open(samples)) if s.get("name") == case), {})
        tol = {**entry.get("tolerance", {}), **{k: entry[k] for k in ("rtol", "atol") if k in entry}}
        if tol:
            rtol, atol, source = tol.get("rtol", rtol), tol.get("atol", atol), "samples.json"
    if args.rtol is not None or args.atol is not None:
        rtol = rtol if args.rtol is None else args.rtol
        atol = atol if args.atol is None else args.atol
        source = "command line"
    return float(rtol), float(atol), source


def elem_types(model):
    """Element types of every value, initializer, Constant and Cast target (subgraphs, functions too)."""
    found = set()

    def nodes(ns):
        for node in ns:
            for a in node.attribute:
                if a.name == "to" and node.op_type in ("Cast", "CastLike"):
                    found.add(a.i)
                if a.HasField("t"):
                    found.add(a.t.data_type)
                if a.HasField("g"):
                    graph(a.g)
                for g in a.graphs:
                    graph(g)

    def graph(g):
        found.update(v.type.tensor_type.elem_type for v in [*g.input, *g.output, *g.value_info])
        found.update(t.data_type for t in g.initializer)
        nodes(g.node)

    graph(model.graph)
    for f in model.functions:
        nodes(f.node)
    return found


def make_runner(path, model, force_reference):
    """(run(feeds) -> list of arrays, backend name, note)."""
    def reference():
        from onnx.reference import ReferenceEvaluator
        ref = ReferenceEvaluator(onnx.load(path))
        return lambda feeds: ref.run(None, feeds)

    if force_reference:
        return reference(), "reference", None
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.log_severity_level = 1, 3
    try:
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 - fall back only for a missing kernel on a bf16 model
        msg = str(e)
        no_kernel = "NOT_IMPLEMENTED" in msg or "Could not find an implementation" in msg
        if no_kernel and TensorProto.BFLOAT16 in elem_types(model):
            return reference(), "reference", "onnxruntime has no kernel for this bfloat16 model: " + msg[:300]
        raise
    return lambda feeds: sess.run(None, feeds), "onnxruntime", None


def make_feeds(model, leaves, inputs):
    """Feed dict for the ONNX graph inputs from the npz leaves; (feeds, casts)."""
    initializers = {t.name for t in model.graph.initializer}
    graph_inputs = [i for i in model.graph.input if i.name not in initializers]
    n_leaves = len([k for k in inputs.files if re.fullmatch(r"input_\d+", k)])
    if n_leaves != len(leaves):
        raise ValueError(f"inputs npz has {n_leaves} leaves, the archive's in_spec has {len(leaves)}")
    live = [(i, name) for i, (name, const) in enumerate(leaves) if not const]
    if len(live) != len(graph_inputs):
        raise ValueError(f"{len(live)} non-constant leaves {[n for _, n in live]} but the ONNX graph has "
                         f"{len(graph_inputs)} inputs {[g.name for g in graph_inputs]}")
    feeds, casts = {}, []
    for (i, leaf), gi in zip(live, graph_inputs):
        arr = inputs[f"input_{i}"]
        tt = gi.type.tensor_type
        want = np.dtype(helper.tensor_dtype_to_np_dtype(tt.elem_type))
        where = f"input_{i} ({leaf}) -> ONNX input '{gi.name}'"
        if arr.dtype != want:
            same_kind = arr.dtype.kind == want.kind or {arr.dtype.kind, want.kind} <= {"i", "u"}
            if arr.ndim != 0 or not same_kind:
                raise ValueError(f"{where}: dtype {arr.dtype}{list(arr.shape)} but ONNX expects {want}")
            casts.append(f"input_{i}: {arr.dtype} -> {want}")
            arr = arr.astype(want)
        if tt.HasField("shape") and len(tt.shape.dim) != arr.ndim:
            raise ValueError(f"{where}: rank {arr.ndim} {list(arr.shape)} but ONNX expects rank "
                             f"{len(tt.shape.dim)}")
        feeds[gi.name] = arr
    return feeds, casts


def pair_outputs(onnx_names, expected, model_name):
    """[(expected key, index of the ONNX output or None)], number of ignored ONNX outputs."""
    prefix = "output_" if model_name == "model" else f"{model_name}_output_"
    n_user = len([k for k in expected.files if re.fullmatch(re.escape(prefix) + r"\d+", k)])
    pairs = [(f"{prefix}{i}", i if i < len(onnx_names) else None) for i in range(n_user)]
    mutations = [k for k in expected.files if k.startswith(MUTATION_PREFIXES)] if model_name == "model" else []
    free = list(range(n_user, len(onnx_names)))
    for key in mutations:  # exact name first, then the next unclaimed output
        j = next((j for j in free if onnx_names[j] == key), None)
        if j is None:
            j = next((j for j in free if onnx_names[j] not in mutations), None)
        if j is not None:
            free.remove(j)
        pairs.append((key, j))
    return pairs, len(free)


def compare(key, onnx_name, actual, exp, rtol, atol):
    """(problem message or None, max abs diff or None)."""
    actual = np.asarray(actual)
    where = f"{key} (ONNX output '{onnx_name}')"
    if actual.shape != exp.shape or actual.dtype != exp.dtype:
        return f"{where}: got {actual.dtype}{list(actual.shape)}, expected {exp.dtype}{list(exp.shape)}", None
    if exp.size == 0:
        return None, 0.0
    wide = np.complex128 if exp.dtype.kind == "c" else np.float64
    a, e = actual.astype(wide), exp.astype(wide)
    with np.errstate(invalid="ignore"):  # inf - inf
        same = (a == e) | (np.isnan(a) & np.isnan(e))
        diff = np.where(same, 0.0, np.nan_to_num(np.abs(a - e), nan=np.inf))
    ok = np.isclose(actual, exp, rtol=rtol, atol=atol, equal_nan=True) if exp.dtype.kind in "fc" else actual == exp
    if ok.all():
        return None, float(diff.max())
    worst = np.unravel_index(int(np.argmax(np.where(ok, -1.0, diff))), exp.shape)
    return (f"{where}: {int((~ok).sum())}/{exp.size} elements differ, max abs diff {float(diff[worst]):.4g} "
            f"at {list(map(int, worst))} (got {actual[worst]!r}, expected {exp[worst]!r}; rtol {rtol}, "
            f"atol {atol}), {exp.dtype}{list(exp.shape)}"), float(diff.max())


DEBUG_PREFIX = "debug:"


def check_nodes(nodes_path, onnx_names, outs, rtol, atol, problems):
    """Compare every node value of NAME.nodes.npz that the model outputs as `debug:<node>`.
    Returns (compared, names not output): fxonnx computes neither the values only runtime
    assertions read nor tuple items nothing reads."""
    by_name = {n: i for i, n in enumerate(onnx_names)}
    compared, absent = 0, []
    with np.load(nodes_path) as nodes:
        for key in nodes.files:
            j = by_name.get(DEBUG_PREFIX + key)
            if j is None:
                absent.append(key)
                continue
            exp, actual = nodes[key], np.asarray(outs[j])
            if exp.ndim == 0 and actual.size == 1:  # a symbolic int: a 0-d or 1-element tensor
                actual = actual.reshape(())
            kinds = {actual.dtype.kind, exp.dtype.kind}
            if actual.dtype.name == "bfloat16" or (actual.dtype != exp.dtype and (kinds <= {"i", "u", "b"} or kinds == {"f"})):
                # torch's bfloat16 was saved as float32; ints of another width are still ints
                actual = actual.astype(exp.dtype)
            problem, _ = compare(f"node {key}", onnx_names[j], actual, exp, rtol, atol)
            problems += [problem] if problem else []
            compared += 1
    return compared, absent


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", help="the .onnx file")
    ap.add_argument("--pt2", required=True, help="the archive the model was exported from")
    ap.add_argument("--inputs", action="append", required=True, help="NAME.inputs*.npz (repeatable)")
    ap.add_argument("--expected", action="append", required=True, help="NAME.expected*.npz, paired in order")
    ap.add_argument("--rtol", type=float)
    ap.add_argument("--atol", type=float)
    ap.add_argument("--model-name", default="model", help="program inside the archive (models/<name>.json)")
    ap.add_argument("--reference", action="store_true", help="run with onnx.reference instead of onnxruntime")
    ap.add_argument("--samples", help="samples.json with per-case tolerances (default: next to --pt2)")
    ap.add_argument("--nodes", help="NAME.nodes.npz: torch's value of every FX node on the first input set, "
                    "compared with the model's `debug:<node>` outputs (fxonnx export --debug-outputs)")
    args = ap.parse_args(argv)
    if len(args.inputs) != len(args.expected):
        ap.error("give one --expected per --inputs")

    failed = False
    try:
        onnx.checker.check_model(args.model, full_check=True)
        checker_error = None
    except Exception as e:  # noqa: BLE001 - report and still run the numbers
        checker_error, failed = f"{type(e).__name__}: {str(e)[:500]}", True
    model = onnx.load(args.model, load_external_data=False)
    rtol, atol, tol_source = case_tolerance(args, model)
    onnx_names = [o.name for o in model.graph.output]
    leaves = archive_leaves(args.pt2, args.model_name)
    try:
        run, backend, note = make_runner(args.model, model, args.reference)
    except Exception as e:  # noqa: BLE001 - reported on every input set's line
        session_error = f"cannot create a session: {type(e).__name__}: {str(e)[:800]}"
        run, backend, note = None, "reference" if args.reference else "onnxruntime", None

    for inputs_path, expected_path in zip(args.inputs, args.expected):
        line = {"model": args.model, "inputs": inputs_path, "backend": backend, "ok": False,
                "rtol": rtol, "atol": atol, "tolerance_from": tol_source, "checker_error": checker_error}
        if note:
            line["note"] = note
        try:
            with np.load(inputs_path) as inputs, np.load(expected_path) as expected:
                if run is None:
                    raise RuntimeError(session_error)
                feeds, line["input_casts"] = make_feeds(model, leaves, inputs)
                outs = run(feeds)
                pairs, line["ignored_extra_outputs"] = pair_outputs(onnx_names, expected, args.model_name)
                problems, diffs = [], []
                for key, j in pairs:
                    if j is None:
                        problems.append(f"{key}: the ONNX model has no output for it "
                                        f"({len(onnx_names)} outputs: {onnx_names})")
                        continue
                    problem, diff = compare(key, onnx_names[j], outs[j], expected[key], rtol, atol)
                    problems += [problem] if problem else []
                    diffs.append(diff)
                if args.nodes and inputs_path == args.inputs[0]:
                    line["nodes_checked"], line["nodes_not_output"] = check_nodes(
                        args.nodes, onnx_names, outs, rtol, atol, problems)
            line["outputs_checked"] = len(pairs)
            line["max_abs_diff"] = max([d for d in diffs if d is not None], default=0.0)
            line["failures"] = problems
            line["ok"] = not problems and checker_error is None
        except Exception as e:  # noqa: BLE001 - one clear line per input set
            line["failures"] = [f"{type(e).__name__}: {str(e)[:1000]}"]
        failed |= not line["ok"]
        print(json.dumps(line), flush=True)
        for problem in line["failures"]:
            print(f"check_onnx: FAIL {args.model} on {inputs_path}: {problem}", file=sys.stderr)
    if checker_error:
        print(f"check_onnx: FAIL {args.model}: onnx.checker: {checker_error}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
