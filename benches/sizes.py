#!/usr/bin/env python3
"""sizes.py -- check exports of dynamic models at the edges of their range constraints.

    python benches/sizes.py CASE... [--fxonnx target/release/fxonnx] [--onnx-dir DIR]
                            [--checker ../shared/tools/check_onnx.py] [--json F.jsonl] [--out F.md]

A zoo or sweep case (model.pt2, inputs.npz, inputs_alt.npz, meta.json) with a dynamic size is
checked at the example size, at the alternative size and at every *edge* of the program's range
constraints: a translation that bakes an example size into a graph can still be right at the first
two. The edges are read from the archive itself: every symbolic size at its lower bound (1 where
the range allows it, never 0) and, where the range gives one, at its upper bound. At the example
and alternative sizes the inputs are the case's and the reference is eager's (expected.npz,
expected_alt.npz, as check_onnx.py compares); at the edges the inputs are drawn like the example's
(floats with its mean and spread, integers in its range, constant inputs such as an all-ones mask
kept constant) and the reference is the ExportedProgram run in torch (`ep.module()`, which is what
the export translates). ONNX Runtime's outputs are compared with check_onnx.py's rule and the
case's tolerance. A size the program's own guards refuse is reported, not failed. The model is
exported once (or taken from --onnx-dir) and run at every size.

CASE may also be a fixture archive `tests/fixtures/NAME.pt2` (tolerance 1e-4 / 1e-5).
Needs torch, onnxruntime and numpy. Exit status 1 when an export is wrong at any size.
`edge_sets` and `edge_inputs` are also used by node_diff.py (`--sizes`); `check_case` by the sweep
and zoo runners (benches/sweep.sh, benches/zoo_check.py).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKER = os.path.join(HERE, "..", "..", "shared", "tools", "check_onnx.py")


def load_checker(path: str):
    spec = importlib.util.spec_from_file_location("check_onnx", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def leaves(path: str, prefix: str = "input") -> list:
    with np.load(path) as z:
        n = len([k for k in z.files if k.startswith(prefix + "_")])
        return [z[f"{prefix}_{i}"] for i in range(n)]


def user_inputs(ep) -> list:
    """Per flattened user input, in in_spec order: ("tensor", shape with SymInts for the dynamic
    sizes), ("symint", its SymInt) or ("constant", None)."""
    import torch
    from torch.export.graph_signature import InputKind, SymIntArgument, TensorArgument

    by_name = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    kinds = []
    for spec in ep.graph_signature.input_specs:
        if spec.kind != InputKind.USER_INPUT:
            continue
        if isinstance(spec.arg, TensorArgument):
            val = by_name[spec.arg.name].meta.get("val")
            kinds.append(("tensor", list(val.shape)) if isinstance(val, torch.Tensor) else ("constant", None))
        elif isinstance(spec.arg, SymIntArgument):
            kinds.append(("symint", by_name[spec.arg.name].meta.get("val")))
        else:
            kinds.append(("constant", None))
    return kinds


def finite(bound):
    """A range bound as an int, None for an infinite one (sympy's oo, torch's int_oo)."""
    try:
        return int(bound)
    except (TypeError, ValueError, OverflowError, AttributeError):
        return None


def symbols(ep) -> dict:
    """symbol name -> (lower, upper or None) of the program's range constraints."""
    out = {}
    for sym, vr in ep.range_constraints.items():
        if not getattr(sym, "is_Symbol", False):
            continue
        out[str(sym)] = (finite(vr.lower) or 0, finite(vr.upper))
    return out


def edge_sets(ep) -> list:
    """[(label, {symbol: size})]: every symbol at its lower edge (1 where allowed), then, when the
    ranges give upper bounds, every symbol at its upper edge (symbols without one at their lower)."""
    syms = symbols(ep)
    if not syms:
        return []
    low = {s: max(lo, 1) for s, (lo, _) in syms.items()}
    sets = [("low", low)]
    if any(hi is not None for _, hi in syms.values()):
        sets.append(("high", {s: (hi if hi is not None else low[s]) for s, (_, hi) in syms.items()}))
    return sets


