#!/usr/bin/env python3
"""Generate the ModuleInfo corpus: every module of torch's `module_db`, in eval mode, exported with dynamic sizes.

    nice -n 10 PYTHON tests/corpus/modules.py --out /work/corpus/modules [--only Linear,LSTM] [--samples 4]
        [--timeout 90]

PYTHON is a venv with torch 2.15 (plus expecttest), numpy and ml_dtypes, outside the repo; never in CI.
Per ModuleInfo: module_inputs_func(device='cpu', dtype=float32, requires_grad=False, training=False); of its
samples, --samples evenly spaced ones (the first and the last included, so e.g. LSTM's bidirectional,
batch_first and proj_size samples are reached, not only its first four). The module is built with
torch.manual_seed(0) and put in eval mode; a wrapper's forward(*tensors) calls it with the sample's forward
arguments (tensors inside tuples/kwargs become inputs in order, the rest constants) and returns its output
leaves as a flat tuple (None leaves, e.g. MultiheadAttention's weights with need_weights=False, dropped).
Parameters and buffers are the archive's weights. Lazy modules are materialised by an eager call first.

Dynamic sizes, in this order, the first that exports and whose other-size inputs run:
  1. "all": Dim.AUTO on every dim of every input (conv, pool, pad, norm, upsample, fold, RNN, Transformer,
     attention modules: batch, sequence and spatial dims) — export keeps what can vary symbolic;
  2. "batch": Dim.AUTO on dim 0 of every input with ndim >= 2, and of 1-d inputs that are clearly batched
     (every input of a loss module; a 1-d input as long as the batch of a >= 2-d input);
  3. static.
A dynamic case gets inputs_alt.npz / expected_alt.npz: every symbolic size +1 (else +2, else -1, within the
program's range constraints), made by repeating the sample's values cyclically along the changed dims (so
indices, targets and masks stay valid); the alternate inputs must pass the program's guards and give the
eager result. meta.json adds module, constructor, desc, dynamic, dynamic_mode, dynamic_dims
({input_i: {axis: symbol}}), inputs_alt/outputs_alt, dynamic_errors. Cases: nn.<Module>/<k> and -core.
module_db's RNN/LSTM/GRU samples are all unbatched (and torch.export specialises the sequence length of
aten.lstm/gru/rnn), so these also get `nn.<RNN>/batched-<k>` cases: the same module and call with a batch of
3 inserted (random inputs and states), exported with a dynamic batch.
module_db (114 ModuleInfos) has no Upsample, PixelShuffle, Fold/Unfold, EmbeddingBag, Dropout, Flatten, ...:
extra_modules() adds them (every Upsample mode, with sizes and with scales; EmbeddingBag modes, offsets,
per-sample weights; ...), cases `nn.<Module>/x<k>`, meta "source": "extra" (--no-extras leaves them out).
Resumable like opinfo.py (skipped.jsonl).
"""
import argparse
import os
import types
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402

import torch  # noqa: E402
import torch.utils._pytree as pytree  # noqa: E402
from torch.export import Dim  # noqa: E402

SEQ_SPATIAL = ("Conv", "Pool", "Pad", "Norm", "Upsample", "Fold", "Unfold", "RNN", "LSTM", "GRU", "Transformer",
               "MultiheadAttention", "Softmax2d", "Pixel", "Embedding", "Upsampling", "ChannelShuffle")


class Skip(Exception):
    def __init__(self, stage, reason):
        super().__init__(f"{stage}: {reason}")
        self.stage, self.reason = stage, reason


class Wrap(torch.nn.Module):
    def __init__(self, m, args_tpl, kw_tpl):
        super().__init__()
        self.m, self.args_tpl, self.kw_tpl = m, args_tpl, kw_tpl

    def forward(self, *ts):
        out = self.m(*C.rebuild(self.args_tpl, ts), **C.rebuild(self.kw_tpl, ts))
        return tuple(x for x in pytree.tree_leaves(out) if x is not None)


def pick(n, k):
    if n <= k:
        return list(range(n))
    return sorted({round(i * (n - 1) / (k - 1)) for i in range(k)})


