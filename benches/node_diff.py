#!/usr/bin/env python3
"""node_diff.py -- compare an fxonnx export with torch node by node and name the first node that diverges.

    python benches/node_diff.py CASE... [--fxonnx target/release/fxonnx] [--no-optimize] [--sizes]
                                [--json F.jsonl] [--out reports/node_diff.md] [--save-reference]

Needs torch (the ExportedProgram is run in torch), onnx, onnxruntime and numpy. A CASE is a zoo or
sweep case folder (model.pt2, inputs.npz, meta.json with rtol/atol) or a fixture archive
`tests/fixtures/NAME.pt2` (NAME.inputs.npz beside it; tolerance from samples.json, else 1e-4/1e-5).

For each case:
1. torch: the archive's ExportedProgram is run by `torch.fx.Interpreter` over `ep.graph_module`
   with the lifted inputs torch itself builds (`_graph_module_flat_inputs`). Every node's value is
   cloned as soon as it is computed, so a later in-place update does not change what was recorded.
2. fxonnx: `fxonnx export --debug-outputs` makes every FX node's value a graph output
   `debug:<node>`; ONNX Runtime runs the model once on the same inputs.
3. Each node is compared twice (|a - e| <= atol + rtol * |e|, NaN equal to NaN, integers exactly):
   - *global*: ONNX Runtime's value against torch's, which shows how far errors have travelled;
   - *local*: the node's op run in torch on ONNX Runtime's values of its inputs, against ONNX
     Runtime's value of the node: an error of that node alone, not of what came before. Nodes
     whose inputs torch changed in place after computing them, and random or uninitialized ops,
     are compared globally only.
   The first node whose local comparison fails is the divergence to fix: its translation is wrong
   (or the optimizer rewrote it wrongly: compare with --no-optimize).

With --sizes, each case is checked at its example size, its alternative size (inputs_alt.npz) and
the edges of its range constraints (inputs made as benches/sizes.py makes them), one record per
size: the node whose translation is wrong at a size other than the example's.

With --save-reference, torch's node values are written to NAME.nodes.npz beside a fixture archive
(keys are FX node names; complex values as their real view): tests/fixtures.rs checks the
`debug:` outputs against them without torch.
Writes one JSON record per case to --json (appending) and a markdown table to --out.
"""
from __future__ import annotations

import argparse
import json
import operator
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PREFIX = "debug:"
# Ops whose values differ from run to run, or are undefined: compared by neither check.
# Names without a trailing `_` or `_like`: `rand_like` and `normal_` are `rand` and `normal`.
UNDEFINED = {"rand", "randn", "randint", "randperm", "bernoulli", "normal", "multinomial", "uniform",
             "exponential", "geometric", "cauchy", "log_normal", "dropout", "native_dropout", "random",
             "empty", "empty_strided", "new_empty", "new_empty_strided", "empty_permuted",
             "rrelu_with_noise", "rrelu", "poisson", "_fused_dropout", "feature_dropout",
             "alpha_dropout", "feature_alpha_dropout", "_standard_gamma", "_sample_dirichlet",
             "binomial"}


DROPOUTS = {"dropout", "native_dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout"}


def undefined_op(node) -> bool:
    name = base_name(node.target).rstrip("_")
    if name in DROPOUTS:  # (input, p, train): the identity out of training
        train = node.kwargs.get("train", node.args[2] if len(node.args) > 2 else True)
        return train is not False
    return name in UNDEFINED or name.removesuffix("_like") in UNDEFINED




def low_precision(torch) -> dict:
    """Tolerance floors for half-precision values, as tests/check_onnx.py widens them."""
    return {torch.float16: (4e-3, 1e-3), torch.bfloat16: (2e-2, 4e-3)}


def unordered_axis(node):
    """The axis along which an item of `topk(..., sorted=False)` has no defined order, else None."""
    if node.target is not operator.getitem or not node.args:
        return None
    src = node.args[0]
    if getattr(src, "op", None) != "call_function" or base_name(src.target) != "topk":
        return None
    args = list(src.args) + [None] * 5
    sorted_ = src.kwargs.get("sorted", True if args[4] is None else args[4])
    dim = src.kwargs.get("dim", -1 if args[2] is None else args[2])
    return None if sorted_ else dim