def concrete(dim, values: dict) -> int:
    """A size (an int, or a SymInt of the program's symbols) at the symbols' `values`."""
    if isinstance(dim, int):
        return dim
    expr = dim.node.expr
    return int(expr.subs({s: values[str(s)] for s in expr.free_symbols if str(s) in values}))


def fit(x: np.ndarray, dims: list) -> np.ndarray:
    """`x` cut or repeated (wrapping) along each axis to the sizes `dims`."""
    for axis, d in enumerate(dims):
        n = x.shape[axis]
        if d != n:
            x = np.take(x, np.arange(d) % n, axis=axis) if n else np.zeros(
                x.shape[:axis] + (d,) + x.shape[axis + 1:], x.dtype)
    return x


def symbol_values(ep, inputs: list) -> dict:
    """{symbol: size} that the flat `inputs` give the program's symbols (dims that are a bare symbol)."""
    out = {}
    for x, (kind, shape) in zip(inputs, user_inputs(ep)):
        if kind == "symint" and not isinstance(shape, int) and getattr(shape.node.expr, "is_Symbol", False):
            out[str(shape.node.expr)] = int(np.asarray(x))
        elif kind == "tensor":
            for d, n in zip(shape, np.shape(x)):
                if not isinstance(d, int) and getattr(d.node.expr, "is_Symbol", False):
                    out.setdefault(str(d.node.expr), int(n))
    return out


def edge_inputs(ep, example: list, values: dict, seed: int = 0) -> list:
    """Inputs of the sizes `values` made from the example inputs: floats drawn anew with their
    mean and spread (a repeated example could hide a translation that mixes batch entries),
    integers and bools (token ids, masks, offsets, indices, whose values must stay valid) cut or
    repeated from the example's; symbolic int inputs set to their symbol's size."""
    rng = np.random.default_rng(seed)
    out = []
    for x, (kind, shape) in zip(example, user_inputs(ep)):
        x = np.asarray(x)
        if kind == "symint" and not isinstance(shape, int):
            out.append(np.asarray(concrete(shape, values), dtype=x.dtype))
            continue
        if kind != "tensor" or x.ndim == 0:
            out.append(x)
            continue
        dims = [concrete(d, values) for d in shape]
        if x.dtype.kind in "fc" and x.size and not (x == x.flat[0]).all():
            mean, std = x.mean(), float(x.std()) or 1.0
            draw = rng.standard_normal(dims) * std
            if x.dtype.kind == "c":
                draw = draw + 1j * rng.standard_normal(dims) * std
            out.append((draw + mean).astype(x.dtype))
        else:
            out.append(fit(x, dims))
    return out


def reference(ep, inputs: list) -> list:
    """The ExportedProgram's outputs on the flat `inputs`, flattened."""
    import torch
    import torch.utils._pytree as pytree

    flat = [int(a) if kind == "symint" else torch.from_numpy(np.ascontiguousarray(a))
            for a, (kind, _) in zip(inputs, user_inputs(ep))]
    args, kwargs = pytree.tree_unflatten(flat, ep.call_spec.in_spec)
    with torch.no_grad():
        out = ep.module()(*args, **kwargs)
    res = []
    for v in pytree.tree_leaves(out):
        if isinstance(v, torch.Tensor):
            v = v.detach()
            v = torch.view_as_real(v) if v.is_complex() else v
            res.append((v.float() if v.dtype == torch.bfloat16 else v).numpy())
        else:
            res.append(np.asarray(v))
    return res


ORT_TYPES = {"tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(float16)": np.float16,
             "tensor(int64)": np.int64, "tensor(int32)": np.int32, "tensor(int16)": np.int16,
             "tensor(int8)": np.int8, "tensor(uint8)": np.uint8, "tensor(bool)": np.bool_}


