//! Typed serde schema of `models/<name>.json` and the payload configs, as torch 2.15 writes them
//! (`torch/_export/serde/schema.py`, schema version 8.x). Field names follow the JSON exactly.
//!
//! Unions are JSON objects with one key. Unknown [`Argument`] variants do not fail the file: they
//! become [`Argument::Unknown`] so the one node that uses them can be reported.
//!
//! Strings borrow from the archive's memory map ([`Str`]): a program of a million FX nodes has
//! several million names, and copying each into its own allocation would dominate the parse's time
//! and memory. Node metadata values stay JSON text until asked for ([`MetaValue`]).

// Variant names are the JSON union keys (`as_int`, `as_float`, `string_to_argument`), so they
// share prefixes.
#![allow(clippy::enum_variant_names)]

use std::borrow::{Borrow, Cow};
use std::fmt;
use std::ops::Deref;

use indexmap::IndexMap;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

/// Maps of the schema, keyed by FX names and FQNs (looked up per node: a fast hasher).
pub type Map<'a, V> = IndexMap<Str<'a>, V, crate::hash::FxBuild>;

/// A string of the program JSON: borrowed from the archive when the JSON text has no escapes (FX
/// names, targets and module paths have none), owned otherwise. Reads as a `&str`.
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Str<'a>(pub Cow<'a, str>);

impl<'a> Str<'a> {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The string, borrowed from the archive when it can be (outlives `self`).
    pub fn as_cow(&self) -> Cow<'a, str> {
        self.0.clone()
    }
}

impl Deref for Str<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Str<'_> {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Str<'_> {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Str<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Str<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl PartialEq<str> for Str<'_> {
    fn eq(&self, other: &str) -> bool {
        *self.0 == *other
    }
}

impl PartialEq<&str> for Str<'_> {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<String> for Str<'_> {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl<'a> From<&'a str> for Str<'a> {
    fn from(s: &'a str) -> Self {
        Str(Cow::Borrowed(s))
    }
}

impl From<String> for Str<'_> {
    fn from(s: String) -> Self {
        Str(Cow::Owned(s))
    }
}

impl From<Str<'_>> for String {
    fn from(s: Str<'_>) -> String {
        s.0.into_owned()
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(s.to_string())))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(s)))
            }
        }
        d.deserialize_str(V)
    }
}

/// A JSON list as a vector of exactly its length. serde's own starts empty and grows to four
/// slots at the first push: a node's one output, a size of rank 3, a node's two inputs (~100 bytes
/// each) all kept room for four for the life of the program, a few million lists in a large one.
struct ExactVec<T>(Vec<T>);

/// Lists up to this long are gathered on the stack, then moved into a vector of their length.
const SHORT: usize = 6;

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ExactVec<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = ExactVec<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ExactVec<T>, A::Error> {
                let mut short: [Option<T>; SHORT] = std::array::from_fn(|_| None);
                for (n, slot) in short.iter_mut().enumerate() {
                    match seq.next_element()? {
                        Some(x) => *slot = Some(x),
                        None => {
                            let mut v = Vec::with_capacity(n);
                            v.extend(short.into_iter().flatten());
                            return Ok(ExactVec(v));
                        }
                    }
                }
                let Some(next) = seq.next_element()? else {
                    let mut v = Vec::with_capacity(SHORT);
                    v.extend(short.into_iter().flatten());
                    return Ok(ExactVec(v));
                };
                // A long list: grow as usual (its slack is small relative to its length).
                let mut v = Vec::with_capacity(2 * SHORT);
                v.extend(short.into_iter().flatten());
                v.push(next);
                while let Some(x) = seq.next_element()? {
                    v.push(x);
                }
                Ok(ExactVec(v))
            }
        }
        d.deserialize_seq(V(std::marker::PhantomData))
    }
}

/// `deserialize_with` form of [`ExactVec`].
fn exact<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    ExactVec::deserialize(d).map(|v| v.0)
}

