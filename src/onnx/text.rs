//! A readable text form of ONNX models, after ONNX's own printer (`onnx.printer.to_text`):
//!
//! ```text
//! <ir_version: 10, opset_import: ["" : 20], producer_name: "fxonnx">
//! main_graph (float[s77,8] x) => (float[s77,4] linear_1)
//!    <float[16,8] fc1.weight, float[16] fc1.bias>
//! {
//!    linear = Gemm <transB: int = 1> (x, fc1.weight, fc1.bias)  # float[s77,16]
//! }
//! ```
//!
//! It differs from ONNX's printer where that helps reading: the header is one line, names are quoted
//! only when they hold characters that would break the syntax (`fc1.weight` stays bare), node names
//! are left out, initializers show their type and shape but never their data, value_info types
//! appear as comments after the nodes that compute them, and subgraph attributes (If/Loop/Scan
//! bodies) are printed nested, one attribute per line. With metadata, the `metadata_props` of the
//! model, graphs, inputs, initializers, outputs and nodes follow as `#   key: value` comments.
//!
//! The printer never panics: unknown element types print as `dtype(N)`, missing types as `?`.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use super::proto;
use super::proto::type_proto::Value as TypeValue;

/// Indentation step of nested blocks.
const STEP: usize = 3;
/// Initializer lists wrap before this column.
const WIDTH: usize = 100;
/// Tensor attributes with more elements than this print `{...}` instead of their values.
const MAX_VALUES: usize = 16;

/// The text form of `m`; with `with_metadata`, `metadata_props` are printed as comments too.
pub fn model_text(m: &proto::ModelProto, with_metadata: bool) -> String {
    let mut p = Printer { out: String::new(), metadata: with_metadata, scopes: Vec::new() };
    p.model(m);
    p.out
}

/// ONNX's name of an element type (`float`, `int64`, `bfloat16`, ...); `dtype(N)` for numbers this
/// version does not know, `?` for UNDEFINED.
pub fn dtype_name(t: i32) -> String {
    use proto::tensor_proto::DataType;
    match DataType::try_from(t) {
        Ok(DataType::Undefined) => "?".into(),
        Ok(d) => d.as_str_name().to_ascii_lowercase(),
        Err(_) => format!("dtype({t})"),
    }
}

/// The text form of a type: `float[s77,8]`, `float` (a scalar), `float[]` (unknown rank),
/// `seq(int64[?])`, `map(string, float)`, `optional(...)`, `sparse_tensor(...)`; `?` when absent.
pub fn type_text(t: Option<&proto::TypeProto>) -> String {
    match t.and_then(|t| t.value.as_ref()) {
        None => "?".into(),
        Some(TypeValue::TensorType(tt)) => format!("{}{}", dtype_name(tt.elem_type), shape_text(tt.shape.as_ref())),
        Some(TypeValue::SequenceType(s)) => format!("seq({})", type_text(s.elem_type.as_deref())),
        Some(TypeValue::MapType(m)) => {
            format!("map({}, {})", dtype_name(m.key_type), type_text(m.value_type.as_deref()))
        }
        Some(TypeValue::OptionalType(o)) => format!("optional({})", type_text(o.elem_type.as_deref())),
        Some(TypeValue::SparseTensorType(s)) => {
            format!("sparse_tensor({}{})", dtype_name(s.elem_type), shape_text(s.shape.as_ref()))
        }
        Some(TypeValue::OpaqueType(o)) if o.domain.is_empty() => format!("opaque({})", o.name),
        Some(TypeValue::OpaqueType(o)) => format!("opaque({},{})", o.domain, o.name),
    }
}

