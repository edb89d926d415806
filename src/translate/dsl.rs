//! The translation DSL: typed argument extraction, the translation table, and the `translations!`
//! macro that turns onnxscript-like functions into table entries.
//!
//! A translation reads like the ONNX it emits:
//!
//! ```
//! use fxonnx::translate::prelude::*;
//!
//! fxonnx::translations! {
//!     /// relu(Tensor self) -> Tensor
//!     #[target("aten::relu", "aten::relu_")]
//!     fn relu(op, self_: Tensor) -> Value {
//!         op.Relu(self_)
//!     }
//!
//!     /// leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor
//!     #[target("aten::leaky_relu")]
//!     fn leaky_relu(op, self_: Tensor, negative_slope: f64 = 0.01) -> Value {
//!         op.LeakyRelu(self_).alpha(negative_slope as f32).out()
//!     }
//! }
//!
//! let table = table();
//! assert!(table.get("aten::relu.default").is_some());
//! ```
//!
//! Parameters are looked up by their ATen schema name (`self_` and `r#from` name `self` and `from`;
//! `_layout: Ignored` names `layout`), or by position for higher-order ops whose arguments are
//! unnamed. A parameter the body does not read is a compile warning: declare it `Ignored`, or read
//! and check it. Arguments the archive omits take
//! the default written after `=`; a parameter without a default is required.

use crate::onnx::builder::Builder;
use crate::onnx::ir::{DType, Value};
use crate::pt2::schema::{self, Argument, OptionalTensorArgument, SymBoolArgument, SymFloatArgument, SymIntArgument};
use crate::pt2::ScalarType;

/// A tensor argument: a value of the ONNX graph.
pub type Tensor = Value;

/// Why a translation could not translate a node. The lowering adds the node's name and target.
#[derive(Debug, Clone, PartialEq)]
pub struct OpError {
    pub message: String,
    /// What the user can do about it (the message says what went wrong).
    pub hint: Option<String>,
}

impl OpError {
    pub fn new(message: impl Into<String>) -> Self {
        OpError { message: message.into(), hint: None }
    }

    /// The same error, with what the user can do about it.
    pub fn with_hint(self, hint: impl Into<String>) -> Self {
        OpError { hint: Some(hint.into()), ..self }
    }
}

/// The message, then `; hint: ` and the hint.
impl std::fmt::Display for OpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        match &self.hint {
            Some(h) => write!(f, "; hint: {h}"),
            None => Ok(()),
        }
    }
}

/// A message that ends in `; hint: ...` keeps its hint apart.
impl From<String> for OpError {
    fn from(message: String) -> Self {
        match message.split_once("; hint: ") {
            Some((message, hint)) => OpError::new(message).with_hint(hint),
            None => OpError::new(message),
        }
    }
}

impl From<&str> for OpError {
    fn from(message: &str) -> Self {
        OpError::new(message)
    }
}

/// `Result` of translation bodies.
pub type OpResult<T> = Result<T, OpError>;

/// Return early from a translation with a formatted message.
#[macro_export]
macro_rules! bail {
    ($($fmt:tt)*) => { return Err($crate::translate::dsl::OpError::new(format!($($fmt)*))) };
}

/// A SymInt argument: a literal, or a 0-d int64 value computed in the graph.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum SymInt {
    Const(i64),
    Dyn(Value),
}

/// A Scalar argument (`Scalar other`): a literal, or a 0-d value (SymInt / SymFloat / SymBool)
/// computed in the graph. A tensor is not a Scalar; see [`Operand`].
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Scalar {
    Int(i64),
    Float(f64),
    Bool(bool),
    Complex(f64, f64),
    Dyn(Value),
}

/// A tensor or a Scalar: the operand of a translation that serves both forms of an op
/// (`add.Tensor` and `add.Scalar`, `clamp` with tensor or number bounds).
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Operand {
    Tensor(Value),
    Scalar(Scalar),
}

impl From<Scalar> for Operand {
    fn from(s: Scalar) -> Self {
        Operand::Scalar(s)
    }
}

impl Operand {
    /// The graph value: the tensor, or a Scalar computed in the graph; `None` for a literal.
    pub fn value(self) -> Option<Value> {
        match self {
            Operand::Tensor(v) | Operand::Scalar(Scalar::Dyn(v)) => Some(v),
            Operand::Scalar(_) => None,
        }
    }
}

