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

use crate::fx::{self, Program};
use crate::hash::{FxHashMap, FxHashSet};
use crate::onnx::builder::Builder;
use crate::onnx::ir::{Dim, Model, Value};
use crate::pt2::schema::{self, Argument, SymBoolArgument, SymFloatArgument, SymIntArgument};
use crate::pt2::ScalarType;

use super::metadata;
use crate::translate::dsl::{onnx_dtype, target_key, NodeCtx, OpError, SubgraphLowerer, TranslationTable};
use aliasing::{Aliases, FirstArg};

mod aliasing;
mod dispatch;
mod error;
mod inputs;
mod outputs;

use dispatch::{argument_renames, checks_only};
pub use dispatch::{find_unsupported, resolve, serving_key, visit_nodes};
pub use error::{TranslateError, UnsupportedOp};
use inputs::bind_inputs;
use outputs::{arg_name, lookup};

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
    vmap: crate::translate::vmap::Vmap<'g>,
}

impl<'g> Scope<'g> {
    fn insert(&mut self, name: &'g str, v: Value) {
        self.values.insert(name, v);
    }

    fn get(&self, name: &str) -> Option<&Value> {
        self.values.get(name)
    }
}

/// The most ONNX nodes one FX node's translation writes (its subgraphs' nodes apart): 17 times the
/// most any operator-corpus case or model of the DEV sweep needs (3,735, for `linalg_pinv`). More
/// comes from an argument no real model has (a count of windows, terms or matrices), and the
/// export fails naming the node instead of writing a model of millions of nodes.
pub const MAX_NODES_PER_NODE: u64 = 1 << 16;

struct Lowerer<'a> {
    opts: &'a LowerOptions<'a>,
    /// Values already named (ONNX names are global across subgraphs), found by their name: the
    /// names themselves live in the values, so the set holds no copy of them.
    names: RefCell<hashbrown::HashTable<Value>>,
    /// The input and output names the user gave: each is its user value's, exactly; a value of
    /// the program that would take one is named apart (`linear_1`).
    reserved: FxHashSet<&'a str>,
    /// Per name asked for more than once, the suffix to try next (`x_3` after `x_2`): naming n
    /// values alike stays linear.
    next_suffix: RefCell<FxHashMap<String, usize>>,
    warnings: RefCell<Vec<String>>,
    /// Module-stack strings shared by the metadata of many nodes.
    scopes: RefCell<metadata::ScopeCache>,
    /// Symbolic sizes already parsed (every tensor of a dynamic batch repeats the same few).
    dims: RefCell<FxHashMap<String, Dim>>,
    /// ONNX nodes written by the FX nodes of subgraphs lowered inside the node being lowered (a
    /// control-flow body's), which do not count as its own.
    nested_nodes: std::cell::Cell<u64>,
}

/// Lower a resolved program into an ONNX model.
pub fn lower(program: &Program<'_>, opts: &LowerOptions<'_>) -> Result<(Model, Vec<String>), TranslateError> {
    let unsupported = find_unsupported(program.graph(), opts.table);
    if !unsupported.is_empty() {
        return Err(TranslateError::Unsupported(unsupported));
    }
    let lw = Lowerer {
        opts,
        names: RefCell::new(hashbrown::HashTable::with_capacity(program.graph().nodes.len() * 2)),
        reserved: opts
            .input_names
            .iter()
            .chain(opts.output_names)
            .map(String::as_str)
            .filter(|n| !n.is_empty())
            .collect(),
        next_suffix: Default::default(),
        warnings: RefCell::new(Vec::new()),
        scopes: Default::default(),
        dims: Default::default(),
        nested_nodes: Default::default(),
    };
    let graph = program.graph();
    let mut op = Builder::new(opts.opset);
    op.bound = crate::onnx::ir::MemoryBound::new(opts.max_memory);
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
    let (bound, (users, graph_metadata)) = crate::util::join_if(
        large,
        || bind_inputs(program, &lw, &mut op, &mut env),
        || (metadata::user_counts(graph), metadata::graph_metadata(&program.loaded().program)),
    );
    env.users = users;
    env.checks_only = checks_only(graph);
    op.graph_mut().metadata = graph_metadata;
    let bound = bound?;

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

    let final_outputs = outputs::bind_outputs(program, &lw, &mut op, &env, &bound, debug)?;
    op.graph_mut().outputs = final_outputs;
    let mut warnings = lw.warnings.into_inner();
    warnings.append(&mut op.warnings);
    let model = op.finish();
    // The shapes recorded in the program become the model's value_info, and the optimizer trusts
    // them: they must agree with what the nodes compute.
    check_types(&model)?;
    Ok((model, warnings))
}