def tie_order(node) -> bool:
    """Whether `node` is the indices of an unstable sort, whose order among equal keys is free."""
    if node.target is not operator.getitem or len(node.args) < 2 or node.args[1] != 1:
        return False
    src = node.args[0]
    if getattr(src, "op", None) != "call_function" or base_name(src.target) != "sort":
        return False
    return not src.kwargs.get("stable", False)


def undefined_values(nodes) -> tuple[set, set]:
    """Random or uninitialized values (and the items of such a tuple), which compare to nothing,
    and the values computed from them or from values whose order torch leaves free (topk unsorted,
    an unstable sort's indices), which can only be compared locally."""
    undefined, tainted = set(), set()
    for n in nodes:
        source = n.args[0] if n.target is operator.getitem and n.args else None
        if undefined_op(n) or getattr(source, "name", None) in undefined or tie_order(n):
            undefined.add(n.name)
        elif unordered_axis(n) is not None or any(a.name in undefined or a.name in tainted
                                                 for a in n.all_input_nodes):
            tainted.add(n.name)
    return undefined, tainted


def case_paths(case: str):
    """(name, pt2, inputs.npz, rtol, atol, reference path or None, output_absmax or None)."""
    if os.path.isdir(case):
        meta = {}
        if os.path.exists(os.path.join(case, "meta.json")):
            with open(os.path.join(case, "meta.json")) as f:
                meta = json.load(f)
        return (os.path.basename(os.path.normpath(case)), os.path.join(case, "model.pt2"),
                os.path.join(case, "inputs.npz"), meta.get("rtol", 1e-4), meta.get("atol", 1e-5), None,
                meta.get("output_absmax"))
    base = case[:-len(".pt2")] if case.endswith(".pt2") else case
    name = os.path.basename(base)
    rtol, atol = 1e-4, 1e-5
    samples = os.path.join(os.path.dirname(base), "samples.json")
    if os.path.exists(samples):
        with open(samples) as f:
            entry = next((s for s in json.load(f) if s.get("name") == name), {})
        tol = {**entry.get("tolerance", {}), **{k: entry[k] for k in ("rtol", "atol") if k in entry}}
        rtol, atol = tol.get("rtol", rtol), tol.get("atol", atol)
    return name, base + ".pt2", base + ".inputs.npz", rtol, atol, base + ".nodes.npz", None


def leaves(path: str) -> list:
    with np.load(path) as z:
        n = len([k for k in z.files if k.startswith("input_")])
        return [z[f"input_{i}"] for i in range(n)]


def base_name(target) -> str:
    """`aten.fill_.Scalar` -> `fill_`; builtins by their name."""
    name = getattr(target, "__name__", str(target))
    packet = getattr(target, "_overloadpacket", None)
    if packet is not None:
        name = packet.__name__
    return name.split(".")[-1]


def to_numpy(torch, v):
    if isinstance(v, torch.Tensor):
        v = v.detach()
        if v.is_complex():
            v = torch.view_as_real(v.resolve_conj())
        if v.dtype == torch.bfloat16:
            v = v.float()
        return v.cpu().numpy()
    if isinstance(v, (bool, int, float)):
        return np.array(v)
    return None


