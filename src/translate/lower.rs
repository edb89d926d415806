//! The lowering driver: walks the FX graph in order, binds every FX value to an ONNX value, and
//! calls the translation registered for each node's target.
//!
//! Invariants it keeps (translations can rely on them):
//! - every FX tensor value gets exactly the element type and shape its TensorMeta says (a `Cast` is
//!   inserted when a translation computed in another type), so type promotion is settled here;
//! - in-place ops (`add_`, `relu_`) are functionalized: the mutated argument is rebound to the
//!   result; a mutated view is written back into its base and the aliases read afterwards are
//!   computed again (`aliasing`); buffers or user inputs that end up rebound become extra graph
//!   outputs;
//! - translations never name values or touch metadata.

use std::cell::RefCell;
use std::collections::HashMap;

use crate::fx::{self, InputKind, Program};
use crate::hash::{FxHashMap, FxHashSet};
use crate::onnx::builder::Builder;
use crate::onnx::ir::{Dim, Model, TensorData, Value};
use crate::pt2::schema::{self, Argument, SymBoolArgument, SymFloatArgument, SymIntArgument};
use crate::pt2::{Pt2Error, ScalarType};

use super::aliasing::{Aliases, FirstArg};
use super::dsl::{onnx_dtype, target_key, NodeCtx, OpError, SubgraphLowerer, TranslationTable};
use super::metadata;

/// One op the table cannot translate, with every node that uses it.
#[derive(Debug, Clone, PartialEq)]
pub struct UnsupportedOp {
    /// The FX target (`torch.ops.fxonnx_samples.mix.default`).
    pub target: String,
    /// The table key looked up (`fxonnx_samples::mix.default`).
    pub key: String,
    pub nodes: Vec<String>,
    /// Why the built-in table declines the target, when it does on purpose
    /// (`translations/refused.rs`); `None` for a target it does not know.
    pub reason: Option<&'static str>,
}

/// Errors of the lowering layer.
#[derive(Debug, thiserror::Error)]
pub enum LowerError {
    #[error("{}", unsupported_message(.0))]
    Unsupported(Vec<UnsupportedOp>),
    #[error("node `{node}` ({target}): {message}")]
    Node { node: String, target: String, message: String },
    #[error("{0}")]
    Program(String),
    #[error(transparent)]
    Archive(#[from] Pt2Error),
}

fn unsupported_message(ops: &[UnsupportedOp]) -> String {
    let mut s = format!("{} operator(s) have no ONNX translation:", ops.len());
    for op in ops {
        s.push_str(&format!("\n  {} (nodes: {})", op.target, op.nodes.join(", ")));
        if let Some(reason) = op.reason {
            s.push_str(&format!("\n    not translated on purpose: {reason}"));
        }
    }
    s.push_str(
        "\nhint: add translations with fxonnx::translations! and pass them as ExportOptions::custom_translation_table; \
         `fxonnx ops` lists the supported targets",
    );
    s
}

/// Options of the lowering (a subset of [`crate::ExportOptions`]).
pub struct LowerOptions<'a> {
    pub opset: i64,
    pub table: &'a TranslationTable,
    /// Symbol → user name for `dim_param`s (`s77` → `batch`).
    pub dim_names: &'a HashMap<String, String>,
    /// Names for the user inputs and outputs, in order; an empty name keeps the FX one.
    pub input_names: &'a [String],
    pub output_names: &'a [String],
    /// Also make every FX node's value a graph output `debug:<fx name>` (see
    /// [`crate::ExportOptions::debug_outputs`]).
    pub debug_outputs: bool,
    /// The most bytes translations may build constants of ([`crate::ExportOptions::max_memory`]).
    pub max_memory: Option<u64>,
    /// Mutated buffers and user inputs become graph outputs
    /// ([`crate::ExportOptions::mutations_as_outputs`]); otherwise each is dropped with a warning.
    pub mutations_as_outputs: bool,
}

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

/// The FX names bound in one graph, and which names are in-place aliases of one tensor. Names
/// borrow from the program (one per FX value: no copies).
#[derive(Default)]
struct Scope<'g> {
    values: FxHashMap<&'g str, Value>,
    /// How many readers each value has (for the `fx_node` metadata).
    users: FxHashMap<&'g str, usize>,
    /// Views and in-place results, and what they share memory with.
    aliases: Aliases<'g>,
    /// Per value, the last node that reads it: computed at the first mutation of an aliased tensor.
    last_reads: Option<FxHashMap<&'g str, usize>>,
    /// Per node: whether it only feeds torch's runtime checks (see [`checks_only`]).
    checks_only: Vec<bool>,
    /// Open `torch.vmap` levels and the values batched along them.
    vmap: super::vmap::Vmap<'g>,
}

impl<'g> Scope<'g> {
    fn insert(&mut self, name: &'g str, v: Value) {
        self.values.insert(name, v);
    }

    fn get(&self, name: &str) -> Option<&Value> {
        self.values.get(name)
    }
}

struct Lowerer<'a> {
    opts: &'a LowerOptions<'a>,
    /// Values already named (ONNX names are global across subgraphs), found by their name: the
    /// names themselves live in the values, so the set holds no copy of them.
    names: RefCell<hashbrown::HashTable<Value>>,
    warnings: RefCell<Vec<String>>,
    /// Module-stack strings shared by the metadata of many nodes.
    scopes: RefCell<metadata::ScopeCache>,
    /// Symbolic sizes already parsed (every tensor of a dynamic batch repeats the same few).
    dims: RefCell<FxHashMap<String, Dim>>,
}

/// The program's inputs as bound by [`bind_inputs`]: what the outputs need to find mutations.
struct BoundInputs {
    user_inputs: Vec<(String, Value)>,
    /// (placeholder, fqn, value)
    buffers: Vec<(String, String, Value)>,
}

/// What makes two lifted tensors one initializer: storage, sizes, strides, offset and dtype.
type TieKey = (String, Vec<i64>, Vec<i64>, i64, i64);