/// A higher-order op's subgraph argument.
pub struct SubGraph<'a> {
    pub name: &'a str,
    pub graph: &'a schema::Graph<'a>,
}

/// An argument that is accepted and not used (device, layout, pin_memory, memory_format...). Its
/// parameter is named with a leading underscore (`_layout: Ignored`), so that the compiler, which
/// warns about every other unread parameter, knows it is unread on purpose.
pub struct Ignored;

/// A higher-order op's operator argument (`with_effects`): `torch.ops.aten._print.default`.
pub struct OperatorName<'a>(pub &'a str);

/// What a translation sees of the node being translated, besides its arguments.
pub struct NodeCtx<'a> {
    pub node: &'a schema::Node<'a>,
    pub graph: &'a schema::Graph<'a>,
    pub(crate) env: &'a crate::hash::FxHashMap<&'a str, Value>,
    pub(crate) lowerer: &'a dyn SubgraphLowerer,
    /// Functional → in-place argument names, when an in-place op runs its functional translation.
    pub(crate) renames: &'a [(String, String)],
}

/// Lowers FX subgraphs; implemented by the lowering driver. Higher-order ops build ONNX subgraphs
/// with [`Builder::begin_subgraph`] and inline FX subgraphs into them.
pub trait SubgraphLowerer {
    /// Inline `graph` into the current graph with its inputs bound to `inputs`; returns its outputs.
    fn inline_subgraph(&self, op: &mut Builder, graph: &schema::Graph, inputs: &[Value])
        -> Result<Vec<Value>, OpError>;
}

impl<'a> NodeCtx<'a> {
    /// The argument named `name`, else (for ops whose arguments are unnamed) the one at `pos`.
    pub fn arg(&self, name: &str, pos: usize) -> Option<&'a Argument<'a>> {
        let inputs = &self.node.inputs;
        let name = self.renames.iter().find(|(f, _)| f == name).map(|(_, i)| i.as_str()).unwrap_or(name);
        if let Some(a) = inputs.iter().find(|a| a.name == name) {
            return Some(&a.arg);
        }
        // Positional arguments come first and may be unnamed (higher-order ops such as
        // `with_effects(token, op, *args, **kwargs)` name only their keyword arguments).
        inputs.get(pos).filter(|a| a.name.is_empty()).map(|a| &a.arg)
    }

    /// The node's FX name.
    pub fn name(&self) -> &'a str {
        self.node.name.as_deref().unwrap_or("")
    }

    /// The ONNX value bound to the FX value `name`.
    pub fn value(&self, name: &str) -> Result<Value, OpError> {
        self.lookup(name)
    }

    fn lookup(&self, name: &str) -> Result<Value, OpError> {
        self.env
            .get(name)
            .copied()
            .ok_or_else(|| OpError::new(format!("uses `{name}`, which no earlier node or input defines")))
    }

    /// Translate the FX subgraph `graph` into the graph being built, its inputs bound to `inputs`;
    /// returns the values of its outputs.
    pub fn inline(&self, op: &mut Builder, graph: &schema::Graph, inputs: &[Value]) -> Result<Vec<Value>, OpError> {
        self.lowerer.inline_subgraph(op, graph, inputs)
    }

    /// The storage offset torch recorded for the FX tensor `name`, when it is a constant.
    pub fn fx_storage_offset(&self, name: &str) -> Option<i64> {
        match self.graph.tensor_values.get(name)?.storage_offset.as_ref()? {
            schema::SymInt::AsInt(v) => Some(*v),
            schema::SymInt::AsExpr(e) => e.expr_str.parse().ok(),
        }
    }

    /// The ScalarType of the FX value named `name`, from the graph's value tables.
    pub fn fx_dtype(&self, name: &str) -> Option<ScalarType> {
        self.graph.tensor_values.get(name).and_then(|m| crate::pt2::scalar_type(m.dtype))
    }
}

/// Conversion of one FX argument into a translation parameter.
pub trait FromArg<'a>: Sized {
    /// What the parameter expects, for messages (`Tensor`, `int[]`...).
    const EXPECTS: &'static str;
    fn from_arg(arg: &'a Argument<'a>, ctx: &NodeCtx<'a>) -> Result<Self, OpError>;
    /// The value when the argument is absent and has no default; `None` makes it required.
    fn absent() -> Option<Self> {
        None
    }
}