/// `[s77,8]`; empty for a scalar, `[]` for a tensor of unknown rank (ONNX's grammar).
fn shape_text(s: Option<&proto::TensorShapeProto>) -> String {
    use proto::tensor_shape_proto::dimension::Value as D;
    let Some(s) = s else { return "[]".into() };
    if s.dim.is_empty() {
        return String::new();
    }
    let dims: Vec<Cow<str>> = s
        .dim
        .iter()
        .map(|d| match &d.value {
            Some(D::DimValue(n)) => Cow::Owned(n.to_string()),
            Some(D::DimParam(p)) => id(p),
            None => Cow::Borrowed("?"),
        })
        .collect();
    format!("[{}]", dims.join(","))
}

/// A double-quoted string with `"`, `\` and control characters escaped.
fn quoted(s: &str) -> String {
    format!("{s:?}")
}

/// A name as is, or quoted when empty or holding characters that would break the syntax.
fn id(s: &str) -> Cow<'_, str> {
    let plain =
        !s.is_empty() && s.chars().all(|c| !c.is_whitespace() && !c.is_control() && !",()[]<>{}=:\"'#\\@".contains(c));
    if plain {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(quoted(s))
    }
}

fn bytes_text(b: &[u8]) -> String {
    quoted(&String::from_utf8_lossy(b))
}

fn f32_text(x: f32) -> String {
    if x.is_nan() {
        "nan".into()
    } else {
        format!("{x:?}")
    }
}

fn f64_text(x: f64) -> String {
    if x.is_nan() {
        "nan".into()
    } else {
        format!("{x:?}")
    }
}

fn bf16_to_f32(bits: u16) -> f32 {
    f32::from_bits((bits as u32) << 16)
}

/// The element values of a small tensor, ` {1, 2}`, or ` {...}` when it is large, stored
/// externally or in a form this printer does not decode.
fn tensor_values(t: &proto::TensorProto) -> String {
    use proto::tensor_proto::DataType as T;
    const ELIDED: &str = " {...}";
    let count = t.dims.iter().try_fold(1usize, |acc, &d| usize::try_from(d).ok().and_then(|d| acc.checked_mul(d)));
    let Some(count) = count else { return ELIDED.into() };
    if count > MAX_VALUES || t.data_location == proto::tensor_proto::DataLocation::External as i32 {
        return ELIDED.into();
    }
    let Ok(dtype) = T::try_from(t.data_type) else { return ELIDED.into() };
    let values: Option<Vec<String>> = if !t.raw_data.is_empty() {
        let raw = &t.raw_data[..];
        let size = match dtype {
            T::Int8 | T::Uint8 | T::Bool => 1,
            T::Int16 | T::Uint16 | T::Float16 | T::Bfloat16 => 2,
            T::Int32 | T::Uint32 | T::Float => 4,
            T::Int64 | T::Uint64 | T::Double => 8,
            _ => return ELIDED.into(),
        };
        if raw.len() != count * size {
            return ELIDED.into();
        }
        Some(
            raw.chunks_exact(size)
                .map(|c| {
                    let mut b = [0u8; 8];
                    b[..size].copy_from_slice(c);
                    let u = u64::from_le_bytes(b);
                    match dtype {
                        T::Int8 => (u as u8 as i8).to_string(),
                        T::Uint8 | T::Bool => (u as u8).to_string(),
                        T::Int16 => (u as u16 as i16).to_string(),
                        T::Uint16 => (u as u16).to_string(),
                        T::Float16 => f32_text(super::ir::f16_bits_to_f32(u as u16)),
                        T::Bfloat16 => f32_text(bf16_to_f32(u as u16)),
                        T::Int32 => (u as u32 as i32).to_string(),
                        T::Uint32 => (u as u32).to_string(),
                        T::Float => f32_text(f32::from_bits(u as u32)),
                        T::Int64 => (u as i64).to_string(),
                        T::Uint64 => u.to_string(),
                        _ => f64_text(f64::from_bits(u)),
                    }
                })
                .collect(),
        )
    } else {
        match dtype {
            T::Float => Some(t.float_data.iter().map(|&x| f32_text(x)).collect()),
            T::Double => Some(t.double_data.iter().map(|&x| f64_text(x)).collect()),
            T::Int64 => Some(t.int64_data.iter().map(|x| x.to_string()).collect()),
            T::Uint32 | T::Uint64 => Some(t.uint64_data.iter().map(|x| x.to_string()).collect()),
            T::Float16 => Some(t.int32_data.iter().map(|&x| f32_text(super::ir::f16_bits_to_f32(x as u16))).collect()),
            T::Bfloat16 => Some(t.int32_data.iter().map(|&x| f32_text(bf16_to_f32(x as u16))).collect()),
            T::Int8 | T::Int16 | T::Int32 | T::Uint8 | T::Uint16 | T::Bool => {
                Some(t.int32_data.iter().map(|x| x.to_string()).collect())
            }
            T::String => Some(t.string_data.iter().map(|s| bytes_text(s)).collect()),
            _ => None,
        }
    };
    match values {
        Some(v) if v.len() == count => format!(" {{{}}}", v.join(", ")),
        _ => ELIDED.into(),
    }
}

