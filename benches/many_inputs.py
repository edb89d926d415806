#!/usr/bin/env python3
"""many_inputs.py -- the export time and peak memory of a program of N dynamic inputs, per N.

    python benches/many_inputs.py [N ...] [--fxonnx target/release/fxonnx] [--keep DIR]

Writes the archive `tests/cli.rs` `many_dynamic_inputs_export_in_linear_time` builds (each input
`x<i>: [s<i>, 2]` float32 with its own symbol, range [2, 1024], one relu to its own output `y<i>`),
for each N (default 50,000, 100,000, 200,000 and 400,000), exports it --repeat times with the release
CLI under `/usr/bin/time -v` and prints a markdown table: the least wall time and user + system CPU
time of the runs (the least is the one least disturbed by other work on a shared machine), the
largest peak RSS, and the ratio of wall and CPU time per doubling of N (2.0 is linear). Needs only
Python.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))


def meta(sym: str) -> str:
    return ('{"dtype":7,"sizes":[{"as_expr":{"expr_str":"Symbol(\'%s\', positive=True, integer=True)",'
            '"hint":{"as_int":4}}},{"as_int":2}],"requires_grad":false,"device":{"type":"cpu","index":null},'
            '"strides":[{"as_int":2},{"as_int":1}],"storage_offset":{"as_int":0},"layout":7}' % sym)


def program_json(n: int) -> str:
    """models/model.json of the archive, as the Rust test formats it."""
    def listed(f):
        return ",".join(f(i) for i in range(n))

    leaf = '{"type":null,"context":null,"children_spec":[]}'
    tuple_ = '{"type":"builtins.tuple","context":"null","children_spec":[%s]}' % ",".join([leaf] * n)
    in_spec = ('[1,{"type":"builtins.tuple","context":"null","children_spec":[%s,'
               '{"type":"builtins.dict","context":"[]","children_spec":[]}]}]' % tuple_)
    out_spec = "[1,%s]" % tuple_
    node = ('{"target":"torch.ops.aten.relu.default","inputs":[{"name":"self","arg":{"as_tensor":{"name":"x%d"}},'
            '"kind":1}],"outputs":[{"as_tensor":{"name":"y%d"}}],"metadata":{},"is_hop_single_tensor_return":null,'
            '"name":"y%d"}')
    graph = (
        '{"inputs":[%s],"outputs":[%s],"nodes":[%s],"tensor_values":{%s,%s},"sym_int_values":{},'
        '"sym_bool_values":{},"is_single_tensor_return":false,"custom_obj_values":{},"sym_float_values":{}}' % (
            listed(lambda i: '{"as_tensor":{"name":"x%d"}}' % i),
            listed(lambda i: '{"as_tensor":{"name":"y%d"}}' % i),
            listed(lambda i: node % (i, i, i)),
            listed(lambda i: '"x%d":%s' % (i, meta(f"s{i}"))),
            listed(lambda i: '"y%d":%s' % (i, meta(f"s{i}")))))
    return (
        '{"graph_module":{"graph":%s,"signature":{"input_specs":[%s],"output_specs":[%s]},'
        '"module_call_graph":[{"fqn":"","signature":{"inputs":[],"outputs":[],"in_spec":%s,"out_spec":%s,'
        '"forward_arg_names":null}}],"metadata":{},"treespec_namedtuple_fields":{}},"opset_version":{"aten":10},'
        '"range_constraints":{%s},"schema_version":{"major":8,"minor":20},"verifiers":["TRAINING"],'
        '"torch_version":"2.15.0","guards_code":[]}' % (
            graph,
            listed(lambda i: '{"user_input":{"arg":{"as_tensor":{"name":"x%d"}}}}' % i),
            listed(lambda i: '{"user_output":{"arg":{"as_tensor":{"name":"y%d"}}}}' % i),
            json.dumps(in_spec), json.dumps(out_spec),
            listed(lambda i: '"s%d":{"min_val":2,"max_val":1024}' % i)))


def write_archive(path: str, n: int):
    entries = [("archive_format", b"pt2"), ("archive_version", b"0"), (".data/version", b"6\n"),
               ("byteorder", b"little"), ("data/weights/model_weights_config.json", b'{"config": {}}'),
               ("data/constants/model_constants_config.json", b'{"config": {}}'),
               ("models/model.json", program_json(n).encode())]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for name, data in entries:
            z.writestr(f"many/{name}", data)


def timed_export(fxonnx: str, pt2: str, onnx: str) -> dict:
    r = subprocess.run(["/usr/bin/time", "-v", fxonnx, "export", pt2, "-o", onnx, "--quiet"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"export of {pt2} failed: {r.stderr.strip()[-500:]}")

    def field(label):
        return re.search(re.escape(label) + r":\s*(\S+)", r.stderr).group(1)

    wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")
    wall_s = sum(float(p) * 60 ** i for i, p in enumerate(reversed(wall)))
    return {"wall_s": wall_s, "cpu_s": float(field("User time (seconds)")) + float(field("System time (seconds)")),
            "rss_mb": int(field("Maximum resident set size (kbytes)")) / 1024}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("n", nargs="*", type=int, default=[50_000, 100_000, 200_000, 400_000])
    ap.add_argument("--fxonnx", default=os.path.join(HERE, "..", "target", "release", "fxonnx"))
    ap.add_argument("--repeat", type=int, default=3, help="exports per N: the least wall and CPU time is kept")
    ap.add_argument("--keep", default=None, help="write the archives and models here (else a temporary folder)")
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or tmp
        os.makedirs(folder, exist_ok=True)
        for n in args.n:
            pt2, onnx = os.path.join(folder, f"many_{n}.pt2"), os.path.join(folder, f"many_{n}.onnx")
            write_archive(pt2, n)
            runs = [timed_export(args.fxonnx, pt2, onnx) for _ in range(args.repeat)]
            m = {"wall_s": min(r["wall_s"] for r in runs), "cpu_s": min(r["cpu_s"] for r in runs),
                 "rss_mb": max(r["rss_mb"] for r in runs), "runs": runs}
            m.update(n=n, archive_mb=os.path.getsize(pt2) / 2**20, model_mb=os.path.getsize(onnx) / 2**20)
            if not args.keep:
                os.remove(pt2)
                os.remove(onnx)
            rows.append(m)
            print(json.dumps(m), file=sys.stderr, flush=True)
    print("| inputs | archive MB | wall s | CPU s | peak RSS MB | model MB | wall ratio | CPU ratio |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    prev = None
    for m in rows:
        ratio = (lambda k: f"{m[k] / prev[k] * prev['n'] / m['n'] * 2:.2f}" if prev else "")
        print(f"| {m['n']:,} | {m['archive_mb']:.0f} | {m['wall_s']:.2f} | {m['cpu_s']:.2f} | {m['rss_mb']:.0f} "
              f"| {m['model_mb']:.0f} | {ratio('wall_s')} | {ratio('cpu_s')} |")
        prev = m
    return 0


if __name__ == "__main__":
    sys.exit(main())
