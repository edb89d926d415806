#!/usr/bin/env python3
"""Generate the OpInfo corpus: every OpInfo of torch's `op_db`, exported with torch.export, one case per sample.

    nice -n 10 PYTHON tests/corpus/opinfo.py --out /work/corpus/opinfo --phase first
    nice -n 10 PYTHON tests/corpus/opinfo.py --out /work/corpus/opinfo --phase other
    [--only NAME,NAME] [--samples 4] [--other-samples 2] [--timeout 60]

PYTHON is a venv with torch 2.15 (plus expecttest, needed by torch.testing._internal), numpy and ml_dtypes,
outside the repo; this never runs in CI. Phase `first`: per OpInfo the dtype float32 (or, without float32,
the first of int64, bool it supports), the first --samples samples (CPU, requires_grad=False), cases
`<op>/<k>` and `<op>/<k>-core`. Phase `other`: every other dtype of float16, bfloat16, float64, int64, int32,
uint8, bool in `op.supported_dtypes('cpu')`, the first --other-samples samples each, cases
`<op>/<dtype>-<k>` and `<op>/<dtype>-<k>-core`. `<op>` is the OpInfo name, plus `.variant_test_name` when
there is one. Format and tolerance rule: tests/corpus/README.md.

Resumable: cases already written (meta.json present) and samples already skipped (skipped.jsonl) are not
redone; every case runs under a --timeout second alarm and any exception skips it, with its reason in
skipped.jsonl (stage: inputs, outputs, export, save, timeout, ...).
"""
import argparse
import itertools
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402

import torch  # noqa: E402

OTHER_DTYPES = [torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.int32, torch.uint8, torch.bool]


class Skip(Exception):
    def __init__(self, stage, reason):
        super().__init__(f"{stage}: {reason}")
        self.stage, self.reason = stage, reason


class Call(torch.nn.Module):
    """forward(*tensors) calls the op with the sample's structure; non-tensors are constants."""

    def __init__(self, fn, in_tpl, args_tpl, kw_tpl):
        super().__init__()
        self.fn, self.in_tpl, self.args_tpl, self.kw_tpl = fn, in_tpl, args_tpl, kw_tpl

    def forward(self, *ts):
        return self.fn(C.rebuild(self.in_tpl, ts), *C.rebuild(self.args_tpl, ts), **C.rebuild(self.kw_tpl, ts))