fn mismatch<T>(expects: &str, arg: &Argument) -> Result<T, OpError> {
    Err(OpError::new(format!("expected {expects}, got argument kind {}", arg.kind())))
}

impl<'a> FromArg<'a> for Value {
    const EXPECTS: &'static str = "Tensor";
    fn from_arg(arg: &'a Argument<'a>, ctx: &NodeCtx<'a>) -> Result<Self, OpError> {
        match arg {
            Argument::Tensor(t) => ctx.lookup(&t.name),
            Argument::OptionalTensor(OptionalTensorArgument::AsTensor(t)) => ctx.lookup(&t.name),
            Argument::SymInt(SymIntArgument::AsName(n))
            | Argument::SymFloat(SymFloatArgument::AsName(n))
            | Argument::SymBool(SymBoolArgument::AsName(n)) => ctx.lookup(n),
            _ => mismatch(Self::EXPECTS, arg),
        }
    }
}

impl<'a, T: FromArg<'a>> FromArg<'a> for Option<T> {
    const EXPECTS: &'static str = T::EXPECTS;
    fn from_arg(arg: &'a Argument<'a>, ctx: &NodeCtx<'a>) -> Result<Self, OpError> {
        match arg {
            Argument::None | Argument::OptionalTensor(OptionalTensorArgument::AsNone(_)) => Ok(None),
            _ => T::from_arg(arg, ctx).map(Some),
        }
    }
    fn absent() -> Option<Self> {
        Some(None)
    }
}

impl<'a> FromArg<'a> for Vec<Value> {
    const EXPECTS: &'static str = "Tensor[]";
    fn from_arg(arg: &'a Argument<'a>, ctx: &NodeCtx<'a>) -> Result<Self, OpError> {
        match arg {
            Argument::Tensors(ts) => ts.iter().map(|t| ctx.lookup(&t.name)).collect(),
            _ => mismatch(Self::EXPECTS, arg),
        }
    }
}

impl<'a> FromArg<'a> for Vec<Option<Value>> {
    const EXPECTS: &'static str = "Tensor?[]";
    fn from_arg(arg: &'a Argument<'a>, ctx: &NodeCtx<'a>) -> Result<Self, OpError> {
        match arg {
            Argument::OptionalTensors(ts) => ts
                .iter()
                .map(|t| match t {
                    OptionalTensorArgument::AsTensor(t) => ctx.lookup(&t.name).map(Some),
                    OptionalTensorArgument::AsNone(_) => Ok(None),
                })
                .collect(),
            Argument::Tensors(ts) => ts.iter().map(|t| ctx.lookup(&t.name).map(Some)).collect(),
            _ => mismatch(Self::EXPECTS, arg),
        }
    }
}

impl<'a> FromArg<'a> for i64 {
    const EXPECTS: &'static str = "int";
    fn from_arg(arg: &'a Argument<'a>, _: &NodeCtx<'a>) -> Result<Self, OpError> {
        match arg {
            Argument::Int(v) => Ok(*v),
            Argument::SymInt(SymIntArgument::AsInt(v)) => Ok(*v),
            Argument::Bool(b) => Ok(*b as i64),
            Argument::SymInt(SymIntArgument::AsName(n)) => Err(OpError::new(format!(
                "needs a constant int but got the symbolic value `{n}` (dynamic size in a position fxonnx cannot express)"
            ))),
            _ => mismatch(Self::EXPECTS, arg),
        }
    }
}

impl<'a> FromArg<'a> for Vec<i64> {
    const EXPECTS: &'static str = "int[]";
    fn from_arg(arg: &'a Argument<'a>, ctx: &NodeCtx<'a>) -> Result<Self, OpError> {
        match arg {
            Argument::Ints(v) => Ok(v.clone()),
            Argument::Int(v) => Ok(vec![*v]),
            Argument::SymInts(v) => v
                .iter()
                .map(|s| match s {
                    SymIntArgument::AsInt(i) => Ok(*i),
                    SymIntArgument::AsName(n) => {
                        Err(OpError::new(format!("needs constant ints but got the symbolic value `{n}`")))
                    }
                })
                .collect(),
            // Higher-order ops write empty lists as `as_tensors`.
            Argument::Tensors(v) if v.is_empty() => Ok(vec![]),
            _ => {
                let _ = ctx;
                mismatch(Self::EXPECTS, arg)
            }
        }
    }
}