/// Bind the program's inputs: lifted tensors become initializers named by FQN (tied weights,
/// the same stored view, one initializer), user inputs graph inputs.
fn bind_inputs<'g>(
    program: &'g Program<'_>,
    lw: &Lowerer,
    op: &mut Builder,
    env: &mut Scope<'g>,
) -> Result<BoundInputs, LowerError> {
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
                let in_weights = matches!(input.kind, InputKind::Parameter { .. } | InputKind::Buffer { persistent: true, .. });
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
                    LowerError::Program(format!("user input `{}` has no entry in tensor_values", input.name))
                })?;
                let (dtype, shape, complex) = lw.tensor_type(meta);
                let v = op.add_input(Some(dtype), Some(shape));
                op.info_mut(v).complex = complex;
                let name = opts.input_names.get(n_user).filter(|n| !n.is_empty()).cloned().unwrap_or_else(|| input.name.clone());
                lw.name(op, v, &name);
                let mut meta = metadata::input_metadata(&input.kind, &input.name);
                if name == input.name {
                    meta.retain(|(k, _)| *k != metadata::ORIGINAL_NODE_NAME); // torch adds it on renames only
                }
                op.info_mut(v).metadata = meta;
                env.insert(&input.name, v);
                user_inputs.push((input.name.clone(), v));
                n_user += 1;
            }
            InputKind::UserSymInt => {
                let v = op.add_input(Some(crate::onnx::ir::DType::Int64), Some(vec![]));
                let name = opts.input_names.get(n_user).filter(|n| !n.is_empty()).cloned().unwrap_or_else(|| input.name.clone());
                lw.name(op, v, &name);
                let mut meta = metadata::input_metadata(&input.kind, &input.name);
                if name == input.name {
                    meta.retain(|(k, _)| *k != metadata::ORIGINAL_NODE_NAME);
                }
                op.info_mut(v).metadata = meta;
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
                return Err(LowerError::Program(format!(
                    "input `{}` is a custom object `{fqn}` of class {class_fqn}; ONNX has no equivalent (hint: keep TorchBind objects out of the exported forward)",
                    input.name
                )))
            }
        }
    }

    Ok(BoundInputs { user_inputs, buffers })
}