def run_eager(model, inputs):
    torch.manual_seed(0)
    with torch.no_grad():
        out = model(*[t.clone() for t in inputs])
    bad = [type(x).__name__ for x in out if not isinstance(x, torch.Tensor)]
    if bad:
        raise Skip("outputs", f"non-tensor outputs {bad}")
    flat, reason = C.flatten_outputs(list(out))
    if reason:
        raise Skip("outputs", reason)
    return [o.detach().clone() for o in flat]


def dyn_spec(inputs, mode, loss=False):
    """Dim.AUTO on every dim ("all"), or on the batch dim ("batch"): dim 0 of inputs with ndim >= 2, and of
    1-d inputs that are clearly batched (a loss's targets, or as long as the batch of a >= 2-d input)."""
    if mode == "all":
        return (tuple({ax: Dim.AUTO for ax in range(t.ndim)} or None for t in inputs),)
    batches = {t.shape[0] for t in inputs if t.ndim >= 2}
    return (tuple({0: Dim.AUTO} if t.ndim >= 2 or (t.ndim == 1 and (loss or t.shape[0] in batches)) else None
                  for t in inputs),)


def symbolic_dims(ep):
    """[{axis: sympy expr}] per user input."""
    user = list(ep.graph_signature.user_inputs)
    vals = {n.name: n.meta.get("val") for n in ep.graph.nodes if n.op == "placeholder"}
    res = []
    for name in user:
        v = vals.get(name)
        axes = {}
        if isinstance(v, torch.Tensor):
            for ax, d in enumerate(v.shape):
                if isinstance(d, torch.SymInt) and getattr(d.node.expr, "free_symbols", None):
                    axes[ax] = d.node.expr
        res.append(axes)
    return res


def alt_inputs(ep, inputs, sym, bump):
    import sympy
    known = {}
    for t, axes in zip(inputs, sym):
        for ax, e in axes.items():
            if isinstance(e, sympy.Symbol):
                known[e] = t.shape[ax]
    ranges = {str(k): v for k, v in ep.range_constraints.items()}
    new = {}
    for s, ex in known.items():
        vr = ranges.get(str(s))
        v = ex + bump
        lo, hi = 0, None
        if vr is not None:
            try:
                lo = int(vr.lower)
            except Exception:  # noqa: BLE001 - -oo
                lo = 0
            try:
                hi = int(vr.upper)
            except Exception:  # noqa: BLE001 - int_oo
                hi = None
        if v < lo or (hi is not None and v > hi) or v < 1:
            v = ex
        new[s] = v
    if all(new[s] == known[s] for s in known):
        return None
    out = []
    for t, axes in zip(inputs, sym):
        a = t
        for ax, e in axes.items():
            size = int(e.subs(new)) if e.free_symbols <= set(new) else t.shape[ax]
            old = t.shape[ax]
            if size != old:
                if old == 0:
                    return None
                a = a.index_select(ax, torch.arange(size) % old)
        out.append(a.contiguous())
    return out


def close(a, b):
    for x, y in zip(a, b):
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        if x.is_floating_point():
            scale = max(1.0, float(y.abs().max())) if y.numel() else 1.0
            if not torch.allclose(x, y, rtol=1e-3, atol=1e-4 * scale, equal_nan=True):
                return False
        elif not torch.equal(x, y):
            return False
    return len(a) == len(b)


def batch_rnn_inputs(m, inputs, n=3):
    """module_db's RNN/LSTM/GRU samples are unbatched: the same sample with a batch of n (random values)."""
    if not inputs or inputs[0].ndim != 2:
        return None
    bdim = 0 if getattr(m, "batch_first", False) else 1
    g = torch.Generator().manual_seed(1)
    out = []
    for i, t in enumerate(inputs):
        shape = list(t.shape)
        shape.insert(bdim if i == 0 else 1, n)
        out.append(torch.randn(shape, generator=g, dtype=t.dtype))
    return out


