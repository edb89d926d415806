//! The optimizer never changes results: every fixture of `tests/fixtures/` and every corpus case of
//! `tests/fixtures/ops/` is exported with and without optimization, and with `FXONNX_PYTHON` set both
//! models must pass `onnx.checker` and match PyTorch's outputs in ONNX Runtime (the fixtures on every
//! input set they have, the corpus cases within their own tolerances). The optimized graph is never
//! larger than the unoptimized one.

#[path = "support/conformance.rs"]
mod conformance;

#[allow(dead_code)]
#[path = "support/fixture_check.rs"]
mod fixture_check;

use std::path::{Path, PathBuf};

use fixture_check::{check_fixture, check_fixture_with, python, EXPORTABLE};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn options(optimize: bool, model: &str) -> fxonnx::ExportOptions {
    fxonnx::ExportOptions { optimize, model_name: Some(model.to_string()), ..Default::default() }
}

#[test]
fn fixtures_compute_the_same_with_and_without_optimization() {
    let py = python();
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut failures = Vec::new();
    for &(name, model) in EXPORTABLE {
        let archive = root().join(format!("tests/fixtures/{name}.pt2"));
        let mut nodes = [0usize; 2];
        for (k, optimize) in [false, true].into_iter().enumerate() {
            let out = tmp.path().join(format!("{name}.{model}.{optimize}.onnx"));
            let program = match fxonnx::export(&archive, &options(optimize, model)) {
                Ok(p) => p,
                Err(e) => {
                    failures.push(format!("{name}/{model} (optimize={optimize}): export: {e}"));
                    continue;
                }
            };
            nodes[k] = program.ir().graph.nodes.len();
            if let Err(e) = program.save(&out) {
                failures.push(format!("{name}/{model} (optimize={optimize}): save: {e}"));
                continue;
            }
            if let Some(py) = &py {
                if let Err(e) = check_fixture(py, name, model, &out) {
                    failures.push(format!("{name}/{model} (optimize={optimize}):\n{e}"));
                }
            }
        }
        if nodes[1] > nodes[0] {
            failures.push(format!("{name}/{model}: optimized {} nodes > unoptimized {}", nodes[1], nodes[0]));
        }
        eprintln!("{name}/{model}: {} -> {} nodes", nodes[0], nodes[1]);
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn corpus_cases_compute_the_same_with_and_without_optimization() {
    let cases = conformance::discover(&root().join("tests/fixtures/ops"), None).unwrap_or_else(|e| panic!("{e}"));
    assert!(cases.len() >= 20, "only {} corpus cases", cases.len());
    let work = tempfile::tempdir().expect("tempdir");
    let mut entries = Vec::new();
    let mut failures = Vec::new();
    for case in &cases {
        for optimize in [false, true] {
            let out = work.path().join(format!("{}.{optimize}.onnx", case.name.replace('/', "~")));
            match conformance::export_case_with(case, &out, &options(optimize, "model")) {
                Ok(()) => entries.push(conformance::ManifestEntry {
                    case: format!("{} (optimize={optimize})", case.name),
                    ..conformance::ManifestEntry::for_case(case, out)
                }),
                Err(e) => failures.push(format!("{} (optimize={optimize}): {e:?}", case.name)),
            }
        }
    }
    if let Some(py) = python() {
        let results = conformance::check(&py, &entries, work.path(), 2, false).unwrap_or_else(|e| panic!("{e}"));
        for r in results.iter().filter(|r| !r.passed) {
            failures.push(format!("{}: {}", r.case, r.error.as_deref().unwrap_or("failed")));
        }
    }
    assert!(failures.is_empty(), "{} of {} models fail:\n{}", failures.len(), entries.len(), failures.join("\n"));
}

/// The ONNX Runtime target's rewrites (`egraph::rules::ONNXRUNTIME_RULES`) keep results: every fixture
/// exported for ONNX Runtime passes `onnx.checker` (full; ONNX Runtime's `com.microsoft` operators
/// are outside its schemas) and matches PyTorch in ONNX Runtime on every input set, as the standard
/// export does. The decoders' RMS norms are rewritten (so the check covers the rules), and no
/// target export is larger than the standard one.
#[test]
fn fixtures_compute_the_same_for_onnxruntime() {
    let py = python();
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut failures = Vec::new();
    let mut rewritten = Vec::new();
    for &(name, model) in EXPORTABLE {
        let archive = root().join(format!("tests/fixtures/{name}.pt2"));
        let standard = match fxonnx::export(&archive, &options(true, model)) {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!("{name}/{model}: export: {e}"));
                continue;
            }
        };
        let target = fxonnx::ExportOptions { target: fxonnx::Target::OnnxRuntimeCpu, ..options(true, model) };
        let program = match fxonnx::export(&archive, &target) {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!("{name}/{model} (onnxruntime): export: {e}"));
                continue;
            }
        };
        let (a, b) = (standard.ir().graph.nodes.len(), program.ir().graph.nodes.len());
        if b > a {
            failures.push(format!("{name}/{model}: {b} nodes for onnxruntime > {a} for standard ONNX"));
        }
        let ops = |p: &fxonnx::OnnxProgram, op: &str| p.ir().graph.nodes.iter().filter(|n| n.op_type == op).count();
        let fused = ops(&program, "SkipSimplifiedLayerNormalization") + ops(&program, "Div")
            - ops(&standard, "SkipSimplifiedLayerNormalization")
            - ops(&standard, "Div");
        if a != b || fused > 0 {
            rewritten.push(format!("{name}/{model}"));
        }
        let out = tmp.path().join(format!("{name}.{model}.onnxruntime.onnx"));
        if let Err(e) = program.save(&out) {
            failures.push(format!("{name}/{model} (onnxruntime): save: {e}"));
            continue;
        }
        if let Some(py) = &py {
            if let Err(e) = check_fixture(py, name, model, &out) {
                failures.push(format!("{name}/{model} (onnxruntime):\n{e}"));
            }
        }
    }
    eprintln!("rewritten for onnxruntime: {}", rewritten.join(", "));
    for decoder in ["decoder_llama/model", "decoder_mistral/model", "decoder_qwen2/model"] {
        assert!(rewritten.iter().any(|r| r == decoder), "{decoder}: no ONNX Runtime rewrite");
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

/// `Linear` on 2-D inputs is a Gemm, not a MatMul: `--quantize` quantizes its weight too (issue 38:
/// it quantized nothing and said "0 MatMul weight(s) quantized"), the bias read by the kernel, and
/// the model stays close to PyTorch. Blocks ONNX Runtime cannot load are refused.
#[test]
fn weight_quantization_takes_gemm_weights() {
    let archive = root().join("tests/fixtures/linear_2d.pt2");
    let tmp = tempfile::tempdir().expect("tempdir");
    let options = |bits, block_size| fxonnx::ExportOptions {
        target: fxonnx::Target::OnnxRuntimeCpu,
        weight_quantization: Some(fxonnx::WeightQuantization { bits, block_size }),
        ..Default::default()
    };
    let program = fxonnx::export(&archive, &options(8, 32)).expect("export");
    let ops: Vec<&str> = program.ir().graph.nodes.iter().map(|n| n.op_type.as_str()).collect();
    assert_eq!(ops.iter().filter(|o| **o == "MatMulNBits").count(), 3, "{ops:?}");
    assert!(!ops.contains(&"Gemm") && !ops.contains(&"MatMul"), "{ops:?}");
    assert!(program.warnings().iter().any(|w| w.contains("3 MatMul/Gemm weight(s)")), "{:?}", program.warnings());
    let out = tmp.path().join("q8.onnx");
    program.save(&out).expect("save");
    if let Some(py) = python() {
        let extra = [std::ffi::OsStr::new("--atol"), "0.01".as_ref(), "--rtol".as_ref(), "0".as_ref()];
        if let Err(e) = check_fixture_with(&py, "linear_2d", "model", &out, &extra) {
            panic!("8 bits: {e}");
        }
    }
    for block in [8, 48, 512, 65536] {
        let e = fxonnx::export(&archive, &options(4, block)).err().expect("a block ONNX Runtime cannot load");
        assert!(e.to_string().contains("16 to 256"), "{block}: {e}");
    }
}

/// Weight-only quantization (`--quantize`, ONNX Runtime target): every float32 MatMul by a weight
/// of at least 16 x 16 becomes `com.microsoft.MatMulNBits` (those reading one input packed into one,
/// as the GenAI builder packs Q/K/V), the float weights leave the file, and
/// the model stays close to PyTorch in ONNX Runtime, closer with 8 bits than with 4 (the tolerance
/// is the fixture's largest output magnitude times the bound: the outputs are near 1). Without an
/// ONNX Runtime target it is refused.
#[test]
fn weight_quantization_writes_matmul_nbits_close_to_pytorch() {
    let archive = root().join("tests/fixtures/decoder_llama.pt2");
    let tmp = tempfile::tempdir().expect("tempdir");
    let plain = fxonnx::export(
        &archive,
        &fxonnx::ExportOptions { target: fxonnx::Target::OnnxRuntimeCpu, ..Default::default() },
    )
    .expect("export");
    // In float32 the target packs each layer's q, k, v: one MatMul split in three, for 2 layers.
    let nodes = &plain.ir().graph.nodes;
    let packs = nodes
        .iter()
        .filter(|n| n.op_type == "Split")
        .filter(|s| nodes.iter().any(|m| m.op_type == "MatMul" && s.inputs[0] == Some(m.outputs[0])))
        .count();
    assert_eq!(packs, 2);
    let matmuls = nodes.iter().filter(|n| n.op_type == "MatMul").count() + 2 * packs;
    for (bits, block, atol) in [(4u8, 32u32, "0.08"), (8, 128, "0.005")] {
        let q = fxonnx::WeightQuantization { bits, block_size: block };
        let options = fxonnx::ExportOptions {
            target: fxonnx::Target::OnnxRuntimeCpu,
            weight_quantization: Some(q),
            ..Default::default()
        };
        let program = fxonnx::export(&archive, &options).expect("export");
        let nodes = &program.ir().graph.nodes;
        let nbits = nodes.iter().filter(|n| n.op_type == "MatMulNBits").count();
        let left = nodes.iter().filter(|n| n.op_type == "MatMul").count();
        let warning = program.warnings().iter().find(|w| w.contains("quantized to")).expect("a quantization warning");
        let weights: usize = warning.split(' ').next().and_then(|n| n.parse().ok()).expect("a count of weights");
        assert!(
            weights > 0 && weights + left == matmuls,
            "{bits} bits: {weights} weights quantized, {left} of {matmuls} MatMul left: {warning}"
        );
        // Each of the 2 layers reads its normalized input in q, k, v (one node) and gate, up (one
        // node), then o and down; the LM head: 9 nodes for 15 weights, each pack split back.
        assert_eq!((weights, nbits), (15, 9), "{bits} bits: {warning}");
        let splits = |nodes: &[fxonnx::internals::ir::Node]| nodes.iter().filter(|n| n.op_type == "Split").count();
        assert_eq!(splits(nodes), splits(&plain.ir().graph.nodes) + 4 - packs, "{bits} bits");
        assert!(warning.contains("packed: 9 nodes"), "{warning}");
        assert!(program.weight_bytes() < plain.weight_bytes(), "{bits} bits: weights not smaller");
        let out = tmp.path().join(format!("q{bits}.onnx"));
        program.save(&out).expect("save");
        if let Some(py) = python() {
            let extra = [
                std::ffi::OsStr::new("--atol"),
                std::ffi::OsStr::new(atol),
                std::ffi::OsStr::new("--rtol"),
                std::ffi::OsStr::new("0"),
            ];
            if let Err(e) = check_fixture_with(&py, "decoder_llama", "model", &out, &extra) {
                panic!("{bits} bits: {e}");
            }
            // And not within the float tolerance: the weights did change.
            if bits == 4 {
                assert!(
                    check_fixture(&py, "decoder_llama", "model", &out).is_err(),
                    "4-bit weights gave exact results"
                );
            }
        }
    }
    let refused = fxonnx::ExportOptions {
        weight_quantization: Some(fxonnx::WeightQuantization { bits: 4, block_size: 32 }),
        ..Default::default()
    };
    let e = fxonnx::export(&archive, &refused).err().expect("quantization without an ONNX Runtime target");
    assert!(e.to_string().contains("--target onnxruntime"), "{e}");
}
