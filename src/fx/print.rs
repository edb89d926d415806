//! Text forms of a program, close to what `print(exported_program)` shows in torch.

use std::fmt::Write;

use crate::pt2::schema::{self, Argument, InputSpec, OptionalTensorArgument, OutputSpec, SymIntArgument};
use crate::pt2::{scalar_type, Loaded};

fn short_dtype(id: i64) -> &'static str {
    use crate::pt2::ScalarType::*;
    match scalar_type(id) {
        Some(Float32) => "f32",
        Some(Float64) => "f64",
        Some(Float16) => "f16",
        Some(BFloat16) => "bf16",
        Some(Int64) => "i64",
        Some(Int32) => "i32",
        Some(Int16) => "i16",
        Some(Int8) => "i8",
        Some(Uint8) => "u8",
        Some(Bool) => "b8",
        Some(Complex64) => "c64",
        Some(Complex128) => "c128",
        Some(t) => t.name(),
        None => "?",
    }
}

fn sym_text(s: &schema::SymInt) -> String {
    match s {
        schema::SymInt::AsInt(n) => n.to_string(),
        schema::SymInt::AsExpr(e) => match crate::sym::parse(&e.expr_str) {
            Ok(x) => x.to_string(),
            Err(_) => e.expr_str.to_string(),
        },
    }
}

/// `f32[s77, 8]` for a tensor, `Sym(s77)` for a symbolic scalar.
pub fn value_type(graph: &schema::Graph, name: &str) -> String {
    if let Some(m) = graph.tensor_values.get(name) {
        let dims: Vec<String> = m.sizes.iter().map(sym_text).collect();
        return format!("{}[{}]", short_dtype(m.dtype), dims.join(", "));
    }
    if let Some(s) = graph.sym_int_values.get(name) {
        return format!("Sym({})", sym_text(s));
    }
    if graph.sym_bool_values.contains_key(name) {
        return "SymBool".into();
    }
    if graph.sym_float_values.contains_key(name) {
        return "SymFloat".into();
    }
    "?".into()
}

fn arg_text(arg: &Argument) -> String {
    let mut s = String::new();
    write_arg(&mut s, arg);
    s
}

/// Write `items` as a Python list: `[a, b]`.
fn write_list<T>(s: &mut String, items: &[T], mut item: impl FnMut(&mut String, &T)) {
    s.push('[');
    for (i, x) in items.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        item(s, x);
    }
    s.push(']');
}

/// An argument as FX prints it, written into `s` (this runs for every argument of every node: the
/// `fx_node` metadata).
fn write_arg(s: &mut String, arg: &Argument) {
    let bool_text = |b: bool| if b { "True" } else { "False" };
    match arg {
        Argument::None => s.push_str("None"),
        Argument::Tensor(t) => s.push_str(&t.name),
        Argument::Tensors(ts) => write_list(s, ts, |s, t| s.push_str(&t.name)),
        Argument::OptionalTensors(ts) => write_list(s, ts, |s, t| match t {
            OptionalTensorArgument::AsTensor(t) => s.push_str(&t.name),
            OptionalTensorArgument::AsNone(_) => s.push_str("None"),
        }),
        Argument::Int(i) => {
            let _ = write!(s, "{i}");
        }
        Argument::Ints(v) => write_list(s, v, |s, i| {
            let _ = write!(s, "{i}");
        }),
        Argument::Float(f) => s.push_str(&format_float(*f)),
        Argument::Floats(v) => write_list(s, v, |s, f| s.push_str(&format_float(*f))),
        Argument::Bool(b) => s.push_str(bool_text(*b)),
        Argument::Bools(v) => write_list(s, v, |s, b| s.push_str(bool_text(*b))),
        Argument::String(x) => {
            let _ = write!(s, "'{x}'");
        }
        Argument::Strings(v) => write_list(s, v, |s, x| {
            let _ = write!(s, "'{x}'");
        }),
        Argument::Complex(c) => {
            let _ = write!(s, "({}+{}j)", format_float(c.real), format_float(c.imag));
        }
        Argument::ScalarType(t) => {
            let _ = write!(s, "torch.{}", scalar_type(*t).map(|t| t.name()).unwrap_or("?"));
        }
        Argument::Device(d) => {
            let _ = match d.index {
                Some(i) => write!(s, "device(type='{}', index={i})", d.kind),
                None => write!(s, "device(type='{}')", d.kind),
            };
        }
        Argument::SymInt(SymIntArgument::AsName(n)) => s.push_str(n),
        Argument::SymInt(SymIntArgument::AsInt(i)) => {
            let _ = write!(s, "{i}");
        }
        Argument::SymInts(v) => write_list(s, v, |s, x| match x {
            SymIntArgument::AsName(n) => s.push_str(n),
            SymIntArgument::AsInt(i) => {
                let _ = write!(s, "{i}");
            }
        }),
        Argument::SymBool(schema::SymBoolArgument::AsName(n))
        | Argument::SymFloat(schema::SymFloatArgument::AsName(n)) => s.push_str(n),
        Argument::Graph(g) => s.push_str(&g.name),
        Argument::Operator(o) => s.push_str(o),
        other => {
            let _ = write!(s, "<{}>", other.kind());
        }
    }
}

