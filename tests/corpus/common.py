"""Shared helpers of the corpus generators (tests/corpus/opinfo.py, modules.py, torch_onnx.py).

Not run on its own. Needs torch (2.15), numpy and ml_dtypes; runs outside CI, in a venv outside the repo.
The case format is the shared operator corpus's (../shared/conformance/README.md): one folder per case with
model.pt2, inputs.npz (input_0..), expected.npz (output_0..), meta.json; index.jsonl lists the cases.
bfloat16 arrays are stored in the npz files as ml_dtypes.bfloat16, which numpy writes as raw 2-byte void
('|V2'); read them back with `arr.view(ml_dtypes.bfloat16)` (meta.json gives the dtype of every array).
"""
import glob
import json
import os
import shutil
import signal
import traceback

import ml_dtypes
import numpy as np
import torch

# Input/output dtypes a case may have (complex is skipped: fxonnx does not claim complex I/O).
SUPPORTED_DTYPES = {
    torch.float32, torch.float64, torch.float16, torch.bfloat16,
    torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool,
}

DEFAULT_TOL = {
    "float32": (1e-3, 1e-4),
    "float64": (1e-7, 1e-7),
    "float16": (1e-2, 1e-3),
    "bfloat16": (5e-2, 1e-2),
}

SHARED_OPS = os.environ.get("FXONNX_SHARED_OPS", "/work/shared/conformance/ops")


def dtype_name(dt):
    return str(dt).replace("torch.", "")


def to_numpy(t):
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def save_npz(path, prefix, tensors):
    np.savez(path, **{f"{prefix}_{i}": to_numpy(t) for i, t in enumerate(tensors)})


def load_npz(path, dtypes=None):
    """Arrays of an npz in key order; '|V2' arrays become bfloat16 (their meta dtype says so)."""
    out = {}
    with np.load(path) as z:
        for k in z.files:
            a = z[k]
            if a.dtype.kind == "V" and a.dtype.itemsize == 2:
                a = a.view(ml_dtypes.bfloat16)
            out[k] = a
    return out


def shared_float32_tolerances():
    """op -> (rtol, atol): the widest float32 output tolerance of that op in the shared corpus."""
    tol = {}
    for path in glob.glob(os.path.join(SHARED_OPS, "*", "*", "meta.json")):
        try:
            with open(path) as f:
                m = json.load(f)
        except Exception:  # noqa: BLE001 - a broken shared file only loses its tolerance
            continue
        for t, o in zip(m.get("tolerances", []), m.get("outputs", [])):
            if o.get("dtype") == "float32" and (t["rtol"] or t["atol"]):
                r, a = tol.get(m["op"], (0.0, 0.0))
                tol[m["op"]] = (max(r, t["rtol"]), max(a, t["atol"]))
    return tol


def output_tolerance(dt, op, shared):
    """The tolerance rule: exact for ints and bool; float32 from the shared corpus's op, else defaults."""
    name = dtype_name(dt)
    if not dt.is_floating_point:
        return {"rtol": 0.0, "atol": 0.0}
    if name == "float32" and op in shared:
        r, a = shared[op]
        return {"rtol": r, "atol": a}
    r, a = DEFAULT_TOL[name]
    return {"rtol": r, "atol": a}


class Slot:
    """Where the i-th forward input goes in a sample's argument structure."""

    def __init__(self, i):
        self.i = i


def templatize(obj, tensors):
    """Replace every tensor in obj (nested lists/tuples/dicts) by a Slot; append the tensors in order."""
    if isinstance(obj, torch.Tensor):
        tensors.append(obj)
        return Slot(len(tensors) - 1)
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        return type(obj)(templatize(x, tensors) for x in obj)
    if isinstance(obj, dict):
        return {k: templatize(v, tensors) for k, v in obj.items()}
    return obj


def rebuild(tpl, tensors):
    if isinstance(tpl, Slot):
        return tensors[tpl.i]
    if isinstance(tpl, (list, tuple)):
        return type(tpl)(rebuild(x, tensors) for x in tpl)
    if isinstance(tpl, dict):
        return {k: rebuild(v, tensors) for k, v in tpl.items()}
    return tpl


def render(tpl):
    """A template as source text: Slots as input_i, constants as repr."""
    if isinstance(tpl, Slot):
        return f"input_{tpl.i}"
    if isinstance(tpl, list):
        return "[" + ", ".join(render(x) for x in tpl) + "]"
    if isinstance(tpl, tuple):
        return "(" + ", ".join(render(x) for x in tpl) + ("," if len(tpl) == 1 else "") + ")"
    if isinstance(tpl, dict):
        return "{" + ", ".join(f"{k!r}: {render(v)}" for k, v in tpl.items()) + "}"
    if isinstance(tpl, torch.dtype):
        return str(tpl)
    text = repr(tpl)
    return text if len(text) <= 200 else text[:197] + "..."