def make_case(root, mi, name, k, minput, case, shared, modes, batched=False, source="module_db"):
    ci, fi = minput.constructor_input, minput.forward_input
    if fi is None:
        raise Skip("inputs", "no forward input")
    tensors = []
    args_tpl = C.templatize(tuple(fi.args), tensors)
    kw_tpl = C.templatize(dict(fi.kwargs), tensors)
    problem = C.input_problem(tensors)
    if problem:
        raise Skip("inputs", problem)
    inputs = [t.detach().clone().contiguous() for t in tensors]
    ctor_kwargs = dict(ci.kwargs)
    if isinstance(ctor_kwargs.get("_random_samples"), torch.Tensor):
        # module_db makes FractionalMaxPool's samples in float64 (torch's module tests run in double)
        ctor_kwargs["_random_samples"] = ctor_kwargs["_random_samples"].to(torch.float32)
    torch.manual_seed(0)
    try:
        m = mi.module_cls(*ci.args, **ctor_kwargs)
    except Exception as e:  # noqa: BLE001
        raise Skip("constructor", C.first_line(e))
    m.eval()
    if batched:
        inputs = batch_rnn_inputs(m, inputs)
        if inputs is None:
            raise Skip("inputs", "already batched")
    model = Wrap(m, args_tpl, kw_tpl)
    try:
        expected = run_eager(model, inputs)  # also materialises lazy modules
    except Skip:
        raise
    except Exception as e:  # noqa: BLE001
        raise Skip("eager", C.first_line(e))
    for p in m.parameters():
        p.requires_grad_(False)

    ep, mode, errors, alt, expected_alt, sym = None, "static", {}, None, None, []
    for mode in modes:
        try:
            torch.manual_seed(0)
            ep = torch.export.export(model, tuple(inputs), dynamic_shapes=None if mode == "static"
                                     else dyn_spec(inputs, mode, name.endswith("Loss")),
                                     strict=False)
        except C.CaseTimeout:
            raise
        except Exception as e:  # noqa: BLE001
            errors[mode] = C.first_line(e)
            ep = None
            continue
        if mode == "static":
            break
        sym = symbolic_dims(ep)
        if not any(sym):
            errors[mode] = "no dim stayed symbolic (sizes 0/1 or fixed by the module)"
            continue  # try the next mode; static if nothing varies
        alt = None
        for bump in (1, 2, -1):
            cand = alt_inputs(ep, inputs, sym, bump)
            if cand is None:
                errors[f"{mode}_alt{bump:+d}"] = "no other sizes within the range constraints"
                continue
            try:
                exp_alt = run_eager(model, cand)
                torch.manual_seed(0)
                with torch.no_grad():
                    got = list(ep.module()(*[t.clone() for t in cand]))
                if close(got, exp_alt):
                    alt, expected_alt = cand, exp_alt
                    break
                errors[f"{mode}_alt{bump:+d}"] = "the program's result on other sizes differs from eager"
            except C.CaseTimeout:
                raise
            except Exception as e:  # noqa: BLE001
                errors[f"{mode}_alt{bump:+d}"] = C.first_line(e)
        if alt is not None:
            break
        ep = None
    if ep is None:
        raise Skip("export", "; ".join(f"{k}: {v}" for k, v in errors.items()) or "no mode exported")
    dynamic = mode != "static"
    if not dynamic:
        sym = []
    if len(ep.graph_signature.user_outputs) != len(expected):
        raise Skip("outputs", f"ExportedProgram has {len(ep.graph_signature.user_outputs)} outputs, eager "
                              f"{len(expected)}")
    core, core_error = None, None
    try:
        core = ep.run_decompositions()
        if not C.graphs_differ(ep, core):
            core = None
    except C.CaseTimeout:
        raise
    except Exception as e:  # noqa: BLE001
        core_error = C.first_line(e)

    cls = mi.module_cls.__name__
    ctor = C.render_call(f"nn.{cls}", C.templatize(tuple(ci.args), []), C.templatize(dict(ci.kwargs), []))
    call = C.render_call(ctor, args_tpl, kw_tpl)
    tolerances = [C.output_tolerance(o.dtype, name, shared) for o in expected]
    dyn_dims = {f"input_{i}": {str(ax): str(e) for ax, e in axes.items()} for i, axes in enumerate(sym) if axes}
    written = []
    for ir, prog, cname in (("training", ep, case), ("core", core, case + "-core")):
        if prog is None:
            continue
        cf, targets, rng = C.graph_targets(prog)
        meta = {
            "op": name, "opinfo_name": name, "variant": "", "aten_name": "", "dtype": "float32",
            "sample_index": k, "sample_name": minput.desc or "", "call": call,
            "inputs": C.specs(inputs, "input"), "outputs": C.specs(expected, "output"),
            "tolerances": tolerances, "mutated_inputs": C.mutated_inputs(prog),
            "torch_version": torch.__version__, "case": cname, "ir": ir,
            "call_function_targets": cf, "aten_targets": targets, "seeded_rng_targets": rng,
        }
        if ir == "training":
            meta["core_variant"] = case + "-core" if core is not None else None
            if core_error:
                meta["core_error"] = core_error
        else:
            meta["training_variant"] = case
        meta.update({
            "module": cls, "constructor": ctor, "desc": minput.desc or "", "training": False,
            "batched_from_sample": k if batched else None, "source": source,
            "params": sum(p.numel() for p in m.parameters()),
            "dynamic": dynamic, "dynamic_mode": mode, "dynamic_dims": dyn_dims,
            "range_constraints": {str(a): str(b) for a, b in prog.range_constraints.items()},
            "inputs_alt": C.specs(alt, "input") if dynamic else None,
            "outputs_alt": C.specs(expected_alt, "output") if dynamic else None,
            "dynamic_errors": errors,
        })
        files = {
            "model.pt2": lambda p, prog=prog: torch.export.save(prog, p),
            "inputs.npz": lambda p: C.save_npz(p, "input", inputs),
            "expected.npz": lambda p: C.save_npz(p, "output", expected),
        }
        if dynamic:
            files["inputs_alt.npz"] = lambda p: C.save_npz(p, "input", alt)
            files["expected_alt.npz"] = lambda p: C.save_npz(p, "output", expected_alt)
        try:
            C.write_case(root, cname, files, meta)
        except C.CaseTimeout:
            raise
        except Exception as e:  # noqa: BLE001
            if ir == "training":
                raise Skip("save", C.first_line(e))
            continue
        written.append(meta)
    return written


