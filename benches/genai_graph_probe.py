"""Probes for the next steps of issue 40: fxonnx's decoder for ONNX Runtime GenAI against itself
rewritten by the onnx package, measured paired in onnxruntime_genai as ``genai_builder.py`` measures
(1 thread, paired rounds, CPU time; ratios rewritten / as exported, below 1 the rewrite is faster,
tokens/s above 1).

``--rewrite 3d``: fxonnx writes each layer's attention as the program computes it: the query, key and
value reshaped to heads and transposed (3 Reshape + 3 Transpose), `RotaryEmbedding` on the 4-D query
and key, a 4-D `Attention`, and the result transposed and reshaped back (Transpose + Reshape). ONNX
opset 23 also takes the 3-D (batch, sequence, heads x head size) forms: `RotaryEmbedding` with
`num_heads`, `Attention` with `q_num_heads` / `kv_num_heads` (the present key and value stay 4-D),
which ONNX Runtime 1.31 runs on the CPU; the rewrite uses them (8 nodes fewer per layer).

``--rewrite unpack``: undoes the packing of `--quantize` (one `MatMulNBits` of Q/K/V and of gate/up,
and a `Split`): each member its own `MatMulNBits` on its rows of the packed weights and scales, as
before the packing. Ratios above 1 in time are then what the packing gains.

    python benches/genai_graph_probe.py --rewrite 3d --model llama --size tiny --precision int4 --seconds 3
"""

from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import statistics
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import genai_builder as gb  # noqa: E402


def rewrite_3d(folder: pathlib.Path) -> int:
    """Rewrite the decoder of `folder` in place; returns how many attention calls were rewritten."""
    import onnx
    from onnx import helper

    config = json.loads((folder / "genai_config.json").read_text())
    path = folder / config["model"]["decoder"]["filename"]
    model = onnx.load(str(path), load_external_data=False)
    g = model.graph
    producer = {o: n for n in g.node for o in n.output}
    readers: dict[str, int] = {}
    for n in g.node:
        for i in n.input:
            readers[i] = readers.get(i, 0) + 1
    for o in g.output:
        readers[o.name] = readers.get(o.name, 0) + 1

    def heads_of(transpose):
        """The 3-D value a Reshape-to-heads + Transpose(0, 2, 1, 3) chain starts from, and the heads."""
        if transpose is None or transpose.op_type != "Transpose":
            return None
        perm = [a.ints for a in transpose.attribute if a.name == "perm"]
        if not perm or list(perm[0]) != [0, 2, 1, 3]:
            return None
        reshape = producer.get(transpose.input[0])
        if reshape is None or reshape.op_type != "Reshape" or readers[transpose.input[0]] != 1:
            return None
        shape = next((onnx.numpy_helper.to_array(t) for t in g.initializer if t.name == reshape.input[1]), None)
        if shape is None or len(shape) != 4:
            return None
        return reshape.input[0], int(shape[2]), [reshape, transpose]

    drop, done = set(), 0
    for n in g.node:
        if n.op_type != "Attention" or len(n.input) != 6:
            continue
        q_rot, k_rot = producer.get(n.input[0]), producer.get(n.input[1])
        if q_rot is None or k_rot is None or q_rot.op_type != "RotaryEmbedding" or k_rot.op_type != "RotaryEmbedding":
            continue
        q = heads_of(producer.get(q_rot.input[0]))
        k = heads_of(producer.get(k_rot.input[0]))
        v = heads_of(producer.get(n.input[2]))
        out_t = [r for r in g.node if n.output[0] in r.input]
        if None in (q, k, v) or len(out_t) != 1 or out_t[0].op_type != "Transpose":
            continue
        out_r = [r for r in g.node if out_t[0].output[0] in r.input]
        if len(out_r) != 1 or out_r[0].op_type != "Reshape":
            continue
        (q3, hq, qdrop), (k3, hkv, kdrop), (v3, _, vdrop) = q, k, v
        for rot, x3, heads in ((q_rot, q3, hq), (k_rot, k3, hkv)):
            rot.input[0] = x3
            rot.attribute.append(helper.make_attribute("num_heads", heads))
        n.input[2] = v3
        n.attribute.extend([helper.make_attribute("q_num_heads", hq), helper.make_attribute("kv_num_heads", hkv)])
        n.output[0] = out_r[0].output[0]
        drop.update(id(x) for x in qdrop + kdrop + vdrop + [out_t[0], out_r[0]])
        done += 1
    kept = [n for n in g.node if id(n) not in drop]
    del g.node[:]
    g.node.extend(kept)
    # Shapes inferred for the 4-D values are gone with them; the rest stays.
    names = {o for n in g.node for o in n.output}
    kept_info = [vi for vi in g.value_info if vi.name in names]
    del g.value_info[:]
    g.value_info.extend(kept_info)
    # Initializers stored outside keep their references to the data file, copied beside.
    onnx.save(model, str(path))
    return done


