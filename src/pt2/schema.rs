//! Typed serde schema of `models/<name>.json` and the payload configs, as torch 2.15 writes them
//! (`torch/_export/serde/schema.py`, schema version 8.x). Field names follow the JSON exactly.
//!
//! Unions are JSON objects with one key. Unknown [`Argument`] variants do not fail the file: they
//! become [`Argument::Unknown`] so the one node that uses them can be reported.

use indexmap::IndexMap;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;

/// Maps of the schema, keyed by FX names and FQNs (looked up per node: a fast hasher).
pub type Map<V> = IndexMap<String, V, crate::hash::FxBuild>;

#[derive(Debug, Deserialize)]
pub struct ExportedProgram {
    pub graph_module: GraphModule,
    #[serde(default)]
    pub opset_version: Map<i64>,
    #[serde(default)]
    pub range_constraints: IndexMap<String, RangeConstraint>,
    pub schema_version: SchemaVersion,
    #[serde(default)]
    pub verifiers: Vec<String>,
    #[serde(default = "default_torch_version")]
    pub torch_version: String,
    #[serde(default)]
    pub guards_code: Vec<String>,
}

fn default_torch_version() -> String {
    "<=2.4".into()
}

#[derive(Debug, Deserialize)]
pub struct SchemaVersion {
    pub major: i64,
    pub minor: i64,
}

/// Inclusive bounds; `None` is torch's infinity (`int_oo`).
#[derive(Debug, Deserialize)]
pub struct RangeConstraint {
    pub min_val: Option<serde_json::Number>,
    pub max_val: Option<serde_json::Number>,
}

#[derive(Debug, Deserialize)]
pub struct GraphModule {
    pub graph: Graph,
    pub signature: GraphSignature,
    #[serde(default)]
    pub module_call_graph: Vec<ModuleCallEntry>,
    #[serde(default)]
    pub metadata: Map<String>,
}

#[derive(Debug, Deserialize)]
pub struct Graph {
    pub inputs: Vec<Argument>,
    pub outputs: Vec<Argument>,
    pub nodes: Vec<Node>,
    #[serde(default)]
    pub tensor_values: Map<TensorMeta>,
    #[serde(default)]
    pub sym_int_values: Map<SymInt>,
    #[serde(default)]
    pub sym_bool_values: Map<SymBool>,
    #[serde(default)]
    pub sym_float_values: Map<SymFloat>,
    #[serde(default)]
    pub custom_obj_values: Map<CustomObjArgument>,
    #[serde(default)]
    pub is_single_tensor_return: bool,
}

