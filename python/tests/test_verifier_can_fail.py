"""The verifier can fail (issue 38): every fixture archive and every DEV zoo model, exported with
``verify=True`` and a deliberately wrong translation of one of its ops, must fail verification
(``fxonnx.VerificationError``); exported with the built-in table, it must pass. A verifier that
compares too little (a prefix of the outputs, the outputs of one input set) passes the first.

The wrong translation perturbs a floating input of one op (``1.5 * x + 0.25``) and then computes
the op: the identity of a same-shape op, or torch.onnx's own translation of it (torchlib); an op
with a static float output may instead return a constant. Ops are tried in graph order until one
changes a user output; a program where none does fails the test.

Needs torch, torchvision, transformers, torchao, onnxscript, onnx and onnxruntime; about 4 minutes.
"""

from __future__ import annotations

import pathlib
import warnings

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnxscript")
pytest.importorskip("onnxruntime")

from onnxscript import opset18 as op  # noqa: E402

import fxonnx  # noqa: E402

FIXTURES = pathlib.Path(__file__).resolve().parents[2] / "tests" / "fixtures"
FLOAT = {torch.float32, torch.float16, torch.bfloat16, torch.float64}

# Fixtures that are not exported at all, on purpose (their own tests check the refusal).
REFUSED = {"custom_op", "pickled_subclass_weight", "view_mutation_refused"}
# Fixtures that verify cannot check here, and says so (a VerificationError for the right model too).
UNVERIFIABLE = {
    "attention_device_kernels": "its cuDNN attention kernel does not run on CPU",
    "attention_internals": "its flash attention kernel does not run on CPU",
    "half_dtypes": "ONNX Runtime's CPU provider has no bfloat16 Gemm",
}


def _register_load_time_types():
    """What torch.export.load needs registered to read every fixture: transformers' cache and
    output classes as pytree nodes, the PT2E quantized ops, torchvision's ops, transformers' MoE op."""
    import torchao.quantization.pt2e  # noqa: F401
    import torchvision  # noqa: F401
    import transformers.integrations.moe  # noqa: F401
    from transformers import DynamicCache, EncoderDecoderCache
    from transformers.exporters.exporter_dynamo import register_pytree_node
    from transformers.modeling_outputs import BaseModelOutput, CausalLMOutputWithPast, Seq2SeqLMOutput

    for cls in (DynamicCache, EncoderDecoderCache, BaseModelOutput, CausalLMOutputWithPast, Seq2SeqLMOutput):
        try:
            register_pytree_node(cls)
        except ValueError:  # registered already
            pass


def _graphs(gm):
    for m in gm.modules():
        if isinstance(getattr(m, "graph", None), torch.fx.Graph):
            yield m.graph


def _perturb(x, integer=False):
    if integer:
        return op.Add(x, op.CastLike(1, x))  # indices and counts: one on
    return op.Add(op.Mul(x, op.CastLike(1.5, x)), op.CastLike(0.25, x))


def _torchlib(target):
    from torch.onnx._internal.exporter import _registration

    global _REGISTRY
    try:
        registry = _REGISTRY
    except NameError:
        registry = _REGISTRY = _registration.ONNXRegistry.from_torchlib()
    decomps = registry.get_decomps(target)
    return decomps[0].onnx_function if decomps else None


def _numeric(val):
    return isinstance(val, torch.Tensor) and val.dtype != torch.bool and not val.dtype.is_complex


def wrong_translations(ep):
    """(target, a wrong translation of it) for the program's ops, most telling first."""
    same, constant, torchlib = [], [], []
    seen = set()
    for graph in _graphs(ep.graph_module):
        for n in graph.nodes:
            if n.op != "call_function" or not isinstance(n.target, torch._ops.OpOverload) or n.target in seen:
                continue
            val = n.meta.get("val")
            outputs = list(val) if isinstance(val, (list, tuple)) else [val]
            first = next((i for i, v in enumerate(outputs) if _numeric(v)), None)
            if first is None:
                continue
            seen.add(n.target)
            out = outputs[first]
            alike = [i for i, a in enumerate(n.args) if isinstance(a, torch.fx.Node)
                     and isinstance(a.meta.get("val"), torch.Tensor) and out.dtype in FLOAT
                     and a.meta["val"].dtype == out.dtype and str(a.meta["val"].shape) == str(out.shape)]
            if alike and len(outputs) == 1:
                same.append((n.target, _same_shape(alike[0])))
            elif out.dtype in FLOAT and all(isinstance(d, int) for d in out.shape) and out.numel():
                others = _stand_ins(n, outputs, first)
                if others is not None:
                    constant.append((n.target, _constant(tuple(out.shape), first, others)))
            if n.target == torch.ops.aten.bincount.default:
                torchlib.append((n.target, _bincount_plus_one))
                continue
            function = _torchlib(n.target)
            if function is not None:
                torchlib.append((n.target, _output_perturbed(function, first, len(outputs),
                                                             not out.dtype.is_floating_point)))
    return same + constant + torchlib