impl<'a> FromArg<'a> for Vec<Vec<i64>> {
    const EXPECTS: &'static str = "int[][]";
    fn from_arg(arg: &'a Argument<'a>, ctx: &NodeCtx<'a>) -> Result<Self, OpError> {
        match arg {
            Argument::IntLists(v) => Ok(v.clone()),
            // An empty list is written as whatever list the serializer chose.
            Argument::Ints(v) if v.is_empty() => Ok(vec![]),
            Argument::Tensors(v) if v.is_empty() => Ok(vec![]),
            _ => {
                let _ = ctx;
                mismatch(Self::EXPECTS, arg)
            }
        }
    }
}

impl<'a> FromArg<'a> for f64 {
    const EXPECTS: &'static str = "float";
    fn from_arg(arg: &'a Argument<'a>, _: &NodeCtx<'a>) -> Result<Self, OpError> {
        match arg {
            Argument::Float(v) => Ok(*v),
            Argument::Int(v) => Ok(*v as f64),
            Argument::SymFloat(SymFloatArgument::AsFloat(v)) => Ok(*v),
            Argument::SymInt(SymIntArgument::AsInt(v)) => Ok(*v as f64),
            Argument::Bool(b) => Ok(*b as i64 as f64),
            _ => mismatch(Self::EXPECTS, arg),
        }
    }
}

impl<'a> FromArg<'a> for Vec<f64> {
    const EXPECTS: &'static str = "float[]";
    fn from_arg(arg: &'a Argument<'a>, _: &NodeCtx<'a>) -> Result<Self, OpError> {
        match arg {
            Argument::Floats(v) => Ok(v.clone()),
            Argument::Ints(v) => Ok(v.iter().map(|&x| x as f64).collect()),
            _ => mismatch(Self::EXPECTS, arg),
        }
    }
}

impl<'a> FromArg<'a> for bool {
    const EXPECTS: &'static str = "bool";
    fn from_arg(arg: &'a Argument<'a>, _: &NodeCtx<'a>) -> Result<Self, OpError> {
        match arg {
            Argument::Bool(b) => Ok(*b),
            Argument::SymBool(SymBoolArgument::AsBool(b)) => Ok(*b),
            Argument::Int(v) => Ok(*v != 0),
            _ => mismatch(Self::EXPECTS, arg),
        }
    }
}

impl<'a> FromArg<'a> for Vec<bool> {
    const EXPECTS: &'static str = "bool[]";
    fn from_arg(arg: &'a Argument<'a>, _: &NodeCtx<'a>) -> Result<Self, OpError> {
        match arg {
            Argument::Bools(b) => Ok(b.clone()),
            _ => mismatch(Self::EXPECTS, arg),
        }
    }
}

impl<'a> FromArg<'a> for &'a str {
    const EXPECTS: &'static str = "str";
    fn from_arg(arg: &'a Argument<'a>, _: &NodeCtx<'a>) -> Result<Self, OpError> {
        match arg {
            Argument::String(s) => Ok(s),
            _ => mismatch(Self::EXPECTS, arg),
        }
    }
}

impl<'a> FromArg<'a> for Vec<&'a str> {
    const EXPECTS: &'static str = "str[]";
    fn from_arg(arg: &'a Argument<'a>, _: &NodeCtx<'a>) -> Result<Self, OpError> {
        match arg {
            Argument::Strings(s) => Ok(s.iter().map(|s| s.as_str()).collect()),
            _ => mismatch(Self::EXPECTS, arg),
        }
    }
}

impl<'a> FromArg<'a> for SymInt {
    const EXPECTS: &'static str = "SymInt";
    fn from_arg(arg: &'a Argument<'a>, ctx: &NodeCtx<'a>) -> Result<Self, OpError> {
        match arg {
            Argument::Int(v) | Argument::SymInt(SymIntArgument::AsInt(v)) => Ok(SymInt::Const(*v)),
            Argument::SymInt(SymIntArgument::AsName(n)) => ctx.lookup(n).map(SymInt::Dyn),
            _ => mismatch(Self::EXPECTS, arg),
        }
    }
}