fn format_float(f: f64) -> String {
    if f.is_infinite() {
        if f > 0.0 { "inf" } else { "-inf" }.into()
    } else if f.is_nan() {
        "nan".into()
    } else if f == f.trunc() && f.abs() < 1e16 {
        format!("{f:.1}")
    } else {
        format!("{f}")
    }
}

/// One node as FX's `format_node` prints it:
/// `%linear : [num_users=1] = call_function[target=torch.ops.aten.linear.default](args = (%x, %w), kwargs = {})`.
pub fn format_node(node: &schema::Node, num_users: usize) -> String {
    let mut s = String::with_capacity(96 + node.target.len() + 16 * node.inputs.len());
    write_node(&mut s, node, num_users);
    s
}

/// [`format_node`], appended to `s`: this runs once per FX node of every export (the `fx_node`
/// metadata), into a buffer the caller reuses.
pub fn write_node(s: &mut String, node: &schema::Node, num_users: usize) {
    let name = super::node_name(node);
    let _ = write!(s, "%{name} : [num_users={num_users}] = call_function[target={}](args = (", node.target);
    let push_arg = |s: &mut String, arg: &Argument| {
        if let Argument::Tensor(_) = arg {
            s.push('%');
        }
        write_arg(s, arg);
    };
    let mut n_args = 0;
    for a in node.inputs.iter().filter(|a| a.kind != Some(2)) {
        if n_args > 0 {
            s.push_str(", ");
        }
        push_arg(s, &a.arg);
        n_args += 1;
    }
    if n_args == 1 {
        s.push(',');
    }
    s.push_str("), kwargs = {");
    for (i, a) in node.inputs.iter().filter(|a| a.kind == Some(2)).enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(&a.name);
        s.push_str(": ");
        push_arg(s, &a.arg);
    }
    s.push_str("})");
}