def _same_shape(i):
    def wrong(*args, **kwargs):
        return _perturb(args[i])
    return wrong


_ONNX_TYPES = {torch.float32: 1, torch.uint8: 2, torch.int8: 3, torch.int16: 5, torch.int32: 6, torch.int64: 7,
               torch.bool: 9, torch.float16: 10, torch.float64: 11, torch.bfloat16: 16}


def _stand_ins(node, outputs, first):
    """For each other output of ``node``: a zero-filled tensor of its static shape, or the
    argument of its shape cast to its type (``(arg index, ONNX type)``); ``None`` if one has neither."""
    found = []
    for k, v in enumerate(outputs):
        if k == first:
            found.append(None)
        elif not isinstance(v, torch.Tensor) or v.dtype not in _ONNX_TYPES:
            return None
        elif all(isinstance(d, int) for d in v.shape):
            found.append(("zeros", tuple(v.shape), _ONNX_TYPES[v.dtype]))
        else:
            same = [i for i, a in enumerate(node.args) if isinstance(a, torch.fx.Node)
                    and isinstance(a.meta.get("val"), torch.Tensor) and str(a.meta["val"].shape) == str(v.shape)]
            if not same:
                return None
            found.append(("arg", same[0], _ONNX_TYPES[v.dtype]))
    return found


def _constant(shape, index, others):
    """A constant in place of the op's static float output; its other outputs, which the program
    leaves unused, stand-ins of their shapes and types (``_stand_ins``)."""
    def wrong(*args, **kwargs):
        results = []
        for k, how in enumerate(others):
            if k == index:
                zeros = op.ConstantOfShape(op.Constant(value_ints=list(shape)))
                results.append(op.Add(zeros, op.Constant(value_float=0.375)))
            elif how[0] == "zeros":
                results.append(op.Cast(op.ConstantOfShape(op.Constant(value_ints=list(how[1]))), to=how[2]))
            else:
                results.append(op.Cast(args[how[1]], to=how[2]))
        return tuple(results) if len(results) > 1 else results[0]
    return wrong


def _output_perturbed(function, index, count, integer):
    """torch.onnx's translation of the op, one of its outputs perturbed."""
    def wrong(*args, **kwargs):
        result = function(*args, **kwargs)
        results = list(result) if count > 1 else [result]
        results[index] = _perturb(results[index], integer)
        return tuple(results) if count > 1 else results[0]
    return wrong


def _bincount_plus_one(self, weights=None, minlength=0):
    """bincount, weighted or not (torch.onnx's translation takes no weights), plus one."""
    size = op.Max(op.Add(op.ReduceMax(self, keepdims=0), op.CastLike(1, self)), op.CastLike(minlength, self))
    bins = op.Range(op.CastLike(0, self), size, op.CastLike(1, self))
    hits = op.Cast(op.Equal(op.Unsqueeze(self, op.Constant(value_ints=[-1])), bins), to=1)
    if weights is not None:
        hits = op.Mul(hits, op.Unsqueeze(op.Cast(weights, to=1), op.Constant(value_ints=[-1])))
    counts = op.ReduceSum(hits, op.Constant(value_ints=[0]), keepdims=0)
    counts = counts if weights is not None else op.Cast(counts, to=7)
    return _perturb(counts, integer=weights is None)


def check_the_verifier(name, export):
    """``export(table)`` exports with verify=True: right with no table, caught with a wrong one."""
    if name in UNVERIFIABLE:
        with pytest.raises(fxonnx.VerificationError, match="cannot"):
            export(None)
        return
    program = export(None)
    assert program.verification.passed
    tried = []
    for target, wrong in wrong_translations(program.exported_program):
        try:
            export({target: wrong})
        except fxonnx.VerificationError:
            return
        except fxonnx.TranslationError:
            continue  # torchlib's translation does not trace here: the next op
        tried.append(str(target))
        if len(tried) >= 6:
            break
    pytest.fail(f"{name}: the verifier passed a wrong translation of each of {tried}")