impl<'a> FromArg<'a> for Vec<SymInt> {
    const EXPECTS: &'static str = "SymInt[]";
    fn from_arg(arg: &'a Argument<'a>, ctx: &NodeCtx<'a>) -> Result<Self, OpError> {
        match arg {
            Argument::Ints(v) => Ok(v.iter().map(|&i| SymInt::Const(i)).collect()),
            Argument::Int(v) => Ok(vec![SymInt::Const(*v)]),
            Argument::SymInts(v) => v
                .iter()
                .map(|s| match s {
                    SymIntArgument::AsInt(i) => Ok(SymInt::Const(*i)),
                    SymIntArgument::AsName(n) => ctx.lookup(n).map(SymInt::Dyn),
                })
                .collect(),
            Argument::SymInt(s) => Ok(vec![SymInt::from_arg(&Argument::SymInt(s.clone()), ctx)?]),
            Argument::Tensors(v) if v.is_empty() => Ok(vec![]),
            _ => mismatch(Self::EXPECTS, arg),
        }
    }
}

impl<'a> FromArg<'a> for Scalar {
    const EXPECTS: &'static str = "Scalar";
    fn from_arg(arg: &'a Argument<'a>, ctx: &NodeCtx<'a>) -> Result<Self, OpError> {
        match arg {
            Argument::Int(v) | Argument::SymInt(SymIntArgument::AsInt(v)) => Ok(Scalar::Int(*v)),
            Argument::Float(v) | Argument::SymFloat(SymFloatArgument::AsFloat(v)) => Ok(Scalar::Float(*v)),
            Argument::Bool(v) | Argument::SymBool(SymBoolArgument::AsBool(v)) => Ok(Scalar::Bool(*v)),
            Argument::Complex(c) => Ok(Scalar::Complex(c.real, c.imag)),
            Argument::SymInt(SymIntArgument::AsName(n))
            | Argument::SymFloat(SymFloatArgument::AsName(n))
            | Argument::SymBool(SymBoolArgument::AsName(n)) => ctx.lookup(n).map(Scalar::Dyn),
            _ => mismatch(Self::EXPECTS, arg),
        }
    }
}

impl<'a> FromArg<'a> for Operand {
    const EXPECTS: &'static str = "Tensor or Scalar";
    fn from_arg(arg: &'a Argument<'a>, ctx: &NodeCtx<'a>) -> Result<Self, OpError> {
        match arg {
            Argument::Tensor(t) => ctx.lookup(&t.name).map(Operand::Tensor),
            _ => Scalar::from_arg(arg, ctx).map(Operand::Scalar),
        }
    }
}

impl<'a> FromArg<'a> for ScalarType {
    const EXPECTS: &'static str = "ScalarType";
    fn from_arg(arg: &'a Argument<'a>, _: &NodeCtx<'a>) -> Result<Self, OpError> {
        match arg {
            Argument::ScalarType(id) => {
                crate::pt2::scalar_type(*id).ok_or_else(|| OpError::new(format!("unknown ScalarType id {id}")))
            }
            _ => mismatch(Self::EXPECTS, arg),
        }
    }
}

impl<'a> FromArg<'a> for Ignored {
    const EXPECTS: &'static str = "any";
    fn from_arg(_: &'a Argument<'a>, _: &NodeCtx<'a>) -> Result<Self, OpError> {
        Ok(Ignored)
    }
    fn absent() -> Option<Self> {
        Some(Ignored)
    }
}

impl<'a> FromArg<'a> for SubGraph<'a> {
    const EXPECTS: &'static str = "subgraph";
    fn from_arg(arg: &'a Argument<'a>, _: &NodeCtx<'a>) -> Result<Self, OpError> {
        match arg {
            Argument::Graph(g) => Ok(SubGraph { name: &g.name, graph: &g.graph }),
            _ => mismatch(Self::EXPECTS, arg),
        }
    }
}

impl<'a> FromArg<'a> for OperatorName<'a> {
    const EXPECTS: &'static str = "operator";
    fn from_arg(arg: &'a Argument<'a>, _: &NodeCtx<'a>) -> Result<Self, OpError> {
        match arg {
            Argument::Operator(s) => Ok(OperatorName(s)),
            _ => mismatch(Self::EXPECTS, arg),
        }
    }
}

