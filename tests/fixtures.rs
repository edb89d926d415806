//! Every archive of `tests/fixtures/` (torch 2.15's sample programs): it exports, the export is
//! deterministic, and, with `FXONNX_PYTHON` pointing at a Python with onnx + onnxruntime + numpy
//! (`.ci/run` sets it up), the model passes `onnx.checker` (full check) and matches PyTorch's
//! outputs on every input set the fixture has. The two negative fixtures fail with typed errors.

#[allow(dead_code)]
#[path = "support/fixture_check.rs"]
mod fixture_check;

use std::path::Path;

use fixture_check::{check_fixture, check_fixture_with, fixtures, python, EXPORTABLE};

fn export_to(name: &str, model: &str, out: &Path, options: &fxonnx::ExportOptions) -> Vec<u8> {
    let archive = fixtures().join(format!("{name}.pt2"));
    let mut options = options.clone();
    options.model_name = Some(model.to_string());
    let program = fxonnx::export(&archive, &options).unwrap_or_else(|e| panic!("{name}: export failed: {e}"));
    program.save(out).unwrap_or_else(|e| panic!("{name}: save failed: {e}"));
    std::fs::read(out).expect("read back")
}

fn check_numerics(py: &str, name: &str, model_name: &str, onnx: &Path) {
    match check_fixture(py, name, model_name, onnx) {
        Ok(text) => eprintln!("{name} ({model_name}): {}", text.trim()),
        Err(text) => panic!("{name} ({model_name}): numeric check failed:\n{text}"),
    }
}

#[test]
fn every_fixture_exports_deterministically_and_matches_pytorch() {
    let py = python();
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut failures = Vec::new();
    for &(name, model) in EXPORTABLE {
        let result = std::panic::catch_unwind(|| {
            let a = tmp.path().join(format!("{name}.{model}.onnx"));
            let b = tmp.path().join(format!("{name}.{model}.again.onnx"));
            let opts = fxonnx::ExportOptions::default();
            let first = export_to(name, model, &a, &opts);
            let second = export_to(name, model, &b, &opts);
            assert!(first == second, "{name}: two exports differ");
            if let Some(py) = &py {
                check_numerics(py, name, model, &a);
            }
        });
        if result.is_err() {
            failures.push(format!("{name}/{model}"));
        }
    }
    assert!(failures.is_empty(), "failing fixtures: {failures:?}");
}

/// Fixtures that cannot export at every opset from 13 on: the lowest opset each exports at (below
/// it, the export fails naming the operator and that opset), and the operator form it needs.
const OLDER_OPSET_FAILURES: &[(&str, i64, &str)] = &[
    ("bincount", 16, "ScatterElements with a reduction"),
    ("fft_ops", 17, "DFT"),
    ("nn_ops", 18, "Resize with antialias"),
    ("nn_ops_decomposed", 18, "Resize with antialias"),
    ("torchvision_ops", 16, "RoiAlign with half_pixel coordinates (torchvision's aligned=True)"),
    ("universe_backward", 16, "ScatterElements with a reduction"),
];