/// Lower a resolved program into an ONNX model.
pub fn lower(program: &Program<'_>, opts: &LowerOptions<'_>) -> Result<(Model, Vec<String>), LowerError> {
    let unsupported = find_unsupported(program.graph(), opts.table);
    if !unsupported.is_empty() {
        return Err(LowerError::Unsupported(unsupported));
    }
    let lw = Lowerer {
        opts,
        names: RefCell::new(hashbrown::HashTable::with_capacity(program.graph().nodes.len() * 2)),
        warnings: RefCell::new(Vec::new()),
        scopes: Default::default(),
        dims: Default::default(),
    };
    let graph = program.graph();
    let mut op = Builder::new(opts.opset);
    op.memory_limit = opts.max_memory;
    // Most FX nodes become one to three ONNX nodes and values; room reserved but never touched
    // costs nothing, while growing copies (and faults in) the whole arena each time.
    op.reserve(graph.nodes.len() * 3, graph.nodes.len() * 4);
    let mut env = Scope {
        values: FxHashMap::with_capacity_and_hasher(graph.nodes.len() * 2, Default::default()),
        ..Default::default()
    };
    // Counting every value's readers and printing the signature (torch's graph metadata) only read
    // the program: for a large one a second thread does both while this one binds the inputs.
    let large = graph.nodes.len() + program.inputs().len() >= 20_000;
    let (bound, (users, graph_metadata)) = crate::join_if(
        large,
        || bind_inputs(program, &lw, &mut op, &mut env),
        || (metadata::user_counts(graph), metadata::graph_metadata(&program.loaded().program)),
    );
    env.users = users;
    env.checks_only = checks_only(graph);
    op.graph_mut().metadata = graph_metadata;
    let BoundInputs { user_inputs, buffers } = bound?;

    // With debug outputs: every node's values as they were right after the node ran (a later
    // in-place update rebinds the name, as torch's tensor changes under the interpreter).
    let mut debug: Vec<(&str, Value)> = Vec::new();
    for index in 0..graph.nodes.len() {
        lw.lower_node(&mut op, graph, index, &mut env)?;
        if opts.debug_outputs && !env.checks_only[index] {
            for o in &graph.nodes[index].outputs {
                fx::for_each_value_name(o, &mut |n| debug.extend(env.get(n).map(|&v| (n, v))));
            }
        }
    }

    // Outputs: user outputs, then mutated buffers and user inputs (torch.onnx drops those).
    // A `None` output has no ONNX value: dropped, as torch.onnx drops it.
    let mut outputs: Vec<(Value, String)> = Vec::new();
    let mut kinds: Vec<&str> = Vec::new();
    for out in program.outputs() {
        if let fx::OutputKind::User(arg) = out {
            if matches!(arg, Argument::None) {
                continue;
            }
            let v = lw.value_of(&mut op, arg, &env)?;
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
                let v = lookup(&env, value)?;
                mutations.push((v, mutation_output_name(MutationKind::Buffer, fqn), "BUFFER_MUTATION"));
            }
            fx::OutputKind::UserInputMutation { value, input } => {
                let v = lookup(&env, value)?;
                mutations.push((v, mutation_output_name(MutationKind::UserInput, input), "USER_INPUT_MUTATION"));
            }
            fx::OutputKind::Token => {}
        }
    }
    if !program.has_mutation_specs() {
        // Training-dialect programs mutate in place and list no mutation outputs: recover them.
        for (placeholder, fqn, original) in &buffers {
            if let Some(&v) = env.get(placeholder) {
                if v != *original {
                    mutations.push((v, mutation_output_name(MutationKind::Buffer, fqn), "BUFFER_MUTATION"));
                }
            }
        }
        for (name, original) in &user_inputs {
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
    for (i, (v, fx_name)) in outputs.into_iter().enumerate() {
        let wanted =
            if i < n_user_outputs { opts.output_names.get(i).filter(|n| !n.is_empty()).cloned() } else { None };
        let wanted = wanted.unwrap_or_else(|| fx_name.clone());
        // A graph output must be produced by a node, under its own name, once. A float4 constant
        // is output as the initializer itself: below opset 23 no operator (Identity included)
        // takes float4, and ONNX allows an initializer as a graph output.
        let float4_constant = op.info(v).constant.is_some() && op.dtype(v) == Some(crate::onnx::ir::DType::Float4E2M1);
        let is_io = !float4_constant && (op.graph_mut().inputs.contains(&v) || op.info(v).constant.is_some());
        let v = if is_io || seen.contains(&v) || (op.info(v).name != wanted && !op.info(v).name.is_empty()) {
            identity_of(&mut op, v)
        } else {
            v
        };
        if op.info(v).name.is_empty() {
            lw.name(&mut op, v, &wanted);
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
        let id = identity_of(&mut op, v);
        lw.name(&mut op, id, &format!("{DEBUG_OUTPUT_PREFIX}{fx_name}"));
        final_outputs.push(id);
    }
    if final_outputs.is_empty() {
        // ONNX Runtime refuses a model without outputs, and it would compute nothing.
        return Err(LowerError::Program(
            "the program returns nothing: an ONNX model needs at least one output; hint: return a tensor from forward"
                .into(),
        ));
    }
    op.graph_mut().outputs = final_outputs;
    let mut warnings = lw.warnings.into_inner();
    warnings.append(&mut op.warnings);
    let model = op.finish();
    // The shapes recorded in the program become the model's value_info, and the optimizer trusts
    // them: they must agree with what the nodes compute.
    check_types(&model)?;
    Ok((model, warnings))
}

/// An `Identity` of `v` with its type.
fn identity_of(op: &mut Builder, v: Value) -> Value {
    let id = op.Identity(v);
    let info = op.info(v).clone();
    let new = op.info_mut(id);
    (new.dtype, new.shape, new.complex) = (info.dtype, info.shape, info.complex);
    id
}

fn lookup(env: &Scope, name: &str) -> Result<Value, LowerError> {
    env.get(name).copied().ok_or_else(|| LowerError::Program(format!("output `{name}` is not defined by any node")))
}

fn arg_name<'g>(arg: &'g Argument<'_>) -> Option<&'g str> {
    match arg {
        Argument::Tensor(t) => Some(&t.name),
        Argument::SymInt(SymIntArgument::AsName(n))
        | Argument::SymFloat(SymFloatArgument::AsName(n))
        | Argument::SymBool(SymBoolArgument::AsName(n)) => Some(n),
        _ => None,
    }
}

/// Per node of `graph`: whether it is one of torch's runtime checks (`_assert_scalar`,
/// `sym_constrain_range`, ...), which an ONNX graph does not have, or a symbolic-size computation
/// read only by such checks. These nodes are not lowered: a check may read what ONNX cannot
/// compute (the storage offset of a tensor_split piece), and its result would be unused anyway.
fn checks_only(graph: &schema::Graph<'_>) -> Vec<bool> {
    const CHECKS: &[&str] = &[
        "aten::_assert_scalar.default",
        "aten::_assert_async.default",
        "aten::_assert_async.msg",
        "aten::sym_constrain_range.default",
        "aten::sym_constrain_range_for_size.default",
    ];
    // Symbolic-size arithmetic only: nothing with a side effect or a tensor result is skipped.
    let pure = |key: &str| {
        key.starts_with("_operator.")
            || key.starts_with("torch.sym_")
            || key.starts_with("math.")
            || key.starts_with("aten::sym_")
    };
    let mut readers: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
    for (i, node) in graph.nodes.iter().enumerate() {
        for input in &node.inputs {
            fx::for_each_value_name(&input.arg, &mut |n| readers.entry(n).or_default().push(i));
        }
    }
    let mut graph_outputs: FxHashSet<&str> = FxHashSet::default();
    for o in &graph.outputs {
        fx::for_each_value_name(o, &mut |n| {
            graph_outputs.insert(n);
        });
    }
    let mut skip = vec![false; graph.nodes.len()];
    for (i, node) in graph.nodes.iter().enumerate().rev() {
        let key = target_key(&node.target);
        if CHECKS.contains(&key.as_str()) {
            skip[i] = true;
            continue;
        }
        if !pure(&key) {
            continue;
        }
        let mut outputs = Vec::new();
        for o in &node.outputs {
            fx::for_each_value_name(o, &mut |n| outputs.push(n));
        }
        skip[i] = !outputs.is_empty()
            && outputs.iter().all(|n| {
                !graph_outputs.contains(n) && readers.get(n).is_some_and(|r| r.iter().all(|&j| j > i && skip[j]))
            });
    }
    skip
}

/// Every target of `graph` (subgraphs included) that `table` cannot translate.
pub fn find_unsupported(graph: &schema::Graph, table: &TranslationTable) -> Vec<UnsupportedOp> {
    let mut found: Vec<UnsupportedOp> = Vec::new();
    visit_nodes(graph, &mut |node, current| {
        let key = target_key(&node.target);
        if super::vmap::is_bracket(&node.target) {
            return; // lowered by the driver (`vmap`)
        }
        if resolve(table, &key, &super::dsl::NodeView { node, graph: current }).is_none() {
            let name = node.name.as_deref().unwrap_or_default().to_string();
            match found.iter_mut().find(|u| u.key == key) {
                Some(u) => u.nodes.push(name),
                None => {
                    let reason = crate::translations::refused::reason(&key);
                    found.push(UnsupportedOp { target: node.target.to_string(), key, nodes: vec![name], reason })
                }
            }
        }
    });
    found
}

/// Call `f` on every node of `graph` and of its subgraphs, in order, with the graph holding it.
pub fn visit_nodes<'g>(graph: &'g schema::Graph, f: &mut dyn FnMut(&'g schema::Node, &'g schema::Graph)) {
    for node in &graph.nodes {
        f(node, graph);
        for input in &node.inputs {
            if let Argument::Graph(g) = &input.arg {
                visit_nodes(&g.graph, f);
            }
        }
    }
}

/// The translation for `key` serving `node`: the exact overload; else, for an in-place op
/// (`add_.Tensor`), its functional form (`add.Tensor`); else the op's default overload when its
/// schema has the same arguments. Returns the entry, whether the op mutates its first argument,
/// and the key actually used when it is not `key`.
pub fn resolve<'t>(
    table: &'t TranslationTable,
    key: &str,
    node: &super::dsl::NodeView<'_>,
) -> Option<(&'t super::dsl::Entry, bool, Option<String>)> {
    resolve_by(key, &|k| table.select(k, node))
}