/// Extract parameter `name` (position `pos`) of the node, with `default` when it is absent.
pub fn param<'a, T: FromArg<'a>>(ctx: &NodeCtx<'a>, name: &str, pos: usize, default: Option<T>) -> Result<T, OpError> {
    match ctx.arg(name, pos) {
        Some(arg) => T::from_arg(arg, ctx).map_err(|e| OpError::new(format!("argument `{name}`: {}", e.message))),
        None => match default {
            Some(d) => Ok(d),
            None => T::absent()
                .ok_or_else(|| OpError::new(format!("required argument `{name}` ({}) is missing", T::EXPECTS))),
        },
    }
}

/// The schema name of a DSL parameter: `self_` is `self`, `r#from` is `from`, and `_layout` (a
/// parameter the translation does not read) is `layout`.
pub fn schema_name(ident: &'static str) -> &'static str {
    let ident = ident.strip_prefix("r#").unwrap_or(ident);
    let ident = ident.strip_prefix('_').unwrap_or(ident);
    if ident == "self_" {
        "self"
    } else {
        ident
    }
}

/// The values a translation returns, one per FX output (`None` for outputs it does not compute).
pub struct Outputs(pub Vec<Option<Value>>);

/// Conversion of a translation's return value into [`Outputs`].
pub trait IntoOutputs {
    fn into_outputs(self) -> OpResult<Outputs>;
}

impl IntoOutputs for Value {
    fn into_outputs(self) -> OpResult<Outputs> {
        Ok(Outputs(vec![Some(self)]))
    }
}
impl IntoOutputs for Vec<Value> {
    fn into_outputs(self) -> OpResult<Outputs> {
        Ok(Outputs(self.into_iter().map(Some).collect()))
    }
}
impl IntoOutputs for Vec<Option<Value>> {
    fn into_outputs(self) -> OpResult<Outputs> {
        Ok(Outputs(self))
    }
}
impl IntoOutputs for () {
    fn into_outputs(self) -> OpResult<Outputs> {
        Ok(Outputs(vec![]))
    }
}
impl<const N: usize> IntoOutputs for [Value; N] {
    fn into_outputs(self) -> OpResult<Outputs> {
        Ok(Outputs(self.into_iter().map(Some).collect()))
    }
}
impl IntoOutputs for (Value, Value) {
    fn into_outputs(self) -> OpResult<Outputs> {
        Ok(Outputs(vec![Some(self.0), Some(self.1)]))
    }
}
impl IntoOutputs for (Value, Value, Value) {
    fn into_outputs(self) -> OpResult<Outputs> {
        Ok(Outputs(vec![Some(self.0), Some(self.1), Some(self.2)]))
    }
}
impl<T: IntoOutputs> IntoOutputs for OpResult<T> {
    fn into_outputs(self) -> OpResult<Outputs> {
        self?.into_outputs()
    }
}

/// A translation: reads its node's arguments and appends ONNX nodes.
pub type TranslateFn = fn(&mut Builder, &NodeCtx<'_>) -> OpResult<Outputs>;

/// One registered translation.
#[derive(Clone)]
pub struct Entry {
    /// The function's name in its source (`linear`).
    pub name: &'static str,
    /// The ATen schema line (its doc comment).
    pub doc: &'static str,
    pub func: TranslateFn,
    /// The schema names of the parameters, each with whether it may be absent.
    pub params: fn() -> Vec<(&'static str, bool)>,
    /// When set, the entry serves only nodes it accepts (chosen by input dtype or rank); the
    /// next candidate of the same target is tried otherwise.
    pub when: Option<fn(&NodeView<'_>) -> bool>,
}

impl Entry {
    /// The ATen schema line of the doc comment, its wrapped continuation lines (indented by four
    /// spaces) joined back: `conv2d(Tensor input, ...) -> Tensor`.
    pub fn schema(&self) -> String {
        let mut lines = self.doc.lines();
        let mut schema = lines.next().unwrap_or("").trim().to_string();
        for more in lines.take_while(|l| l.starts_with("     ")) {
            schema.push(' ');
            schema.push_str(more.trim());
        }
        schema
    }
}

/// What a dispatch condition sees of a node: its arguments' FX types, before anything is built.
pub struct NodeView<'a> {
    pub node: &'a schema::Node<'a>,
    pub graph: &'a schema::Graph<'a>,
}

impl NodeView<'_> {
    fn tensor_meta(&self, arg: &str) -> Option<&schema::ValueMeta<'_>> {
        let a = self.node.inputs.iter().find(|a| a.name == arg)?;
        match &a.arg {
            Argument::Tensor(t) => self.graph.tensor_values.get(t.name.as_str()),
            _ => None,
        }
    }

    /// The element type of tensor argument `arg` (`None` when it is absent or not a tensor).
    pub fn dtype(&self, arg: &str) -> Option<ScalarType> {
        self.tensor_meta(arg).and_then(|m| crate::pt2::scalar_type(m.dtype))
    }

    /// The rank of tensor argument `arg`.
    pub fn rank(&self, arg: &str) -> Option<usize> {
        self.tensor_meta(arg).map(|m| m.sizes.len())
    }

    /// Whether tensor argument `arg` is a floating-point (or complex) tensor.
    pub fn is_float(&self, arg: &str) -> bool {
        self.dtype(arg).is_some_and(|t| onnx_dtype(t).is_float() || t.is_complex())
    }
}

/// Translations by qualified target name (`aten::add.Tensor`, `_operator.mul`).
///
/// A bare name (`aten::relu`) registers the default overload. A target may have several
/// translations, tried in order; one with a `when` condition serves only the nodes it accepts (by
/// input dtype or rank), one without serves all. A custom table merged over the built-in one goes
/// first, so its entries win.
#[derive(Clone, Default)]
pub struct TranslationTable {
    /// Looked up once or twice per FX node: the Fx hasher, not SipHash.
    entries: crate::hash::FxHashMap<String, Vec<Entry>>,
}

impl TranslationTable {
    pub fn new() -> Self {
        Self::default()
    }

    /// Register `entry` under `target` (bare op names mean the `.default` overload), after the
    /// entries already there.
    pub fn register(&mut self, target: &str, entry: Entry) {
        self.entries.entry(normalize_key(target)).or_default().push(entry);
    }

    /// Put every entry of `other` in front of this table's entries for the same target.
    pub fn merge(&mut self, other: &TranslationTable) {
        for (k, v) in &other.entries {
            let mine = self.entries.entry(k.clone()).or_default();
            mine.splice(0..0, v.iter().cloned());
        }
    }

    /// The first translation registered for exactly `key` (`aten::add.Tensor`).
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.get(key).and_then(|v| v.first())
    }

    /// Every translation registered for `key`, in the order they are tried.
    pub fn candidates(&self, key: &str) -> &[Entry] {
        self.entries.get(key).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The translation that serves `node` among those registered for `key`.
    pub fn select(&self, key: &str, node: &NodeView<'_>) -> Option<&Entry> {
        self.candidates(key).iter().find(|e| e.when.is_none_or(|accepts| accepts(node)))
    }

    /// Registered keys, sorted.
    pub fn keys(&self) -> Vec<&str> {
        let mut k: Vec<&str> = self.entries.keys().map(String::as_str).collect();
        k.sort_unstable();
        k
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// `aten::relu` → `aten::relu.default`; other forms (and higher-order ops, which have no
/// overloads) unchanged.
fn normalize_key(target: &str) -> String {
    match target.split_once("::") {
        Some((ns, op)) if ns != "higher_order" && !op.contains('.') => format!("{target}.default"),
        _ => target.to_string(),
    }
}

/// The table key of an FX target: `torch.ops.aten.add.Tensor` → `aten::add.Tensor`,
/// `torch.ops.higher_order.cond` → `higher_order::cond`; Python callables stay as they are.
pub fn target_key(target: &str) -> String {
    if let Some(rest) = target.strip_prefix("torch.ops.") {
        if let Some(hop) = rest.strip_prefix("higher_order.") {
            return format!("higher_order::{hop}");
        }
        if let Some((ns, op)) = rest.split_once('.') {
            return format!("{ns}::{op}");
        }
    }
    target.to_string()
}

/// ONNX element type of a torch ScalarType. Complex tensors travel as their real view
/// (a trailing dimension of 2), so they map to the real component type.
pub fn onnx_dtype(t: ScalarType) -> DType {
    use ScalarType as S;
    match t {
        S::Uint8 => DType::Uint8,
        S::Int8 => DType::Int8,
        S::Int16 => DType::Int16,
        S::Int32 => DType::Int32,
        S::Int64 => DType::Int64,
        S::Float16 | S::Complex32 => DType::Float16,
        S::Float32 | S::Complex64 => DType::Float,
        S::Float64 | S::Complex128 => DType::Double,
        S::Bool => DType::Bool,
        S::BFloat16 => DType::BFloat16,
        S::Uint16 => DType::Uint16,
        S::Float8E4M3FN => DType::Float8E4M3FN,
        S::Float8E5M2 => DType::Float8E5M2,
        S::Float8E4M3FNUZ => DType::Float8E4M3FNUZ,
        S::Float8E5M2FNUZ => DType::Float8E5M2FNUZ,
        S::Float8E8M0FNU => DType::Float8E8M0,
        S::Uint32 => DType::Uint32,
        S::Uint64 => DType::Uint64,
        S::Float4E2M1FnX2 => DType::Float4E2M1,
    }
}

/// Write translations as functions; see the module documentation.
///
/// Each `fn` becomes a public function `fn(&mut Builder, &NodeCtx) -> OpResult<Outputs>`, and the
/// block gets `pub fn register(&mut TranslationTable)` and `pub fn table() -> TranslationTable`.
/// A translation that needs the node itself (higher-order ops) names a context after `op`:
/// `fn cond[ctx](op, pred: Scalar, ...)`.
#[macro_export]
macro_rules! translations {
    ($(
        $(#[doc = $doc:literal])*
        #[target($($target:literal),+ $(,)?)]
        $(#[when($when:expr)])?
        fn $name:ident $([$ctx:ident])? ($op:ident $(, $p:ident : $t:ty $(= $default:expr)?)* $(,)?) -> $ret:ty $body:block
    )*) => {
        $(
            $(#[doc = $doc])*
            #[allow(non_snake_case, unused_mut, clippy::too_many_arguments)]
            pub fn $name(
                op: &mut $crate::translate::prelude::Builder,
                // Unused by a translation without parameters.
                #[allow(unused_variables)] ctx: &$crate::translate::dsl::NodeCtx<'_>,
            ) -> $crate::translate::dsl::OpResult<$crate::translate::dsl::Outputs> {
                #[allow(non_snake_case, unused_mut, clippy::too_many_arguments)]
                // An unread parameter is a warning: write it `Ignored`, or check it.
                fn body(
                    #[allow(unused_variables)] $op: &mut $crate::translate::prelude::Builder,
                    $(#[allow(unused_variables)] $ctx: &$crate::translate::dsl::NodeCtx<'_>,)?
                    $($p: $t),*
                ) -> $ret $body
                let mut _pos = 0usize;
                $(
                    let $p: $t = $crate::translate::dsl::param(
                        ctx,
                        $crate::translate::dsl::schema_name(stringify!($p)),
                        { let p = _pos; _pos += 1; p },
                        $crate::translations!(@default $t $(, $default)?),
                    )?;
                )*
                $crate::translate::dsl::IntoOutputs::into_outputs(
                    body(op, $($crate::translations!(@ctx ctx $ctx),)? $($p),*)
                )
            }
        )*

        /// Register every translation of this block into `table`.
        pub fn register(table: &mut $crate::translate::dsl::TranslationTable) {
            $({
                let doc: &'static str = concat!($($doc, "\n"),*);
                let when = $crate::translations!(@when $($when)?);
                fn params() -> Vec<(&'static str, bool)> {
                    vec![$((
                        $crate::translate::dsl::schema_name(stringify!($p)),
                        $crate::translations!(@optional $t $(, $default)?),
                    )),*]
                }
                $(
                    table.register($target, $crate::translate::dsl::Entry {
                        name: stringify!($name),
                        doc,
                        func: $name,
                        params,
                        when,
                    });
                )+
            })*
        }

        /// A table holding just this block's translations.
        #[allow(dead_code)] // for user crates; the built-in families are registered together
        pub fn table() -> $crate::translate::dsl::TranslationTable {
            let mut t = $crate::translate::dsl::TranslationTable::new();
            register(&mut t);
            t
        }
    };
    (@default $t:ty) => { None };
    (@default $t:ty, $default:expr) => { Some($default) };
    (@ctx $ctx:ident $name:ident) => { $ctx };
    (@when) => { None };
    (@when $when:expr) => { Some($when as fn(&$crate::translate::dsl::NodeView<'_>) -> bool) };
    (@optional $t:ty) => { <$t as $crate::translate::dsl::FromArg<'_>>::absent().is_some() };
    (@optional $t:ty, $default:expr) => { true };
}