def case_name(op):
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def make_case(root, op, name, dt, k, sample, case, shared):
    tensors = []
    in_tpl = C.templatize(sample.input, tensors)
    args_tpl = C.templatize(tuple(sample.args), tensors)
    kw_tpl = C.templatize(dict(sample.kwargs), tensors)
    problem = C.input_problem(tensors)
    if problem:
        raise Skip("inputs", problem)
    inputs = [t.detach().clone().contiguous() for t in tensors]
    model = Call(op.op, in_tpl, args_tpl, kw_tpl)
    torch.manual_seed(0)
    try:
        with torch.no_grad():
            out = model(*[t.clone() for t in inputs])
    except Exception as e:  # noqa: BLE001
        raise Skip("eager", C.first_line(e))
    flat, reason = C.flatten_outputs(out)
    if reason:
        raise Skip("outputs", reason)
    expected = [o.detach().clone() for o in flat]
    torch.manual_seed(0)
    try:
        ep = torch.export.export(model, tuple(inputs), strict=False)
    except C.CaseTimeout:
        raise
    except Exception as e:  # noqa: BLE001
        raise Skip("export", C.first_line(e))
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
    except Exception as e:  # noqa: BLE001 - the training case stays; the core failure is counted
        core_error = C.first_line(e)

    call = C.render_call(name, (in_tpl, *args_tpl), kw_tpl)
    tolerances = [C.output_tolerance(o.dtype, name, shared) for o in expected]
    written = []
    for ir, prog, cname in (("training", ep, case), ("core", core, case + "-core")):
        if prog is None:
            continue
        cf, targets, rng = C.graph_targets(prog)
        meta = {
            "op": name, "opinfo_name": op.name, "variant": op.variant_test_name, "aten_name": op.aten_name,
            "dtype": C.dtype_name(dt), "sample_index": k, "sample_name": getattr(sample, "name", "") or "",
            "call": call, "inputs": C.specs(inputs, "input"), "outputs": C.specs(expected, "output"),
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
        try:
            C.write_case(root, cname, {
                "model.pt2": lambda p, prog=prog: torch.export.save(prog, p),
                "inputs.npz": lambda p: C.save_npz(p, "input", inputs),
                "expected.npz": lambda p: C.save_npz(p, "output", expected),
            }, meta)
        except C.CaseTimeout:
            raise
        except Exception as e:  # noqa: BLE001
            if ir == "training":
                raise Skip("save", C.first_line(e))
            continue
        written.append(meta)
    return written, core_error


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="/work/corpus/opinfo")
    ap.add_argument("--phase", choices=["first", "other"], required=True)
    ap.add_argument("--only", help="comma-separated case op names")
    ap.add_argument("--samples", type=int, default=4)
    ap.add_argument("--other-samples", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=60)
    args = ap.parse_args()

    from torch.testing._internal.common_methods_invocations import op_db

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

    for op in op_db:
        name = case_name(op)
        if only and name not in only:
            continue
        try:
            supported = op.supported_dtypes("cpu")
        except Exception:  # noqa: BLE001
            supported = set()
        first = next((d for d in (torch.float32, torch.int64, torch.bool) if d in supported), None)
        if args.phase == "first":
            plan = [(first, args.samples, "")] if first is not None else []
            if first is None:
                key = f"{name}/nodtype"
                if key not in skipped:
                    C.append_jsonl(skipped_path, {"key": key, "op": name, "dtype": None, "sample_index": None,
                                                  "stage": "dtypes", "reason": "supports none of float32, "
                                                  f"int64, bool: {sorted(map(C.dtype_name, supported))}",
                                                  "phase": args.phase})
                    skipped.add(key)
        else:
            plan = [(d, args.other_samples, C.dtype_name(d) + "-") for d in OTHER_DTYPES
                    if d in supported and d != first]
        for dt, n, prefix in plan:
            cases = [f"{name}/{prefix}{k}" for k in range(n)]
            todo = [c for c in cases if not os.path.exists(os.path.join(root, c, "meta.json")) and c not in skipped]
            if not todo:
                continue
            t_op = time.time()
            try:
                torch.manual_seed(0)
                it = C.with_timeout(args.timeout, lambda: iter(op.sample_inputs("cpu", dt, requires_grad=False)))
                samples = C.with_timeout(args.timeout, lambda: list(itertools.islice(it, n)))
            except Exception as e:  # noqa: BLE001
                key = f"{name}/{prefix}gen"
                if key not in skipped:
                    C.append_jsonl(skipped_path, {"key": key, "op": name, "dtype": C.dtype_name(dt),
                                                  "sample_index": None, "stage": "samples",
                                                  "reason": C.first_line(e), "phase": args.phase})
                    skipped.add(key)
                n_skipped += 1
                continue
            for k, sample in enumerate(samples):
                case = cases[k]
                if case not in todo:
                    continue
                try:
                    written, _ = C.with_timeout(args.timeout, make_case, root, op, name, dt, k, sample, case, shared)
                    for meta in written:
                        if meta["case"] not in indexed:
                            C.append_jsonl(index_path, C.index_line(meta))
                            indexed.add(meta["case"])
                    n_written += 1
                except Exception as e:  # noqa: BLE001 - every failure skips the case, with its reason
                    stage, reason = (e.stage, e.reason) if isinstance(e, Skip) else (
                        ("timeout", f"more than {args.timeout} s") if isinstance(e, C.CaseTimeout)
                        else ("error", C.first_line(e)))
                    C.append_jsonl(skipped_path, {"key": case, "op": name, "dtype": C.dtype_name(dt),
                                                  "sample_index": k, "stage": stage, "reason": reason,
                                                  "phase": args.phase})
                    skipped.add(case)
                    n_skipped += 1
            print(f"[opinfo {args.phase}] {name} {C.dtype_name(dt)}: {len(samples)} samples in "
                  f"{time.time() - t_op:.1f}s (total {time.time() - t_start:.0f}s, {n_written} written, "
                  f"{n_skipped} skipped)", flush=True)
    print(f"[opinfo {args.phase}] done in {time.time() - t_start:.0f}s: {n_written} samples written, "
          f"{n_skipped} skipped", flush=True)


if __name__ == "__main__":
    main()