def unpack(folder: pathlib.Path) -> int:
    """Split every packed `MatMulNBits` + `Split` of `folder`'s decoder into one `MatMulNBits` per
    member; returns how many packs."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    config = json.loads((folder / "genai_config.json").read_text())
    path = folder / config["model"]["decoder"]["filename"]
    model = onnx.load(str(path))
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    producer = {o: n for n in g.node for o in n.output}
    out, done = [], 0
    for n in g.node:
        if n.op_type == "Split" and producer.get(n.input[0]) is not None \
                and producer[n.input[0]].op_type == "MatMulNBits" and len(n.input) == 2:
            mm = producer[n.input[0]]
            sizes = numpy_helper.to_array(inits[n.input[1]]).tolist()
            attrs = {a.name: helper.get_attribute_value(a) for a in mm.attribute}
            k, block = attrs["K"], attrs["block_size"]
            blocks = -(-k // block)
            b = numpy_helper.to_array(inits[mm.input[1]])
            scales = numpy_helper.to_array(inits[mm.input[2]]).reshape(-1, blocks)
            out.remove(mm)
            start = 0
            for j, (size, y) in enumerate(zip(sizes, n.output)):
                bn, sn = f"{mm.input[1]}_unpacked_{j}", f"{mm.input[2]}_unpacked_{j}"
                g.initializer.extend([numpy_helper.from_array(np.ascontiguousarray(b[start:start + size]), bn),
                                      numpy_helper.from_array(scales[start:start + size].reshape(-1).copy(), sn)])
                a = dict(attrs, N=size)
                out.append(helper.make_node("MatMulNBits", [mm.input[0], bn, sn], [y], domain="com.microsoft", **a))
                start += size
            done += 1
            continue
        out.append(n)
    del g.node[:]
    g.node.extend(out)
    used = {i for n in g.node for i in n.input}
    kept = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(kept)
    data = path.name + ".unpacked.data"
    onnx.save(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True, location=data)
    return done


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rewrite", default="3d", choices=["3d", "unpack"])
    ap.add_argument("--model", default="llama", choices=gb.MODELS)
    ap.add_argument("--size", default="tiny", choices=list(gb.SIZES))
    ap.add_argument("--precision", default="int4", choices=gb.PRECISIONS)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--work", default="/tmp/fxonnx-genai-3d")
    args = ap.parse_args()
    import numpy as np
    import torch

    work = pathlib.Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    ckpt = work / "checkpoint"
    model = gb.write_checkpoint(args.model, args.size, ckpt)
    g = torch.Generator().manual_seed(1)
    vocab = model.config.vocab_size
    prompt = torch.randint(3, vocab, (gb.PROMPT,), generator=g).tolist()
    long_prompt = torch.randint(3, vocab, (gb.LONG,), generator=g).tolist()
    del model
    exported, rewritten = work / "exported", work / "rewritten"
    gb.export_fxonnx(ckpt, exported, args.precision)
    # The exported folder's files, the weights beside the graph included.
    shutil.copytree(exported, rewritten)
    n = (rewrite_3d if args.rewrite == "3d" else unpack)(rewritten)
    nodes = {"exported": gb.node_counts(exported)["total"], "rewritten": gb.node_counts(rewritten)["total"]}
    a, b = gb.load_genai(rewritten), gb.load_genai(exported)
    diff = float(np.abs(gb.first_logits(a, prompt) - gb.first_logits(b, prompt)).max())
    r16 = gb.paired(lambda: gb.prefill(a, prompt), lambda: gb.prefill(b, prompt), args.seconds, 5)
    r256 = gb.paired(lambda: gb.long_prompt_decode(a, long_prompt), lambda: gb.long_prompt_decode(b, long_prompt),
                     args.seconds, 3)
    rgen = gb.paired(lambda: gb.generate(a, prompt), lambda: gb.generate(b, prompt), args.seconds, 2)
    result = {
        "rewrite": args.rewrite, "model": args.model, "size": args.size, "precision": args.precision,
        "places_rewritten": n,
        "nodes": nodes, "logits_max_abs_diff": diff,
        "ratio_rewritten_over_exported": {
            "prefill_16": gb.median_ratio(r16),
            "prefill_256": gb.median_ratio([(x[0], y[0]) for x, y in r256]),
            "decode_256": gb.median_ratio([(x[1], y[1]) for x, y in r256]),
            "tokens_per_s": statistics.median(y[0] / x[0] for x, y in rgen),
        },
        "rounds": {"prefill_16": len(r16), "prefill_256": len(r256), "generate": len(rgen)},
    }
    print(json.dumps(result))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