/// The key whose translation serves `key` for some node (`key` itself, its functional form, its
/// default overload or the op an alias names), judged without a node: `when` conditions aside.
pub fn serving_key(table: &TranslationTable, key: &str) -> Option<String> {
    resolve_by(key, &|k| table.get(k)).map(|(_, _, used)| used.unwrap_or_else(|| key.to_string()))
}

fn resolve_by<'t>(
    key: &str,
    find: &dyn Fn(&str) -> Option<&'t super::dsl::Entry>,
) -> Option<(&'t super::dsl::Entry, bool, Option<String>)> {
    if let Some(e) = find(key) {
        return Some((e, is_inplace(key), None));
    }
    let (ns, rest) = key.split_once("::")?;
    let (name, overload) = rest.split_once('.').unwrap_or((rest, "default"));
    if let Some(functional) = name.strip_suffix('_').filter(|n| !n.ends_with('_') && !n.is_empty()) {
        let fkey = format!("{ns}::{functional}.{overload}");
        if let Some(e) = find(&fkey) {
            return Some((e, true, Some(fkey)));
        }
    }
    let default = format!("{ns}::{name}.default");
    if overload != "default" && same_arguments(key, &default) {
        if let Some(e) = find(&default) {
            return Some((e, is_inplace(key), Some(default)));
        }
    }
    // An alias (`divide`, `clip`, `swapaxes`) is served by the op it names.
    let canonical = super::aliases::canonical(key)?;
    let (e, inplace, used) = resolve_by(&canonical, find)?;
    Some((e, inplace, Some(used.unwrap_or(canonical))))
}

/// Whether two overloads take the same arguments (names and types, alias annotations aside).
fn same_arguments(a: &str, b: &str) -> bool {
    let args = |k: &str| {
        super::schemas::schema(k)
            .map(|s| super::schemas::arguments(s).join(", ").replace("(a!)", "").replace("(a)", ""))
    };
    matches!((args(a), args(b)), (Some(x), Some(y)) if x == y)
}