/// A node metadata value as its JSON string literal, quotes and escapes included: torch writes a
/// stack trace on every node, and only the lowering reads it, once, into the ONNX metadata.
#[derive(Clone, Copy)]
pub struct MetaValue<'a>(&'a str);

impl<'a> MetaValue<'a> {
    /// The decoded string (borrowed when it has no escapes).
    pub fn get(&self) -> Cow<'a, str> {
        let inner = &self.0[1..self.0.len() - 1];
        if !inner.contains('\\') {
            return Cow::Borrowed(inner);
        }
        let mut out = String::with_capacity(inner.len());
        unescape_into(&mut out, inner);
        Cow::Owned(out)
    }

    /// Append the decoded string to `out`.
    pub fn push_to(&self, out: &mut String) {
        unescape_into(out, &self.0[1..self.0.len() - 1]);
    }
}

/// Decode the escapes of a JSON string literal's contents, whose escapes serde_json has checked
/// (every node's stack trace goes through here: copying the runs between escapes beats a general
/// parse). A lone surrogate, which Python's json writes for a lone surrogate, becomes U+FFFD.
fn unescape_into(out: &mut String, s: &str) {
    let mut rest = s;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let esc = rest.as_bytes().get(i + 1).copied().unwrap_or(b'\\');
        rest = rest.get(i + 2..).unwrap_or("");
        match esc {
            b'n' => out.push('\n'),
            b't' => out.push('\t'),
            b'r' => out.push('\r'),
            b'b' => out.push('\u{8}'),
            b'f' => out.push('\u{c}'),
            b'u' => {
                let unit = |r: &str| r.get(..4).and_then(|h| u32::from_str_radix(h, 16).ok());
                let Some(hi) = unit(rest) else { break };
                rest = &rest[4..];
                let c = if (0xD800..0xDC00).contains(&hi) && rest.starts_with("\\u") {
                    match unit(&rest[2..]) {
                        Some(lo) if (0xDC00..0xE000).contains(&lo) => {
                            rest = &rest[6..];
                            char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                        }
                        _ => None,
                    }
                } else {
                    char::from_u32(hi)
                };
                out.push(c.unwrap_or(char::REPLACEMENT_CHARACTER));
            }
            // `\"`, `\\`, `\/`.
            other => out.push(other as char),
        }
    }
    out.push_str(rest);
}

impl fmt::Debug for MetaValue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for MetaValue<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = <&'de serde_json::value::RawValue>::deserialize(d)?.get();
        if raw.len() < 2 || !raw.starts_with('"') {
            return Err(de::Error::custom(format!("expected a string metadata value, found {raw}")));
        }
        Ok(MetaValue(raw))
    }
}

/// A node's `metadata` (`stack_trace`, `nn_module_stack`, `torch_fn`...), in file order.
#[derive(Debug, Clone, Default)]
pub struct NodeMetadata<'a>(pub Vec<(Str<'a>, MetaValue<'a>)>);

impl<'a> NodeMetadata<'a> {
    /// The value of `key`, decoded (the last one, as a map would keep).
    pub fn get(&self, key: &str) -> Option<Cow<'a, str>> {
        self.raw(key).map(|v| v.get())
    }

    /// The value of `key` as written (the last one, as a map would keep).
    pub fn raw(&self, key: &str) -> Option<MetaValue<'a>> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| *v)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for NodeMetadata<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de> Visitor<'de> for V<'de> {
            type Value = NodeMetadata<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map of strings")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<NodeMetadata<'de>, A::Error> {
                // torch writes three or four keys: gathered first, then kept in a vector of their
                // number (see `ExactVec`).
                let mut short: [Option<(Str<'de>, MetaValue<'de>)>; SHORT] = Default::default();
                let mut n = 0;
                while let Some(entry) = m.next_entry()? {
                    if n == SHORT {
                        let mut v = Vec::with_capacity(2 * SHORT);
                        v.extend(short.into_iter().flatten());
                        v.push(entry);
                        while let Some(entry) = m.next_entry()? {
                            v.push(entry);
                        }
                        return Ok(NodeMetadata(v));
                    }
                    short[n] = Some(entry);
                    n += 1;
                }
                let mut v = Vec::with_capacity(n);
                v.extend(short.into_iter().flatten());
                Ok(NodeMetadata(v))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