def extra_modules():
    """torch.nn layers module_db does not describe (issue 16 lists them): [(module class, [ModuleInput])].

    Cases `nn.<Module>/x<k>`, meta "source": "extra"; every sample is batched (batch 2)."""
    from torch.testing._internal.common_modules import FunctionInput as F, ModuleInput as MI
    nn = torch.nn
    g = torch.Generator().manual_seed(0)

    def r(*shape):
        return torch.randn(*shape, generator=g)

    def idx(high, *shape):
        return torch.randint(0, high, shape, generator=g)

    up = []
    for mode, x in (("nearest", r(2, 3, 4, 5)), ("bilinear", r(2, 3, 4, 5)), ("bicubic", r(2, 3, 4, 5)),
                    ("linear", r(2, 3, 6)), ("trilinear", r(2, 2, 3, 4, 5)), ("nearest-exact", r(2, 3, 4, 5))):
        spatial = x.ndim - 2
        ac = {} if mode.startswith("nearest") else {"align_corners": False}
        up.append(MI(F(scale_factor=2.0, mode=mode, **ac), F(x), desc=f"{mode}_scale2"))
        up.append(MI(F(size=tuple(range(7, 7 + spatial)), mode=mode, **ac), F(x), desc=f"{mode}_size"))
        if mode not in ("nearest", "nearest-exact"):
            up.append(MI(F(scale_factor=1.5, mode=mode, align_corners=True), F(x), desc=f"{mode}_scale1.5_ac"))
        else:
            up.append(MI(F(scale_factor=1.5, mode=mode), F(x), desc=f"{mode}_scale1.5"))
    return [
        (nn.Upsample, up),
        (nn.UpsamplingNearest2d, [MI(F(scale_factor=2), F(r(2, 3, 4, 5))), MI(F(size=(6, 7)), F(r(2, 3, 4, 5)))]),
        (nn.UpsamplingBilinear2d, [MI(F(scale_factor=2), F(r(2, 3, 4, 5))), MI(F(size=(6, 7)), F(r(2, 3, 4, 5)))]),
        (nn.PixelShuffle, [MI(F(2), F(r(2, 8, 3, 4))), MI(F(3), F(r(2, 9, 2, 3)))]),
        (nn.PixelUnshuffle, [MI(F(2), F(r(2, 2, 4, 6))), MI(F(3), F(r(2, 1, 6, 3)))]),
        (nn.Fold, [MI(F(output_size=(4, 5), kernel_size=2), F(r(2, 12, 12))),
                   MI(F(output_size=(5, 5), kernel_size=(2, 3), padding=1, stride=2, dilation=1), F(r(2, 18, 9)))]),
        (nn.Unfold, [MI(F(kernel_size=2), F(r(2, 3, 4, 5))),
                     MI(F(kernel_size=(2, 3), padding=1, stride=2, dilation=(1, 2)), F(r(2, 3, 6, 7)))]),
        (nn.EmbeddingBag, [MI(F(10, 3, mode="sum"), F(idx(10, 2, 4)), desc="sum_2d"),
                           MI(F(10, 3, mode="mean"), F(idx(10, 2, 4)), desc="mean_2d"),
                           MI(F(10, 3, mode="max"), F(idx(10, 2, 4)), desc="max_2d"),
                           MI(F(10, 3, mode="sum"), F(idx(10, 7), torch.tensor([0, 3])), desc="sum_offsets"),
                           MI(F(10, 3, mode="mean", padding_idx=0), F(idx(10, 2, 4)), desc="mean_padding_idx"),
                           MI(F(10, 3, mode="sum"), F(idx(10, 2, 4), per_sample_weights=r(2, 4)),
                              desc="per_sample_weights")]),
        (nn.ChannelShuffle, [MI(F(2), F(r(2, 4, 3, 3)))]),
        (nn.Flatten, [MI(F(), F(r(2, 3, 4, 5))), MI(F(2, 3), F(r(2, 3, 4, 5)))]),
        (nn.Unflatten, [MI(F(1, (2, 3)), F(r(2, 6, 4)))]),
        (nn.Dropout, [MI(F(0.5), F(r(2, 3, 4)), desc="eval: identity")]),
        (nn.Dropout2d, [MI(F(0.5), F(r(2, 3, 4, 5)), desc="eval: identity")]),
        (nn.AlphaDropout, [MI(F(0.5), F(r(2, 3, 4)), desc="eval: identity")]),
        (nn.Identity, [MI(F(), F(r(2, 3, 4)))]),
        (nn.Hardsigmoid, [MI(F(), F(r(2, 3, 4)))]),
        (nn.CosineSimilarity, [MI(F(dim=1), F(r(2, 5, 3), r(2, 5, 3)))]),
        (nn.PairwiseDistance, [MI(F(p=2.0), F(r(2, 5), r(2, 5))), MI(F(p=1.0, keepdim=True), F(r(2, 5), r(2, 5)))]),
        (nn.TripletMarginLoss, [MI(F(margin=1.0), F(r(2, 5), r(2, 5), r(2, 5)))]),
        (nn.CosineEmbeddingLoss, [MI(F(), F(r(2, 5), r(2, 5), torch.tensor([1.0, -1.0])))]),
        (nn.AdaptiveAvgPool2d, [MI(F(1), F(r(2, 3, 7, 9)), desc="global, batched 4-d"),
                                MI(F((2, 3)), F(r(2, 3, 7, 9)), desc="non-divisible, batched 4-d")]),
        (nn.AdaptiveMaxPool2d, [MI(F(1), F(r(2, 3, 7, 9)), desc="global, batched 4-d")]),
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="/work/corpus/modules")
    ap.add_argument("--only", help="comma-separated module class names")
    ap.add_argument("--samples", type=int, default=4)
    ap.add_argument("--timeout", type=int, default=90)
    ap.add_argument("--no-extras", action="store_true", help="only module_db (no extra_modules())")
    args = ap.parse_args()

    from torch.testing._internal.common_modules import module_db

    root = args.out
    os.makedirs(root, exist_ok=True)
    index_path = os.path.join(root, "index.jsonl")
    skipped_path = os.path.join(root, "skipped.jsonl")
    indexed = {r["case"] for r in C.read_jsonl(index_path)}
    skipped = {r["key"] for r in C.read_jsonl(skipped_path)}
    shared = C.shared_float32_tolerances()
    only = set(args.only.split(",")) if args.only else None
    t_start = time.time()
    n_written = n_skipped = 0
    seen_names = set()
    extras = [] if args.no_extras else extra_modules()
    work = [(mi, None) for mi in module_db] + [(types.SimpleNamespace(module_cls=c), ins) for c, ins in extras]
    for mi, extra_inputs in work:
        cls = mi.module_cls.__name__
        if only and cls not in only:
            continue
        name = f"nn.{cls}"
        if extra_inputs is None:
            if name in seen_names:  # two ModuleInfos of one class: number the second
                name = f"{name}.{len([n for n in seen_names if n.startswith(name)])}"
            seen_names.add(name)
        spatial = any(s in cls for s in SEQ_SPATIAL)
        modes = ["all", "batch", "static"] if spatial else ["batch", "static"]
        t_op = time.time()
        try:
            torch.manual_seed(0)
            minputs = extra_inputs if extra_inputs is not None else C.with_timeout(
                args.timeout, lambda: list(mi.module_inputs_func(
                    mi, device="cpu", dtype=torch.float32, requires_grad=False, training=False)))
        except Exception as e:  # noqa: BLE001
            key = f"{name}/gen"
            if key not in skipped:
                C.append_jsonl(skipped_path, {"key": key, "op": name, "dtype": "float32", "sample_index": None,
                                              "stage": "samples", "reason": C.first_line(e)})
                skipped.add(key)
            n_skipped += 1
            continue
        if extra_inputs is not None:
            chosen = list(range(len(minputs)))
            jobs = [(k, f"{name}/x{k}", False) for k in chosen]
        else:
            chosen = pick(len(minputs), args.samples)
            jobs = [(k, f"{name}/{k}", False) for k in chosen]
        if cls in ("RNN", "LSTM", "GRU") and extra_inputs is None:  # dynamic batch needs a batch: batched copies of the samples
            jobs += [(k, f"{name}/batched-{k}", True) for k in chosen]
        for k, case, batched in jobs:
            if os.path.exists(os.path.join(root, case, "meta.json")) or case in skipped:
                continue
            try:
                written = C.with_timeout(args.timeout, make_case, root, mi, name, k, minputs[k], case, shared,
                                         modes, batched, "extra" if extra_inputs is not None else "module_db")
                for meta in written:
                    if meta["case"] not in indexed:
                        line = C.index_line(meta)
                        line["dynamic"] = meta["dynamic"]
                        C.append_jsonl(index_path, line)
                        indexed.add(meta["case"])
                n_written += 1
            except Exception as e:  # noqa: BLE001
                stage, reason = (e.stage, e.reason) if isinstance(e, Skip) else (
                    ("timeout", f"more than {args.timeout} s") if isinstance(e, C.CaseTimeout)
                    else ("error", C.first_line(e)))
                C.append_jsonl(skipped_path, {"key": case, "op": name, "dtype": "float32", "sample_index": k,
                                              "stage": stage, "reason": reason})
                skipped.add(case)
                n_skipped += 1
        print(f"[modules] {name}: samples {chosen} of {len(minputs)} in {time.time() - t_op:.1f}s "
              f"(total {time.time() - t_start:.0f}s, {n_written} written, {n_skipped} skipped)", flush=True)
    print(f"[modules] done in {time.time() - t_start:.0f}s: {n_written} samples written, {n_skipped} skipped",
          flush=True)


if __name__ == "__main__":
    main()
