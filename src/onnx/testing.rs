//! Graphs as text, for tests: a model written in ONNX's text syntax (the subset `fxonnx inspect`
//! prints, after `onnx.printer.to_text`) is built through the [`Builder`], and a model prints back
//! in the same syntax, so a test reads as the ONNX before and after.
//!
//! Syntax: `(inputs) => (outputs)`, an optional `<...>` list of initializers with their values,
//! then `{ nodes }`. A type is `dtype[dims]` (no brackets: a scalar); a dim is a number or a
//! symbol. A node is `outs = Op <attributes> (inputs)`, an empty input is an omitted one, and a
//! trailing `# dtype[dims]` gives the output's type and shape. Attributes are `name = value` or
//! `name: type = value` (int, float, string, ints, floats). Values without a name print as `_0`,
//! `_1`, ... in order of appearance. Graphs are compared token by token (line breaks and
//! indentation are free). With `UPDATE_EXPECT=FILE`, mismatches are recorded in FILE (call site
//! and actual graph) instead of failing, for review and pasting in.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;

use super::builder::Builder;
use super::ir::{AttrValue, DType, Dim, Model, TensorData, Value};

#[track_caller]
pub fn compare(actual: &str, expected: &str) {
    // Token by token: line breaks and indentation are free.
    if tokenize(actual) == tokenize(expected) {
        return;
    }
    // `UPDATE_EXPECT=FILE`: record the call site and the actual graph, to paste it in.
    if let Some(path) = std::env::var_os("UPDATE_EXPECT") {
        let at = std::panic::Location::caller();
        let record = format!("@@ {}:{}\n{actual}", at.file(), at.line());
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path).expect("UPDATE_EXPECT file");
        std::io::Write::write_all(&mut f, record.as_bytes()).expect("UPDATE_EXPECT write");
        return;
    }
    panic!("the graph differs\n--- expected\n{expected}\n--- actual\n{actual}");
}

struct Parser<'s> {
    toks: Vec<&'s str>,
    pos: usize,
}

fn tokenize(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'"' {
            let end = s[i + 1..].find('"').map_or(s.len(), |e| i + 1 + e + 1);
            out.push(&s[i..end]);
            i = end;
        } else if c == b'=' && b.get(i + 1) == Some(&b'>') {
            out.push("=>");
            i += 2;
        } else if b"()<>[]{},=:#".contains(&c) {
            out.push(&s[i..i + 1]);
            i += 1;
        } else {
            let start = i;
            while i < b.len() && !b[i].is_ascii_whitespace() && !b"()<>[]{},=:#\"".contains(&b[i]) {
                i += 1;
            }
            out.push(&s[start..i]);
        }
    }
    out
}

impl<'s> Parser<'s> {
    fn peek(&self) -> &'s str {
        self.toks.get(self.pos).copied().unwrap_or("")
    }
    fn next(&mut self) -> &'s str {
        let t = self.peek();
        self.pos += 1;
        t
    }
    fn eat(&mut self, t: &str) -> bool {
        let yes = self.peek() == t;
        if yes {
            self.pos += 1;
        }
        yes
    }
    fn expect(&mut self, t: &str) {
        let got = self.next();
        assert_eq!(got, t, "test graph: expected `{t}` at token {}", self.pos);
    }

    /// `dtype[dims]` or `dtype`.
    fn ty(&mut self) -> (DType, Vec<Dim>) {
        let dtype = dtype(self.next());
        let mut dims = Vec::new();
        if self.eat("[") {
            while !self.eat("]") {
                let d = self.next();
                dims.push(match d.parse::<i64>() {
                    Ok(n) => Dim::Fixed(n),
                    Err(_) => Dim::Param(d.into()),
                });
                self.eat(",");
            }
        }
        (dtype, dims)
    }

    /// `{v, v, ...}` as numbers.
    fn numbers(&mut self) -> Vec<f64> {
        self.expect("{");
        let mut v = Vec::new();
        while !self.eat("}") {
            v.push(number(self.next()));
            self.eat(",");
        }
        v
    }

    fn attr_value(&mut self, ty: Option<&str>) -> AttrValue {
        if self.eat("[") {
            let mut items = Vec::new();
            while !self.eat("]") {
                items.push(self.next());
                self.eat(",");
            }
            let floats = ty == Some("floats") || (ty.is_none() && items.iter().any(|t| is_float_text(t)));
            return if floats {
                AttrValue::Floats(items.iter().map(|t| number(t) as f32).collect())
            } else {
                AttrValue::Ints(items.iter().map(|t| number(t) as i64).collect())
            };
        }
        let t = self.next();
        if let Some(s) = t.strip_prefix('"') {
            return AttrValue::String(s.trim_end_matches('"').to_string());
        }
        if ty == Some("float") || (ty.is_none() && is_float_text(t)) {
            AttrValue::Float(number(t) as f32)
        } else {
            AttrValue::Int(number(t) as i64)
        }
    }
}

