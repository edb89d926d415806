//! The attention and mixture-of-experts lowerings (issue 32) on their fixtures
//! (`tests/fixtures/attention/generate.py`, `moe_routed` in `tests/fixtures/models/generate.py`):
//! the graph's structure, and with `FXONNX_PYTHON` the numbers (`tests/check_onnx.py`) and the
//! work the experts' MatMuls do in ONNX Runtime (`tests/check_moe_rows.py`).

#[allow(dead_code)]
#[path = "support/fixture_check.rs"]
mod fixture_check;

use std::path::Path;
use std::process::Command;

use fixture_check::{check_fixture, fixtures, python};
use fxonnx::internals::proto::ModelProto;

fn export(name: &str, opset: Option<i64>, out: &Path) -> ModelProto {
    let options = fxonnx::ExportOptions { opset_version: opset, ..Default::default() };
    let program = fxonnx::export(fixtures().join(format!("{name}.pt2")), &options)
        .unwrap_or_else(|e| panic!("{name}: export failed: {e}"));
    program.save(out).unwrap_or_else(|e| panic!("{name}: save failed: {e}"));
    program.model_proto()
}

fn count(model: &ModelProto, op: &str) -> usize {
    model.graph.as_ref().map_or(0, |g| g.node.iter().filter(|n| n.op_type == op).count())
}

fn numerics(name: &str, out: &Path) {
    if let Some(py) = python() {
        if let Err(text) = check_fixture(&py, name, "model", out) {
            panic!("{name} ({}): numeric check failed:\n{text}", out.display());
        }
    }
}

/// `attention_masks` makes 11 attention calls reading 4 masks (a boolean one read by three calls,
/// an additive float one, a key-padding one, a 2-D one) and two causal calls. Each call is one
/// Softmax on its logits and no pass of `IsNaN`; each mask becomes one additive bias and one
/// "hidden from every key" flag (one ReduceMax), shared by the calls reading it.
#[test]
fn masked_attention_adds_the_mask_and_zeros_hidden_rows_once_per_mask() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("attention_masks.onnx");
    let model = export("attention_masks", None, &out);
    assert_eq!(count(&model, "Softmax"), 11);
    assert_eq!(count(&model, "IsNaN"), 0);
    assert_eq!(count(&model, "ReduceMax"), 4, "one flag per mask, shared by the calls reading it");
    let graph = model.graph.as_ref().expect("graph");
    let producer = |v: &str| graph.node.iter().find(|n| n.output.iter().any(|o| o == v)).map(|n| n.op_type.as_str());
    // The logits are masked by an Add (causal or masked calls) or only scaled (the plain call),
    // never by a Where, and each softmax feeds its MatMul directly.
    for softmax in graph.node.iter().filter(|n| n.op_type == "Softmax") {
        assert!(matches!(producer(&softmax.input[0]), Some("Add" | "Mul")), "{softmax:?}");
        let readers: Vec<&str> = graph
            .node
            .iter()
            .filter(|n| n.input.iter().any(|i| *i == softmax.output[0]))
            .map(|n| n.op_type.as_str())
            .collect();
        assert_eq!(readers, ["MatMul"], "{softmax:?}");
    }
    // The 7 calls with a mask zero their hidden queries with one Where on the [B, H, L, E] output.
    let zeroed = graph
        .node
        .iter()
        .filter(|n| n.op_type == "Where" && n.output[0].starts_with("scaled_dot_product_attention"))
        .count();
    assert_eq!(zeroed, 7);
    numerics("attention_masks", &out);
}

/// At opset 23 every call of `attention_masks` (masked, causal, grouped-query, with a scale) is one
/// ONNX `Attention` node, as torch.onnx writes it, and ONNX Runtime computes what torch does,
/// fully masked queries included (zeros).
#[test]
fn attention_at_opset_23_is_one_node_per_call() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("attention_masks.onnx");
    let model = export("attention_masks", Some(23), &out);
    assert_eq!(count(&model, "Attention"), 11);
    assert_eq!(count(&model, "Softmax"), 0);
    numerics("attention_masks", &out);
    // The CPU flash kernel's log-sum-exp needs the logits: those calls keep them, beside Attention.
    for name in ["attention_kernels", "attention_device_kernels"] {
        let out = tmp.path().join(format!("{name}.onnx"));
        let model = export(name, Some(23), &out);
        assert!(count(&model, "Attention") >= 3, "{name}");
        numerics(name, &out);
    }
}

