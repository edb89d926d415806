//! The FX program resolved from an archive: the graph with its signature classified (which
//! placeholder is a parameter, a buffer, a user input...), and printing like torch's `print(ep)`.

mod print;
pub mod tree;

use crate::pt2::schema::{self, Argument, InputSpec, OutputSpec, SymIntArgument};
use crate::pt2::Loaded;

pub use print::{format_node, format_program, format_range_constraints, format_signature, value_type, write_node};

/// What a graph placeholder is, from the graph signature.
#[derive(Debug, Clone, PartialEq)]
pub enum InputKind {
    Parameter {
        fqn: String,
    },
    Buffer {
        fqn: String,
        persistent: bool,
    },
    /// A lifted tensor constant.
    Constant {
        fqn: String,
    },
    UserTensor,
    UserSymInt,
    /// A user input specialised to a literal: baked into the graph, not an ONNX input.
    ConstantInput,
    Token,
    CustomObj {
        fqn: String,
        class_fqn: String,
    },
}

#[derive(Debug, Clone)]
pub struct Input {
    /// The FX placeholder name (`p_fc1_weight`, `x`).
    pub name: String,
    pub kind: InputKind,
}

/// What a graph output is, from the graph signature.
#[derive(Debug)]
pub enum OutputKind<'a> {
    User(&'a Argument<'a>),
    BufferMutation { value: String, fqn: String },
    UserInputMutation { value: String, input: String },
    Token,
}

/// A program of an archive, ready to lower.
pub struct Program<'a> {
    loaded: &'a Loaded<'a>,
    inputs: Vec<Input>,
    outputs: Vec<OutputKind<'a>>,
}

/// A signature the reader cannot make sense of.
#[derive(Debug, thiserror::Error)]
#[error("graph signature: {0}")]
pub struct ProgramError(pub String);

impl<'a> Program<'a> {
    /// Classify the placeholders and outputs of `loaded`.
    pub fn new(loaded: &'a Loaded<'a>) -> Result<Program<'a>, ProgramError> {
        let gm = &loaded.program.graph_module;
        let sig = &gm.signature;
        let mut inputs = Vec::with_capacity(sig.input_specs.len());
        for spec in &sig.input_specs {
            let input = match spec {
                InputSpec::Parameter { arg, parameter_name } => {
                    Input { name: arg.name.to_string(), kind: InputKind::Parameter { fqn: parameter_name.to_string() } }
                }
                InputSpec::Buffer { arg, buffer_name, persistent } => Input {
                    name: arg.name.to_string(),
                    kind: InputKind::Buffer { fqn: buffer_name.to_string(), persistent: *persistent },
                },
                InputSpec::TensorConstant { arg, tensor_constant_name } => Input {
                    name: arg.name.to_string(),
                    kind: InputKind::Constant { fqn: tensor_constant_name.to_string() },
                },
                InputSpec::UserInput { arg } => match arg {
                    Argument::Tensor(t) => Input { name: t.name.to_string(), kind: InputKind::UserTensor },
                    Argument::SymInt(SymIntArgument::AsName(n)) => {
                        Input { name: n.to_string(), kind: InputKind::UserSymInt }
                    }
                    other => {
                        return Err(ProgramError(format!(
                            "user input of kind {} is not supported (tensors and SymInts are)",
                            other.kind()
                        )))
                    }
                },
                InputSpec::ConstantInput { name, .. } => {
                    Input { name: name.to_string(), kind: InputKind::ConstantInput }
                }
                InputSpec::Token { arg } => Input { name: arg.name.to_string(), kind: InputKind::Token },
                InputSpec::CustomObj { arg, custom_obj_name } => Input {
                    name: arg.name.to_string(),
                    kind: InputKind::CustomObj {
                        fqn: custom_obj_name.to_string(),
                        class_fqn: arg.class_fqn.to_string(),
                    },
                },
            };
            inputs.push(input);
        }
        let mut outputs = Vec::with_capacity(sig.output_specs.len());
        for spec in &sig.output_specs {
            outputs.push(match spec {
                OutputSpec::UserOutput { arg } => OutputKind::User(arg),
                OutputSpec::BufferMutation { arg, buffer_name } => {
                    OutputKind::BufferMutation { value: arg.name.to_string(), fqn: buffer_name.to_string() }
                }
                OutputSpec::UserInputMutation { arg, user_input_name } => {
                    OutputKind::UserInputMutation { value: arg.name.to_string(), input: user_input_name.to_string() }
                }
                OutputSpec::Token { .. } => OutputKind::Token,
                OutputSpec::LossOutput { .. }
                | OutputSpec::GradientToParameter { .. }
                | OutputSpec::GradientToUserInput { .. }
                | OutputSpec::ParameterMutation { .. } => {
                    return Err(ProgramError(
                        "training outputs (loss, gradients, parameter mutations) are not supported; export an inference program".into(),
                    ))
                }
            });
        }
        check_values(&gm.graph)?;
        Ok(Program { loaded, inputs, outputs })
    }

    pub fn loaded(&self) -> &'a Loaded<'a> {
        self.loaded
    }

    pub fn graph(&self) -> &'a schema::Graph<'a> {
        &self.loaded.program.graph_module.graph
    }

    pub fn inputs(&self) -> &[Input] {
        &self.inputs
    }

    pub fn outputs(&self) -> &[OutputKind<'a>] {
        &self.outputs
    }

    /// Whether the signature lists mutation outputs (functional `ATEN` programs do; the in-place
    /// `TRAINING` dialect leaves them to the converter).
    pub fn has_mutation_specs(&self) -> bool {
        self.outputs
            .iter()
            .any(|o| matches!(o, OutputKind::BufferMutation { .. } | OutputKind::UserInputMutation { .. }))
    }
}

