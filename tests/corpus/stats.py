#!/usr/bin/env python3
"""Print the statistics of generated corpora as Markdown (for tests/corpus/README.md).

    python3 tests/corpus/stats.py /work/corpus/opinfo /work/corpus/modules

Reads index.jsonl, skipped.jsonl and torch_onnx_results.jsonl of each corpus (no torch needed).
"""
import collections
import json
import os
import sys


def read(path):
    out = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    pass
    return out


def main():
    for root in sys.argv[1:]:
        index = read(os.path.join(root, "index.jsonl"))
        skipped = read(os.path.join(root, "skipped.jsonl"))
        results = read(os.path.join(root, "torch_onnx_results.jsonl"))
        print(f"### {root}\n")
        ops = {r["op"] for r in index}
        training = [r for r in index if r["ir"] == "training"]
        print(f"- ops/modules with at least one case: {len(ops)}; samples (training-IR cases): {len(training)}; "
              f"core cases: {len(index) - len(training)}; total cases: {len(index)}")
        per = collections.Counter((r["dtype"], r["ir"]) for r in index)
        print("\n| dtype | training cases | core cases |\n|---|---|---|")
        for dt in sorted({d for d, _ in per}):
            print(f"| {dt} | {per[(dt, 'training')]} | {per[(dt, 'core')]} |")
        extra = [r for r in training if r["case"].rsplit("/", 1)[-1].startswith("x")]
        if extra:
            print(f"\n- of which extra_modules() samples (`nn.<Module>/x<k>`, not in module_db): {len(extra)} "
                  f"({len({r['op'] for r in extra})} modules); RNN batched copies: "
                  f"{sum('/batched-' in r['case'] for r in training)}")
        dyn = [r for r in training if "dynamic" in r]
        if dyn:
            print(f"\n- dynamic (symbolic sizes, with inputs_alt): {sum(r['dynamic'] for r in dyn)} of {len(dyn)} "
                  f"samples")
        stages = collections.Counter(s["stage"] for s in skipped)
        print(f"\n- skipped samples: {len(skipped)} by stage: {dict(stages.most_common())}")
        reasons = collections.Counter((s["stage"], s["reason"][:160]) for s in skipped)
        print("\n| count | stage | reason (first line) |\n|---|---|---|")
        for (stage, reason), n in reasons.most_common(25):
            print(f"| {n} | {stage} | {reason.replace('|', '/')} |")
        nc = collections.defaultdict(list)
        for s in skipped:
            if s["stage"] in ("export", "timeout"):
                nc[s["op"]].append(s)
        if nc:
            print(f"\nNot capturable by torch.export (stage export/timeout), {len(nc)} ops:\n")
            print("| op | samples | dtypes | first error |\n|---|---|---|---|")
            for op in sorted(nc):
                ss = nc[op]
                print(f"| {op} | {len(ss)} | {','.join(sorted({str(s['dtype']) for s in ss}))} | "
                      f"{ss[0]['reason'][:160].replace('|', '/')} |")
        if results:
            by = collections.Counter((r.get("dtype"), r["passed"]) for r in results)
            print(f"\n- torch.onnx results so far: {len(results)} cases, {sum(r['passed'] for r in results)} passed")
            print("\n| dtype | torch.onnx passed / checked |\n|---|---|")
            for dt in sorted({d for d, _ in by}, key=str):
                print(f"| {dt} | {by[(dt, True)]} / {by[(dt, True)] + by[(dt, False)]} |")
            fails = collections.Counter()
            for r in results:
                if not r["passed"]:
                    if not r["exported"]:
                        fails[f"export: {r['export_error_class']}"] += 1
                    elif r.get("ort_error"):
                        fails["onnxruntime/checker error"] += 1
                    else:
                        fails["numerics"] += 1
            print(f"\n- torch.onnx failures by kind: {dict(fails.most_common())}")
            nload = sum("deserializing the saved file" in (r.get("export_error") or "") for r in results)
            if nload:
                print(f"- cases whose model.pt2 torch.export.load cannot read back: {nload}")
            causes = collections.Counter((r.get("export_cause") or r.get("export_error") or "")[:120]
                                         for r in results if not r["exported"])
            if causes:
                print("\n| torch.onnx export failures | cause (first line) |\n|---|---|")
                for c, k in causes.most_common(12):
                    print(f"| {k} | {c.replace('|', '/')} |")
        print()


if __name__ == "__main__":
    main()