def run_torch(torch, pt2: str, inputs: list):
    """Run the program: every node's value as computed, the nodes that read an input changed in
    place since, and the leaves that are ONNX graph inputs."""
    ep = torch.export.load(pt2)
    leaves_left = iter(inputs)
    flat, graph_inputs = [], []
    # The graph's placeholders in signature order: lifted tensors by name, user inputs from the
    # leaves (a Python number where the program takes one), an empty tensor per effect token.
    placeholders = [n for n in ep.graph.nodes if n.op == "placeholder"]
    for s, node in zip(ep.graph_signature.input_specs, placeholders):
        kind = s.kind.name
        if kind == "USER_INPUT":
            a = next(leaves_left)
            arg_kind = type(s.arg).__name__
            if arg_kind in ("SymIntArgument", "SymFloatArgument", "SymBoolArgument", "ConstantArgument"):
                flat.append(a.reshape(-1)[0].item() if a.size == 1 else a)
            else:
                t = torch.from_numpy(np.array(a))
                val = node.meta.get("val")
                if isinstance(val, torch.Tensor) and val.is_complex():  # given as its real view
                    t = torch.view_as_complex(t.contiguous())
                flat.append(t)
            if arg_kind != "ConstantArgument":  # constants are baked into the ONNX graph
                graph_inputs.append(a)
        elif kind == "TOKEN":
            flat.append(torch.tensor([]))
        else:
            v = ep.state_dict.get(s.target)
            flat.append((ep.constants[s.target] if v is None else v))
    flat = [x.detach().clone() if isinstance(x, torch.Tensor) else x for x in flat]
    recorded, versions, stale = {}, {}, set()

    def tensors(v):
        if isinstance(v, torch.Tensor):
            return [v]
        if isinstance(v, (list, tuple)):
            return [t for x in v for t in tensors(x)]
        return []

    def clone(v):
        if isinstance(v, torch.Tensor):
            return v.clone()
        if isinstance(v, (list, tuple)):
            return type(v)(clone(x) for x in v)
        return v

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n):
            # An input changed in place since it was computed: what this node reads is no longer
            # the recorded value, so its local check cannot rebuild the node's inputs.
            if any([t._version for t in tensors(self.env.get(a))] != versions.get(a.name, [])
                   for a in n.all_input_nodes):
                stale.add(n.name)
            out = super().run_node(n)
            # cloned now: a later in-place update must not change what this node computed
            recorded[n.name], versions[n.name] = clone(out), [t._version for t in tensors(out)]
            return out

    gm = ep.graph_module
    with torch.no_grad():
        Recorder(gm).run(*flat)
    return gm, recorded, stale, graph_inputs


def run_fxonnx(fxonnx: str, pt2: str, onnx_path: str, optimize: bool):
    cmd = [fxonnx, "export", pt2, "-o", onnx_path, "--debug-outputs", "--quiet"]
    if not optimize:
        cmd.append("--no-optimize")
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode == 0, (r.stderr.strip().splitlines() or [""])[0], time.perf_counter() - t


def run_ort(onnx_path: str, inputs: list) -> dict:
    """Every `debug:` output of the model on `inputs` (the graph inputs in order), by node name."""
    import onnx
    import onnxruntime as ort
    graph = onnx.load(onnx_path, load_external_data=False).graph
    feed = {}
    for inp, a in zip(graph.input, inputs):
        want = onnx.helper.tensor_dtype_to_np_dtype(inp.type.tensor_type.elem_type)
        feed[inp.name] = a.astype(want) if a.dtype != want else a
    names = [o.name for o in graph.output]
    try:
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        sess = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])
        values = sess.run(names, feed)
    except Exception as e:  # noqa: BLE001
        if "NOT_IMPLEMENTED" not in str(e):
            raise
        # No CPU kernel for a type (float16 Gemm, bfloat16): ONNX's reference evaluator instead.
        from onnx.reference import ReferenceEvaluator
        values = ReferenceEvaluator(onnx_path).run(names, feed)
    return {n[len(PREFIX):]: v for n, v in zip(names, values) if n.startswith(PREFIX)}


def compare(actual, expected, rtol, atol) -> float | None:
    """tol ratio (<= 1 passes; inf on shape or dtype-kind mismatch), None when not comparable."""
    if actual is None or expected is None:
        return None
    a, e = np.asarray(actual), np.asarray(expected)
    if e.ndim == 0 and a.size == 1:  # a symbolic int travels as a 0-d or 1-element tensor
        a = a.reshape(())
    if a.shape != e.shape:
        return float("inf")
    if e.size == 0:
        return 0.0
    if e.dtype.kind in "iub" and a.dtype.kind in "iub":
        return 0.0 if np.array_equal(a.astype(np.int64), e.astype(np.int64)) else float("inf")
    a, e = a.astype(np.float64), e.astype(np.float64)
    both_nan = np.isnan(a) & np.isnan(e)
    same_inf = np.isinf(a) & np.isinf(e) & (np.sign(a) == np.sign(e))
    with np.errstate(invalid="ignore"):  # inf - inf
        diff = np.where(both_nan | same_inf, 0.0, np.abs(a - e))
    diff = np.where(np.isnan(diff), np.inf, diff)
    ratio = diff / (atol + rtol * np.where(np.isfinite(e), np.abs(e), 0.0))
    return float(ratio.max())


class NotCheckable(Exception):
    pass


