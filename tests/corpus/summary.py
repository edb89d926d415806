#!/usr/bin/env python3
"""Summarize the generated corpora's runs into reports/corpora.md (needs no torch).

    python3 tests/corpus/summary.py /work/corpus reports/coverage_opinfo.json reports/coverage_modules.json \
        > reports/corpora.md

The runner's reports (`reports/coverage_opinfo.md`, `reports/coverage_modules.md`) list every case; this
one counts them the way the issue asks: per dtype, with the cases no exporter can pass set apart and
named (outputs drawn from torch's random generator, outputs of `torch.empty*` whose values are whatever
memory held, bfloat16 inputs or outputs that onnxruntime's Python API cannot pass), torch.onnx beside
fxonnx where its result is recorded, and every remaining failure with its reason.
"""
import collections
import json
import os
import sys

UNINITIALIZED = ("empty", "empty_like", "empty_strided", "empty_permuted", "new_empty", "new_empty_strided")


def why_unpassable(case, meta):
    if meta.get("seeded_rng_targets"):
        return "random values (torch's generator cannot be reproduced)"
    if case["op"] in UNINITIALIZED:
        return "uninitialized values (torch.empty*)"
    dtypes = {i["dtype"] for i in meta.get("inputs", [])} | {o["dtype"] for o in meta.get("outputs", [])}
    if "bfloat16" in dtypes:
        return "bfloat16 inputs or outputs (onnxruntime's Python API has no bfloat16 arrays)"
    return None


def section(title, corpus_dir, results_path):
    run = json.load(open(results_path))
    cases = run["cases"]
    out = [f"## {title}", ""]
    by_dtype = collections.defaultdict(lambda: [0, 0])
    apart = collections.Counter()
    apart_passed = collections.Counter()
    failures = collections.defaultdict(list)
    vs = collections.Counter()
    checkable = [0, 0]
    for c in cases:
        meta = json.load(open(os.path.join(corpus_dir, c["case"], "meta.json")))
        why = why_unpassable(c, meta)
        if why:
            apart[why] += 1
            apart_passed[why] += c["passed"]
            continue
        by_dtype[c["dtype"]][0] += c["passed"]
        by_dtype[c["dtype"]][1] += 1
        checkable[0] += c["passed"]
        checkable[1] += 1
        if not c["passed"]:
            failures[c["op"]].append(c)
        t = c.get("torch_onnx_passed")
        if t is not None:
            vs[(bool(c["passed"]), bool(t))] += 1
    pct = lambda p, n: f"{100 * p / n:.1f} %" if n else "–"
    out.append(f"{len(cases)} cases; {checkable[1]} can be checked, of which fxonnx passes **{checkable[0]} "
               f"({pct(*checkable)})**.")
    out += ["", "| dtype | passed | cases | % |", "|---|---:|---:|---:|"]
    for d, (p, n) in sorted(by_dtype.items(), key=lambda kv: -kv[1][1]):
        out.append(f"| {d} | {p} | {n} | {pct(p, n)} |")
    out += ["", "Set apart (no exporter can match eager on them; they still must export):", "",
            "| why | cases | exported and checked anyway, passing |", "|---|---:|---:|"]
    for why, n in apart.most_common():
        out.append(f"| {why} | {n} | {apart_passed[why]} |")
    if vs:
        both, fx, to, neither = vs[(True, True)], vs[(True, False)], vs[(False, True)], vs[(False, False)]
        out += ["", f"Against torch.onnx on the {sum(vs.values())} checkable cases it has a result for: both pass "
                f"{both}, only fxonnx {fx}, only torch.onnx {to}, neither {neither} "
                f"(torch.onnx {both + to}, fxonnx {both + fx})."]
    out += ["", f"Remaining failures ({sum(len(v) for v in failures.values())} cases, {len(failures)} ops):", "",
            "| op | cases | first reason |", "|---|---:|---|"]
    for op, fs in sorted(failures.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        reason = (fs[0].get("reason") or "").replace("|", "\\|").replace("\n", " ")[:160]
        out.append(f"| `{op}` | {len(fs)} | `{fs[0]['case']}`: {reason} |")
    return "\n".join(out) + "\n"


def main():
    root, opinfo, modules = sys.argv[1:4]
    print("# The generated corpora: fxonnx against eager PyTorch (and torch.onnx where recorded)\n")
    print("Made by `tests/corpus/summary.py` from the conformance runs in `coverage_opinfo.json` and "
          "`coverage_modules.json`; the corpora come from `tests/corpus/` (torch 2.15's `op_db` and "
          "`module_db`). Do not edit.\n")
    print(section("OpInfo corpus (every OpInfo of op_db, every CPU dtype)", os.path.join(root, "opinfo"), opinfo))
    print(section("ModuleInfo corpus (module_db and the torch.nn layers it lacks, dynamic sizes on two input sets)",
                  os.path.join(root, "modules"), modules))


if __name__ == "__main__":
    main()