def render_call(name, args_tpl, kwargs_tpl):
    parts = [render(a) for a in args_tpl] + [f"{k}={render(v)}" for k, v in kwargs_tpl.items()]
    return f"{name}({', '.join(parts)})"


def input_problem(tensors):
    """Why these inputs cannot make a case, or None."""
    for i, t in enumerate(tensors):
        if t.layout != torch.strided or t.is_nested:
            return f"input_{i}: layout {t.layout}"
        if t.device.type != "cpu":
            return f"input_{i}: device {t.device}"
        if t.dtype not in SUPPORTED_DTYPES:
            return f"input_{i}: dtype {dtype_name(t.dtype)}"
        if t.is_quantized:
            return f"input_{i}: quantized"
    return None


def flatten_outputs(out):
    """Eager outputs flattened to a list of tensors, or (None, reason)."""
    flat = []

    def walk(o):
        if isinstance(o, torch.Tensor):
            flat.append(o)
            return None
        if isinstance(o, (list, tuple)):
            for x in o:
                r = walk(x)
                if r:
                    return r
            return None
        return f"output is {type(o).__name__}"

    reason = walk(out)
    if reason:
        return None, reason
    for i, t in enumerate(flat):
        if t.is_complex():
            return None, f"output_{i}: complex dtype {dtype_name(t.dtype)}"
        if t.dtype not in SUPPORTED_DTYPES:
            return None, f"output_{i}: dtype {dtype_name(t.dtype)}"
        if t.layout != torch.strided:
            return None, f"output_{i}: layout {t.layout}"
    return flat, None


def fx_target_name(t):
    if isinstance(t, (torch._ops.OpOverload, torch._ops.OpOverloadPacket, torch._ops.HigherOrderOperator)):
        return str(t)
    mod = getattr(t, "__module__", None) or ""
    name = getattr(t, "__qualname__", None) or getattr(t, "__name__", None) or str(t)
    return f"{mod}.{name}" if mod else name


def graph_targets(ep):
    """(call_function targets in first-appearance order, sorted unique targets, random targets)."""
    seen, rng = [], set()

    def walk(gm):
        for n in gm.graph.nodes:
            if n.op == "call_function":
                name = fx_target_name(n.target)
                if name not in seen:
                    seen.append(name)
                if isinstance(n.target, torch._ops.OpOverload) and torch.Tag.nondeterministic_seeded in n.target.tags:
                    rng.add(name)
        for _, sub in gm.named_children():
            if isinstance(sub, torch.fx.GraphModule):
                walk(sub)

    walk(ep.graph_module)
    return seen, sorted(set(seen)), sorted(rng)


def mutated_inputs(ep):
    """Names input_i of the user inputs the program writes to."""
    sig = ep.graph_signature
    user = list(sig.user_inputs)
    return sorted(f"input_{user.index(n)}" for n in sig.user_inputs_to_mutate.values() if n in user)


def specs(tensors, prefix):
    return [{"name": f"{prefix}_{i}", "shape": list(t.shape), "dtype": dtype_name(t.dtype)}
            for i, t in enumerate(tensors)]


class CaseTimeout(Exception):
    pass


def _alarm(signum, frame):
    raise CaseTimeout("case timed out")


def with_timeout(seconds, fn, *a, **kw):
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(seconds)
    try:
        return fn(*a, **kw)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def first_line(e):
    text = f"{type(e).__name__}: {e}"
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:400]
    return type(e).__name__


def write_case(root, case, files, meta):
    """Write one case folder atomically (a temporary folder renamed into place)."""
    final = os.path.join(root, case)
    tmp = final + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    try:
        for name, writer in files.items():
            writer(os.path.join(tmp, name))
        with open(os.path.join(tmp, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1)
    except BaseException:  # a failed write (or the case alarm) leaves no half-written folder behind
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    shutil.rmtree(final, ignore_errors=True)
    os.rename(tmp, final)


def append_jsonl(path, obj):
    with open(path, "a") as f:
        f.write(json.dumps(obj) + "\n")
        f.flush()


def read_jsonl(path):
    if not os.path.exists(path):
        return []
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    pass  # a line cut by an interrupted run
    return out


def index_line(meta):
    return {"case": meta["case"], "op": meta["op"], "opinfo_name": meta["opinfo_name"], "ir": meta["ir"],
            "dtype": meta["dtype"], "sample_index": meta["sample_index"], "aten_targets": meta["aten_targets"]}


def graphs_differ(ep, core):
    return ep.graph_module.code != core.graph_module.code


def short_tb():
    return traceback.format_exc(limit=3)
