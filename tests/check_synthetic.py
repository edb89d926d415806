"""Check an ONNX model exported from a synthetic archive (tests/support/pt2_writer.rs).

usage: check_synthetic.py model.onnx archive.pt2 [--batch N ...]

The archive has no eager outputs (no torch wrote it), so the reference is a small numpy interpreter
of the archive's FX graph, reading weights straight from the zip. It covers exactly the ops the
writer's generators emit. The model must pass onnx.checker (full check) and match the reference
for every batch size given (default 1 and 3: the batch dimension is dynamic, its hint is 2).
"""

import argparse
import json
import zipfile

import numpy as np
import onnx
import onnxruntime as ort


def load(path):
    z = zipfile.ZipFile(path)
    root = next(n for n in z.namelist() if n.endswith("/archive_format"))[: -len("archive_format")]
    prog = json.loads(z.read(root + "models/model.json"))
    config = json.loads(z.read(root + "data/weights/model_weights_config.json"))["config"]
    weights = {}
    for fqn, c in config.items():
        m = c["tensor_meta"]
        dtype = {7: np.float32, 5: np.int64}[m["dtype"]]
        shape = [s["as_int"] for s in m["sizes"]]
        weights[fqn] = np.frombuffer(z.read(root + "data/weights/" + c["path_name"]), dtype=dtype).reshape(shape)
    return prog, weights


def conv2d(input, weight, bias=None, stride=(1, 1), padding=(0, 0)):
    assert tuple(stride) == (1, 1)
    ph, pw = padding
    x = np.pad(input, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    o, c, kh, kw = weight.shape
    h, w = input.shape[2] + 2 * ph - kh + 1, input.shape[3] + 2 * pw - kw + 1
    out = np.zeros((input.shape[0], o, h, w))
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("bchw,oc->bohw", x[:, :, i : i + h, j : j + w], weight[:, :, i, j])
    return out + (bias[None, :, None, None] if bias is not None else 0)


def layer_norm(input, normalized_shape, weight, bias, eps=1e-5, cudnn_enable=True):
    axes = tuple(range(-len(normalized_shape), 0))
    mu = input.mean(axis=axes, keepdims=True)
    var = ((input - mu) ** 2).mean(axis=axes, keepdims=True)
    return (input - mu) / np.sqrt(var + eps) * weight + bias


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    assert not training
    s = lambda v: v[None, :, None, None]
    return (input - s(running_mean)) / np.sqrt(s(running_var) + eps) * s(weight) + s(bias)


def softmax(self, dim, dtype=None):
    e = np.exp(self - self.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def gelu(self, approximate="none"):
    assert approximate == "tanh"
    return 0.5 * self * (1 + np.tanh(np.sqrt(2 / np.pi) * (self + 0.044715 * self**3)))


OPS = {
    "sym_size.int": lambda self, dim: self.shape[dim],
    "linear.default": lambda input, weight, bias=None: input @ weight.T + (bias if bias is not None else 0),
    "layer_norm.default": layer_norm,
    "view.default": lambda self, size: self.reshape(size),
    "reshape.default": lambda self, shape: self.reshape(shape),
    "permute.default": lambda self, dims: self.transpose(dims),
    "matmul.default": lambda self, other: self @ other,
    "mul.Tensor": lambda self, other: self * other,
    "add.Tensor": lambda self, other: self + other,
    "softmax.int": softmax,
    "relu.default": lambda self: np.maximum(self, 0),
    "gelu.default": gelu,
    "conv2d.default": conv2d,
    "batch_norm.default": batch_norm,
}


def run_fx(prog, weights, inputs):
    gm = prog["graph_module"]
    env = {}
    for spec in gm["signature"]["input_specs"]:
        ((kind, v),) = spec.items()
        if kind == "parameter":
            env[v["arg"]["name"]] = weights[v["parameter_name"]].astype(np.float64)
        elif kind == "buffer":
            env[v["arg"]["name"]] = weights[v["buffer_name"]]
        elif kind == "user_input":
            name = v["arg"]["as_tensor"]["name"]
            env[name] = inputs[name].astype(np.float64)

    def arg(a):
        ((k, v),) = a.items()
        if k == "as_tensor":
            return env[v["name"]]
        if k == "as_sym_ints":
            return [env[i["as_name"]] if "as_name" in i else i["as_int"] for i in v]
        if k == "as_none":
            return None
        return v

    for node in gm["graph"]["nodes"]:
        op = node["target"].removeprefix("torch.ops.aten.")
        kwargs = {i["name"]: arg(i["arg"]) for i in node["inputs"]}
        out = node["outputs"][0]
        name = out["as_tensor"]["name"] if "as_tensor" in out else out["as_sym_int"]["as_name"]
        env[name] = OPS[op](**kwargs)
    ((_, spec),) = gm["signature"]["output_specs"][0].items()
    return env[spec["arg"]["as_tensor"]["name"]]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("onnx")
    p.add_argument("pt2")
    p.add_argument("--batch", type=int, action="append")
    args = p.parse_args()
    onnx.checker.check_model(args.onnx, full_check=True)
    prog, weights = load(args.pt2)
    x_meta = prog["graph_module"]["graph"]["tensor_values"]["x"]
    sess = ort.InferenceSession(args.onnx, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    for batch in args.batch or [1, 3]:
        shape = [batch] + [s["as_int"] for s in x_meta["sizes"][1:]]
        x = rng.standard_normal(shape).astype(np.float32)
        (got,) = sess.run(None, {"x": x})
        want = run_fx(prog, weights, {"x": x})
        assert got.shape == want.shape, (got.shape, want.shape)
        err = np.abs(got - want).max()
        tol = 1e-4 + 1e-3 * np.abs(want).max()
        assert np.all(np.isfinite(got)) and err <= tol, f"batch {batch}: max abs error {err} > {tol}"
        print(f"ok batch={batch} shape={got.shape} max_abs_err={err:.2e}")


if __name__ == "__main__":
    main()