def _fixture_names():
    return sorted(p.stem for p in FIXTURES.glob("*.pt2") if p.stem not in REFUSED)


@pytest.mark.parametrize("name", _fixture_names())
def test_the_verifier_fails_a_wrong_translation_of_a_fixture(name):
    _register_load_time_types()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ep = torch.export.load(FIXTURES / f"{name}.pt2")

    def export(table):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fxonnx.export(ep, custom_translation_table=table, verify=True, verbose=False)

    check_the_verifier(name, export)


def _vision(fn_name):
    def build():
        import torchvision
        return getattr(torchvision.models, fn_name)(weights=None), (torch.randn(2, 3, 224, 224),), ({0: "batch"},)
    return build


def _text(model_cls, config_cls, vocab, **config):
    def build():
        import transformers
        model = getattr(transformers, model_cls)(getattr(transformers, config_cls)(**config))
        g = torch.Generator().manual_seed(0)
        ids = torch.randint(0, vocab, (2, 16), generator=g)
        return model, (), ({0: "batch", 1: "seq"}, {0: "batch", 1: "seq"}), {"input_ids": ids,
                                                                             "attention_mask": torch.ones_like(ids)}
    return build


def _t5():
    import transformers
    config = transformers.T5Config(d_model=256, d_kv=32, d_ff=1024, num_layers=4, num_decoder_layers=4, num_heads=8,
                                   vocab_size=32128, use_cache=False)
    model = transformers.T5ForConditionalGeneration(config)
    g = torch.Generator().manual_seed(0)
    ids, dec = torch.randint(0, 32128, (2, 16), generator=g), torch.randint(0, 32128, (2, 8), generator=g)
    kwargs = {"input_ids": ids, "attention_mask": torch.ones_like(ids), "decoder_input_ids": dec}
    return model, (), ({0: "batch", 1: "seq"}, {0: "batch", 1: "seq"}, {0: "batch", 1: "dec_seq"}), kwargs


# The DEV set of the shared model zoo (../shared/tools/zoo.py): the same constructors and configs,
# random weights after torch.manual_seed(0).
DEV = {
    "tv_resnet18": _vision("resnet18"),
    "tv_mobilenet_v3_small": _vision("mobilenet_v3_small"),
    "tv_efficientnet_b0": _vision("efficientnet_b0"),
    "tv_vit_b_16": _vision("vit_b_16"),
    "hf_bert": _text("BertModel", "BertConfig", 30522, hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                     intermediate_size=1024, vocab_size=30522, max_position_embeddings=512),
    "hf_gpt2": _text("GPT2LMHeadModel", "GPT2Config", 50257, n_embd=256, n_layer=4, n_head=4, vocab_size=50257,
                     n_positions=1024, use_cache=False),
    "hf_llama": _text("LlamaForCausalLM", "LlamaConfig", 32000, hidden_size=256, intermediate_size=688,
                      num_hidden_layers=4, num_attention_heads=8, num_key_value_heads=2, vocab_size=32000,
                      max_position_embeddings=2048, use_cache=False),
    "hf_t5": _t5,
}


def _condition(model):
    """As zoo.py conditions its random models: a Linear or Conv weight initialised to zeros (ViT's
    head) is drawn again, so that the output depends on every layer."""
    with torch.no_grad():
        for m in model.modules():
            w = getattr(m, "weight", None)
            if isinstance(m, (torch.nn.Linear, torch.nn.Conv2d)) and w is not None and not w.any():
                w.normal_(0, 0.02)
    return model


@pytest.mark.parametrize("name", list(DEV))
def test_the_verifier_fails_a_wrong_translation_of_a_dev_zoo_model(name):
    torch.manual_seed(0)
    built = DEV[name]()
    model, args, dims = _condition(built[0]).eval(), built[1], built[2]
    kwargs = built[3] if len(built) > 3 else None
    dynamic = dims if kwargs is None else dict(zip(kwargs, dims))
    # Captured once: each export below converts the same program.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ep = fxonnx.export(model, args, kwargs=kwargs, dynamic_shapes=dynamic, verbose=False).exported_program

    def export(table):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fxonnx.export(ep, custom_translation_table=table, verify=True, verbose=False)

    check_the_verifier(name, export)