/// The FX value names a node defines, one slot per output position (`None` for outputs that are
/// not values, like `as_none`). `Tensor[]` results (`split`) contribute one slot per element.
pub fn output_slots<'n>(node: &'n schema::Node<'_>) -> Vec<Option<&'n str>> {
    let mut slots = Vec::with_capacity(node.outputs.len());
    for out in &node.outputs {
        match out {
            Argument::Tensor(t) => slots.push(Some(t.name.as_str())),
            Argument::Tensors(ts) => slots.extend(ts.iter().map(|t| Some(t.name.as_str()))),
            Argument::SymInt(SymIntArgument::AsName(n)) => slots.push(Some(n.as_str())),
            Argument::SymFloat(schema::SymFloatArgument::AsName(n)) => slots.push(Some(n.as_str())),
            Argument::SymBool(schema::SymBoolArgument::AsName(n)) => slots.push(Some(n.as_str())),
            Argument::OptionalTensors(ts) => slots.extend(ts.iter().map(|t| match t {
                schema::OptionalTensorArgument::AsTensor(t) => Some(t.name.as_str()),
                schema::OptionalTensorArgument::AsNone(_) => None,
            })),
            _ => slots.push(None),
        }
    }
    slots
}

/// The name of a node's first output (old files have no node names).
pub fn first_output_name<'n>(node: &'n schema::Node<'_>) -> Option<&'n str> {
    output_slots(node).into_iter().flatten().next()
}

/// The node's FX name: its `name`, else (old files) its first output's.
pub fn node_name<'n>(node: &'n schema::Node<'_>) -> &'n str {
    match &node.name {
        Some(n) => n.as_str(),
        None => first_output_name(node).unwrap_or_default(),
    }
}

/// Call `f` with the name of every FX value an argument refers to (tensors and symbolic scalars).
pub fn for_each_value_name<'a>(arg: &'a Argument<'_>, f: &mut dyn FnMut(&'a str)) {
    match arg {
        Argument::Tensor(t) => f(&t.name),
        Argument::Tensors(ts) => ts.iter().for_each(|t| f(&t.name)),
        Argument::OptionalTensors(ts) => ts.iter().for_each(|t| {
            if let schema::OptionalTensorArgument::AsTensor(t) = t {
                f(&t.name)
            }
        }),
        Argument::SymInt(SymIntArgument::AsName(n))
        | Argument::SymFloat(schema::SymFloatArgument::AsName(n))
        | Argument::SymBool(schema::SymBoolArgument::AsName(n)) => f(n),
        Argument::SymInts(v) => v.iter().for_each(|s| {
            if let SymIntArgument::AsName(n) = s {
                f(n)
            }
        }),
        _ => {}
    }
}

/// Every value type the program records, checked before anything reads it: a known dtype, sizes
/// that are not negative, and at most 2^40 elements where they are static. What translations and
/// the model's value_info take from `tensor_values` is then sound; subgraphs included.
fn check_values(graph: &crate::pt2::schema::Graph<'_>) -> Result<(), ProgramError> {
    use crate::pt2::schema::SymInt;
    for (name, meta) in &graph.tensor_values {
        let bad = |reason: String| ProgramError(format!("value `{name}`: {reason}"));
        if crate::pt2::scalar_type(meta.dtype).is_none() {
            return Err(bad(format!(
                "unknown ScalarType id {}; the archive is corrupt or from a newer torch",
                meta.dtype
            )));
        }
        let fixed: Vec<i64> =
            meta.sizes.iter().filter_map(|s| if let SymInt::AsInt(n) = s { Some(*n) } else { None }).collect();
        if fixed.iter().any(|&n| n < 0) {
            return Err(bad(format!("negative size in {fixed:?}")));
        }
        if crate::pt2::element_count(&fixed).is_none() {
            return Err(bad(format!("sizes {fixed:?} hold more than 2^40 elements; no real model computes that")));
        }
    }
    for node in &graph.nodes {
        for input in &node.inputs {
            if let Argument::Graph(g) = &input.arg {
                check_values(&g.graph)?;
            }
        }
    }
    Ok(())
}