/// At opset 23 a decoder's attention reads its KV cache and its grouped key/value heads itself (one
/// `Attention` with `past_key` / `past_value` in and the grown cache out as `present_key` /
/// `present_value`, no repeated heads) and its rotary embedding is `RotaryEmbedding` (queries and
/// keys, per layer); ONNX Runtime computes what torch does on every input set.
#[test]
fn decoders_at_opset_23_read_their_cache_and_rotate_in_one_node() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // (fixture, Attention nodes with a cache, RotaryEmbedding nodes, Attention nodes reading the
    // (batch, sequence, heads x head size) values: self-attention whose positions are per sequence,
    // as ONNX Runtime GenAI feeds them, or that is not rotated; the other decoders' positions are
    // shared by the batch, which the 4-D rotation takes, and cross-attention reads a 4-D cache)
    for (name, cached, rotary, merged) in [
        ("hf_cache_llama", 2, 4, 2),
        ("decoder_llama", 2, 4, 0),
        ("decoder_mistral", 2, 4, 0),
        ("decoder_qwen2", 2, 4, 0),
        // 16 rotations reading one Cos and one Sin: more than one e-graph window holds (issue 40:
        // 3 were left as seven-node chains).
        ("decoder_deep_llama", 8, 16, 0),
        // Self-attention reads its cache; cross-attention has none. No rotary embedding.
        ("hf_cache_bart", 2, 0, 2),
        ("model_qwen3_moe", 0, 2, 0),
    ] {
        let out = tmp.path().join(format!("{name}.onnx"));
        let model = export(name, Some(23), &out);
        let graph = model.graph.as_ref().expect("graph");
        let with_cache = graph.node.iter().filter(|n| n.op_type == "Attention" && n.input.len() == 6).count();
        assert_eq!(with_cache, cached, "{name}: Attention nodes reading a cache");
        for n in graph.node.iter().filter(|n| n.op_type == "Attention" && n.input.len() == 6) {
            assert_eq!(n.output.len(), 3, "{name}: {n:?}");
        }
        assert_eq!(count(&model, "RotaryEmbedding"), rotary, "{name}");
        let three_d = |n: &fxonnx::internals::proto::NodeProto| n.attribute.iter().any(|a| a.name == "q_num_heads");
        let merged_heads = graph.node.iter().filter(|n| n.op_type == "Attention" && three_d(n)).count();
        assert_eq!(merged_heads, merged, "{name}: Attention nodes reading merged heads");
        if merged > 0 && merged == cached && rotary > 0 {
            // Nothing moves the heads in or out, nothing reshapes to heads and back.
            assert_eq!((count(&model, "Transpose"), count(&model, "Reshape")), (0, 0), "{name}");
        }
        if cached > 0 {
            // The decoders' caches are graph outputs, written by Attention alone.
            let concat_of_cache = graph
                .node
                .iter()
                .any(|n| n.op_type == "Concat" && n.output.iter().any(|o| graph.output.iter().any(|g| &g.name == o)));
            assert!(!concat_of_cache, "{name}: a cache output is still a Concat");
        }
        numerics(name, &out);
    }
}

/// The routed rows of each fixture's input sets: tokens × experts per token (top-2).
const MOE: &[(&str, usize, [usize; 2])] =
    &[("model_mixtral", 4, [2 * 8 * 2, 3 * 13 * 2]), ("model_qwen3_moe", 4, [32, 78]), ("model_moe", 4, [32, 78])];

/// Each grouped matmul of the MoE fixtures (gate/up and down, per layer) is one MatMul per expert
/// on a slice of the routed rows, concatenated: in ONNX Runtime the experts' MatMuls receive the
/// routed rows once in all (tokens × top-k), not every row each (the G-times form, which picked
/// each row's expert with GatherElements).
#[test]
fn moe_experts_multiply_only_their_routed_rows() {
    let tmp = tempfile::tempdir().expect("tempdir");
    for &(name, experts, routed) in MOE {
        let out = tmp.path().join(format!("{name}.onnx"));
        let model = export(name, None, &out);
        assert_eq!(count(&model, "GatherElements"), 0, "{name}");
        let graph = model.graph.as_ref().expect("graph");
        let sliced: std::collections::HashSet<&str> = graph
            .node
            .iter()
            .filter(|n| n.op_type == "Slice")
            .flat_map(|n| n.output.iter().map(String::as_str))
            .collect();
        let per_expert =
            graph.node.iter().filter(|n| n.op_type == "MatMul" && sliced.contains(n.input[0].as_str())).count();
        // Two grouped matmuls (gate/up, down) in the one MoE layer.
        assert_eq!(per_expert, 2 * experts, "{name}");
        numerics(name, &out);
        let Some(py) = python() else { continue };
        for (inputs, rows) in ["inputs", "inputs_alt"].iter().zip(routed) {
            let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/check_moe_rows.py");
            let run = Command::new(&py)
                .arg(script)
                .arg(&out)
                .arg(fixtures().join(format!("{name}.{inputs}.npz")))
                .args(["--routed", &rows.to_string()])
                .output()
                .expect("run check_moe_rows.py");
            let text = format!("{}{}", String::from_utf8_lossy(&run.stdout), String::from_utf8_lossy(&run.stderr));
            assert!(run.status.success(), "{name} on {inputs}: {text}");
            eprintln!("{name} {inputs}: {}", text.trim());
        }
    }
}