impl Lowerer<'_> {
    /// Give `v` the name `wanted`, made unique across the model.
    /// Name `v` after `wanted`, or `wanted_<k>` when a value has that name already or the user
    /// gave it to an input or output.
    fn name(&self, op: &mut Builder, v: Value, wanted: &str) {
        self.name_value(op, v, wanted, false);
    }

    /// Name the user input or output `v` with the name the user gave it, exactly.
    fn name_as_given(&self, op: &mut Builder, v: Value, given: &str) {
        self.name_value(op, v, given, true);
    }

    /// Take `v`'s name away (to give it another).
    fn unname(&self, op: &mut Builder, v: Value) {
        let hash = |s: &str| std::hash::BuildHasher::hash_one(&crate::hash::FxBuild::default(), s);
        let name = std::mem::take(&mut op.info_mut(v).name);
        if let Ok(entry) = self.names.borrow_mut().find_entry(hash(&name), |&u| u == v) {
            entry.remove();
        }
    }

    fn name_value(&self, op: &mut Builder, v: Value, wanted: &str, given: bool) {
        debug_assert!(op.info(v).name.is_empty(), "the name set finds values by their names: one name each");
        let mut names = self.names.borrow_mut();
        let mut suffixes = self.next_suffix.borrow_mut();
        let hash = |s: &str| std::hash::BuildHasher::hash_one(&crate::hash::FxBuild::default(), s);
        let mut name = wanted.to_string();
        // A user's name is reserved for its own value (`check_names` refused two alike); another
        // value asking for it gets a suffixed one.
        let mut free = |name: &str, first: bool| {
            if !(given && first) && self.reserved.contains(name) {
                return false;
            }
            let h = hash(name);
            match names.entry(h, |&u| op.info(u).name == name, |&u| hash(&op.info(u).name)) {
                hashbrown::hash_table::Entry::Vacant(slot) => {
                    slot.insert(v);
                    true
                }
                hashbrown::hash_table::Entry::Occupied(_) => false,
            }
        };
        if !free(&name, true) {
            debug_assert!(!given, "a user's name `{wanted}` was taken before its value was named");
            let k = suffixes.entry(wanted.to_string()).or_insert(1);
            loop {
                name = format!("{wanted}_{k}");
                *k += 1;
                if free(&name, false) {
                    break;
                }
            }
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
    fn value_of(&self, op: &mut Builder, arg: &Argument, env: &Scope) -> Result<Value, TranslateError> {
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
            _ => Err(TranslateError::program(format!("output of kind {} cannot be an ONNX graph output", arg.kind()))),
        }
    }

    fn lower_node<'g>(
        &self,
        op: &mut Builder,
        graph: &'g schema::Graph<'_>,
        index: usize,
        env: &mut Scope<'g>,
    ) -> Result<(), TranslateError> {
        if env.checks_only.get(index) == Some(&true) {
            return Ok(());
        }
        let node = &graph.nodes[index];
        let err = node_error(node);
        let logical_rank = |n: &str| graph.tensor_values.get(n).map(|m| m.sizes.len());
        if crate::translate::vmap::is_bracket(&node.target) {
            let Scope { values, vmap, .. } = env;
            let out =
                vmap.lower_bracket(op, node, &|n| values.get(n).copied(), &logical_rank).map_err(|e| err(e.into()))?;
            if let Some((name, v, varies)) = out {
                let v = self.bind_output(op, name, &fx_value(graph, name), v).map_err(|e| err(e.into()))?;
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
                crate::translate::vmap::Plan::Plain => None,
                crate::translate::vmap::Plan::Batched { values: operands, varies } => {
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
        let (nodes_before, outer_nested) = (op.nodes_appended, self.nested_nodes.replace(0));
        let translated = {
            let values = batched.as_ref().map_or(&env.values, |(v, _)| v);
            self.translate(op, graph, node, &key, values, out_types)
        };
        let appended = op.nodes_appended - nodes_before;
        let own_nodes = appended - self.nested_nodes.get();
        self.nested_nodes.set(outer_nested + appended);
        let over_bound = op.over_bound.take();
        let result = translated.and_then(|(outputs, inplace, name)| {
            // What a translation built past the bounds fails the node (its own error first).
            if outputs.is_ok() {
                if let Some(why) = over_bound {
                    return Err(err(why.into()));
                }
                if own_nodes > MAX_NODES_PER_NODE {
                    return Err(err(OpError::new(format!(
                        "the translation `{name}` wrote {own_nodes} ONNX nodes for this node, more than any real \
                         model needs (at most {MAX_NODES_PER_NODE}): an argument asks for more repetitions than a \
                         model could mean"
                    ))));
                }
            }
            let new = self.finish_node(op, env, outputs, inplace, &slots, name, &err)?;
            let first = aliasing::first_tensor(node);
            match (new, first, aliasing::first_arg(&key)) {
                (Some(new), Some(target), _) => {
                    let output = slots.first().and_then(|s| s.as_ref()).map(|(n, _)| *n);
                    self.mutate(op, graph, index, env, target, output, new, &err)
                }
                (None, Some(input), FirstArg::Viewed(kind)) => {
                    let meta = match fx_value(graph, input) {
                        FxValue::Tensor(meta) => Some(meta),
                        FxValue::Scalar(_) => None,
                    };
                    let kind = aliasing::view_kind(&key, kind, meta);
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
        result
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
    ) -> Result<(Result<crate::translate::dsl::Outputs, OpError>, bool, &'t str), TranslateError> {
        let view = crate::translate::dsl::NodeView { node, graph };
        let (entry, inplace, functional_key) = resolve(self.opts.table, key, &view).ok_or_else(|| {
            let node_name = fx::node_name(node).to_string();
            TranslateError::Unsupported(vec![UnsupportedOp {
                target: node.target.to_string(),
                key: key.to_string(),
                nodes: vec![node_name],
                reason: crate::translate::refused::reason(key),
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
                    crate::util::panic_message(panic.as_ref()).replace('\n', " ")
                )))
            });
        op.out_types = saved;
        Ok((outputs, inplace, entry.name))
    }

    /// Bind a translated node's results to its FX outputs (after checking the builder had no errors).
    #[allow(clippy::too_many_arguments)]
    /// For an in-place op, returns the mutated tensor's new value.
    fn finish_node<'g>(
        &self,
        op: &mut Builder,
        env: &mut Scope<'g>,
        outputs: Result<crate::translate::dsl::Outputs, OpError>,
        inplace: bool,
        slots: &[Option<(&'g str, FxValue<'g>)>],
        translation: &str,
        err: &dyn Fn(OpError) -> TranslateError,
    ) -> Result<Option<Value>, TranslateError> {
        let outputs = outputs.map_err(err)?;
        let build_errors = op.take_errors();
        if let Some(e) = build_errors.first() {
            return Err(err(OpError::new(e.to_string()).with_hint("export with a newer --opset")));
        }
        let produced = outputs.0;
        if produced.len() < slots.iter().filter(|s| s.is_some()).count().min(1) && !slots.is_empty() {
            return Err(err(format!(
                "the translation `{}` returned {} value(s) for {} output(s)",
                translation,
                produced.len(),
                slots.len()
            )
            .into()));
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
                    )
                    .into()))
                }
            };
            let v = self.bind_output(op, name, fx_type, v).map_err(|e| err(e.into()))?;
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
            match info.rank_from_data {
                Some(_) => info.rank_from_data = Some(shape.len()),
                None => info.shape = Some(shape),
            }
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
pub fn check_types(model: &Model) -> Result<(), TranslateError> {
    crate::onnx::check::check(model).map_err(|c| {
        let (message, hint) = if c.translation {
            (c.message, None)
        } else if c.inconsistent {
            (format!("{}; the archive's metadata is inconsistent (corrupt or edited)", c.message), None)
        } else {
            (
                format!("{}, so no valid model computes this node", c.message),
                Some("run it in a type ONNX accepts".into()),
            )
        };
        TranslateError::Node { node: c.node, target: format!("ONNX {}", c.op), message, hint }
    })
}

/// The error of node `node`: its name and target with what went wrong (a message, or an
/// [`OpError`] with its hint).
fn node_error<'n>(node: &'n schema::Node<'_>) -> impl Fn(OpError) -> TranslateError + 'n {
    move |e| {
        let OpError { message, hint } = e;
        TranslateError::Node { node: fx::node_name(node).to_string(), target: node.target.to_string(), message, hint }
    }
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