/// Argument renames from the schema of the translation used to the node's own schema, where they
/// differ (`dropout(Tensor input, ...)` serving `dropout_(Tensor(a!) self, ...)`).
fn argument_renames(inplace_key: &str, functional_key: &str) -> Vec<(String, String)> {
    let (Some(i), Some(f)) = (super::schemas::schema(inplace_key), super::schemas::schema(functional_key)) else {
        return Vec::new();
    };
    let (i, f) = (super::schemas::arg_names(i), super::schemas::arg_names(f));
    f.iter().zip(&i).filter(|(a, b)| a != b).map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

fn is_inplace(key: &str) -> bool {
    key.split_once("::")
        .map(|(_, rest)| rest.split('.').next().unwrap_or(""))
        .is_some_and(|n| n.ends_with('_') && !n.ends_with("__"))
}

/// A stored tensor must be what the program says it reads: the same dtype and, where the
/// program's sizes are static, the same sizes. Otherwise every shape after it would be wrong.
fn check_weight_type(w: &crate::pt2::Weight, fqn: &str, graph: &schema::Graph, value: &str) -> Result<(), LowerError> {
    let Some(meta) = graph.tensor_values.get(value) else { return Ok(()) };
    let same_sizes = meta.sizes.len() == w.sizes.len()
        && meta.sizes.iter().zip(&w.sizes).all(|(s, &n)| !matches!(s, schema::SymInt::AsInt(m) if *m != n));
    if crate::pt2::scalar_type(meta.dtype) == Some(w.dtype) && same_sizes {
        return Ok(());
    }
    Err(LowerError::Program(format!(
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
    if w.dtype == ScalarType::Float4E2M1FnX2 {
        // Two 4-bit elements a byte: ONNX's last dim counts them.
        if let Some(last) = dims.last_mut() {
            *last *= 2;
        }
    }
    TensorData { dtype: onnx_dtype(w.dtype), dims, raw: w.raw.clone().into() }
}

impl Lowerer<'_> {
    /// Give `v` the name `wanted`, made unique across the model.
    fn name(&self, op: &mut Builder, v: Value, wanted: &str) {
        debug_assert!(op.info(v).name.is_empty(), "the name set finds values by their names: one name each");
        let mut names = self.names.borrow_mut();
        let hash = |s: &str| std::hash::BuildHasher::hash_one(&crate::hash::FxBuild::default(), s);
        let mut name = wanted.to_string();
        let mut k = 1;
        loop {
            let h = hash(&name);
            let entry = names.entry(h, |&u| op.info(u).name == name, |&u| hash(&op.info(u).name));
            if let hashbrown::hash_table::Entry::Vacant(slot) = entry {
                slot.insert(v);
                break;
            }
            name = format!("{wanted}_{k}");
            k += 1;
        }
        op.info_mut(v).name = name;
    }

    fn dim(&self, s: &schema::SymInt) -> Dim {
        match s {
            schema::SymInt::AsInt(n) => Dim::Fixed(*n),
            schema::SymInt::AsExpr(e) => {
                if let Some(d) = self.dims.borrow().get(e.expr_str.as_str()) {
                    return d.clone();
                }
                let d = match crate::sym::parse(&e.expr_str) {
                    Ok(expr) => match expr.as_int() {
                        Some(n) => Dim::Fixed(n),
                        None => {
                            let names = self.opts.dim_names;
                            let renamed = expr.rename(&|s: &str| names.get(s).cloned());
                            Dim::Param(renamed.to_string().into())
                        }
                    },
                    Err(_) => Dim::Param(e.expr_str.as_ref().into()),
                };
                self.dims.borrow_mut().insert(e.expr_str.to_string(), d.clone());
                d
            }
        }
    }

    /// ONNX type of an FX tensor: (element type, shape, is a complex tensor's real view).
    fn tensor_type(&self, meta: &schema::ValueMeta) -> (crate::onnx::ir::DType, Vec<Dim>, bool) {
        let st = crate::pt2::scalar_type(meta.dtype).unwrap_or(ScalarType::Float32);
        let mut shape: Vec<Dim> = meta.sizes.iter().map(|s| self.dim(s)).collect();
        if st == ScalarType::Float4E2M1FnX2 {
            // ONNX counts the 4-bit elements: the last dim is twice torch's (two a byte).
            if let Some(last) = shape.last_mut() {
                *last = match last {
                    Dim::Fixed(n) => Dim::Fixed(*n * 2),
                    Dim::Param(p) => Dim::Param(format!("2*{p}").into()),
                };
            }
        }
        if st.is_complex() {
            shape.push(Dim::Fixed(2));
        }
        (onnx_dtype(st), shape, st.is_complex())
    }

    /// The ONNX value of an output argument (tensor or symbolic scalar, or a literal).
    fn value_of(&self, op: &mut Builder, arg: &Argument, env: &Scope) -> Result<Value, LowerError> {
        if let Some(name) = arg_name(arg) {
            return lookup(env, name);
        }
        match arg {
            Argument::Int(i) | Argument::SymInt(SymIntArgument::AsInt(i)) => Ok(op.scalar_i64(*i)),
            Argument::Float(x) | Argument::SymFloat(SymFloatArgument::AsFloat(x)) => {
                Ok(op.scalar(crate::onnx::ir::DType::Float, *x))
            }
            Argument::Bool(b) | Argument::SymBool(SymBoolArgument::AsBool(b)) => {
                Ok(op.scalar(crate::onnx::ir::DType::Bool, *b as i64 as f64))
            }
            _ => Err(LowerError::Program(format!("output of kind {} cannot be an ONNX graph output", arg.kind()))),
        }
    }

    fn lower_node<'g>(
        &self,
        op: &mut Builder,
        graph: &'g schema::Graph<'_>,
        index: usize,
        env: &mut Scope<'g>,
    ) -> Result<(), LowerError> {
        if env.checks_only.get(index) == Some(&true) {
            return Ok(());
        }
        let node = &graph.nodes[index];
        let err = node_error(node);
        let logical_rank = |n: &str| graph.tensor_values.get(n).map(|m| m.sizes.len());
        if super::vmap::is_bracket(&node.target) {
            let Scope { values, vmap, .. } = env;
            let out = vmap.lower_bracket(op, node, &|n| values.get(n).copied(), &logical_rank).map_err(&err)?;
            if let Some((name, v, varies)) = out {
                let v = self.bind_output(op, name, &fx_value(graph, name), v).map_err(&err)?;
                env.insert(name, v);
                let rank = logical_rank(name).unwrap_or_default();
                env.vmap.bind(op, name, v, varies, rank);
            }
            return Ok(());
        }
        let key = target_key(&node.target);
        let node_name = fx::node_name(node);
        // Inside a torch.vmap region, an op reading batched values runs on operands padded to
        // every open level (`vmap`).
        let batched = if env.vmap.is_open() {
            let Scope { values, vmap, .. } = &*env;
            match vmap.plan(op, node, &key, &|n| values.get(n).copied(), &logical_rank).map_err(&err)? {
                super::vmap::Plan::Plain => None,
                super::vmap::Plan::Batched { values: operands, varies } => {
                    let mut values = values.clone();
                    values.extend(operands);
                    Some((values, varies))
                }
            }
        } else {
            None
        };
        let (slots, out_types) = output_slots(graph, node);
        let users = env.users.get(node_name).copied().unwrap_or(0);
        let meta = metadata::node_metadata(node, users, &mut self.scopes.borrow_mut());
        let saved_meta = std::mem::replace(&mut op.node_metadata, std::rc::Rc::new(meta));
        let translated = {
            let values = batched.as_ref().map_or(&env.values, |(v, _)| v);
            self.translate(op, graph, node, &key, values, out_types)
        };
        let result = translated.and_then(|(outputs, inplace, name)| {
            let new = self.finish_node(op, env, outputs, inplace, &slots, name, &err)?;
            let first = super::aliasing::first_tensor(node);
            match (new, first, super::aliasing::first_arg(&key)) {
                (Some(new), Some(target), _) => {
                    let output = slots.first().and_then(|s| s.as_ref()).map(|(n, _)| *n);
                    self.mutate(op, graph, index, env, target, output, new, &err)
                }
                (None, Some(input), FirstArg::Viewed(kind)) => {
                    for (out, _) in slots.iter().flatten() {
                        env.aliases.view(out, input, index, kind);
                    }
                    Ok(())
                }
                _ => Ok(()),
            }
        });
        if let (Ok(()), Some((_, varies))) = (&result, batched) {
            for (name, _) in slots.iter().flatten() {
                if let Some(&v) = env.get(name) {
                    env.vmap.bind(op, name, v, varies.clone(), logical_rank(name).unwrap_or_default());
                }
            }
        }
        op.node_metadata = saved_meta;
        result?;
        match op.memory_limit {
            Some(limit) if op.built_bytes > limit => Err(err(format!(
                "the constants built by the translations take {} bytes, over the memory limit of {limit} bytes \
                 (--max-memory); hint: raise the limit",
                op.built_bytes
            ))),
            _ => Ok(()),
        }
    }

    /// Run the translation of `node` (table key `key`) with its arguments read from `values`;
    /// returns its outputs, whether it functionalizes an in-place op, and the translation's name.
    fn translate<'t>(
        &'t self,
        op: &mut Builder,
        graph: &schema::Graph<'_>,
        node: &schema::Node<'_>,
        key: &str,
        values: &FxHashMap<&str, Value>,
        out_types: Vec<Option<crate::onnx::ir::DType>>,
    ) -> Result<(Result<super::dsl::Outputs, OpError>, bool, &'t str), LowerError> {
        let view = super::dsl::NodeView { node, graph };
        let (entry, inplace, functional_key) = resolve(self.opts.table, key, &view).ok_or_else(|| {
            let node_name = fx::node_name(node).to_string();
            LowerError::Unsupported(vec![UnsupportedOp {
                target: node.target.to_string(),
                key: key.to_string(),
                nodes: vec![node_name],
                reason: crate::translations::refused::reason(key),
            }])
        })?;
        let saved = std::mem::replace(&mut op.out_types, out_types);
        let renames = functional_key.as_deref().map(|f| argument_renames(key, f)).unwrap_or_default();
        let ctx = NodeCtx { node, graph, env: values, lowerer: self, renames: &renames };
        // A translation that panics is a bug in it: the export fails naming the node, not the process.
        let outputs = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (entry.func)(op, &ctx)))
            .unwrap_or_else(|panic| {
                Err(OpError::new(format!(
                    "internal error in the translation `{}`: {}; this is a bug in fxonnx, please report it with the archive",
                    entry.name,
                    crate::panic_message(panic.as_ref())
                )))
            });
        op.out_types = saved;
        Ok((outputs, inplace, entry.name))
    }

    /// An in-place op at node `index` changed `target` (and returned `output`) to `new`. When the
    /// tensor shares memory with others, the change is written back into its base, and every alias
    /// read afterwards is computed again from the new base (`aliasing`).
    #[allow(clippy::too_many_arguments)]
    fn mutate<'g>(
        &self,
        op: &mut Builder,
        graph: &'g schema::Graph<'_>,
        index: usize,
        env: &mut Scope<'g>,
        target: &'g str,
        output: Option<&'g str>,
        new: Value,
        err: &dyn Fn(String) -> LowerError,
    ) -> Result<(), LowerError> {
        let target = env.aliases.resolve(target);
        if let Some(o) = output {
            env.aliases.same(o, target);
        }
        env.insert(target, new);
        let base = env.aliases.base(target);
        let members: Vec<&'g str> = env.aliases.members(base).to_vec();
        if base == target && members.iter().all(|&m| env.aliases.resolve(m) == target) {
            // A tensor without views: only the results in-place ops returned for it alias it.
            for m in members {
                env.insert(m, new);
            }
            return Ok(());
        }
        let last = env.last_reads.get_or_insert_with(|| super::aliasing::last_reads(graph));
        let later: FxHashSet<&'g str> =
            members.iter().chain([&base]).filter(|&&m| last.get(m).is_some_and(|&at| at > index)).copied().collect();
        let read_later = |name: &str| later.contains(name);
        // Aliases made from `target` see the change without touching the base.
        let under: FxHashSet<&'g str> = members
            .iter()
            .copied()
            .filter(|&m| {
                let mut at = m;
                loop {
                    if env.aliases.resolve(at) == target {
                        return true;
                    }
                    match env.aliases.link(at) {
                        Some(super::aliasing::Link::View { input, .. }) => at = input,
                        Some(super::aliasing::Link::Same(t)) => at = t,
                        None => return false,
                    }
                }
            })
            .collect();
        let under_target = |m: &str| under.contains(m);
        let write_back =
            base != target && (read_later(base) || members.iter().any(|&m| !under_target(m) && read_later(m)));
        let refuse = |op_name: &str, alias: &str| {
            err(format!(
                "mutates `{target}` in place, which shares its memory with `{alias}` (read afterwards by {}), \
                 through `{op_name}`, an op that aliases its input only sometimes or reinterprets it \
                 (reshape, contiguous, to, view.dtype, expand, ...): fxonnx cannot tell what torch shared, \
                 and a guess could give wrong results. Workaround: export the program after \
                 `ep.run_decompositions()`, which makes the update functional, or write it out of place",
                super::aliasing::reader_after(graph, alias, index)
            ))
        };
        if write_back {
            let path = env.aliases.path(target).map_err(|through| refuse(through, base))?;
            let new_base = self.scatter_into_base(op, graph, env, base, &path, new, err)?;
            env.insert(base, new_base);
        }
        let node_of = |link: Option<super::aliasing::Link<'g>>| match link {
            Some(super::aliasing::Link::View { node, input, kind }) => Some((node, input, kind)),
            _ => None,
        };
        // Only aliases read afterwards, and those they are made from, are computed again.
        let mut needed: FxHashSet<&'g str> = FxHashSet::default();
        for &m in members.iter().rev() {
            if read_later(m) || needed.contains(m) {
                needed.insert(m);
                match env.aliases.link(m) {
                    Some(super::aliasing::Link::View { input, .. }) => needed.insert(input),
                    Some(super::aliasing::Link::Same(t)) => needed.insert(t),
                    None => false,
                };
            }
        }
        let mut stale: FxHashSet<&'g str> = FxHashSet::default();
        let mut rerun: FxHashSet<usize> = FxHashSet::default();
        for &m in &members {
            if m == target || !needed.contains(m) || (!write_back && !under_target(m)) {
                continue;
            }
            match env.aliases.link(m) {
                Some(super::aliasing::Link::Same(t)) => {
                    if let Some(&v) = env.get(t) {
                        env.insert(m, v);
                    }
                    if stale.contains(t) {
                        stale.insert(m);
                    }
                }
                link => {
                    let Some((node, input, kind)) = node_of(link) else { continue };
                    if kind == super::aliasing::ViewKind::Unknown || stale.contains(input) {
                        if read_later(m) {
                            return Err(refuse(fx::node_name(&graph.nodes[node]), m));
                        }
                        stale.insert(m);
                        continue;
                    }
                    if rerun.insert(node) {
                        self.recompute_view(op, graph, node, env)?;
                    }
                }
            }
        }
        // A view node with several outputs (split) translated again rebinds its outputs, the
        // mutated one included: it keeps the value the in-place op gave it.
        env.insert(target, new);
        Ok(())
    }

    /// Translate view node `node` again on its input's current value, binding its outputs anew.
    fn recompute_view<'g>(
        &self,
        op: &mut Builder,
        graph: &'g schema::Graph<'_>,
        node: usize,
        env: &mut Scope<'g>,
    ) -> Result<(), LowerError> {
        let node = &graph.nodes[node];
        let (slots, out_types) = output_slots(graph, node);
        let key = target_key(&node.target);
        let (outputs, _, name) = self.translate(op, graph, node, &key, &env.values, out_types)?;
        let err = node_error(node);
        self.finish_node(op, env, outputs, false, &slots, name, &err).map(|_| ())
    }

    /// `base` with the elements that `path` (view nodes from the base to the mutated view) selects
    /// replaced by `new`: the view chain is applied to the base's flat positions, and `new` is
    /// scattered to the positions it selects.
    #[allow(clippy::too_many_arguments)]
    fn scatter_into_base<'g>(
        &self,
        op: &mut Builder,
        graph: &'g schema::Graph<'_>,
        env: &mut Scope<'g>,
        base: &'g str,
        path: &[(usize, &'g str, &'g str)],
        new: Value,
        err: &dyn Fn(String) -> LowerError,
    ) -> Result<Value, LowerError> {
        use crate::onnx::ir::DType;
        let base_value = lookup(env, base)?;
        if op.info(base_value).complex {
            return Err(err(format!(
                "mutates a view of the complex tensor `{base}` in place; writing it back is not supported"
            )));
        }
        let shape = op.Shape(base_value).out();
        let base_shape = op.info(base_value).shape.clone();
        let fixed: Option<Vec<i64>> = base_shape
            .as_ref()
            .and_then(|s| s.iter().map(|d| if let Dim::Fixed(n) = d { Some(*n) } else { None }).collect());
        let mut positions = match fixed {
            // A small base of static shape: the positions are a constant, so the optimizer can fold
            // the whole write-back (a mask built by fill_ on slices becomes one constant).
            Some(dims) if dims.iter().product::<i64>() <= crate::onnx::operators::INPUT_LIMIT => {
                let n = dims.iter().product::<i64>();
                op.constant_tensor(TensorData::from_i64s(dims, &(0..n).collect::<Vec<i64>>()))
            }
            _ => {
                let numel = op.ReduceProd(shape, None).keepdims(0).out();
                let (zero, one) = (op.scalar_i64(0), op.scalar_i64(1));
                let flat_positions = op.Range(zero, numel, one);
                op.Reshape(flat_positions, shape).out()
            }
        };
        let info = op.info_mut(positions);
        info.dtype = Some(DType::Int64);
        info.shape = base_shape;
        for &(node, input, out) in path {
            let view = &graph.nodes[node];
            let slot = fx::output_slots(view).iter().position(|s| *s == Some(out)).unwrap_or(0);
            let out_types = vec![Some(DType::Int64); slot + 1];
            let saved = env.values.insert(input, positions);
            let key = target_key(&view.target);
            let translated = self.translate(op, graph, view, &key, &env.values, out_types);
            match saved {
                Some(v) => env.insert(input, v),
                None => {
                    env.values.remove(input);
                }
            }
            let (outputs, _, _) = translated?;
            let outputs = outputs.map_err(|e| err(e.message))?;
            positions = outputs.0.get(slot).copied().flatten().ok_or_else(|| {
                err(format!("writing back into `{base}`: the view `{out}` could not be applied to its positions"))
            })?;
            // The positions have the view's shape (later views on the path ask for its rank).
            if let FxValue::Tensor(meta) = fx_value(graph, out) {
                let (_, shape, _) = self.tensor_type(meta);
                if op.info(positions).name.is_empty() {
                    op.info_mut(positions).shape = Some(shape);
                }
            }
        }
        let dtype = op.dtype(base_value);
        let new = match (dtype, op.dtype(new)) {
            (Some(want), Some(have)) if want != have => op.Cast(new).to(want as i64).out(),
            _ => new,
        };
        let minus_one = op.const_i64s(&[-1]);
        let view_shape = op.Shape(positions).out();
        let updates = op.Expand(new, view_shape);
        let updates = op.Reshape(updates, minus_one).out();
        let indices = op.Reshape(positions, minus_one).out();
        let flat = op.Reshape(base_value, minus_one).out();
        let scattered = op.ScatterElements(flat, indices, updates).axis(0).out();
        let new_base = op.Reshape(scattered, shape).out();
        let (dtype, shape) = (op.info(base_value).dtype, op.info(base_value).shape.clone());
        let info = op.info_mut(new_base);
        info.dtype = dtype;
        info.shape = shape;
        Ok(new_base)
    }

    /// Bind a translated node's results to its FX outputs (after checking the builder had no errors).
    #[allow(clippy::too_many_arguments)]
    /// For an in-place op, returns the mutated tensor's new value.
    fn finish_node<'g>(
        &self,
        op: &mut Builder,
        env: &mut Scope<'g>,
        outputs: Result<super::dsl::Outputs, OpError>,
        inplace: bool,
        slots: &[Option<(&'g str, FxValue<'g>)>],
        translation: &str,
        err: &dyn Fn(String) -> LowerError,
    ) -> Result<Option<Value>, LowerError> {
        let outputs = outputs.map_err(|e| err(e.message))?;
        let build_errors = op.take_errors();
        if let Some(e) = build_errors.first() {
            return Err(err(format!("{e}; hint: export with a newer --opset")));
        }
        let produced = outputs.0;
        if produced.len() < slots.iter().filter(|s| s.is_some()).count().min(1) && !slots.is_empty() {
            return Err(err(format!(
                "the translation `{}` returned {} value(s) for {} output(s)",
                translation,
                produced.len(),
                slots.len()
            )));
        }
        for (i, slot) in slots.iter().enumerate() {
            let Some((name, fx_type)) = slot else { continue };
            let v = match produced.get(i).copied().flatten() {
                Some(v) => v,
                // An output nothing reads (torch names some `_unused_`) need not be computed.
                None if name.contains("_unused_") || env.users.get(name).is_none_or(|&n| n == 0) => continue,
                None => {
                    return Err(err(format!(
                        "the translation `{}` did not compute output {i} (`{name}`), which later nodes use",
                        translation
                    )))
                }
            };
            let v = self.bind_output(op, name, fx_type, v).map_err(err)?;
            env.insert(name, v);
        }
        if !inplace {
            return Ok(None);
        }
        // Functionalize: the mutated tensor's new value is the result.
        let first = slots.first().and_then(|s| s.as_ref()).map(|(n, _)| *n);
        Ok(first.and_then(|n| env.get(n).copied()).or(produced.first().copied().flatten()))
    }

    /// Give the value computed for FX value `name` (of type `fx_type`) that value's name, type
    /// and shape. A recorded shape that contradicts what the graph computes (another rank, or
    /// another static size where both are static) is an error: the archive's metadata is corrupt,
    /// and the model would declare shapes its own nodes refute.
    fn bind_output(&self, op: &mut Builder, name: &str, fx_type: &FxValue, v: Value) -> Result<Value, String> {
        let FxValue::Tensor(meta) = fx_type else {
            if matches!(fx_type, FxValue::Scalar(None)) {
                return Err(format!(
                    "the program records no type for `{name}` (no tensor_values or sym_*_values entry); the archive is \
                     corrupt"
                ));
            }
            // A SymInt / SymBool / SymFloat: a 0-d tensor.
            let dtype = fx_type.dtype();
            let v = match (dtype, op.dtype(v)) {
                (Some(want), Some(have)) if want != have => op.Cast(v).to(want as i64).out(),
                _ => v,
            };
            if op.info(v).name.is_empty() {
                self.name(op, v, name);
                let info = op.info_mut(v);
                info.dtype = info.dtype.or(dtype);
                info.shape.get_or_insert_with(Vec::new);
            }
            return Ok(v);
        };
        let (dtype, shape, complex) = self.tensor_type(meta);
        if let Some(computed) = op.shape(v) {
            let clash = computed.len() != shape.len()
                || computed.iter().zip(&shape).any(|(a, b)| matches!((a, b), (Dim::Fixed(x), Dim::Fixed(y)) if x != y));
            if clash {
                return Err(format!(
                    "the program records the shape {} for `{name}`, but its inputs give {}; the archive's metadata is inconsistent",
                    dims_text(&shape),
                    dims_text(computed)
                ));
            }
        }
        let v = match op.dtype(v) {
            Some(have) if have != dtype => op.Cast(v).to(dtype as i64).out(),
            _ => v,
        };
        if op.info(v).name.is_empty() {
            self.name(op, v, name);
            let info = op.info_mut(v);
            info.dtype = Some(dtype);
            info.shape = Some(shape);
            info.complex = complex;
        }
        Ok(v)
    }
}