/// Opsets 13 to 17, where operators take their older forms (`src/onnx/downgrade.rs`): every
/// exportable fixture exports and passes the checker and the numeric check, or, below the opset
/// `OLDER_OPSET_FAILURES` gives it, fails with the message naming the FX node, the operator and
/// the lowest opset that works. One export and check per fixture and opset (about a minute).
#[test]
fn every_fixture_exports_at_opsets_13_to_17_or_names_the_opset_it_needs() {
    let py = python();
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut failures = Vec::new();
    for opset in 13..=17 {
        for &(name, model) in EXPORTABLE {
            let needs = OLDER_OPSET_FAILURES.iter().find(|(n, ..)| *n == name).filter(|(_, lowest, _)| opset < *lowest);
            let archive = fixtures().join(format!("{name}.pt2"));
            let options = fxonnx::ExportOptions {
                model_name: Some(model.to_string()),
                opset_version: Some(opset),
                ..Default::default()
            };
            let result = fxonnx::export(&archive, &options);
            match (result, needs) {
                (Ok(program), None) => {
                    let out = tmp.path().join(format!("{name}.{model}.{opset}.onnx"));
                    if let Err(e) = program.save(&out) {
                        failures.push(format!("{name}/{model} at {opset}: save failed: {e}"));
                        continue;
                    }
                    if let Some(py) = &py {
                        if let Err(text) = check_fixture(py, name, model, &out) {
                            failures.push(format!("{name}/{model} at {opset}: check failed:\n{text}"));
                        }
                    }
                }
                (Ok(_), Some((_, lowest, _))) => failures.push(format!(
                    "{name}/{model} exports at opset {opset}, below {lowest}: update OLDER_OPSET_FAILURES"
                )),
                (Err(e), None) => failures.push(format!("{name}/{model} at {opset}: {e}")),
                (Err(e), Some((_, lowest, form))) => {
                    let message = e.to_string();
                    let expected = format!("ONNX operator {form} needs opset {lowest} or newer");
                    if !message.contains(&expected) || !message.contains("node `") {
                        failures.push(format!(
                            "{name}/{model} at {opset}: expected `{expected}` naming the node: {message}"
                        ));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Fixtures without a node reference, and why.
const NO_NODE_REFERENCE: &[(&str, &str)] = &[
    ("attention_device_kernels", "torch has no CPU kernel for cuDNN, efficient or overrideable attention"),
    ("attention_internals", "torch has no CPU kernel for flash attention: the program cannot run in torch"),
    (
        "quantized_convnet",
        "ONNX Runtime runs QDQ graphs with integer kernels (the float bias quantized, exact ties rounded \
         apart): intermediate values differ from torch's float ones by up to a quantum",
    ),
    ("quantized_transformer", "as quantized_convnet"),
    (
        "vmap_ops",
        "values inside torch.vmap are functorch's batched tensors, which torch cannot record outside \
         their level (and fxonnx stores them with the batch dims after the example's)",
    ),
];

/// The per-node differential check, frozen: `benches/node_diff.py --save-reference` ran each
/// fixture's program in torch and saved every FX node's value (`NAME.nodes.npz`); the model exported
/// with `debug_outputs` must give each of them that it computes, within the fixture's tolerance
/// (values only runtime assertions read, and unused tuple items, are not computed).
#[test]
fn every_fixture_matches_torch_node_by_node() {
    let Some(py) = python() else { return };
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut failures = Vec::new();
    for &(name, model) in EXPORTABLE.iter().filter(|(_, model)| *model == "model") {
        let nodes = fixtures().join(format!("{name}.nodes.npz"));
        let exempt = NO_NODE_REFERENCE.iter().any(|(n, _)| *n == name);
        match (nodes.exists(), exempt) {
            (true, false) => {}
            (false, true) => continue,
            (false, false) => {
                failures.push(format!("{name}: no {name}.nodes.npz (benches/node_diff.py --save-reference)"));
                continue;
            }
            (true, true) => {
                failures.push(format!("{name}: has a node reference but is listed in NO_NODE_REFERENCE"));
                continue;
            }
        }
        let out = tmp.path().join(format!("{name}.debug.onnx"));
        let opts = fxonnx::ExportOptions { debug_outputs: true, ..Default::default() };
        export_to(name, model, &out, &opts);
        match check_fixture_with(&py, name, model, &out, &["--nodes".as_ref(), nodes.as_os_str()]) {
            Ok(text) if text.contains("\"nodes_checked\": ") && !text.contains("\"nodes_checked\": 0,") => {
                eprintln!("{name}: {}", text.trim())
            }
            Ok(text) => failures.push(format!("{name}: no node was compared:\n{text}")),
            Err(text) => failures.push(format!("{name}:\n{text}")),
        }
    }
    assert!(failures.is_empty(), "node-by-node mismatches:\n{}", failures.join("\n"));
}

/// A decoder with its KV cache as inputs and outputs, exported with `tree_names`: the inputs and
/// outputs carry ONNX Runtime GenAI's and Optimum's names, and the model computes a decode step and
/// a prefill (empty cache, a left-padded row) as transformers does.
#[test]
fn decoder_cache_takes_genai_names_and_runs_prefill_and_decode() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("decoder.onnx");
    let opts = fxonnx::ExportOptions { tree_names: true, ..Default::default() };
    export_to("decoder_llama", "model", &out, &opts);
    let program = fxonnx::export(fixtures().join("decoder_llama.pt2"), &opts).expect("export");
    let graph = program.model_proto().graph.expect("graph");
    let names = |vs: &[fxonnx::internals::proto::ValueInfoProto]| vs.iter().map(|v| v.name.clone()).collect::<Vec<_>>();
    let cache = |prefix: &str| -> Vec<String> {
        (0..2).flat_map(|i| [format!("{prefix}.{i}.key"), format!("{prefix}.{i}.value")]).collect()
    };
    let mut inputs = vec!["input_ids".to_string(), "attention_mask".to_string()];
    inputs.extend(cache("past_key_values"));
    let mut outputs = vec!["logits".to_string()];
    outputs.extend(cache("present"));
    assert_eq!(names(&graph.input), inputs);
    assert_eq!(names(&graph.output), outputs);
    if let Some(py) = python() {
        check_numerics(&py, "decoder_llama", "model", &out);
    }
}

/// Decoders whose cache is transformers' own object, captured as `transformers.exporters` captures
/// (`DynamicCache`, `EncoderDecoderCache` registered as pytree nodes): without being asked, the
/// inputs and outputs carry ONNX Runtime GenAI's and Optimum's names and dims, a ModelOutput's
/// fields name its outputs, and the models match transformers on a decode step and a prefill.
#[test]
fn transformers_cache_objects_take_genai_names_and_dims() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let io = |program: &fxonnx::OnnxProgram| {
        let model = program.model();
        let show = |v: fxonnx::view::ValueView<'_>| {
            let dims: Vec<String> = (v.shape().unwrap_or_default().iter())
                .map(|d| match d {
                    fxonnx::view::Dim::Fixed(n) => n.to_string(),
                    fxonnx::view::Dim::Symbolic(s) => s.to_string(),
                    fxonnx::view::Dim::Unknown => "?".into(),
                })
                .collect();
            format!("{}[{}]", v.name(), dims.join(","))
        };
        (model.inputs().map(show).collect::<Vec<_>>(), model.outputs().map(show).collect::<Vec<_>>())
    };
    let opts = fxonnx::ExportOptions::default();
    let out = tmp.path().join("llama.onnx");
    export_to("hf_cache_llama", "model", &out, &opts);
    let (inputs, outputs) = io(&fxonnx::export(fixtures().join("hf_cache_llama.pt2"), &opts).expect("export"));
    let kv = |p: &str, len: &str| -> Vec<String> {
        (0..2).flat_map(|i| ["key", "value"].map(|k| format!("{p}.{i}.{k}[batch_size,2,{len},8]"))).collect()
    };
    let mut want = vec![
        "input_ids[batch_size,sequence_length]".to_string(),
        "attention_mask[batch_size,total_sequence_length]".into(),
        "position_ids[batch_size,sequence_length]".into(),
    ];
    want.extend(kv("past_key_values", "past_sequence_length"));
    assert_eq!(inputs, want);
    let mut want = vec!["logits[batch_size,sequence_length,64]".to_string()];
    want.extend(kv("present", "past_sequence_length + sequence_length"));
    assert_eq!(outputs, want);

    let bart = fxonnx::export(fixtures().join("hf_cache_bart.pt2"), &opts).expect("export");
    let (inputs, outputs) = io(&bart);
    assert_eq!(
        inputs[..3],
        [
            "decoder_input_ids[batch_size,decoder_sequence_length]",
            "encoder_outputs.last_hidden_state[batch_size,encoder_sequence_length,32]",
            "past_key_values.0.decoder.key[batch_size,2,past_decoder_sequence_length,16]",
        ]
    );
    assert_eq!(inputs[6], "past_key_values.0.encoder.key[batch_size,2,encoder_sequence_length,16]");
    assert_eq!(
        outputs[1],
        "present.0.decoder.key[batch_size,2,decoder_sequence_length + past_decoder_sequence_length,16]"
    );
    assert_eq!(
        outputs.last().map(String::as_str),
        Some("encoder_last_hidden_state[batch_size,encoder_sequence_length,32]")
    );
    let bart_out = tmp.path().join("bart.onnx");
    export_to("hf_cache_bart", "model", &bart_out, &opts);

    // Names the options give win, one by one; the rest keep the tree's.
    let named = fxonnx::ExportOptions { input_names: vec!["ids".into()], output_names: vec!["scores".into()], ..opts };
    let (inputs, outputs) = io(&fxonnx::export(fixtures().join("hf_cache_llama.pt2"), &named).expect("export"));
    assert_eq!(
        (inputs[0].as_str(), inputs[1].as_str()),
        ("ids[batch_size,sequence_length]", "attention_mask[batch_size,total_sequence_length]")
    );
    assert_eq!(
        (outputs[0].as_str(), outputs[1].as_str()),
        (
            "scores[batch_size,sequence_length,64]",
            "present.0.key[batch_size,2,past_sequence_length + sequence_length,8]"
        )
    );
    if let Some(py) = python() {
        check_numerics(&py, "hf_cache_llama", "model", &out);
        check_numerics(&py, "hf_cache_bart", "model", &bart_out);
    }
}

/// Tree names of nested inputs: the argument, then dict keys and list positions.
#[test]
fn tree_names_follow_dicts_and_lists() {
    let opts = fxonnx::ExportOptions { tree_names: true, ..Default::default() };
    let program = fxonnx::export(fixtures().join("dict_list_inputs.pt2"), &opts).expect("export");
    let graph = program.model_proto().graph.expect("graph");
    let inputs: Vec<_> = graph.input.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(inputs, ["tensor_x", "input_dict.tensor_x", "input_list.0"]);
    // An output reached through tuples only keeps its FX name.
    assert_eq!(graph.output[0].name, "linear_4");
}

#[test]
fn external_data_round_trips() {
    let py = python();
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("convnet.onnx");
    let opts = fxonnx::ExportOptions { external_data: true, ..Default::default() };
    export_to("convnet", "model", &out, &opts);
    let data_files = fxonnx::internals::save::data_files_of(&out);
    assert_eq!(data_files.len(), 1, "{data_files:?}");
    let data = std::fs::read(&data_files[0]).expect("external data file");
    // Every large initializer points into the data file, at its own bytes.
    use prost::Message;
    let model = fxonnx::internals::proto::ModelProto::decode(&std::fs::read(&out).expect("model")[..]).expect("decode");
    let inline = fxonnx::export(fixtures().join("convnet.pt2"), &Default::default()).expect("export").model_proto();
    let mut external = 0;
    for (t, reference) in model.graph.expect("graph").initializer.iter().zip(&inline.graph.expect("graph").initializer)
    {
        if t.data_location == 1 {
            let field = |k: &str| {
                t.external_data.iter().find(|e| e.key == k).map(|e| e.value.parse::<usize>().expect("number"))
            };
            let (offset, length) = (field("offset").expect("offset"), field("length").expect("length"));
            assert_eq!(offset % 64, 0);
            assert_eq!(&data[offset..offset + length], &reference.raw_data[..], "{}", t.name);
            assert!(t.raw_data.is_empty());
            external += 1;
        }
    }
    assert!(external > 0, "no initializer was written externally");
    if let Some(py) = &py {
        check_numerics(py, "convnet", "model", &out);
    }
}

#[test]
fn custom_op_without_translation_names_the_op_and_node() {
    let err = fxonnx::export(fixtures().join("custom_op.pt2"), &Default::default()).err().expect("must fail");
    let msg = err.to_string();
    assert!(matches!(err.kind(), fxonnx::ErrorKind::Translate(fxonnx::TranslateError::Unsupported(_))), "{msg}");
    assert_eq!(err.unsupported().len(), 1);
    assert_eq!(err.stage(), Some(fxonnx::Stage::Translate));
    assert!(err.hint().is_some_and(|h| h.contains("custom_translation_table")), "{msg}");
    assert!(msg.contains("torch.ops.fxonnx_samples.mix.default"), "{msg}");
    assert!(msg.contains("mix"), "{msg}");
}

/// In-place updates of views are written back into their bases (the view_mutation* fixtures in
/// EXPORTABLE match PyTorch, and gap_ops through `reshape` of a contiguous tensor, a view); one that
/// goes through `reshape` of a transpose, which copies or aliases depending on the input's strides,
/// is refused rather than guessed, naming the node, the alias read afterwards and its reader.
#[test]
fn in_place_update_through_reshape_is_refused_not_guessed() {
    let err =
        fxonnx::export(fixtures().join("view_mutation_refused.pt2"), &Default::default()).err().expect("must fail");
    let msg = err.to_string();
    assert!(
        matches!(err.kind(), fxonnx::ErrorKind::Translate(fxonnx::TranslateError::Node { node, .. }) if node == "fill_"),
        "{msg}"
    );
    for part in ["mutates `slice_1` in place", "`mul`", "node `add`", "through `reshape`", "ep.run_decompositions()"] {
        assert!(msg.contains(part), "missing {part:?} in: {msg}");
    }
}

#[test]
fn pickled_subclass_weight_names_the_tensor() {
    let err =
        fxonnx::export(fixtures().join("pickled_subclass_weight.pt2"), &Default::default()).err().expect("must fail");
    assert!(
        matches!(
            err.kind(),
            fxonnx::ErrorKind::Translate(fxonnx::TranslateError::Archive(fxonnx::ArchiveError::Pickled { fqn, .. }))
                if fqn == "w"
        ),
        "{err}"
    );
    assert!(err.to_string().contains("unsupported pickled payload"), "{err}");
}

#[test]
fn mutated_buffers_become_extra_outputs() {
    for name in ["buffer_mutation", "buffer_mutation_decomposed"] {
        let program = fxonnx::export(fixtures().join(format!("{name}.pt2")), &Default::default()).expect("export");
        let proto = program.model_proto();
        let outputs: Vec<String> = proto.graph.expect("graph").output.iter().map(|o| o.name.clone()).collect();
        assert_eq!(
            outputs[2..],
            ["buffer_mutation_count", "buffer_mutation_ema", "user_input_mutation_y"],
            "{name}: {outputs:?}"
        );
    }
}

/// A name the user gives an input or output is kept exactly (issue 38: `linear` came out
/// `linear_2`, `fc1.weight` as `fc1.weight_1`): the program's own value of that name is renamed
/// instead, and the model still computes what PyTorch does.
#[test]
fn user_names_are_kept_and_the_program_s_values_of_those_names_renamed() {
    let py = python();
    let tmp = tempfile::tempdir().expect("tempdir");
    for (inputs, outputs) in [(["fc1.weight"], ["linear"]), (["linear"], ["x"]), (["relu"], ["fc2.bias"])] {
        let opts = fxonnx::ExportOptions {
            input_names: inputs.iter().map(|s| s.to_string()).collect(),
            output_names: outputs.iter().map(|s| s.to_string()).collect(),
            optimize: false,
            ..Default::default()
        };
        let program = fxonnx::export(fixtures().join("mlp_bn.pt2"), &opts).expect("export");
        let model = program.model();
        assert_eq!(model.inputs().map(|v| v.name().to_string()).collect::<Vec<_>>(), inputs, "{inputs:?}");
        assert_eq!(model.outputs().map(|v| v.name().to_string()).collect::<Vec<_>>(), outputs, "{outputs:?}");
        let out = tmp.path().join(format!("{}.onnx", inputs[0]));
        program.save(&out).expect("save");
        if let Some(py) = &py {
            check_numerics(py, "mlp_bn", "model", &out);
        }
    }
    let clash =
        fxonnx::ExportOptions { input_names: vec!["y".into()], output_names: vec!["y".into()], ..Default::default() };
    let e = fxonnx::export(fixtures().join("mlp_bn.pt2"), &clash).err().expect("two user names alike");
    assert!(e.to_string().contains("given twice"), "{e}");
}

#[test]
fn options_rename_inputs_outputs_and_dims() {
    let opts = fxonnx::ExportOptions {
        input_names: vec!["features".into()],
        output_names: vec!["logits".into()],
        dim_names: [("s77".to_string(), "batch".to_string())].into_iter().collect(),
        ..Default::default()
    };
    let program = fxonnx::export(fixtures().join("mlp_bn.pt2"), &opts).expect("export");
    let g = program.model_proto().graph.expect("graph");
    assert_eq!(g.input[0].name, "features");
    assert_eq!(g.output[0].name, "logits");
    let text = format!("{:?}", g.input[0]);
    assert!(text.contains("DimParam(\"batch\")"), "{text}");
}