#[derive(Debug, Deserialize)]
pub struct ExportedProgram<'a> {
    #[serde(borrow)]
    pub graph_module: GraphModule<'a>,
    #[serde(default, borrow)]
    pub opset_version: Map<'a, i64>,
    #[serde(default, borrow)]
    pub range_constraints: IndexMap<Str<'a>, RangeConstraint>,
    pub schema_version: SchemaVersion,
    #[serde(default, borrow)]
    pub verifiers: Vec<Str<'a>>,
    #[serde(default = "default_torch_version", borrow)]
    pub torch_version: Str<'a>,
    #[serde(default, borrow)]
    pub guards_code: Vec<Str<'a>>,
}

fn default_torch_version() -> Str<'static> {
    Str::from("<=2.4")
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
pub struct GraphModule<'a> {
    #[serde(borrow)]
    pub graph: Graph<'a>,
    #[serde(borrow)]
    pub signature: GraphSignature<'a>,
    #[serde(default, borrow)]
    pub module_call_graph: Vec<ModuleCallEntry<'a>>,
    #[serde(default, borrow)]
    pub metadata: Map<'a, Str<'a>>,
    /// A namedtuple's fields by its registered type name (read with the trees, `fx::tree`).
    #[serde(default, borrow)]
    pub treespec_namedtuple_fields: Option<&'a serde_json::value::RawValue>,
}

#[derive(Debug, Deserialize)]
pub struct Graph<'a> {
    #[serde(borrow)]
    pub inputs: Vec<Argument<'a>>,
    #[serde(borrow)]
    pub outputs: Vec<Argument<'a>>,
    #[serde(borrow)]
    pub nodes: Vec<Node<'a>>,
    #[serde(default, borrow)]
    pub tensor_values: Map<'a, ValueMeta<'a>>,
    #[serde(default, borrow)]
    pub sym_int_values: Map<'a, SymInt<'a>>,
    #[serde(default, borrow)]
    pub sym_bool_values: Map<'a, SymBool<'a>>,
    #[serde(default, borrow)]
    pub sym_float_values: Map<'a, SymFloat<'a>>,
    #[serde(default, borrow)]
    pub custom_obj_values: Map<'a, CustomObjArgument<'a>>,
    #[serde(default)]
    pub is_single_tensor_return: bool,
}

#[derive(Debug, Deserialize)]
pub struct Node<'a> {
    #[serde(borrow)]
    pub target: Str<'a>,
    #[serde(borrow, deserialize_with = "exact")]
    pub inputs: Vec<NamedArgument<'a>>,
    #[serde(borrow, deserialize_with = "exact")]
    pub outputs: Vec<Argument<'a>>,
    #[serde(default, borrow)]
    pub metadata: NodeMetadata<'a>,
    #[serde(default)]
    pub is_hop_single_tensor_return: Option<bool>,
    #[serde(default, borrow)]
    pub name: Option<Str<'a>>,
}

#[derive(Debug, Deserialize)]
pub struct NamedArgument<'a> {
    #[serde(borrow)]
    pub name: Str<'a>,
    #[serde(borrow)]
    pub arg: Argument<'a>,
    /// 1 positional, 2 keyword; absent in old files.
    #[serde(default)]
    pub kind: Option<i64>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Device<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Str<'a>,
    #[serde(default)]
    pub index: Option<i64>,
}