fn is_float_text(t: &str) -> bool {
    t.contains(['.', 'e', 'E']) || t.contains("inf") || t.contains("nan")
}

fn number(t: &str) -> f64 {
    match t {
        "inf" => f64::INFINITY,
        "-inf" => f64::NEG_INFINITY,
        "nan" => f64::NAN,
        _ => match t.parse::<i64>() {
            Ok(i) => i as f64,
            Err(_) => t.parse::<f64>().unwrap_or_else(|_| panic!("test graph: bad number {t}")),
        },
    }
}

/// Exact i64 contents (an `f64` cannot hold `i64::MAX`).
fn ints(t: &[&str]) -> Vec<i64> {
    t.iter().map(|s| s.parse::<i64>().unwrap_or_else(|_| panic!("test graph: bad integer {s}"))).collect()
}

fn dtype(name: &str) -> DType {
    use DType::*;
    match name {
        "float" => Float,
        "double" => Double,
        "float16" => Float16,
        "bfloat16" => BFloat16,
        "int64" => Int64,
        "int32" => Int32,
        "int16" => Int16,
        "int8" => Int8,
        "uint8" => Uint8,
        "bool" => Bool,
        _ => panic!("test graph: unknown type {name}"),
    }
}

fn dtype_name(d: DType) -> String {
    format!("{d:?}").to_ascii_lowercase()
}