/// The signature as torch prints it (`p_fc1_weight: PARAMETER target='fc1.weight'`).
pub fn format_signature(sig: &schema::GraphSignature) -> String {
    let mut s = String::from("# inputs\n");
    for spec in &sig.input_specs {
        let line = match spec {
            InputSpec::Parameter { arg, parameter_name } => {
                format!("{}: PARAMETER target='{parameter_name}'", arg.name)
            }
            InputSpec::Buffer { arg, buffer_name, persistent } => format!(
                "{}: BUFFER target='{buffer_name}' persistent={}",
                arg.name,
                if *persistent { "True" } else { "False" }
            ),
            InputSpec::TensorConstant { arg, tensor_constant_name } => {
                format!("{}: CONSTANT_TENSOR target='{tensor_constant_name}'", arg.name)
            }
            InputSpec::UserInput { arg } => format!("{}: USER_INPUT", arg_text(arg)),
            InputSpec::ConstantInput { name, .. } => format!("{name}: USER_INPUT"),
            InputSpec::Token { arg } => format!("{}: TOKEN", arg.name),
            InputSpec::CustomObj { arg, custom_obj_name } => {
                format!("{}: CUSTOM_OBJ target='{custom_obj_name}'", arg.name)
            }
        };
        let _ = writeln!(s, "{line}");
    }
    s.push_str("\n# outputs\n");
    for spec in &sig.output_specs {
        let line = match spec {
            OutputSpec::UserOutput { arg } => format!("{}: USER_OUTPUT", arg_text(arg)),
            OutputSpec::BufferMutation { arg, buffer_name } => {
                format!("{}: BUFFER_MUTATION target='{buffer_name}'", arg.name)
            }
            OutputSpec::UserInputMutation { arg, user_input_name } => {
                format!("{}: USER_INPUT_MUTATION target='{user_input_name}'", arg.name)
            }
            OutputSpec::Token { arg } => format!("{}: TOKEN", arg.name),
            OutputSpec::LossOutput { arg } => format!("{}: LOSS_OUTPUT", arg.name),
            OutputSpec::GradientToParameter { arg, parameter_name } => {
                format!("{}: GRADIENT_TO_PARAMETER target='{parameter_name}'", arg.name)
            }
            OutputSpec::GradientToUserInput { arg, user_input_name } => {
                format!("{}: GRADIENT_TO_USER_INPUT target='{user_input_name}'", arg.name)
            }
            OutputSpec::ParameterMutation { arg, parameter_name } => {
                format!("{}: PARAMETER_MUTATION target='{parameter_name}'", arg.name)
            }
        };
        let _ = writeln!(s, "{line}");
    }
    s
}

/// Range constraints as torch prints them: `{s77: VR[0, int_oo]}`.
pub fn format_range_constraints<K: std::fmt::Display>(rc: &indexmap::IndexMap<K, schema::RangeConstraint>) -> String {
    let bound = |b: &Option<serde_json::Number>, neg: bool| match b {
        Some(n) => n.to_string(),
        None => if neg { "-int_oo" } else { "int_oo" }.to_string(),
    };
    let items: Vec<String> =
        rc.iter().map(|(k, r)| format!("{k}: VR[{}, {}]", bound(&r.min_val, true), bound(&r.max_val, false))).collect();
    format!("{{{}}}", items.join(", "))
}

fn write_graph(s: &mut String, graph: &schema::Graph, indent: &str) {
    for node in &graph.nodes {
        let outs: Vec<&str> = super::output_slots(node).into_iter().map(|o| o.unwrap_or("_")).collect();
        let lhs = match outs.len() {
            0 => String::new(),
            1 => format!("{}: \"{}\" = ", outs[0], value_type(graph, outs[0])),
            _ => format!("{} = ", outs.join(", ")),
        };
        let args: Vec<String> = node
            .inputs
            .iter()
            .map(|a| if a.kind == Some(2) { format!("{} = {}", a.name, arg_text(&a.arg)) } else { arg_text(&a.arg) })
            .collect();
        let _ = writeln!(s, "{indent}{lhs}{}({})", node.target, args.join(", "));
        for a in &node.inputs {
            if let Argument::Graph(g) = &a.arg {
                let _ = writeln!(s, "{indent}    # {}:", g.name);
                write_graph(s, &g.graph, &format!("{indent}    "));
            }
        }
    }
    let outs: Vec<String> = graph.outputs.iter().map(arg_text).collect();
    let _ = writeln!(s, "{indent}return ({},)", outs.join(", "));
}

/// The whole program: forward with typed placeholders, signature, range constraints.
pub fn format_program(loaded: &Loaded<'_>) -> String {
    let gm = &loaded.program.graph_module;
    let graph = &gm.graph;
    let mut s = String::from("ExportedProgram:\n    class GraphModule(torch.nn.Module):\n");
    let params: Vec<String> =
        graph.inputs.iter().map(|a| format!("{}: \"{}\"", arg_text(a), value_type(graph, &arg_text(a)))).collect();
    let _ = writeln!(s, "        def forward(self, {}):", params.join(", "));
    write_graph(&mut s, graph, "            ");
    let _ = writeln!(s, "\nGraph signature:");
    for line in format_signature(&gm.signature).lines() {
        let _ = writeln!(s, "    {line}");
    }
    let _ = writeln!(s, "Range constraints: {}", format_range_constraints(&loaded.program.range_constraints));
    let _ = writeln!(s, "Dialect: {}", loaded.program.verifiers.join(", "));
    s
}
