#!/usr/bin/env python3
"""Copy a small, passing subset of a corpus run into a fixture folder that `cargo test` checks.

    python3 tests/corpus/pick_subset.py reports/coverage_modules.json /work/corpus/modules tests/fixtures/modules \
        [--per-op 1] [--max-kb 64]

From the runner's per-case results (`--out X.md` writes `X.json`), per op (`nn.LSTM`, `nn.Upsample`, ...)
the smallest passing case of at most --max-kb, preferring cases with a second input set (dynamic
sizes), then its `-core` twin if that passes too. Replaces the case folders under DEST and writes its
`index.jsonl` / `torch_onnx_results.jsonl` lines; other files in DEST stay. Needs no torch.
"""
import argparse
import json
import os
import shutil

FILES = ["model.pt2", "inputs.npz", "expected.npz", "meta.json", "inputs_alt.npz", "expected_alt.npz"]


def size(case_dir):
    return sum(os.path.getsize(os.path.join(case_dir, f)) for f in FILES if os.path.exists(os.path.join(case_dir, f)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("corpus")
    ap.add_argument("dest")
    ap.add_argument("--per-op", type=int, default=1)
    ap.add_argument("--max-kb", type=int, default=64)
    a = ap.parse_args()

    cases = json.load(open(a.results))["cases"]
    passed = {c["case"]: c for c in cases if c["passed"]}
    by_op = {}
    for name, c in passed.items():
        if name.endswith("-core"):
            continue
        d = os.path.join(a.corpus, name)
        s = size(d)
        if s > a.max_kb * 1024:
            continue
        dynamic = os.path.exists(os.path.join(d, "inputs_alt.npz"))
        by_op.setdefault(c["op"], []).append((not dynamic, s, name))
    picked = []
    for op in sorted(by_op):
        for _, _, name in sorted(by_op[op])[: a.per_op]:
            picked.append(name)
            core = name + "-core"
            if core in passed and size(os.path.join(a.corpus, core)) <= a.max_kb * 1024:
                picked.append(core)

    for root, dirs, files in os.walk(a.dest, topdown=False):
        if "meta.json" in files:
            shutil.rmtree(root)
        elif root != a.dest and not os.listdir(root):
            os.rmdir(root)
    for name in picked:
        src, dst = os.path.join(a.corpus, name), os.path.join(a.dest, name)
        os.makedirs(dst, exist_ok=True)
        for f in FILES:
            if os.path.exists(os.path.join(src, f)):
                shutil.copyfile(os.path.join(src, f), os.path.join(dst, f))
    names = set(picked)
    for listing in ["index.jsonl", "torch_onnx_results.jsonl"]:
        path = os.path.join(a.corpus, listing)
        lines = []
        if os.path.exists(path):
            for line in open(path):
                try:
                    if json.loads(line).get("case") in names:
                        lines.append(line if line.endswith("\n") else line + "\n")
                except ValueError:
                    continue
        with open(os.path.join(a.dest, listing), "w") as f:
            f.writelines(sorted(lines))
    total = sum(size(os.path.join(a.dest, n)) for n in picked)
    print(f"copied {len(picked)} cases ({total / 1024:.0f} KB) of {len(by_op)} ops into {a.dest}")


if __name__ == "__main__":
    main()