/// Build the model `text` describes (see the module documentation), and its values by name.
pub fn parse(opset: i64, text: &str) -> (Model, HashMap<String, Value>) {
    let mut p = Parser { toks: tokenize(text), pos: 0 };
    let mut b = Builder::new(opset);
    let mut names: HashMap<String, Value> = HashMap::new();
    fn name(b: &mut Builder, names: &mut HashMap<String, Value>, v: Value, n: &str) {
        b.info_mut(v).name = n.to_string();
        names.insert(n.to_string(), v);
    }
    p.expect("(");
    while !p.eat(")") {
        let (dt, dims) = p.ty();
        let v = b.add_input(Some(dt), Some(dims));
        name(&mut b, &mut names, v, p.next());
        p.eat(",");
    }
    p.expect("=>");
    p.expect("(");
    let mut outputs = Vec::new();
    while !p.eat(")") {
        let ty = p.ty();
        outputs.push((ty, p.next()));
        p.eat(",");
    }
    if p.eat("<") {
        while !p.eat(">") {
            let (dt, dims) = p.ty();
            let n = p.next();
            p.expect("=");
            let data = if matches!(dt, DType::Int64) {
                p.expect("{");
                let mut toks = Vec::new();
                while !p.eat("}") {
                    toks.push(p.next());
                    p.eat(",");
                }
                let vals = ints(&toks);
                TensorData::from_i64s(dims.iter().map(fixed).collect(), &vals)
            } else {
                let vals = p.numbers();
                TensorData::from_f64_as(dt, dims.iter().map(fixed).collect(), &vals).expect("encodable constant")
            };
            assert_eq!(data.numel() as usize * dt.size().unwrap_or(0), data.raw.len(), "constant {n}: count");
            let v = b.add_initializer(data);
            name(&mut b, &mut names, v, n);
            p.eat(",");
        }
    }
    p.expect("{");
    while !p.eat("}") {
        let mut outs = vec![p.next()];
        while p.eat(",") {
            outs.push(p.next());
        }
        p.expect("=");
        let op: &'static str = Box::leak(p.next().to_string().into_boxed_str());
        let mut attrs = Vec::new();
        if p.eat("<") {
            while !p.eat(">") {
                let n = p.next();
                let ty = if p.eat(":") { Some(p.next()) } else { None };
                p.expect("=");
                attrs.push((n, p.attr_value(ty)));
                p.eat(",");
            }
        }
        p.expect("(");
        let mut inputs = Vec::new();
        let mut pending = true;
        while !p.eat(")") {
            if p.eat(",") {
                if pending {
                    inputs.push(None);
                }
                pending = true;
                continue;
            }
            let n = p.next();
            inputs.push(Some(*names.get(n).unwrap_or_else(|| panic!("test graph: unknown value {n}"))));
            pending = false;
        }
        let mut call = b.call(op, 1, inputs);
        for (n, a) in attrs {
            call = call.attr(n, a);
        }
        let vs = call.outs_vec(outs.len());
        if p.eat("#") {
            let (dt, dims) = p.ty();
            let info = b.info_mut(vs[0]);
            info.dtype = Some(dt);
            info.shape = Some(dims);
        }
        for (&v, n) in vs.iter().zip(outs) {
            name(&mut b, &mut names, v, n);
        }
    }
    let outs: Vec<Value> = outputs
        .iter()
        .map(|((dt, dims), n)| {
            let v = *names.get(*n).unwrap_or_else(|| panic!("test graph: unknown output {n}"));
            let info = b.info_mut(v);
            info.dtype.get_or_insert(*dt);
            info.shape.get_or_insert_with(|| dims.clone());
            v
        })
        .collect();
    b.graph_mut().outputs = outs;
    (b.finish(), names)
}

fn fixed(d: &Dim) -> i64 {
    match d {
        Dim::Fixed(n) => *n,
        Dim::Param(p) => panic!("test graph: a constant has symbolic size {p}"),
    }
}

