//! The program's inputs bound to ONNX: lifted tensors (parameters, buffers, constants) become
//! initializers named by their FQN, tied weights and views of one stored tensor one initializer,
//! user inputs graph inputs named as the options say.

use super::{metadata, Lowerer, Scope, TranslateError};
use crate::fx::{InputKind, Program};
use crate::hash::FxHashMap;
use crate::onnx::builder::Builder;
use crate::onnx::ir::{Dim, TensorData, Value};
use crate::pt2::schema;
use crate::translate::dsl::onnx_dtype;

/// The program's inputs as bound by [`bind_inputs`]: what the outputs need to find mutations.
pub(super) struct BoundInputs {
    pub user_inputs: Vec<(String, Value)>,
    /// (placeholder, fqn, value)
    pub buffers: Vec<(String, String, Value)>,
}

/// What makes two lifted tensors one initializer: storage, sizes, strides, offset and dtype.
type TieKey = (String, Vec<i64>, Vec<i64>, i64, i64);

/// Bind the program's inputs: lifted tensors become initializers named by FQN (tied weights,
/// the same stored view, one initializer), user inputs graph inputs.
pub(super) fn bind_inputs<'g>(
    program: &'g Program<'_>,
    lw: &Lowerer,
    op: &mut Builder,
    env: &mut Scope<'g>,
) -> Result<BoundInputs, TranslateError> {
    let (graph, opts) = (program.graph(), lw.opts);
    // Sized for every input up front: a large program has hundreds of thousands of weights, and
    // growing the map one rehash at a time would show in the lowering.
    let mut tied: FxHashMap<TieKey, Value> =
        FxHashMap::with_capacity_and_hasher(program.inputs().len(), Default::default());
    let mut user_inputs: Vec<(String, Value)> = Vec::new();
    let mut buffers: Vec<(String, String, Value)> = Vec::new(); // (placeholder, fqn, value)
    let mut n_user = 0usize;
    for input in program.inputs() {
        match &input.kind {
            InputKind::Parameter { fqn } | InputKind::Buffer { fqn, .. } | InputKind::Constant { fqn } => {
                let in_weights =
                    matches!(input.kind, InputKind::Parameter { .. } | InputKind::Buffer { persistent: true, .. });
                let mut w = program.loaded().tensor(fqn, in_weights)?;
                check_weight_type(&w, fqn, graph, &input.name)?;
                let v = match tied.entry(std::mem::take(&mut w.key)) {
                    std::collections::hash_map::Entry::Occupied(e) => *e.get(),
                    std::collections::hash_map::Entry::Vacant(e) => {
                        let data = weight_tensor(&w);
                        let v = op.add_initializer(data);
                        lw.name(op, v, fqn);
                        op.info_mut(v).metadata = metadata::input_metadata(&input.kind, &input.name);
                        if w.dtype.is_complex() {
                            op.info_mut(v).complex = true;
                        }
                        // A broadcast (zero-stride) tensor is stored once and expanded here.
                        let v = if w.is_broadcast() {
                            let mut dims = w.sizes.clone();
                            if w.dtype.is_complex() {
                                dims.push(2);
                            }
                            let shape = op.const_i64s(&dims);
                            let x = op.Expand(v, shape);
                            let info = op.info_mut(x);
                            info.complex = w.dtype.is_complex();
                            info.shape = Some(dims.into_iter().map(Dim::Fixed).collect());
                            x
                        } else {
                            v
                        };
                        *e.insert(v)
                    }
                };
                env.insert(&input.name, v);
                if let InputKind::Buffer { fqn, .. } = &input.kind {
                    buffers.push((input.name.clone(), fqn.clone(), v));
                }
            }
            InputKind::UserTensor => {
                let meta = graph.tensor_values.get(input.name.as_str()).ok_or_else(|| {
                    TranslateError::program(format!("user input `{}` has no entry in tensor_values", input.name))
                })?;
                let (dtype, shape, complex) = lw.tensor_type(meta);
                let v = op.add_input(Some(dtype), Some(shape));
                op.info_mut(v).complex = complex;
                name_user_input(lw, op, v, &input.kind, &input.name, opts.input_names.get(n_user));
                env.insert(&input.name, v);
                user_inputs.push((input.name.clone(), v));
                n_user += 1;
            }
            InputKind::UserSymInt => {
                let v = op.add_input(Some(crate::onnx::ir::DType::Int64), Some(vec![]));
                name_user_input(lw, op, v, &input.kind, &input.name, opts.input_names.get(n_user));
                env.insert(&input.name, v);
                n_user += 1;
            }
            InputKind::ConstantInput => {}
            InputKind::Token => {
                // Effect tokens order side effects in torch; ONNX has none, so they are dropped.
                let v = op.constant_tensor(TensorData::from_i64s(vec![0], &[]));
                env.insert(&input.name, v);
            }
            InputKind::CustomObj { fqn, class_fqn } => {
                return Err(TranslateError::Program {
                    message: format!(
                        "input `{}` is a custom object `{fqn}` of class {class_fqn}; ONNX has no equivalent",
                        input.name
                    ),
                    hint: Some("keep TorchBind objects out of the exported forward".into()),
                })
            }
        }
    }

    Ok(BoundInputs { user_inputs, buffers })
}

/// A stored tensor must be what the program says it reads: the same dtype and, where the
/// program's sizes are static, the same sizes. Otherwise every shape after it would be wrong.
/// Name a user input `v` (the user's name for it, else the program's) and give it torch.onnx's
/// metadata.
fn name_user_input(
    lw: &Lowerer,
    op: &mut Builder,
    v: Value,
    kind: &InputKind,
    program_name: &str,
    user_name: Option<&String>,
) {
    let given = user_name.filter(|n| !n.is_empty());
    let name = given.map_or(program_name, String::as_str);
    match given {
        Some(given) => lw.name_as_given(op, v, given),
        None => lw.name(op, v, name),
    }
    let mut meta = metadata::input_metadata(kind, program_name);
    if name == program_name {
        meta.retain(|(k, _)| *k != metadata::ORIGINAL_NODE_NAME); // torch adds it on renames only
    }
    op.info_mut(v).metadata = meta;
}

fn check_weight_type(
    w: &crate::pt2::Weight,
    fqn: &str,
    graph: &schema::Graph,
    value: &str,
) -> Result<(), TranslateError> {
    let Some(meta) = graph.tensor_values.get(value) else { return Ok(()) };
    let same_sizes = meta.sizes.len() == w.sizes.len()
        && meta.sizes.iter().zip(&w.sizes).all(|(s, &n)| !matches!(s, schema::SymInt::AsInt(m) if *m != n));
    if crate::pt2::scalar_type(meta.dtype) == Some(w.dtype) && same_sizes {
        return Ok(());
    }
    Err(TranslateError::program(format!(
        "tensor `{fqn}` is stored as {} {:?}, but the program reads it as {}; the archive is inconsistent",
        w.dtype.name(),
        w.sizes,
        crate::fx::value_type(graph, value),
    )))
}

/// A stored tensor as ONNX initializer data (complex tensors as their real view).
fn weight_tensor(w: &crate::pt2::Weight) -> TensorData {
    let mut dims = w.stored_sizes.clone();
    if w.dtype.is_complex() {
        dims.push(2);
    }
    if w.dtype == crate::pt2::ScalarType::Float4E2M1FnX2 {
        // Two 4-bit elements a byte: ONNX's last dim counts them.
        if let Some(last) = dims.last_mut() {
            *last *= 2;
        }
    }
    TensorData { dtype: onnx_dtype(w.dtype), dims, raw: w.raw.clone().into() }
}