/// A stored tensor's metadata (payload configs): how to view its storage. The schema's other
/// fields (device, layout, requires_grad) are skipped without being built: a config has one entry
/// per weight, hundreds of thousands in a large program.
#[derive(Debug, Clone, Deserialize)]
pub struct TensorMeta<'a> {
    /// The schema's ScalarType id (not c10's numbering): see [`crate::pt2::ScalarType`].
    pub dtype: i64,
    #[serde(borrow, deserialize_with = "exact")]
    pub sizes: Vec<SymInt<'a>>,
    #[serde(borrow, deserialize_with = "exact")]
    pub strides: Vec<SymInt<'a>>,
    #[serde(borrow)]
    pub storage_offset: SymInt<'a>,
}

/// The type of an FX tensor value (`tensor_values` of a graph): the graph's TensorMeta less the
/// fields nothing reads of a value (device, layout...), which serde skips without building them:
/// one entry per tensor of the program.
#[derive(Debug, Clone, Deserialize)]
pub struct ValueMeta<'a> {
    /// The schema's ScalarType id (not c10's numbering): see [`crate::pt2::ScalarType`].
    pub dtype: i64,
    #[serde(borrow, deserialize_with = "exact")]
    pub sizes: Vec<SymInt<'a>>,
    /// The strides' JSON as stored, parsed by [`ValueMeta::strides`] for the few values whose
    /// aliasing depends on them (the input of a `reshape` that is written through).
    #[serde(borrow, default)]
    strides: Option<&'a serde_json::value::RawValue>,
    /// Read by `sym_storage_offset` when it is a constant.
    #[serde(borrow, default)]
    pub storage_offset: Option<SymInt<'a>>,
}