/// The main graph of `m` in the syntax [`parse`] reads, with the rules that fired.
pub fn print(m: &Model, fired: &BTreeMap<String, usize>) -> String {
    let mut unnamed: HashMap<Value, String> = HashMap::new();
    let mut name = |v: Value| -> String {
        let n = &m.value(v).name;
        if !n.is_empty() {
            return n.clone();
        }
        let k = unnamed.len();
        unnamed.entry(v).or_insert_with(|| format!("_{k}")).clone()
    };
    let ty = |v: Value| {
        let info = m.value(v);
        let dt = info.dtype.map_or("?".to_string(), dtype_name);
        match &info.shape {
            Some(s) if !s.is_empty() => {
                let dims: Vec<String> = s.iter().map(Dim::to_string).collect();
                format!("{dt}[{}]", dims.join(","))
            }
            Some(_) => dt,
            None => format!("{dt}[?]"),
        }
    };
    let mut s = String::new();
    let list = |vs: &[Value], name: &mut dyn FnMut(Value) -> String| {
        vs.iter().map(|&v| format!("{} {}", ty(v), name(v))).collect::<Vec<_>>().join(", ")
    };
    let ins = list(&m.graph.inputs, &mut name);
    let outs = list(&m.graph.outputs, &mut name);
    let _ = writeln!(s, "({ins}) => ({outs})");
    if !m.graph.initializers.is_empty() {
        let inits: Vec<String> = m
            .graph
            .initializers
            .iter()
            .map(|&v| format!("{} {} = {}", ty(v), name(v), values(m.value(v).constant.as_deref())))
            .collect();
        // Wrapped as `fxonnx inspect` wraps them.
        let mut line = String::from("<");
        for (i, it) in inits.iter().enumerate() {
            if i > 0 {
                line.push(',');
                if line.len() + it.len() > 90 {
                    let _ = writeln!(s, "{line}");
                    line = String::from(" ");
                } else {
                    line.push(' ');
                }
            }
            line.push_str(it);
        }
        let _ = writeln!(s, "{line}>");
    }
    s.push_str("{\n");
    for n in &m.graph.nodes {
        let outs: Vec<String> = n.outputs.iter().map(|&v| name(v)).collect();
        let mut line = format!("{} = {}", outs.join(", "), n.op_type);
        if !n.attributes.is_empty() {
            let attrs: Vec<String> =
                n.attributes.iter().map(|a| format!("{} = {}", a.name, attr_text(&a.value))).collect();
            let _ = write!(line, " <{}>", attrs.join(", "));
        }
        let ins: Vec<String> = n.inputs.iter().map(|v| v.map_or(String::new(), &mut name)).collect();
        let _ = writeln!(s, "  {line} ({})", ins.join(", "));
    }
    s.push_str("}\n");
    if !fired.is_empty() {
        let fired: Vec<String> =
            fired.iter().map(|(r, &k)| if k == 1 { r.clone() } else { format!("{r} x{k}") }).collect();
        let mut line = String::from("# fired:");
        for (i, f) in fired.iter().enumerate() {
            if i > 0 {
                line.push(',');
                if line.len() + f.len() > 90 {
                    let _ = writeln!(s, "{line}");
                    line = String::from("#");
                }
            }
            line.push(' ');
            line.push_str(f);
        }
        let _ = writeln!(s, "{line}");
    }
    s
}

fn values(t: Option<&TensorData>) -> String {
    let Some(t) = t else { return "?".into() };
    let vals: Option<Vec<String>> = match t.dtype {
        DType::Int64 | DType::Int32 => t.to_i64s().map(|v| v.iter().map(|x| x.to_string()).collect()),
        DType::Double => t.to_f64s().map(|v| v.iter().map(|&x| float_text(x)).collect()),
        // Shortest text that reads back as the same single-precision value.
        _ => t.to_f64s().map(|v| v.iter().map(|&x| float_text(x as f32)).collect()),
    };
    match vals {
        Some(v) if v.len() <= 16 => format!("{{{}}}", v.join(", ")),
        _ => "{...}".into(),
    }
}

fn float_text<F: Into<f64> + std::fmt::Display + Copy>(x: F) -> String {
    let f: f64 = x.into();
    if f == f64::INFINITY {
        "inf".into()
    } else if f == f64::NEG_INFINITY {
        "-inf".into()
    } else {
        format!("{x}")
    }
}

fn attr_text(a: &AttrValue) -> String {
    let join = |v: Vec<String>| format!("[{}]", v.join(", "));
    match a {
        AttrValue::Int(i) => i.to_string(),
        // Written so that it reads back as a float.
        AttrValue::Float(f) => format!("{f:?}"),
        AttrValue::String(s) => format!("\"{s}\""),
        AttrValue::Ints(v) => join(v.iter().map(|x| x.to_string()).collect()),
        AttrValue::Floats(v) => join(v.iter().map(|x| format!("{x:?}")).collect()),
        AttrValue::Strings(v) => join(v.iter().map(|x| format!("\"{x}\"")).collect()),
        AttrValue::Tensor(_) => "<tensor>".into(),
        AttrValue::Graph(_) => "<graph>".into(),
        AttrValue::Type(c, t) => format!("{c:?}({})", t.name()),
    }
}