#[derive(Debug, Deserialize)]
pub struct Node {
    pub target: String,
    pub inputs: Vec<NamedArgument>,
    pub outputs: Vec<Argument>,
    #[serde(default)]
    pub metadata: Map<String>,
    #[serde(default)]
    pub is_hop_single_tensor_return: Option<bool>,
    #[serde(default)]
    pub name: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct NamedArgument {
    pub name: String,
    pub arg: Argument,
    /// 1 positional, 2 keyword; absent in old files.
    #[serde(default)]
    pub kind: Option<i64>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Device {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub index: Option<i64>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct TensorMeta {
    /// The schema's ScalarType id (not c10's numbering): see [`crate::pt2::ScalarType`].
    pub dtype: i64,
    pub sizes: Vec<SymInt>,
    #[serde(default)]
    pub requires_grad: bool,
    pub device: Device,
    pub strides: Vec<SymInt>,
    pub storage_offset: SymInt,
    #[serde(default)]
    pub layout: i64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SymExprJson {
    pub expr_str: String,
    #[serde(default)]
    pub hint: Option<Hint>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Hint {
    AsInt(i64),
    AsFloat(#[serde(deserialize_with = "float")] f64),
    AsBool(bool),
}

/// A size, stride or offset: a literal, or a sympy expression.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SymInt {
    AsInt(i64),
    AsExpr(SymExprJson),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SymBool {
    AsBool(bool),
    AsExpr(SymExprJson),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SymFloat {
    AsFloat(#[serde(deserialize_with = "float")] f64),
    AsExpr(SymExprJson),
}

#[derive(Debug, Clone, Deserialize)]
pub struct TensorArgument {
    pub name: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct TokenArgument {
    pub name: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct CustomObjArgument {
    pub name: String,
    pub class_fqn: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OptionalTensorArgument {
    AsTensor(TensorArgument),
    AsNone(IgnoredAny),
}

/// A reference to a SymInt value (`as_name`) or a literal.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SymIntArgument {
    AsName(String),
    AsInt(i64),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SymBoolArgument {
    AsName(String),
    AsBool(bool),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SymFloatArgument {
    AsName(String),
    AsFloat(#[serde(deserialize_with = "float")] f64),
}

#[derive(Debug, Clone, Deserialize)]
pub struct Complex {
    #[serde(deserialize_with = "float")]
    pub real: f64,
    #[serde(deserialize_with = "float")]
    pub imag: f64,
}

#[derive(Debug, Deserialize)]
pub struct GraphArgument {
    pub name: String,
    pub graph: Box<Graph>,
}

/// One argument of a node (schema `Argument`).
#[derive(Debug)]
pub enum Argument {
    None,
    Tensor(TensorArgument),
    Tensors(Vec<TensorArgument>),
    OptionalTensors(Vec<OptionalTensorArgument>),
    OptionalTensor(OptionalTensorArgument),
    NestedTensors(Vec<Vec<TensorArgument>>),
    Int(i64),
    Ints(Vec<i64>),
    IntLists(Vec<Vec<i64>>),
    Float(f64),
    Floats(Vec<f64>),
    FloatLists(Vec<Vec<f64>>),
    Bool(bool),
    Bools(Vec<bool>),
    String(String),
    Strings(Vec<String>),
    Complex(Complex),
    ScalarType(i64),
    MemoryFormat(i64),
    Layout(i64),
    Device(Device),
    SymInt(SymIntArgument),
    SymInts(Vec<SymIntArgument>),
    SymBool(SymBoolArgument),
    SymBools(Vec<SymBoolArgument>),
    SymFloat(SymFloatArgument),
    SymFloats(Vec<SymFloatArgument>),
    Graph(GraphArgument),
    Operator(String),
    CustomObj(CustomObjArgument),
    StringToArgument(Map<Argument>),
    /// A variant this reader does not know (a newer schema minor version); reported per node.
    Unknown(String),
}

impl Argument {
    /// The variant's JSON key, for messages.
    pub fn kind(&self) -> &str {
        match self {
            Argument::None => "as_none",
            Argument::Tensor(_) => "as_tensor",
            Argument::Tensors(_) => "as_tensors",
            Argument::OptionalTensors(_) => "as_optional_tensors",
            Argument::OptionalTensor(_) => "as_optional_tensor",
            Argument::NestedTensors(_) => "as_nested_tensors",
            Argument::Int(_) => "as_int",
            Argument::Ints(_) => "as_ints",
            Argument::IntLists(_) => "as_int_lists",
            Argument::Float(_) => "as_float",
            Argument::Floats(_) => "as_floats",
            Argument::FloatLists(_) => "as_float_lists",
            Argument::Bool(_) => "as_bool",
            Argument::Bools(_) => "as_bools",
            Argument::String(_) => "as_string",
            Argument::Strings(_) => "as_strings",
            Argument::Complex(_) => "as_complex",
            Argument::ScalarType(_) => "as_scalar_type",
            Argument::MemoryFormat(_) => "as_memory_format",
            Argument::Layout(_) => "as_layout",
            Argument::Device(_) => "as_device",
            Argument::SymInt(_) => "as_sym_int",
            Argument::SymInts(_) => "as_sym_ints",
            Argument::SymBool(_) => "as_sym_bool",
            Argument::SymBools(_) => "as_sym_bools",
            Argument::SymFloat(_) => "as_sym_float",
            Argument::SymFloats(_) => "as_sym_floats",
            Argument::Graph(_) => "as_graph",
            Argument::Operator(_) => "as_operator",
            Argument::CustomObj(_) => "as_custom_obj",
            Argument::StringToArgument(_) => "as_string_to_argument",
            Argument::Unknown(k) => k,
        }
    }
}

/// A float list element: JSON number, or the strings torch writes for non-finite values.
#[derive(Debug, Clone, Copy)]
struct F(f64);

impl<'de> Deserialize<'de> for F {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        float(d).map(F)
    }
}

/// Deserialize a float written as a number or as `"Infinity"`, `"-Infinity"`, `"NaN"`.
fn float<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Num {
        N(f64),
        S(String),
    }
    match Num::deserialize(d)? {
        Num::N(x) => Ok(x),
        Num::S(s) => match s.as_str() {
            "Infinity" | "inf" => Ok(f64::INFINITY),
            "-Infinity" | "-inf" => Ok(f64::NEG_INFINITY),
            "NaN" | "nan" => Ok(f64::NAN),
            _ => Err(de::Error::custom(format!("expected a float, found string {s:?}"))),
        },
    }
}

impl<'de> Deserialize<'de> for Argument {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Argument;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an Argument union object with one key")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Argument, A::Error> {
                let key: String = m.next_key()?.ok_or_else(|| de::Error::custom("empty Argument object"))?;
                let floats = |v: Vec<F>| v.into_iter().map(|F(x)| x).collect::<Vec<_>>();
                let arg = match key.as_str() {
                    "as_none" => {
                        m.next_value::<IgnoredAny>()?;
                        Argument::None
                    }
                    "as_tensor" => Argument::Tensor(m.next_value()?),
                    "as_tensors" => Argument::Tensors(m.next_value()?),
                    "as_optional_tensors" => Argument::OptionalTensors(m.next_value()?),
                    "as_optional_tensor" => Argument::OptionalTensor(m.next_value()?),
                    "as_nested_tensors" => Argument::NestedTensors(m.next_value()?),
                    "as_int" => Argument::Int(m.next_value()?),
                    "as_ints" => Argument::Ints(m.next_value()?),
                    "as_int_lists" => Argument::IntLists(m.next_value()?),
                    "as_float" => Argument::Float(m.next_value::<F>()?.0),
                    "as_floats" => Argument::Floats(floats(m.next_value()?)),
                    "as_float_lists" => {
                        Argument::FloatLists(m.next_value::<Vec<Vec<F>>>()?.into_iter().map(floats).collect())
                    }
                    "as_bool" => Argument::Bool(m.next_value()?),
                    "as_bools" => Argument::Bools(m.next_value()?),
                    "as_string" => Argument::String(m.next_value()?),
                    "as_strings" => Argument::Strings(m.next_value()?),
                    "as_complex" => Argument::Complex(m.next_value()?),
                    "as_scalar_type" => Argument::ScalarType(m.next_value()?),
                    "as_memory_format" => Argument::MemoryFormat(m.next_value()?),
                    "as_layout" => Argument::Layout(m.next_value()?),
                    "as_device" => Argument::Device(m.next_value()?),
                    "as_sym_int" => Argument::SymInt(m.next_value()?),
                    "as_sym_ints" => Argument::SymInts(m.next_value()?),
                    "as_sym_bool" => Argument::SymBool(m.next_value()?),
                    "as_sym_bools" => Argument::SymBools(m.next_value()?),
                    "as_sym_float" => Argument::SymFloat(m.next_value()?),
                    "as_sym_floats" => Argument::SymFloats(m.next_value()?),
                    "as_graph" => Argument::Graph(m.next_value()?),
                    "as_operator" => Argument::Operator(m.next_value()?),
                    "as_custom_obj" => Argument::CustomObj(m.next_value()?),
                    "as_string_to_argument" => Argument::StringToArgument(m.next_value()?),
                    _ => {
                        m.next_value::<IgnoredAny>()?;
                        Argument::Unknown(key)
                    }
                };
                // Tolerate (and ignore) further keys, like torch's reader.
                while m.next_key::<IgnoredAny>()?.is_some() {
                    m.next_value::<IgnoredAny>()?;
                }
                Ok(arg)
            }
        }
        d.deserialize_map(V)
    }
}

#[derive(Debug, Deserialize)]
pub struct GraphSignature {
    pub input_specs: Vec<InputSpec>,
    pub output_specs: Vec<OutputSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputSpec {
    UserInput { arg: Argument },
    Parameter { arg: TensorArgument, parameter_name: String },
    Buffer { arg: TensorArgument, buffer_name: String, persistent: bool },
    TensorConstant { arg: TensorArgument, tensor_constant_name: String },
    CustomObj { arg: CustomObjArgument, custom_obj_name: String },
    Token { arg: TokenArgument },
    ConstantInput { name: String, value: ConstantValue },
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConstantValue {
    AsNone(IgnoredAny),
    AsInt(i64),
    AsFloat(#[serde(deserialize_with = "float")] f64),
    AsString(String),
    AsBool(bool),
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputSpec {
    UserOutput { arg: Argument },
    LossOutput { arg: TensorArgument },
    BufferMutation { arg: TensorArgument, buffer_name: String },
    GradientToParameter { arg: TensorArgument, parameter_name: String },
    GradientToUserInput { arg: TensorArgument, user_input_name: String },
    UserInputMutation { arg: TensorArgument, user_input_name: String },
    Token { arg: TokenArgument },
    ParameterMutation { arg: TensorArgument, parameter_name: String },
}

#[derive(Debug, Deserialize)]
pub struct ModuleCallEntry {
    pub fqn: String,
    #[serde(default)]
    pub signature: Option<ModuleCallSignature>,
}

#[derive(Debug, Deserialize)]
pub struct ModuleCallSignature {
    #[serde(default)]
    pub in_spec: String,
    #[serde(default)]
    pub out_spec: String,
    #[serde(default)]
    pub forward_arg_names: Option<Vec<String>>,
}

/// `data/weights/<model>_weights_config.json` and `data/constants/<model>_constants_config.json`.
#[derive(Debug, Deserialize)]
pub struct PayloadConfig {
    #[serde(default)]
    pub config: Map<PayloadMeta>,
}

#[derive(Debug, Deserialize)]
pub struct PayloadMeta {
    pub path_name: String,
    #[serde(default)]
    pub is_param: bool,
    #[serde(default)]
    pub use_pickle: bool,
    #[serde(default)]
    pub tensor_meta: Option<TensorMeta>,
}