impl<'a> ValueMeta<'a> {
    /// The strides, in elements; `None` when the archive records none or not as SymInts.
    pub fn strides(&self) -> Option<Vec<SymInt<'a>>> {
        self.strides.and_then(|raw| serde_json::from_str(raw.get()).ok())
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct SymExprJson<'a> {
    #[serde(borrow)]
    pub expr_str: Str<'a>,
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

/// A size, stride or offset: a literal, or a sympy expression (boxed: most sizes are literals,
/// and inline the expression made every size 40 bytes; the program holds millions).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SymInt<'a> {
    AsInt(i64),
    AsExpr(#[serde(borrow)] Box<SymExprJson<'a>>),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SymBool<'a> {
    AsBool(bool),
    AsExpr(#[serde(borrow)] SymExprJson<'a>),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SymFloat<'a> {
    AsFloat(#[serde(deserialize_with = "float")] f64),
    AsExpr(#[serde(borrow)] SymExprJson<'a>),
}

#[derive(Debug, Clone, Deserialize)]
pub struct TensorArgument<'a> {
    #[serde(borrow)]
    pub name: Str<'a>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct TokenArgument<'a> {
    #[serde(borrow)]
    pub name: Str<'a>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct CustomObjArgument<'a> {
    #[serde(borrow)]
    pub name: Str<'a>,
    #[serde(borrow)]
    pub class_fqn: Str<'a>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OptionalTensorArgument<'a> {
    AsTensor(#[serde(borrow)] TensorArgument<'a>),
    AsNone(IgnoredAny),
}

/// A reference to a SymInt value (`as_name`) or a literal.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SymIntArgument<'a> {
    AsName(#[serde(borrow)] Str<'a>),
    AsInt(i64),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SymBoolArgument<'a> {
    AsName(#[serde(borrow)] Str<'a>),
    AsBool(bool),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SymFloatArgument<'a> {
    AsName(#[serde(borrow)] Str<'a>),
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
pub struct GraphArgument<'a> {
    #[serde(borrow)]
    pub name: Str<'a>,
    #[serde(borrow)]
    pub graph: Box<Graph<'a>>,
}

/// One argument of a node (schema `Argument`).
#[derive(Debug)]
pub enum Argument<'a> {
    None,
    Tensor(TensorArgument<'a>),
    Tensors(Vec<TensorArgument<'a>>),
    OptionalTensors(Vec<OptionalTensorArgument<'a>>),
    OptionalTensor(OptionalTensorArgument<'a>),
    NestedTensors(Vec<Vec<TensorArgument<'a>>>),
    Int(i64),
    Ints(Vec<i64>),
    IntLists(Vec<Vec<i64>>),
    Float(f64),
    Floats(Vec<f64>),
    FloatLists(Vec<Vec<f64>>),
    Bool(bool),
    Bools(Vec<bool>),
    String(Str<'a>),
    Strings(Vec<Str<'a>>),
    Complex(Complex),
    ScalarType(i64),
    MemoryFormat(i64),
    Layout(i64),
    Device(Device<'a>),
    SymInt(SymIntArgument<'a>),
    SymInts(Vec<SymIntArgument<'a>>),
    SymBool(SymBoolArgument<'a>),
    SymBools(Vec<SymBoolArgument<'a>>),
    SymFloat(SymFloatArgument<'a>),
    SymFloats(Vec<SymFloatArgument<'a>>),
    Graph(GraphArgument<'a>),
    Operator(Str<'a>),
    CustomObj(CustomObjArgument<'a>),
    /// Boxed: rare, and the largest variant (every argument of every node would pay its size).
    StringToArgument(Box<Map<'a, Argument<'a>>>),
    /// A variant this reader does not know (a newer schema minor version); reported per node.
    Unknown(Str<'a>),
}

impl Argument<'_> {
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
    struct V;
    impl Visitor<'_> for V {
        type Value = f64;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a float")
        }
        fn visit_f64<E: de::Error>(self, x: f64) -> Result<f64, E> {
            Ok(x)
        }
        fn visit_i64<E: de::Error>(self, x: i64) -> Result<f64, E> {
            Ok(x as f64)
        }
        fn visit_u64<E: de::Error>(self, x: u64) -> Result<f64, E> {
            Ok(x as f64)
        }
        fn visit_str<E: de::Error>(self, s: &str) -> Result<f64, E> {
            match s {
                "Infinity" | "inf" => Ok(f64::INFINITY),
                "-Infinity" | "-inf" => Ok(f64::NEG_INFINITY),
                "NaN" | "nan" => Ok(f64::NAN),
                _ => Err(de::Error::custom(format!("expected a float, found string {s:?}"))),
            }
        }
    }
    d.deserialize_any(V)
}

impl<'de: 'a, 'a> Deserialize<'de> for Argument<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de> Visitor<'de> for V<'de> {
            type Value = Argument<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an Argument union object with one key")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Argument<'de>, A::Error> {
                let key: Str<'de> = m.next_key()?.ok_or_else(|| de::Error::custom("empty Argument object"))?;
                let floats = |v: Vec<F>| v.into_iter().map(|F(x)| x).collect::<Vec<_>>();
                let arg = match key.as_str() {
                    "as_none" => {
                        m.next_value::<IgnoredAny>()?;
                        Argument::None
                    }
                    "as_tensor" => Argument::Tensor(m.next_value()?),
                    "as_tensors" => Argument::Tensors(m.next_value::<ExactVec<_>>()?.0),
                    "as_optional_tensors" => Argument::OptionalTensors(m.next_value::<ExactVec<_>>()?.0),
                    "as_optional_tensor" => Argument::OptionalTensor(m.next_value()?),
                    "as_nested_tensors" => Argument::NestedTensors(m.next_value()?),
                    "as_int" => Argument::Int(m.next_value()?),
                    "as_ints" => Argument::Ints(m.next_value::<ExactVec<_>>()?.0),
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
                    "as_sym_ints" => Argument::SymInts(m.next_value::<ExactVec<_>>()?.0),
                    "as_sym_bool" => Argument::SymBool(m.next_value()?),
                    "as_sym_bools" => Argument::SymBools(m.next_value()?),
                    "as_sym_float" => Argument::SymFloat(m.next_value()?),
                    "as_sym_floats" => Argument::SymFloats(m.next_value()?),
                    "as_graph" => Argument::Graph(m.next_value()?),
                    "as_operator" => Argument::Operator(m.next_value()?),
                    "as_custom_obj" => Argument::CustomObj(m.next_value()?),
                    "as_string_to_argument" => Argument::StringToArgument(Box::new(m.next_value()?)),
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
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

#[derive(Debug, Deserialize)]
pub struct GraphSignature<'a> {
    #[serde(borrow)]
    pub input_specs: Vec<InputSpec<'a>>,
    #[serde(borrow)]
    pub output_specs: Vec<OutputSpec<'a>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputSpec<'a> {
    UserInput {
        #[serde(borrow)]
        arg: Argument<'a>,
    },
    Parameter {
        #[serde(borrow)]
        arg: TensorArgument<'a>,
        #[serde(borrow)]
        parameter_name: Str<'a>,
    },
    Buffer {
        #[serde(borrow)]
        arg: TensorArgument<'a>,
        #[serde(borrow)]
        buffer_name: Str<'a>,
        persistent: bool,
    },
    TensorConstant {
        #[serde(borrow)]
        arg: TensorArgument<'a>,
        #[serde(borrow)]
        tensor_constant_name: Str<'a>,
    },
    CustomObj {
        #[serde(borrow)]
        arg: CustomObjArgument<'a>,
        #[serde(borrow)]
        custom_obj_name: Str<'a>,
    },
    Token {
        #[serde(borrow)]
        arg: TokenArgument<'a>,
    },
    ConstantInput {
        #[serde(borrow)]
        name: Str<'a>,
        #[serde(borrow)]
        value: ConstantValue<'a>,
    },
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConstantValue<'a> {
    AsNone(IgnoredAny),
    AsInt(i64),
    AsFloat(#[serde(deserialize_with = "float")] f64),
    AsString(#[serde(borrow)] Str<'a>),
    AsBool(bool),
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputSpec<'a> {
    UserOutput {
        #[serde(borrow)]
        arg: Argument<'a>,
    },
    LossOutput {
        #[serde(borrow)]
        arg: TensorArgument<'a>,
    },
    BufferMutation {
        #[serde(borrow)]
        arg: TensorArgument<'a>,
        #[serde(borrow)]
        buffer_name: Str<'a>,
    },
    GradientToParameter {
        #[serde(borrow)]
        arg: TensorArgument<'a>,
        #[serde(borrow)]
        parameter_name: Str<'a>,
    },
    GradientToUserInput {
        #[serde(borrow)]
        arg: TensorArgument<'a>,
        #[serde(borrow)]
        user_input_name: Str<'a>,
    },
    UserInputMutation {
        #[serde(borrow)]
        arg: TensorArgument<'a>,
        #[serde(borrow)]
        user_input_name: Str<'a>,
    },
    Token {
        #[serde(borrow)]
        arg: TokenArgument<'a>,
    },
    ParameterMutation {
        #[serde(borrow)]
        arg: TensorArgument<'a>,
        #[serde(borrow)]
        parameter_name: Str<'a>,
    },
}

/// An entry of the module call graph: the module's name, and its call signature unparsed (pytree
/// specs as escaped JSON text are megabytes in a large program, and only the root's is ever read).
#[derive(Debug, Deserialize)]
pub struct ModuleCallEntry<'a> {
    #[serde(borrow)]
    pub fqn: Str<'a>,
    /// The call signature, left as text (a slice of the archive) until asked for: only the root
    /// entry's is read, and only for names from the input and output trees (`fx::tree`).
    #[serde(default, borrow)]
    pub signature: Option<&'a serde_json::value::RawValue>,
}

/// `data/weights/<model>_weights_config.json` and `data/constants/<model>_constants_config.json`.
#[derive(Debug, Deserialize)]
pub struct PayloadConfig<'a> {
    #[serde(default, borrow)]
    pub config: Map<'a, PayloadMeta<'a>>,
}

#[derive(Debug, Deserialize)]
pub struct PayloadMeta<'a> {
    #[serde(borrow)]
    pub path_name: Str<'a>,
    #[serde(default)]
    pub is_param: bool,
    #[serde(default)]
    pub use_pickle: bool,
    #[serde(default, borrow)]
    pub tensor_meta: Option<TensorMeta<'a>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_borrow_from_the_json_unless_escaped() {
        let json = r#"{"target": "torch.ops.aten.relu.default", "inputs": [], "outputs": [{"as_tensor": {"name": "caf\u00e9"}}],
            "metadata": {"stack_trace": "File \"m.py\", line 1\n  x = f(x)", "nn_module_stack": "L__self__,,M", "k": "old", "k": "new"},
            "name": "relu"}"#;
        let node: Node = serde_json::from_str(json).expect("parses");
        assert!(matches!(node.target.0, Cow::Borrowed("torch.ops.aten.relu.default")));
        let Argument::Tensor(t) = &node.outputs[0] else { panic!("{:?}", node.outputs) };
        assert!(matches!(t.name.0, Cow::Owned(_)));
        assert_eq!(t.name, "café");
        assert_eq!(node.metadata.get("stack_trace").as_deref(), Some("File \"m.py\", line 1\n  x = f(x)"));
        assert!(matches!(node.metadata.get("nn_module_stack"), Some(Cow::Borrowed("L__self__,,M"))));
        // A repeated key keeps its last value, as a map would.
        assert_eq!(node.metadata.get("k").as_deref(), Some("new"));
        assert_eq!(node.metadata.get("absent"), None);
    }

    #[test]
    fn unescape_matches_serde_json() {
        for raw in [
            r#""plain""#,
            r#""a\"b\\c\/d\n\t\r\b\f""#,
            r#""\u00e9\u4e2d\ud83d\ude00 end""#,
            r#""\u0041\\u0041""#,
            r#""tail\\""#,
        ] {
            let want: String = serde_json::from_str(raw).expect("valid JSON");
            assert_eq!(MetaValue(raw).get(), want, "{raw}");
        }
        // A lone surrogate (Python writes one for a lone surrogate) becomes U+FFFD.
        assert_eq!(MetaValue(r#""x\ud800y""#).get(), "x\u{fffd}y");
        let bad: Result<NodeMetadata, _> = serde_json::from_str(r#"{"k": 1}"#);
        assert!(bad.is_err());
    }

    #[test]
    fn lists_are_sized_exactly() {
        for n in [0usize, 1, 2, 5, 6, 7, 20] {
            let json = format!("[{}]", vec!["1"; n].join(","));
            let v: ExactVec<i64> = serde_json::from_str(&json).expect("parses");
            assert_eq!(v.0, vec![1; n]);
            if n <= SHORT {
                assert_eq!(v.0.capacity(), n);
            }
        }
        let m: NodeMetadata = serde_json::from_str(r#"{"a": "1", "b": "2", "c": "3"}"#).expect("parses");
        assert_eq!((m.0.len(), m.0.capacity()), (3, 3));
        let many = (0..9).map(|i| format!("\"k{i}\": \"{i}\"")).collect::<Vec<_>>().join(", ");
        let json = format!("{{{many}}}");
        let m: NodeMetadata = serde_json::from_str(&json).expect("parses");
        assert_eq!(m.0.len(), 9);
        assert_eq!(m.get("k8").as_deref(), Some("8"));
    }

    #[test]
    fn floats_take_numbers_and_non_finite_strings() {
        let v: Vec<F> = serde_json::from_str(r#"[1, -2, 0.5, "Infinity", "-inf", "NaN"]"#).expect("parses");
        assert_eq!(v[..3].iter().map(|f| f.0).collect::<Vec<_>>(), [1.0, -2.0, 0.5]);
        assert_eq!((v[3].0, v[4].0), (f64::INFINITY, f64::NEG_INFINITY));
        assert!(v[5].0.is_nan());
        assert!(serde_json::from_str::<Vec<F>>(r#"["one"]"#).is_err());
    }
}