def run_ort(session, inputs: list) -> list:
    feed = {}
    for i, gi in enumerate(session.get_inputs()):
        a = np.asarray(inputs[i])
        if a.dtype.kind == "c":  # complex tensors travel as their real view
            a = np.stack([a.real, a.imag], axis=-1)
        want = ORT_TYPES.get(gi.type)
        feed[gi.name] = a.astype(want) if want is not None and a.dtype != want else a
    return session.run(None, feed)


def case_info(case: str):
    """(name, pt2, example inputs path, rtol, atol, [(label, inputs path, eager outputs path or None)]
    of the case's own input sets)."""
    if os.path.isdir(case):
        with open(os.path.join(case, "meta.json")) as f:
            meta = json.load(f)
        own = [(label, os.path.join(case, i), os.path.join(case, e))
               for label, i, e in (("example", "inputs.npz", "expected.npz"),
                                   ("alt", "inputs_alt.npz", "expected_alt.npz"))
               if os.path.exists(os.path.join(case, i))]
        return (os.path.basename(os.path.normpath(case)), os.path.join(case, "model.pt2"),
                os.path.join(case, "inputs.npz"), float(meta["rtol"]), float(meta["atol"]), own)
    base = case[:-len(".pt2")] if case.endswith(".pt2") else case
    own = [(label, base + i, base + e) for label, i, e in (("example", ".inputs.npz", ".expected.npz"),
                                                          ("alt", ".inputs_alt.npz", ".expected_alt.npz"))
           if os.path.exists(base + i)]
    return os.path.basename(base), base + ".pt2", base + ".inputs.npz", 1e-4, 1e-5, own


def recorded_static(case: str) -> bool:
    """Whether a case folder's meta.json records a program without range constraints."""
    path = os.path.join(case, "meta.json")
    if not os.path.isdir(case) or not os.path.exists(path):
        return False
    with open(path) as f:
        meta = json.load(f)
    return "range_constraints" in meta and not meta["range_constraints"]


def io_mb(ep, example: list, values: dict) -> float:
    """The larger of the inputs' and the outputs' size in MB at the symbols' `values`."""
    import torch

    inputs = sum(np.asarray(a).nbytes for a in edge_inputs(ep, example, values))
    outputs = 0
    out_node = next(n for n in ep.graph.nodes if n.op == "output")
    for v in torch.utils._pytree.tree_leaves(out_node.args):
        val = v.meta.get("val") if isinstance(v, torch.fx.Node) else None
        if isinstance(val, torch.Tensor):
            outputs += int(np.prod([concrete(d, values) for d in val.shape])) * val.element_size()
    return max(inputs, outputs) / 2**20