def local_value(torch, node, ort_values, recorded):
    """The node's op in torch on ONNX Runtime's values of its inputs (torch's for the program's
    inputs and weights); `NotCheckable` when an input is a node output ONNX has no value of."""

    def arg(a):
        if isinstance(a, (list, tuple)):
            return type(a)(arg(x) for x in a)
        if not isinstance(a, torch.fx.Node):
            return a
        r = recorded[a.name]
        if a.op == "call_function" and a.name not in ort_values:
            # a tuple, or a value ONNX does not compute: torch's own value would make the
            # check a global one
            raise NotCheckable(a.name)
        if isinstance(r, torch.Tensor):
            if a.name not in ort_values:
                return r.clone()
            v = torch.from_numpy(np.array(ort_values[a.name])).reshape(r.shape if not r.is_complex() else (*r.shape, 2))
            if r.is_complex():
                return torch.view_as_complex(v.to(torch.float64 if r.dtype == torch.complex128 else torch.float32)).to(r.dtype)
            return v.to(r.dtype)
        if isinstance(r, (bool, int, float)) and a.name in ort_values:
            return type(r)(np.asarray(ort_values[a.name]).reshape(-1)[0].item())
        return r

    args = arg(tuple(node.args))
    kwargs = {k: arg(v) for k, v in node.kwargs.items()}
    with torch.no_grad():
        return node.target(*args, **kwargs)


def diff_case(torch, case: str, fxonnx: str, optimize: bool, save_reference: bool, size=None) -> dict:
    """`size` = (label, {symbol: size}, inputs): the check on those inputs instead of the example's."""
    name, pt2, inputs_path, rtol, atol, reference, scale = case_paths(case)
    rec = {"case": name, "optimize": optimize, "rtol": rtol, "atol": atol}
    if size is None:
        inputs = leaves(inputs_path)
    else:
        rec["size"], rec["values"], inputs = size
        reference = None  # the saved reference is the example's
    try:
        gm, recorded, stale, graph_inputs = run_torch(torch, pt2, inputs)
    except Exception as e:  # noqa: BLE001 -- any torch failure is recorded, not fatal
        rec["error"] = f"torch: {type(e).__name__}: {str(e)[:300]}"
        return rec
    nodes = [n for n in gm.graph.nodes if n.op == "call_function"]
    undefined, tainted = undefined_values(nodes)
    if save_reference and reference:
        arrays = {}
        for n in nodes:
            v = to_numpy(torch, recorded.get(n.name))
            if v is not None and n.name not in undefined and n.name not in tainted:
                arrays[n.name] = v
        np.savez_compressed(reference, **arrays)
        rec["reference"] = os.path.basename(reference)
    with tempfile.TemporaryDirectory() as tmp:
        onnx_path = os.path.join(tmp, "model.onnx")
        ok, err, secs = run_fxonnx(fxonnx, pt2, onnx_path, optimize)
        rec["export_s"] = round(secs, 3)
        if not ok:
            rec["error"] = f"fxonnx: {err}"
            return rec
        try:
            ort_values = run_ort(onnx_path, graph_inputs)
        except Exception as e:  # noqa: BLE001
            rec["error"] = f"onnxruntime: {type(e).__name__}: {str(e)[:300]}"
            return rec
    # Half-precision anywhere widens the tolerance of every node (as tests/check_onnx.py does).
    floors = low_precision(torch)
    widest = max((floors[v.dtype] for v in recorded.values() if isinstance(v, torch.Tensor) and v.dtype in floors),
                 default=(0.0, 0.0))
    rtol, atol = max(rtol, widest[0]), max(atol, widest[1])
    compared = local_checked = 0
    first_global = first_local = None
    worst_local = worst_global = (0.0, None)
    missing = []
    for n in nodes:
        if n.name in undefined:
            continue
        value = recorded.get(n.name)
        expected = to_numpy(torch, value)
        if expected is None:
            continue
        if n.name not in ort_values:
            missing.append(n.name)
            continue
        actual = ort_values[n.name]
        n_atol = atol
        if scale and expected.dtype.kind == "f" and expected.size:
            # The zoo's rule, atol = 1e-4 x the outputs' largest magnitude, applied to this value's.
            n_atol = max(atol, atol / scale * float(np.nanmax(np.where(np.isfinite(expected), np.abs(expected), 0))))
        if base_name(n.target).startswith("quantize_per"):
            # Exact ties round apart: ONNX divides by the scale, torch multiplies by its reciprocal,
            # so a value on a tie may land one quantum away.
            actual, expected = actual.astype(np.float64), expected.astype(np.float64)
            n_rtol, n_atol = 0.0, 1.0
        else:
            n_rtol = rtol
        axis = unordered_axis(n)
        if axis is not None:  # topk(sorted=False): the same elements, in an order neither promises
            actual, expected = np.sort(actual, axis=axis), np.sort(expected, axis=axis)
        compared += 1
        # (a topk item is tainted for what reads it, but is compared itself, sorted)
        g = None if n.name in tainted and axis is None else compare(actual, expected, n_rtol, n_atol)
        if g is not None and g > worst_global[0]:
            worst_global = (g, n.name)
        if g is not None and g > 1 and first_global is None:
            first_global = {"node": n.name, "target": str(n.target), "tol_ratio": g}
        try:
            local = None if n.name in stale else local_value(torch, n, ort_values, recorded)
        except Exception:  # noqa: BLE001 -- an op torch cannot rerun on these inputs
            local = None
        lv = to_numpy(torch, local)
        if lv is not None and actual.dtype.kind == "f":
            lv = lv.astype(np.float64)
        if lv is not None and axis is not None:
            lv = np.sort(lv, axis=axis)
        l_ratio = compare(actual, lv, n_rtol, n_atol) if lv is not None else None
        if l_ratio is not None:
            local_checked += 1
            if l_ratio > worst_local[0]:
                worst_local = (l_ratio, n.name)
            if l_ratio > 1 and first_local is None:
                first_local = {"node": n.name, "target": str(n.target), "tol_ratio": l_ratio,
                               "global_tol_ratio": g}
    rec.update({"nodes": len(nodes), "compared": compared, "local_checked": local_checked,
                "not_exposed": len(missing), "first_local_divergence": first_local,
                "first_global_divergence": first_global,
                "worst_local": {"tol_ratio": worst_local[0], "node": worst_local[1]},
                "worst_global": {"tol_ratio": worst_global[0], "node": worst_global[1]}})
    return rec