/// What a graph says of an FX value: a tensor's metadata, or a symbolic scalar's ONNX type
/// (`None` when the graph does not list the value).
enum FxValue<'g> {
    Tensor(&'g schema::ValueMeta<'g>),
    Scalar(Option<crate::onnx::ir::DType>),
}

impl FxValue<'_> {
    /// The ONNX element type.
    fn dtype(&self) -> Option<crate::onnx::ir::DType> {
        match self {
            FxValue::Tensor(m) => crate::pt2::scalar_type(m.dtype).map(onnx_dtype),
            FxValue::Scalar(t) => *t,
        }
    }
}

/// Each output of a node: its FX name and type (`None` for an output without a name).
type Slots<'g> = Vec<Option<(&'g str, FxValue<'g>)>>;

/// The node's [`Slots`] (looked up once for the translation and the binding), and the element
/// types a translation sees as `op.out_dtype(i)`.
fn output_slots<'g>(
    graph: &'g schema::Graph<'_>,
    node: &'g schema::Node<'_>,
) -> (Slots<'g>, Vec<Option<crate::onnx::ir::DType>>) {
    let slots: Slots = fx::output_slots(node).into_iter().map(|s| s.map(|n| (n, fx_value(graph, n)))).collect();
    let out_types = slots.iter().map(|s| s.as_ref().and_then(|(_, t)| t.dtype())).collect();
    (slots, out_types)
}