def within(ep, example: list, values: dict, low: dict, max_mb: float):
    """`values`, or where its inputs or outputs are over `max_mb` (torch's and ONNX Runtime's
    activations, and the comparison's float64 copies, outgrow the machine: timm_sam2_hiera_tiny at
    64 x 896 x 896 took torch past 23 GB, GPT-2's logits at 64 x 128 x 50257 the comparison), the
    symbols above their lower edge halved until they fit; None when even the lower edge is over."""
    values = dict(values)
    while io_mb(ep, example, values) > max_mb:
        if all(values[k] <= low[k] for k in values):
            return None
        values = {k: max(low[k], v // 2) for k, v in values.items()}
    return values


def export(fxonnx: str, pt2: str, onnx_path: str):
    """None, or the export's error."""
    r = subprocess.run([fxonnx, "export", pt2, "-o", onnx_path, "--quiet"], capture_output=True, text=True)
    return None if r.returncode == 0 else "export: " + (r.stderr.strip().splitlines() or ["?"])[-1][:300]


def check_case(case: str, fxonnx: str, onnx_dir: str | None, checker, onnx_path: str | None = None,
               max_input_mb: float = 256) -> dict:
    """The case checked at every size (see the module's doc): {"case", "sizes": [{"edge", "values",
    "ok", "max_abs_err", "tol_ratio", "problems"} or {"edge", "values", "refused_by_program"}], "ok"},
    {"case", "static": True} for a model without a symbolic size, or {"case", "error"}. `onnx_path`
    (or `onnx_dir`/<case>/model.onnx) is a model already exported; else the case is exported here.
    An edge whose inputs or outputs are over `max_input_mb` is checked at a smaller size (`high
    (reduced)`: the symbols halved until they fit), or recorded as skipped."""
    import torch

    name, pt2, inputs_path, rtol, atol, own = case_info(case)
    rec = {"case": name}
    try:
        ep = torch.export.load(pt2)
    except Exception:
        if recorded_static(case):  # nothing to check at other sizes; check_onnx.py checks the example
            rec.update(static=True, note="torch.export.load fails; meta.json records no range constraints")
            return rec
        raise
    bf16 = any(isinstance(n.meta.get("val"), torch.Tensor) and n.meta["val"].dtype == torch.bfloat16
               for n in ep.graph.nodes)
    edges = edge_sets(ep)
    if not edges:
        rec["static"] = True
        return rec
    example = leaves(inputs_path)
    kinds = user_inputs(ep)
    with tempfile.TemporaryDirectory() as tmp:
        if not onnx_path and onnx_dir and os.path.exists(os.path.join(onnx_dir, name, "model.onnx")):
            onnx_path = os.path.join(onnx_dir, name, "model.onnx")
        if not onnx_path:
            onnx_path = os.path.join(tmp, "model.onnx")
            err = export(fxonnx, pt2, onnx_path)
            if err:
                rec["error"] = err
                return rec
        session = session_for(onnx_path)
        rec["sizes"] = []
        sets = [(label, leaves(path), expected) for label, path, expected in own]
        for label, values in edges:
            values = within(ep, example, values, edges[0][1], max_input_mb)
            if values is None:
                sets.append((label, None, None))
                continue
            reduced = label == "high" and values != edges[-1][1]
            sets.append((label + (" (reduced)" if reduced else ""), edge_inputs(ep, example, values), None))
        for label, inputs, expected_path in sets:
            if inputs is None:
                rec["sizes"].append({"edge": label, "values": {}, "skipped": f"over --max-input-mb {max_input_mb:g}"})
                continue
            entry = {"edge": label, "values": symbol_values(ep, inputs)}
            try:
                expected = leaves(expected_path, "output") if expected_path and os.path.exists(expected_path) \
                    else reference(ep, inputs)
            except Exception as e:  # noqa: BLE001 -- the program's own guards refuse this size
                entry["refused_by_program"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
                rec["sizes"].append(entry)
                continue
            try:
                # Inputs the program specialised to constants are not graph inputs.
                graph_inputs = [a for a, (kind, _) in zip(inputs, kinds) if kind != "constant"]
                actual = run_ort(session, graph_inputs)
            except Exception as e:  # noqa: BLE001
                entry.update(ok=False, problems=[f"onnxruntime: {type(e).__name__}: {str(e)[:300]}"])
                rec["sizes"].append(entry)
                continue
            # Half precision anywhere widens the tolerance, as the fixture tests do.
            half = [(4e-3, 1e-3)] if any(np.asarray(a).dtype == np.float16 for a in list(actual) + inputs) else []
            half += [(2e-2, 4e-3)] if bf16 else []
            c = checker.compare(actual, expected, max([rtol] + [h[0] for h in half]), max([atol] + [h[1] for h in half]))
            entry.update(ok=c["ok"], max_abs_err=c["max_abs_err"], tol_ratio=c["tol_ratio"], problems=c["problems"][:3])
            rec["sizes"].append(entry)
    rec["ok"] = all(s.get("ok", True) for s in rec["sizes"])
    return rec


def session_for(onnx_path: str):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    so.log_severity_level = 3
    return ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])


def sizes_text(sizes: list) -> str:
    """`example 2×8; alt 3×13; low 1×2; high 64×128`: each size's symbol values in the symbols' order."""
    return "; ".join(f"{s['edge']} {'×'.join(str(v) for _, v in sorted(s['values'].items())) or '-'}"
                     + (" (refused by the program)" if "refused_by_program" in s else "")
                     + (" (skipped: too large)" if "skipped" in s else "") for s in sizes)


def markdown(records: list) -> str:
    lines = ["| case | sizes checked (symbol values) | ok | max abs err | worst tol ratio | note |",
             "|---|---|---|---:|---:|---|"]
    for r in records:
        if r.get("static"):
            continue
        if "error" in r:
            lines.append(f"| {r['case']} | | no | | | {r['error'].replace('|', '/')} |")
            continue
        checked = [s for s in r["sizes"] if "ok" in s]
        worst = max((s.get("tol_ratio", 0.0) for s in checked), default=0.0)
        err = max((s.get("max_abs_err", 0.0) for s in checked), default=0.0)
        bad = [f"{s['edge']}: {p}" for s in checked for p in s.get("problems", [])]
        note = bad[0].replace("|", "/") if bad else ""
        lines.append(f"| {r['case']} | {sizes_text(r['sizes'])} | {'yes' if r['ok'] else 'NO'} | {err:.3g} "
                     f"| {worst:.3g} | {note} |")
    dynamic = [r for r in records if not r.get("static")]
    ok = sum(1 for r in dynamic if r.get("ok"))
    checked = sum(1 for r in dynamic for s in r.get("sizes", []) if "ok" in s)
    refused = sum(1 for r in dynamic for s in r.get("sizes", []) if "refused_by_program" in s)
    skipped = sum(1 for r in dynamic for s in r.get("sizes", []) if "skipped" in s)
    lines += ["", f"{ok}/{len(dynamic)} dynamic models right at every size checked ({checked} model × size "
              f"checks; {refused} sizes torch refuses to run, {skipped} skipped as too large; "
              f"{len(records) - len(dynamic)} static models).", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cases", nargs="+", help="case folders, folders of case folders, or fixture archives")
    ap.add_argument("--fxonnx", default=os.path.join(HERE, "..", "target", "release", "fxonnx"))
    ap.add_argument("--onnx-dir", default=None, help="already exported models: DIR/<case>/model.onnx")
    ap.add_argument("--checker", default=os.environ.get("CHECK_ONNX", CHECKER))
    ap.add_argument("--json", default=None, help="append one JSON record per case")
    ap.add_argument("--out", default=None, help="markdown table")
    ap.add_argument("--max-input-mb", type=float, default=256,
                    help="an edge whose inputs or outputs are larger is checked at a smaller size (halved until "
                    "they fit) or skipped: its activations may not fit in memory")
    args = ap.parse_args(argv)
    import torch
    torch.set_num_threads(1)
    for module in ("transformers.integrations.moe", "torchvision"):
        try:
            __import__(module)
        except Exception:  # noqa: BLE001
            pass
    checker = load_checker(args.checker)
    cases = []
    for c in args.cases:
        if os.path.isdir(c) and not os.path.exists(os.path.join(c, "model.pt2")):
            cases += sorted(os.path.join(c, d) for d in os.listdir(c) if os.path.exists(os.path.join(c, d, "model.pt2")))
        else:
            cases.append(c)
    records = []
    for case in cases:
        try:
            rec = check_case(case, args.fxonnx, args.onnx_dir, checker, max_input_mb=args.max_input_mb)
        except Exception as e:  # noqa: BLE001 -- one case's failure is recorded, the others still run
            rec = {"case": os.path.basename(os.path.normpath(case)), "error": f"{type(e).__name__}: {str(e)[:300]}"}
        records.append(rec)
        print(json.dumps(rec), flush=True)
        if args.json:
            with open(args.json, "a") as f:
                f.write(json.dumps(rec) + "\n")
    if args.out:
        with open(args.out, "w") as f:
            f.write(markdown(records))
    return 1 if any("error" in r or r.get("ok") is False for r in records) else 0


if __name__ == "__main__":
    sys.exit(main())
