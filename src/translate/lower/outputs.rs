//! The program's outputs bound to ONNX graph outputs: user outputs first (named as the options
//! say), then the buffers and user inputs the program mutated, then with `debug_outputs` every
//! node's value; each produced by a node, under its own name, once.

use super::inputs::BoundInputs;
use super::{metadata, Lowerer, Scope, TranslateError};
use crate::fx::{self, Program};
use crate::hash::FxHashSet;
use crate::onnx::builder::Builder;
use crate::onnx::ir::Value;
use crate::pt2::schema::{Argument, SymBoolArgument, SymFloatArgument, SymIntArgument};

/// The prefix of the graph outputs [`LowerOptions::debug_outputs`] adds: `debug:add_1`.
pub const DEBUG_OUTPUT_PREFIX: &str = "debug:";

/// How extra outputs for mutated state are named: `buffer_mutation_<fqn>` and
/// `user_input_mutation_<input name>`, after torch's output spec kinds.
pub fn mutation_output_name(kind: MutationKind, name: &str) -> String {
    match kind {
        MutationKind::Buffer => format!("buffer_mutation_{name}"),
        MutationKind::UserInput => format!("user_input_mutation_{name}"),
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MutationKind {
    Buffer,
    UserInput,
}

/// An `Identity` of `v` with its type.
fn identity_of(op: &mut Builder, v: Value) -> Value {
    let id = op.Identity(v);
    let info = op.info(v).clone();
    let new = op.info_mut(id);
    (new.dtype, new.shape, new.complex) = (info.dtype, info.shape, info.complex);
    id
}

pub(super) fn lookup(env: &Scope, name: &str) -> Result<Value, TranslateError> {
    env.get(name).copied().ok_or_else(|| TranslateError::program(format!("output `{name}` is not defined by any node")))
}

pub(super) fn arg_name<'g>(arg: &'g Argument<'_>) -> Option<&'g str> {
    match arg {
        Argument::Tensor(t) => Some(&t.name),
        Argument::SymInt(SymIntArgument::AsName(n))
        | Argument::SymFloat(SymFloatArgument::AsName(n))
        | Argument::SymBool(SymBoolArgument::AsName(n)) => Some(n),
        _ => None,
    }
}

/// The graph outputs of `program`: user outputs, then mutated buffers and user inputs, then the
/// debug outputs.
pub(super) fn bind_outputs<'g>(
    program: &'g Program<'_>,
    lw: &Lowerer,
    op: &mut Builder,
    env: &Scope<'g>,
    bound: &BoundInputs,
    debug: Vec<(&str, Value)>,
) -> Result<Vec<Value>, TranslateError> {
    let (opts, BoundInputs { user_inputs, buffers }) = (lw.opts, bound);
    // Outputs: user outputs, then mutated buffers and user inputs (torch.onnx drops those).
    let mut outputs: Vec<(Value, String)> = Vec::new();
    let mut kinds: Vec<&str> = Vec::new();
    // A `None` output has no ONNX value: dropped, as torch.onnx drops it.
    for out in program.outputs() {
        if let fx::OutputKind::User(arg) = out {
            if matches!(arg, Argument::None) {
                continue;
            }
            let v = lw.value_of(op, arg, env)?;
            outputs.push((v, arg_name(arg).unwrap_or_default().to_string()));
            kinds.push("USER_OUTPUT");
        }
    }
    let n_user_outputs = outputs.len();
    let mut mutations: Vec<(Value, String, &str)> = Vec::new();
    // Functional programs list mutations before user outputs; ONNX users expect theirs first.
    for out in program.outputs() {
        match out {
            fx::OutputKind::User(_) => {}
            fx::OutputKind::BufferMutation { value, fqn } => {
                let v = lookup(env, value)?;
                mutations.push((v, mutation_output_name(MutationKind::Buffer, fqn), "BUFFER_MUTATION"));
            }
            fx::OutputKind::UserInputMutation { value, input } => {
                let v = lookup(env, value)?;
                mutations.push((v, mutation_output_name(MutationKind::UserInput, input), "USER_INPUT_MUTATION"));
            }
            fx::OutputKind::Token => {}
        }
    }
    if !program.has_mutation_specs() {
        // Training-dialect programs mutate in place and list no mutation outputs: recover them.
        for (placeholder, fqn, original) in buffers {
            if let Some(&v) = env.get(placeholder) {
                if v != *original {
                    mutations.push((v, mutation_output_name(MutationKind::Buffer, fqn), "BUFFER_MUTATION"));
                }
            }
        }
        for (name, original) in user_inputs {
            if let Some(&v) = env.get(name) {
                if v != *original {
                    mutations.push((v, mutation_output_name(MutationKind::UserInput, name), "USER_INPUT_MUTATION"));
                }
            }
        }
    }
    for (v, name, kind) in mutations {
        if opts.mutations_as_outputs {
            outputs.push((v, name));
            kinds.push(kind);
        } else {
            let what = match name.strip_prefix("buffer_mutation_") {
                Some(fqn) => format!("buffer `{fqn}`"),
                None => format!("user input `{}`", name.trim_start_matches("user_input_mutation_")),
            };
            op.warn(format!(
                "the program mutates {what}; its new value is not a graph output (torch.onnx drops it too); \
                 hint: export with mutations_as_outputs=True to keep it as output `{name}` (needed for static caches)"
            ));
        }
    }
    let mut final_outputs = Vec::with_capacity(outputs.len());
    let mut seen: FxHashSet<Value> = FxHashSet::default();
    // A set, not a scan of the input list per output: a program with many inputs and outputs
    // stays linear.
    let graph_inputs: FxHashSet<Value> = op.graph_mut().inputs.iter().copied().collect();
    for (i, (v, fx_name)) in outputs.into_iter().enumerate() {
        let given = if i < n_user_outputs { opts.output_names.get(i).filter(|n| !n.is_empty()).cloned() } else { None };
        let is_given = given.is_some();
        let wanted = given.unwrap_or_else(|| fx_name.clone());
        // A graph output must be produced by a node, under its own name, once. A float4 constant
        // is output as the initializer itself: below opset 23 no operator (Identity included)
        // takes float4, and ONNX allows an initializer as a graph output.
        let float4_constant = op.info(v).constant.is_some() && op.dtype(v) == Some(crate::onnx::ir::DType::Float4E2M1);
        let is_io = !float4_constant && (graph_inputs.contains(&v) || op.info(v).constant.is_some());
        if is_given && !is_io && !seen.contains(&v) && fx_name == wanted && op.info(v).name != wanted {
            // The user named the output what the program calls it: the name was kept from the
            // value while the graph was lowered (it was reserved), and is its own.
            lw.unname(op, v);
        }
        let v = if is_io || seen.contains(&v) || (op.info(v).name != wanted && !op.info(v).name.is_empty()) {
            identity_of(op, v)
        } else {
            v
        };
        if op.info(v).name.is_empty() {
            if is_given {
                lw.name_as_given(op, v, &wanted);
            } else {
                lw.name(op, v, &wanted);
            }
        }
        let info = op.info_mut(v);
        info.metadata.retain(|(k, _)| *k != metadata::OUTPUT_KIND && *k != metadata::ORIGINAL_NODE_NAME);
        info.metadata.push((metadata::OUTPUT_KIND, kinds[i].into()));
        if wanted != fx_name && !fx_name.is_empty() {
            info.metadata.push((metadata::ORIGINAL_NODE_NAME, fx_name));
        }
        seen.insert(v);
        final_outputs.push(v);
    }
    for (fx_name, v) in debug {
        // Always through an Identity: the value keeps its FX name, the output is named apart.
        let id = identity_of(op, v);
        lw.name(op, id, &format!("{DEBUG_OUTPUT_PREFIX}{fx_name}"));
        final_outputs.push(id);
    }
    if final_outputs.is_empty() {
        // ONNX Runtime refuses a model without outputs, and it would compute nothing.
        return Err(TranslateError::Program {
            message: "the program returns nothing: an ONNX model needs at least one output".into(),
            hint: Some("return a tensor from forward".into()),
        });
    }
    Ok(final_outputs)
}