/// The error of a failed node: its name and target with `message`.
/// The recorded shapes and element types of `model` against what its nodes compute
/// ([`crate::onnx::check::check`]): a contradiction is an error naming the FX node. Run on
/// the translated graph and again on the optimized one, where folded shape computations let more
/// shapes be computed.
pub fn check_types(model: &Model) -> Result<(), LowerError> {
    crate::onnx::check::check(model).map_err(|c| LowerError::Node {
        node: c.node,
        target: format!("ONNX {}", c.op),
        message: if c.inconsistent {
            format!("{}; the archive's metadata is inconsistent (corrupt or edited)", c.message)
        } else {
            format!("{}, so no valid model computes this node; hint: run it in a type ONNX accepts", c.message)
        },
    })
}

fn node_error<'n>(node: &'n schema::Node<'_>) -> impl Fn(String) -> LowerError + 'n {
    move |message| LowerError::Node { node: fx::node_name(node).to_string(), target: node.target.to_string(), message }
}

fn fx_value<'g>(graph: &'g schema::Graph<'_>, name: &str) -> FxValue<'g> {
    use crate::onnx::ir::DType;
    if let Some(m) = graph.tensor_values.get(name) {
        return FxValue::Tensor(m);
    }
    FxValue::Scalar(if graph.sym_int_values.contains_key(name) {
        Some(DType::Int64)
    } else if graph.sym_bool_values.contains_key(name) {
        Some(DType::Bool)
    } else if graph.sym_float_values.contains_key(name) {
        Some(DType::Float)
    } else {
        None
    })
}

