//! The built-in table against torch's schemas: every parameter a translation reads must exist under
//! that name in the overloads it is registered for (the archive names arguments by schema name), and
//! every registered ATen overload must exist in torch 2.15.

use fxonnx::internals::aten_schemas::{arg_names, schema};

#[test]
fn parameter_names_match_the_aten_schemas() {
    let table = fxonnx::TranslationTable::builtin();
    let mut problems = Vec::new();
    for key in table.keys() {
        if !(key.starts_with("aten::") || key.starts_with("prims::")) {
            continue; // Python callables and higher-order ops have no schema.
        }
        let Some(line) = schema(key) else {
            problems.push(format!("{key}: no such overload in torch 2.15"));
            continue;
        };
        let names = arg_names(line);
        for entry in table.candidates(key) {
            for (param, optional) in (entry.params)() {
                if !names.contains(&param) && !optional {
                    problems.push(format!("{key}: `{}` reads required `{param}`, schema is {line}", entry.name));
                }
            }
        }
    }
    // Optional parameters must still be spelled like some overload the function serves.
    let mut spelled: std::collections::HashMap<&str, Vec<&str>> = Default::default();
    for key in table.keys() {
        if let Some(line) = schema(key) {
            for entry in table.candidates(key) {
                spelled.entry(entry.name).or_default().extend(arg_names(line));
            }
        }
    }
    for entry in table.keys().into_iter().flat_map(|k| table.candidates(k)) {
        if let Some(known) = spelled.get(entry.name) {
            for (param, _) in (entry.params)() {
                if !known.contains(&param) {
                    problems.push(format!("`{}` reads `{param}`, which none of its overloads has", entry.name));
                }
            }
        }
    }
    problems.sort();
    problems.dedup();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every target is registered by exactly one file: a second registration would silently win.
#[test]
fn no_target_is_registered_twice() {
    let tables: Vec<(&str, fxonnx::TranslationTable)> = fxonnx::internals::FAMILIES
        .iter()
        .map(|(name, register)| {
            let mut t = fxonnx::TranslationTable::new();
            register(&mut t);
            (*name, t)
        })
        .collect();
    let mut seen: std::collections::HashMap<String, &str> = Default::default();
    let mut dups = Vec::new();
    let mut total = 0;
    for (file, table) in &tables {
        for key in table.keys() {
            total += 1;
            if let Some(other) = seen.insert(key.to_string(), file) {
                dups.push(format!("{key}: {other}.rs and {file}.rs"));
            }
        }
    }
    assert!(dups.is_empty(), "{}", dups.join("\n"));
    assert_eq!(total, fxonnx::TranslationTable::builtin().len());
}

/// A target with several translations dispatches on the node's input types, and a custom table's
/// entries go in front of the built-in ones.
#[test]
fn dispatch_by_dtype_and_custom_priority() {
    use fxonnx::translate::prelude::*;
    let builtin = fxonnx::TranslationTable::builtin();
    let names: Vec<&str> = builtin.candidates("aten::relu.default").iter().map(|e| e.name).collect();
    assert_eq!(names, ["relu", "relu_int"]);

    // The float entry serves the float relu of mlp_bn: it emits a Relu node.
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let g = fxonnx::export(fixtures.join("mlp_bn.pt2"), &Default::default())
        .expect("export")
        .model_proto()
        .graph
        .expect("g");
    assert!(g.node.iter().any(|n| n.op_type == "Relu"));

    // A custom entry limited to 2-D inputs wins over the built-in one for mlp_bn's relu.
    fxonnx::translations! {
        /// relu(Tensor self) -> Tensor
        #[target("aten::relu")]
        #[when(|node| node.rank("self") == Some(2))]
        fn relu_2d(op, self_: Tensor) -> Value {
            let zero = op.scalar(DType::Float, 0.0);
            op.Max(&[self_, zero])
        }
    }
    let opts = fxonnx::ExportOptions { custom_translation_table: Some(table()), ..Default::default() };
    let g = fxonnx::export(fixtures.join("mlp_bn.pt2"), &opts).expect("export").model_proto().graph.expect("g");
    assert!(!g.node.iter().any(|n| n.op_type == "Relu") && g.node.iter().any(|n| n.op_type == "Max"));
    // The convnet's relus are 4-D: the condition declines them and the built-in translation runs.
    let g = fxonnx::export(fixtures.join("convnet.pt2"), &opts).expect("export").model_proto().graph.expect("g");
    assert!(g.node.iter().any(|n| n.op_type == "Relu"));
}

/// Every target of the operator universe (torch.onnx's registry, Core ATen, every overload of an
/// ATen alias) has a translation or a stated reason to refuse it (`fxonnx ops --missing`).
#[test]
fn the_operator_universe_has_no_silent_gap() {
    use fxonnx::inspect::{universe, Source, Status};
    let all = universe(&fxonnx::TranslationTable::builtin());
    for source in Source::ALL {
        assert!(all.iter().filter(|t| t.source == source).count() > 50, "{} is nearly empty", source.label());
    }
    let missing: Vec<&str> = all.iter().filter(|t| t.status == Status::Missing).map(|t| t.key.as_str()).collect();
    assert!(missing.is_empty(), "no translation and no reason: {missing:?}");
    // Aliases are served by the op they name, not by a copy: `divide` runs `div`'s translation.
    let divide = all.iter().find(|t| t.key == "aten::divide.Tensor").expect("divide is an alias");
    assert_eq!(divide.status, Status::Translated("aten::div.Tensor".into()));
    // A refusal says why.
    let stride = all.iter().find(|t| t.key == "aten::sym_stride.int").expect("core op");
    assert!(matches!(stride.status, Status::Refused(why) if why.contains("strides")));
    // Backward ops are translated like the rest of Core ATen (a training step exports too).
    let refused_backward: Vec<&str> = all
        .iter()
        .filter(|t| t.key.contains("_backward") && matches!(t.status, Status::Refused(_)))
        .map(|t| t.key.as_str())
        .collect();
    assert!(refused_backward.is_empty(), "refused backward ops: {refused_backward:?}");
}

/// A translation that panics (a bug) fails the export with an error naming the node and the
/// translation; the process, and a later export, carry on.
#[test]
fn a_panicking_translation_fails_the_export_naming_the_node() {
    use fxonnx::translate::prelude::*;
    fxonnx::translations! {
        /// relu(Tensor self) -> Tensor
        #[target("aten::relu")]
        fn relu_buggy(op, self_: Tensor) -> Value {
            // An index out of bounds, as a translation trusting its input would make.
            let inputs = [self_];
            op.Relu(inputs[std::hint::black_box(3)])
        }
    }
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let opts = fxonnx::ExportOptions { custom_translation_table: Some(table()), ..Default::default() };
    let err = fxonnx::export(fixtures.join("mlp_bn.pt2"), &opts).err().expect("the export fails");
    let text = err.to_string();
    assert!(text.contains("relu") && text.contains("internal error in the translation `relu_buggy`"), "{text}");
    assert!(text.contains("index out of bounds") && text.contains("please report it"), "{text}");
    assert!(fxonnx::export(fixtures.join("mlp_bn.pt2"), &Default::default()).is_ok());
}