def other_sizes(torch, case: str, max_mb: float) -> list:
    """(label, {symbol: size}, inputs) of the case at its alternative size (inputs_alt.npz) and at the
    edges of its range constraints (benches/sizes.py's `edge_sets` and `edge_inputs`; an edge whose
    inputs or outputs are over `max_mb` with its symbols halved until they fit, or left out)."""
    sys.path.insert(0, HERE)
    import sizes
    _, pt2, inputs_path, *_ = case_paths(case)
    ep = torch.export.load(pt2)
    example = leaves(inputs_path)
    out = [("example", sizes.symbol_values(ep, example), example)]
    alt = os.path.join(case, "inputs_alt.npz") if os.path.isdir(case) else None
    if alt and os.path.exists(alt):
        out.append(("alt", sizes.symbol_values(ep, leaves(alt)), leaves(alt)))
    edges = sizes.edge_sets(ep)
    for label, values in edges:
        # Every node's value is kept, so memory grows with the size: a smaller edge than sizes.py's.
        fitted = sizes.within(ep, example, values, edges[0][1], max_mb)
        if fitted is not None:
            label += " (reduced)" if fitted != values else ""
            out.append((label, fitted, sizes.edge_inputs(ep, example, fitted)))
    return out


def fmt_div(d) -> str:
    if not d:
        return "–"
    r = d["tol_ratio"]
    return f"`{d['node']}` ({d['target']}, {'inf' if r == float('inf') else f'{r:.3g}'}×)"


def case_label(r: dict) -> str:
    """The case, and with --sizes the size: `hf_bert @ low 1×2` (symbol values in the symbols' order)."""
    if "size" not in r:
        return r["case"]
    return f"{r['case']} @ {r['size']} " + "×".join(str(v) for _, v in sorted(r["values"].items()))


