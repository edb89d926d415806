#!/usr/bin/env python3
"""Weight-free export and apply-weights on the DEV zoo (issue 20): per model, the normal export's
size, the weight-free model's (`fxonnx export --no-weights`), how much of the weight bytes it
withholds, whether `fxonnx apply-weights` gives the normal export back byte for byte (weights
inline and in external data), whether the weight-free model passes onnx.checker (full), and the
time and peak memory of each command.

    python benches/weight_free.py ZOO_DIR [--fxonnx target/release/fxonnx] [--out reports/weight_free.md]

Needs onnx (for the checker and to count the withheld inputs); no torch.
"""

import argparse
import filecmp
import pathlib
import subprocess
import sys
import tempfile
import time

import onnx

WEIGHT_KEY = "pkg.fxonnx.weight"


def run(cmd):
    """Wall time (s) and peak RSS (MB, from GNU time) of one command; fails loudly."""
    t = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-f", "%M", *map(str, cmd)], capture_output=True, text=True)
    wall = time.perf_counter() - t
    if r.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} failed:\n{r.stderr}")
    return wall, int(r.stderr.strip().splitlines()[-1]) / 1024


def withheld(path):
    m = onnx.load(str(path), load_external_data=False)
    onnx.checker.check_model(m, full_check=True)
    size = {1: 4, 10: 2, 16: 2, 11: 8, 7: 8, 6: 4, 9: 1, 2: 1, 3: 1, 5: 2, 4: 2, 12: 4, 13: 8}
    ins = [i for i in m.graph.input if any(p.key == WEIGHT_KEY for p in i.metadata_props)]
    w = 0
    for i in ins:
        n = 1
        for d in i.type.tensor_type.shape.dim:
            n *= d.dim_value
        w += n * size.get(i.type.tensor_type.elem_type, 4)
    kept = sum(len(t.raw_data) for t in m.graph.initializer)
    return len(ins), w, kept


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("zoo", type=pathlib.Path)
    ap.add_argument("--fxonnx", default="target/release/fxonnx")
    ap.add_argument("--out", default="reports/weight_free.md")
    a = ap.parse_args()
    rows = []
    for case in sorted(p for p in a.zoo.iterdir() if (p / "model.pt2").exists()):
        pt2 = case / "model.pt2"
        with tempfile.TemporaryDirectory() as d:
            d = pathlib.Path(d)
            for sub in ("n", "b", "ne", "be"):
                (d / sub).mkdir()
            t_export, rss_export = run([a.fxonnx, "export", pt2, "-o", d / "n/m.onnx", "-q"])
            run([a.fxonnx, "export", pt2, "-o", d / "ne/m.onnx", "-q", "--external-data"])
            t_free, rss_free = run([a.fxonnx, "export", pt2, "-o", d / "free.onnx", "-q", "--no-weights"])
            t_apply, rss_apply = run([a.fxonnx, "apply-weights", d / "free.onnx", pt2, "-o", d / "b/m.onnx"])
            run([a.fxonnx, "apply-weights", d / "free.onnx", pt2, "-o", d / "be/m.onnx", "--external-data"])
            inline = filecmp.cmp(d / "n/m.onnx", d / "b/m.onnx", shallow=False)
            external = all(filecmp.cmp(d / f"ne/m.onnx{s}", d / f"be/m.onnx{s}", shallow=False) for s in ("", ".data"))
            count, wbytes, kept = withheld(d / "free.onnx")
            rows.append((case.name, (d / "n/m.onnx").stat().st_size, (d / "free.onnx").stat().st_size, count,
                         wbytes, kept, inline, external, t_export, t_free, t_apply, rss_export, rss_apply))
    mb = lambda b: f"{b / 1e6:.1f}"
    lines = [
        "# Weight-free export and apply-weights (DEV zoo)",
        "",
        f"Made by `python benches/weight_free.py ZOO_DIR` with `{a.fxonnx}`. Every weight-free model",
        "passes `onnx.checker` (full); `identical` compares `apply-weights` with the normal export, byte",
        "for byte (inline: the `.onnx`; external: the `.onnx` and its `.data`). Kept: initializers the",
        "weight-free model still holds (constants the translations built, and weights of at most 8,192",
        "elements the optimizer folded eagerly, whose bytes are no longer the archive's).",
        "",
        "| model | model MB | weight-free MB | weights withheld | withheld MB | kept MB | withheld % | identical inline | identical external | export s | --no-weights s | apply-weights s | peak RSS export / apply MB |",
        "|---|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        name, full, free, count, w, kept, inline, ext, te, tf, ta, re_, ra = r
        pct = 100 * w / (w + kept) if w + kept else 0
        rss = f"{re_:.0f} / {ra:.0f}"
        lines.append(f"| {name} | {mb(full)} | {mb(free)} | {count} | {mb(w)} | {mb(kept)} | {pct:.2f} | "
                     f"{'yes' if inline else 'NO'} | {'yes' if ext else 'NO'} | {te:.2f} | {tf:.2f} | {ta:.2f} | {rss} |")
    pathlib.Path(a.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