impl SubgraphLowerer for Lowerer<'_> {
    fn inline_subgraph(
        &self,
        op: &mut Builder,
        graph: &schema::Graph,
        inputs: &[Value],
    ) -> Result<Vec<Value>, OpError> {
        let mut env =
            Scope { users: metadata::user_counts(graph), checks_only: checks_only(graph), ..Default::default() };
        for (input, &v) in graph.inputs.iter().zip(inputs) {
            if let Some(n) = arg_name(input) {
                env.insert(n, v);
            }
        }
        self.lower_body(op, graph, &mut env)
    }
}

impl Lowerer<'_> {
    /// Lower the nodes of a subgraph and return the values of its outputs.
    fn lower_body<'g>(
        &self,
        op: &mut Builder,
        graph: &'g schema::Graph<'_>,
        env: &mut Scope<'g>,
    ) -> Result<Vec<Value>, OpError> {
        for index in 0..graph.nodes.len() {
            self.lower_node(op, graph, index, env).map_err(|e| OpError::new(e.to_string()))?;
        }
        graph.outputs.iter().map(|o| self.value_of(op, o, env).map_err(|e| OpError::new(e.to_string()))).collect()
    }
}

/// `[2, s0, 8]`.
fn dims_text(dims: &[Dim]) -> String {
    format!("[{}]", dims.iter().map(Dim::to_string).collect::<Vec<_>>().join(", "))
}