def markdown(records: list) -> str:
    ok = [r for r in records if "error" not in r]
    diverged = [r for r in ok if r["first_local_divergence"]]
    lines = ["# Node-by-node differential check: fxonnx against torch", "",
             "Generated by `benches/node_diff.py` (needs torch). Every FX node's value from `fxonnx export "
             "--debug-outputs`, run in ONNX Runtime, against the ExportedProgram run by `torch.fx.Interpreter`. "
             "*Local*: the node's op rerun in torch on ONNX Runtime's values of its inputs, so an error is "
             "pinned to the node that made it; a local ratio over 1 is a divergence, a translation to fix. "
             "*Global*: ONNX Runtime's value against torch's own, errors carried from earlier nodes "
             "included: float32 rounding grows through deep networks, so a global ratio a little over 1 in "
             "an intermediate value whose local checks all pass is drift, not a bug (the model's outputs "
             "pass their own check). Ratios are max |a-e| / (atol + rtol·|e|) with the case's tolerance "
             "(zoo and sweep cases: atol scaled to each value's magnitude, as the case's atol is to its "
             "outputs'). Random values and values whose order torch leaves free (unsorted topk, an "
             "unstable sort's indices) are compared locally only.", "",
             f"{len(records)} cases: {len(ok)} compared, {len(diverged)} with a local divergence, "
             f"{len(records) - len(ok)} not compared (see the error).", "",
             "| case | optimized | FX nodes | compared | local checks | first local divergence | "
             "worst local ratio | worst global ratio (node) |",
             "|---|---|---:|---:|---:|---|---:|---|"]
    for r in records:
        if "error" in r:
            lines.append(f"| {case_label(r)} | {'yes' if r['optimize'] else 'no'} | | | | not compared: "
                         f"{r['error'].replace('|', '/').splitlines()[0][:160]} | | |")
            continue
        wg = r["worst_global"]
        lines.append(f"| {case_label(r)} | {'yes' if r['optimize'] else 'no'} | {r['nodes']} | {r['compared']} | "
                     f"{r['local_checked']} | {fmt_div(r['first_local_divergence'])} | "
                     f"{r['worst_local']['tol_ratio']:.3g} | {wg['tol_ratio']:.3g} (`{wg['node']}`) |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cases", nargs="+")
    ap.add_argument("--fxonnx", default=os.path.join(HERE, "..", "target", "release", "fxonnx"))
    ap.add_argument("--no-optimize", action="store_true")
    ap.add_argument("--json", default=None, help="append one JSON record per case")
    ap.add_argument("--out", default=None, help="markdown table")
    ap.add_argument("--save-reference", action="store_true", help="write NAME.nodes.npz beside fixture archives")
    ap.add_argument("--sizes", action="store_true",
                    help="check each case at the example size, the alternative size (inputs_alt.npz) and the "
                    "edges of its range constraints (benches/sizes.py), one record per size")
    ap.add_argument("--sizes-max-mb", type=float, default=4,
                    help="--sizes: an edge whose inputs or outputs are larger is checked with its symbols halved "
                    "until they fit (every node's value is kept, so memory grows with the size)")
    args = ap.parse_args(argv)
    import torch
    torch.set_num_threads(1)
    # Custom ops of archives (transformers' MoE, torchvision's detection ops, PT2E quantization) are
    # registered on import;
    # without the package, such archives fail to load, recorded per case.
    for module in ("transformers.integrations.moe", "torchvision", "torchao.quantization.pt2e.quantize_pt2e"):
        try:
            __import__(module)
        except Exception:  # noqa: BLE001
            pass
    records = []
    for case in args.cases:
        try:
            size_list = other_sizes(torch, case, args.sizes_max_mb) if args.sizes else [None]
        except Exception as e:  # noqa: BLE001
            size_list = [("?", {}, None, f"{type(e).__name__}: {str(e).splitlines()[0][:200]}")]
        for size in size_list:
            try:
                if size is not None and len(size) == 4:
                    raise RuntimeError(size[3])
                rec = diff_case(torch, case, args.fxonnx, not args.no_optimize, args.save_reference, size)
            except Exception as e:  # noqa: BLE001 -- one case's failure is recorded, the others still run
                rec = {"case": os.path.basename(os.path.normpath(case)), "optimize": not args.no_optimize,
                       "error": f"node_diff: {type(e).__name__}: {str(e).splitlines()[0][:200]}"}
                if size is not None:
                    rec.update(size=size[0], values=size[1])
            records.append(rec)
            print(json.dumps(rec), flush=True)
            if args.json:
                with open(args.json, "a") as f:
                    f.write(json.dumps(rec) + "\n")
    if args.out:
        with open(args.out, "w") as f:
            f.write(markdown(records))
    return 1 if any("error" in r or r.get("first_local_divergence") for r in records) else 0


if __name__ == "__main__":
    sys.exit(main())