/// `float[16,8] name` (no data).
fn tensor_header(t: &proto::TensorProto) -> String {
    let mut s = dtype_name(t.data_type);
    if !t.dims.is_empty() {
        let dims: Vec<String> = t.dims.iter().map(|d| d.to_string()).collect();
        s.push_str(&format!("[{}]", dims.join(",")));
    }
    if !t.name.is_empty() {
        s.push(' ');
        s.push_str(&id(&t.name));
    }
    s
}

fn value_info_text(v: &proto::ValueInfoProto) -> String {
    format!("{} {}", type_text(v.r#type.as_ref()), id(&v.name))
}

fn attribute_type_name(t: i32) -> String {
    use proto::attribute_proto::AttributeType as A;
    match A::try_from(t) {
        Ok(A::Undefined) => "?".into(),
        Ok(a) => a.as_str_name().to_ascii_lowercase(),
        Err(_) => format!("attr({t})"),
    }
}

fn list<T>(items: &[T], f: impl Fn(&T) -> String) -> String {
    let v: Vec<String> = items.iter().map(f).collect();
    format!("[{}]", v.join(", "))
}

fn has_subgraph(n: &proto::NodeProto) -> bool {
    n.attribute.iter().any(|a| a.g.is_some() || !a.graphs.is_empty())
}

struct Printer<'a> {
    out: String,
    metadata: bool,
    /// Types known by name, one map per graph being printed (innermost last).
    scopes: Vec<HashMap<&'a str, &'a proto::TypeProto>>,
}

impl<'a> Printer<'a> {
    fn pad(&mut self, indent: usize) {
        self.out.extend(std::iter::repeat_n(' ', indent));
    }

    fn line(&mut self, indent: usize, text: &str) {
        self.pad(indent);
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn model(&mut self, m: &'a proto::ModelProto) {
        let mut fields = vec![
            format!("ir_version: {}", m.ir_version),
            format!("opset_import: {}", list(&m.opset_import, |o| format!("{} : {}", quoted(&o.domain), o.version))),
        ];
        if !m.producer_name.is_empty() {
            fields.push(format!("producer_name: {}", quoted(&m.producer_name)));
        }
        if !m.producer_version.is_empty() {
            fields.push(format!("producer_version: {}", quoted(&m.producer_version)));
        }
        if !m.domain.is_empty() {
            fields.push(format!("domain: {}", quoted(&m.domain)));
        }
        if m.model_version != 0 {
            fields.push(format!("model_version: {}", m.model_version));
        }
        if !m.doc_string.is_empty() {
            fields.push(format!("doc_string: {}", quoted(&m.doc_string)));
        }
        self.line(0, &format!("<{}>", fields.join(", ")));
        if self.metadata {
            self.section(0, "model", None, &m.metadata_props);
        }
        match &m.graph {
            Some(g) => {
                self.graph(g, 0);
                self.out.push('\n');
            }
            None => self.line(0, "# no graph"),
        }
        for f in &m.functions {
            self.out.push('\n');
            self.function(f);
        }
    }

    /// `#   key: value` lines. A multi-line value starts on the next line and all its lines are
    /// indented two more than the key: the first line as is, the others with their common leading
    /// whitespace removed (stack traces often arrive with only the first line stripped).
    fn props(&mut self, indent: usize, props: &[proto::StringStringEntryProto]) {
        for p in props {
            self.pad(indent);
            self.out.push_str("#   ");
            self.out.push_str(&p.key.replace('\n', "\\n"));
            self.out.push(':');
            let value = p.value.trim_end().trim_start_matches(['\n', '\r']);
            let mut lines = value.lines();
            let first = lines.next().unwrap_or("").trim();
            let rest: Vec<&str> = lines.map(str::trim_end).collect();
            if rest.is_empty() {
                if !first.is_empty() {
                    self.out.push(' ');
                    self.out.push_str(first);
                }
                self.out.push('\n');
                continue;
            }
            self.out.push('\n');
            self.line(indent, &format!("#     {first}"));
            let leading = |l: &str| l.chars().take_while(|c| c.is_whitespace()).count();
            let common = rest.iter().filter(|l| !l.is_empty()).map(|l| leading(l)).min().unwrap_or(0);
            for l in rest {
                if l.is_empty() {
                    self.line(indent, "#");
                } else {
                    let start = l.char_indices().nth(common).map_or(l.len(), |(i, _)| i);
                    self.line(indent, &format!("#     {}", &l[start..]));
                }
            }
        }
    }

    /// `# what name` followed by the properties, if there are any.
    fn section(&mut self, indent: usize, what: &str, name: Option<&str>, props: &[proto::StringStringEntryProto]) {
        if props.is_empty() {
            return;
        }
        let header = match name {
            Some(n) => format!("# {what} {}", id(n)),
            None => format!("# {what}"),
        };
        self.line(indent, &header);
        self.props(indent, props);
    }

    /// A graph whose first line starts where the output currently is; its other lines are indented
    /// by `indent`. Ends after the closing brace, without a newline.
    fn graph(&mut self, g: &'a proto::GraphProto, indent: usize) {
        let inputs: Vec<String> = g.input.iter().map(value_info_text).collect();
        let outputs: Vec<String> = g.output.iter().map(value_info_text).collect();
        self.out.push_str(&format!("{} ({}) => ({})\n", id(&g.name), inputs.join(", "), outputs.join(", ")));

        let mut inits: Vec<String> = g.initializer.iter().map(tensor_header).collect();
        inits.extend(g.sparse_initializer.iter().map(|s| {
            let values = s.values.as_ref();
            let dims: Vec<String> = s.dims.iter().map(|d| d.to_string()).collect();
            let dtype = values.map(|v| dtype_name(v.data_type)).unwrap_or_else(|| "?".into());
            let name = values.map(|v| id(&v.name).into_owned()).unwrap_or_else(|| quoted(""));
            format!("sparse_tensor({dtype}[{}]) {name}", dims.join(","))
        }));
        if !inits.is_empty() {
            self.wrapped(indent + STEP, &inits);
        }

        if self.metadata {
            self.graph_metadata(g, indent);
        }

        let mut scope: HashMap<&'a str, &'a proto::TypeProto> = HashMap::new();
        for v in g.input.iter().chain(&g.value_info).chain(&g.output) {
            if let Some(t) = &v.r#type {
                scope.insert(v.name.as_str(), t);
            }
        }
        self.scopes.push(scope);
        self.line(indent, "{");
        for n in &g.node {
            self.node(n, indent + STEP);
        }
        self.pad(indent);
        self.out.push('}');
        self.scopes.pop();
    }

    /// `<a, b, ...>` on as many lines as it takes to stay within `WIDTH` columns.
    fn wrapped(&mut self, indent: usize, items: &[String]) {
        let mut line = String::from("<");
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                if indent + line.len() + 2 + item.len() + 1 > WIDTH {
                    line.push(',');
                    self.line(indent, &line);
                    line = String::from(" ");
                } else {
                    line.push_str(", ");
                }
            }
            line.push_str(item);
        }
        line.push('>');
        self.line(indent, &line);
    }

    fn graph_metadata(&mut self, g: &'a proto::GraphProto, indent: usize) {
        self.section(indent, "graph", Some(&g.name), &g.metadata_props);
        for v in &g.input {
            self.section(indent, "input", Some(&v.name), &v.metadata_props);
        }
        // torch.onnx keeps initializer metadata on a value_info entry of the same name.
        let value_infos: HashMap<&str, &proto::ValueInfoProto> =
            g.value_info.iter().map(|v| (v.name.as_str(), v)).collect();
        for t in &g.initializer {
            let props = match value_infos.get(t.name.as_str()) {
                Some(v) if t.metadata_props.is_empty() => &v.metadata_props,
                _ => &t.metadata_props,
            };
            self.section(indent, "initializer", Some(&t.name), props);
        }
        for v in &g.output {
            self.section(indent, "output", Some(&v.name), &v.metadata_props);
        }
        let described: HashSet<&str> = g
            .input
            .iter()
            .chain(&g.output)
            .map(|v| v.name.as_str())
            .chain(g.initializer.iter().map(|t| t.name.as_str()))
            .collect();
        for v in &g.value_info {
            if !described.contains(v.name.as_str()) {
                self.section(indent, "value", Some(&v.name), &v.metadata_props);
            }
        }
    }

    fn known_type(&self, name: &str) -> Option<&'a proto::TypeProto> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    fn node(&mut self, n: &'a proto::NodeProto, indent: usize) {
        self.pad(indent);
        let outputs: Vec<Cow<str>> = n.output.iter().map(|o| id(o)).collect();
        if !outputs.is_empty() {
            self.out.push_str(&outputs.join(", "));
            self.out.push(' ');
        }
        self.out.push_str("= ");
        if !n.domain.is_empty() {
            self.out.push_str(&n.domain);
            self.out.push('.');
        }
        self.out.push_str(&n.op_type);
        if !n.overload.is_empty() {
            self.out.push(':');
            self.out.push_str(&n.overload);
        }
        let nested = has_subgraph(n);
        if !nested && !n.attribute.is_empty() {
            let attrs: Vec<String> = n.attribute.iter().map(|a| self.attribute(a, indent)).collect();
            self.out.push_str(&format!(" <{}>", attrs.join(", ")));
        }
        let inputs: Vec<Cow<str>> = n.input.iter().map(|i| id(i)).collect();
        self.out.push_str(&format!(" ({})", inputs.join(", ")));
        if nested {
            self.out.push_str(" <\n");
            for (i, a) in n.attribute.iter().enumerate() {
                self.pad(indent + STEP);
                let text = self.attribute(a, indent + STEP);
                self.out.push_str(&text);
                self.out.push_str(if i + 1 < n.attribute.len() { ",\n" } else { "\n" });
            }
            self.pad(indent);
            self.out.push('>');
        }
        let types: Vec<Option<&proto::TypeProto>> = n.output.iter().map(|o| self.known_type(o)).collect();
        if types.iter().any(|t| t.is_some()) {
            let texts: Vec<String> = types.into_iter().map(type_text).collect();
            self.out.push_str("  # ");
            self.out.push_str(&texts.join(", "));
        }
        self.out.push('\n');
        if self.metadata {
            self.props(indent, &n.metadata_props);
        }
    }

    /// `name: type = value`. Graph values are written to the output directly (they span lines, the
    /// later ones indented by `indent`) and the returned text is then empty.
    fn attribute(&mut self, a: &'a proto::AttributeProto, indent: usize) -> String {
        use proto::attribute_proto::AttributeType as A;
        let head = format!("{}: {}", id(&a.name), attribute_type_name(a.r#type));
        if !a.ref_attr_name.is_empty() {
            return format!("{head} = @{}", id(&a.ref_attr_name));
        }
        let value = match A::try_from(a.r#type) {
            Ok(A::Float) => f32_text(a.f),
            Ok(A::Int) => a.i.to_string(),
            Ok(A::String) => bytes_text(&a.s),
            Ok(A::Floats) => list(&a.floats, |&x| f32_text(x)),
            Ok(A::Ints) => list(&a.ints, |x| x.to_string()),
            Ok(A::Strings) => list(&a.strings, |s| bytes_text(s)),
            Ok(A::Tensor) => match &a.t {
                Some(t) => format!("{}{}", tensor_header(t), tensor_values(t)),
                None => "?".into(),
            },
            Ok(A::Tensors) => list(&a.tensors, |t| format!("{}{}", tensor_header(t), tensor_values(t))),
            Ok(A::SparseTensor) => match &a.sparse_tensor {
                Some(s) => {
                    let dims: Vec<String> = s.dims.iter().map(|d| d.to_string()).collect();
                    let dtype = s.values.as_ref().map(|v| dtype_name(v.data_type)).unwrap_or_else(|| "?".into());
                    format!("sparse_tensor({dtype}[{}]) {{...}}", dims.join(","))
                }
                None => "?".into(),
            },
            Ok(A::SparseTensors) => format!("[{} sparse tensors]", a.sparse_tensors.len()),
            Ok(A::TypeProto) => type_text(a.tp.as_ref()),
            Ok(A::TypeProtos) => list(&a.type_protos, |t| type_text(Some(t))),
            Ok(A::Graph) => match &a.g {
                Some(g) => {
                    self.out.push_str(&head);
                    self.out.push_str(" = ");
                    self.graph(g, indent);
                    return String::new();
                }
                None => "?".into(),
            },
            Ok(A::Graphs) => {
                self.out.push_str(&head);
                self.out.push_str(" = [");
                for (i, g) in a.graphs.iter().enumerate() {
                    self.out.push('\n');
                    self.pad(indent + STEP);
                    self.graph(g, indent + STEP);
                    if i + 1 < a.graphs.len() {
                        self.out.push(',');
                    }
                }
                self.out.push('\n');
                self.pad(indent);
                self.out.push(']');
                return String::new();
            }
            Ok(A::Undefined) | Err(_) => "?".into(),
        };
        format!("{head} = {value}")
    }

    fn function(&mut self, f: &'a proto::FunctionProto) {
        let mut fields = vec![format!("domain: {}", quoted(&f.domain))];
        if !f.overload.is_empty() {
            fields.push(format!("overload: {}", quoted(&f.overload)));
        }
        fields.push(format!(
            "opset_import: {}",
            list(&f.opset_import, |o| format!("{} : {}", quoted(&o.domain), o.version))
        ));
        self.line(0, &format!("<{}>", fields.join(", ")));
        let mut sig = id(&f.name).into_owned();
        let mut attrs: Vec<String> = f.attribute.iter().map(|a| id(a).into_owned()).collect();
        attrs.extend(f.attribute_proto.iter().map(|a| id(&a.name).into_owned()));
        if !attrs.is_empty() {
            sig.push_str(&format!(" <{}>", attrs.join(", ")));
        }
        let inputs: Vec<Cow<str>> = f.input.iter().map(|i| id(i)).collect();
        let outputs: Vec<Cow<str>> = f.output.iter().map(|o| id(o)).collect();
        sig.push_str(&format!(" ({}) => ({})", inputs.join(", "), outputs.join(", ")));
        self.line(0, &sig);
        if self.metadata {
            self.section(0, "function", Some(&f.name), &f.metadata_props);
        }
        let scope = f.value_info.iter().filter_map(|v| v.r#type.as_ref().map(|t| (v.name.as_str(), t))).collect();
        self.scopes.push(scope);
        self.line(0, "{");
        for n in &f.node {
            self.node(n, STEP);
        }
        self.line(0, "}");
        self.scopes.pop();
    }
}
