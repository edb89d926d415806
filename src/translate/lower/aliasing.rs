//! Tensors that share memory: views of a base, and the results in-place ops return.
//!
//! The driver functionalizes an in-place op by binding the mutated name to the op's result. That
//! alone is exact only while nothing else aliases the tensor: torch's mutation of a view is seen
//! through its base and every other view of that base (Swin's shifted-window mask is built by
//! `fill_` on slices of `new_zeros`). So the driver keeps, per graph, how every alias was made
//! ([`Aliases`]); a mutation of a view is written back into its base (here, [`Lowerer::mutate`]),
//! and every alias read afterwards is computed again from the new base.
//!
//! Which ops alias and which mutate comes from the ATen schemas' alias annotations: a view takes
//! `Tensor(a) self` and returns `Tensor(a)`; an in-place op takes `Tensor(a!) self`. Of the views,
//! only those whose elements are a fixed selection of the base's can be written back through
//! ([`ViewKind::Exact`]); ops that alias only sometimes (`reshape`, `contiguous`, `to` copy when
//! they must) or reinterpret the bytes (`view.dtype`, `view_as_real`) make a mutation that reaches
//! them an error, never a guess. The exception is known from the program: `reshape` of a tensor its
//! TensorMeta records as contiguous (strides the products of the sizes after them) is a view.

use super::outputs::lookup;
use super::{fx_value, node_error, output_slots, FxValue, Lowerer, Scope, TranslateError};
use crate::fx;
use crate::hash::FxHashMap;
use crate::hash::FxHashSet;
use crate::onnx::builder::Builder;
use crate::onnx::ir::{Dim, TensorData, Value};
use crate::pt2::schema::{self, Argument};
use crate::translate::aten_schemas;
use crate::translate::dsl::{target_key, OpError};

/// How an op treats its first argument, by the alias annotations of its schema.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum FirstArg {
    /// The outputs are views of it.
    Viewed(ViewKind),
    /// The op mutates it in place (`Tensor(a!) self`).
    Mutated,
    Other,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum ViewKind {
    /// Every element of the view is one element of the base, no two the same: a mutation of the
    /// view can be scattered back into the base.
    Exact,
    /// Elements repeat (`expand`, `unfold`, `as_strided`): computed again from a changed base, but
    /// not written through.
    Repeating,
    /// A view only sometimes (`reshape` copies a non-contiguous input), or a reinterpretation of
    /// the bytes (`view.dtype`, complex views): the lowering cannot know what torch shared.
    Unknown,
}

/// Views that select elements of their base, each at most once.
const EXACT: &[&str] = &[
    "adjoint",
    "alias",
    "chunk",
    "detach",
    "diagonal",
    "dsplit",
    "hsplit",
    "lift_fresh",
    "moveaxis",
    "movedim",
    "narrow",
    "permute",
    "select",
    "slice",
    "split",
    "split_with_sizes",
    "squeeze",
    "swapaxes",
    "swapdims",
    "t",
    "tensor_split",
    "transpose",
    "unbind",
    "unflatten",
    "unsqueeze",
    "view",
    "view_as",
    "vsplit",
    "_reshape_alias",
];

/// Views whose elements may repeat.
const REPEATING: &[&str] = &["as_strided", "broadcast_to", "expand", "expand_as", "unfold"];

/// How the op of table key `key` (`aten::slice.Tensor`) treats its first argument.
pub(crate) fn first_arg(key: &str) -> FirstArg {
    let Some(schema) = aten_schemas::schema(key) else { return FirstArg::Other };
    let Some(&first) = aten_schemas::arguments(schema).first() else { return FirstArg::Other };
    if first.starts_with("Tensor(a!)") {
        return FirstArg::Mutated;
    }
    let viewed = first.starts_with("Tensor(a)") || first.starts_with("Tensor(a -> *)");
    if !(viewed && aten_schemas::returns(schema).contains("Tensor(a)")) {
        return FirstArg::Other;
    }
    let op = key.split_once("::").map_or(key, |(_, rest)| rest.split('.').next().unwrap_or(rest));
    // `view.dtype` reinterprets the bytes; the other `view` overloads reshape.
    let kind = if EXACT.contains(&op) && key != "aten::view.dtype" {
        ViewKind::Exact
    } else if REPEATING.contains(&op) {
        ViewKind::Repeating
    } else {
        ViewKind::Unknown
    };
    FirstArg::Viewed(kind)
}

/// How the view op of table key `key` aliases its input `input` in this program: as
/// [`first_arg`] says, except that `reshape` of a tensor the program records as contiguous is a
/// view selecting every element once (torch's `reshape` is `view` then), which a mutation can be
/// written back through.
pub(crate) fn view_kind(key: &str, kind: ViewKind, input: Option<&schema::ValueMeta>) -> ViewKind {
    match (kind, key, input) {
        (ViewKind::Unknown, "aten::reshape.default", Some(meta)) if contiguous(meta) => ViewKind::Exact,
        _ => kind,
    }
}

/// Whether a tensor of type `meta` is contiguous at every size the program allows: from the last
/// dim on, each stride is the product of the sizes after it (a dim of size 1 may have any), the
/// sizes and strides compared as products of symbols and a number. Another form of size (a sum, a
/// division) is not known to be contiguous.
fn contiguous(meta: &schema::ValueMeta) -> bool {
    let Some(strides) = meta.strides() else { return false };
    if strides.len() != meta.sizes.len() {
        return false;
    }
    let mut expected = Monomial(1, Vec::new());
    for (size, stride) in meta.sizes.iter().zip(&strides).rev() {
        let Some(size) = Monomial::of(size) else { return false };
        if size.0 == 0 {
            // torch calls a tensor without elements contiguous.
            return true;
        }
        if size == Monomial(1, Vec::new()) {
            continue;
        }
        if Monomial::of(stride).as_ref() != Some(&expected) {
            return false;
        }
        expected = expected.times(&size);
    }
    true
}

/// A product of a number and symbols (sorted, repeated for powers): the form torch gives the sizes
/// and strides of contiguous tensors.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Monomial(i64, Vec<String>);

impl Monomial {
    fn of(s: &schema::SymInt) -> Option<Monomial> {
        match s {
            schema::SymInt::AsInt(n) => Some(Monomial(*n, Vec::new())),
            schema::SymInt::AsExpr(e) => Monomial::of_expr(&crate::sym::parse(&e.expr_str).ok()?),
        }
    }

    fn of_expr(e: &crate::sym::SymExpr) -> Option<Monomial> {
        use crate::sym::{Func, SymExpr};
        match e {
            SymExpr::Int(n) => Some(Monomial(*n, Vec::new())),
            SymExpr::Symbol(s) => Some(Monomial(1, vec![s.clone()])),
            SymExpr::Call(Func::Mul, args) => {
                args.iter().try_fold(Monomial(1, Vec::new()), |acc, a| Some(acc.times(&Monomial::of_expr(a)?)))
            }
            SymExpr::Call(Func::Pow, args) => match args.as_slice() {
                [SymExpr::Symbol(s), SymExpr::Int(k)] if (1..=8).contains(k) => {
                    Some(Monomial(1, vec![s.clone(); *k as usize]))
                }
                _ => None,
            },
            _ => None,
        }
    }

    fn times(&self, other: &Monomial) -> Monomial {
        let mut symbols: Vec<String> = self.1.iter().chain(&other.1).cloned().collect();
        symbols.sort();
        Monomial(self.0.saturating_mul(other.0), symbols)
    }
}

/// How an alias was made.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Link<'g> {
    /// Output of a view op (node `node` of the graph) applied to `input`.
    View { node: usize, input: &'g str, kind: ViewKind },
    /// The result an in-place op returned: the same tensor as `target`.
    Same(&'g str),
}

/// The aliases of one graph, by FX name.
#[derive(Default)]
pub(crate) struct Aliases<'g> {
    /// Alias → (its base, how it was made). A base has no entry.
    links: FxHashMap<&'g str, (&'g str, Link<'g>)>,
    /// Base → its aliases, in the order they were made.
    members: FxHashMap<&'g str, Vec<&'g str>>,
}

impl<'g> Aliases<'g> {
    /// The tensor whose memory `name` shares (`name` itself for a base).
    pub fn base(&self, name: &'g str) -> &'g str {
        self.links.get(name).map_or(name, |(base, _)| *base)
    }

    pub fn link(&self, name: &str) -> Option<Link<'g>> {
        self.links.get(name).map(|(_, link)| *link)
    }

    pub fn members(&self, base: &str) -> &[&'g str] {
        self.members.get(base).map_or(&[], Vec::as_slice)
    }

    /// The tensor an in-place result stands for (following `Same` links).
    pub fn resolve(&self, mut name: &'g str) -> &'g str {
        while let Some(Link::Same(target)) = self.link(name) {
            name = target;
        }
        name
    }

    fn add(&mut self, alias: &'g str, of: &'g str, link: Link<'g>) {
        let base = self.base(of);
        self.links.insert(alias, (base, link));
        self.members.entry(base).or_default().push(alias);
    }

    /// `out` is output of view node `node` applied to `input`.
    pub fn view(&mut self, out: &'g str, input: &'g str, node: usize, kind: ViewKind) {
        self.add(out, input, Link::View { node, input, kind });
    }

    /// `out` is the result an in-place op returned for `target`.
    pub fn same(&mut self, out: &'g str, target: &'g str) {
        if out != target {
            self.add(out, target, Link::Same(target));
        }
    }

    /// The view nodes from `name`'s base to `name`, outermost first: `(node, its input, the output
    /// on the path)`. An error names the first view that cannot be written through.
    pub fn path(&self, name: &'g str) -> Result<Vec<(usize, &'g str, &'g str)>, &'g str> {
        let mut path = Vec::new();
        let mut at = self.resolve(name);
        while let Some(Link::View { node, input, kind }) = self.link(at) {
            if kind != ViewKind::Exact {
                return Err(at);
            }
            path.push((node, input, at));
            at = self.resolve(input);
        }
        path.reverse();
        Ok(path)
    }
}

/// Per FX name, the index of the last node of `graph` that reads it (`usize::MAX` for graph
/// outputs).
pub(crate) fn last_reads<'g>(graph: &'g schema::Graph<'_>) -> FxHashMap<&'g str, usize> {
    let mut last: FxHashMap<&'g str, usize> = FxHashMap::default();
    for (i, node) in graph.nodes.iter().enumerate() {
        for input in &node.inputs {
            crate::fx::for_each_value_name(&input.arg, &mut |name| {
                last.insert(name, i);
            });
        }
    }
    for output in &graph.outputs {
        crate::fx::for_each_value_name(output, &mut |name| {
            last.insert(name, usize::MAX);
        });
    }
    last
}

/// The first node after `after` that reads `name`, for messages.
pub(crate) fn reader_after(graph: &schema::Graph, name: &str, after: usize) -> String {
    for node in graph.nodes.iter().skip(after + 1) {
        let mut reads = false;
        for input in &node.inputs {
            crate::fx::for_each_value_name(&input.arg, &mut |n| reads |= n == name);
        }
        if reads {
            return format!("node `{}`", crate::fx::node_name(node));
        }
    }
    "the graph's outputs".to_string()
}

/// The name of a node's first argument, when it is a tensor.
pub(crate) fn first_tensor<'g>(node: &'g schema::Node<'_>) -> Option<&'g str> {
    match node.inputs.first().map(|a| &a.arg) {
        Some(Argument::Tensor(t)) => Some(t.name.as_str()),
        _ => None,
    }
}

impl Lowerer<'_> {
    /// An in-place op at node `index` changed `target` (and returned `output`) to `new`. When the
    /// tensor shares memory with others, the change is written back into its base, and every alias
    /// read afterwards is computed again from the new base.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn mutate<'g>(
        &self,
        op: &mut Builder,
        graph: &'g schema::Graph<'_>,
        index: usize,
        env: &mut Scope<'g>,
        target: &'g str,
        output: Option<&'g str>,
        new: Value,
        err: &dyn Fn(OpError) -> TranslateError,
    ) -> Result<(), TranslateError> {
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
        let last = env.last_reads.get_or_insert_with(|| last_reads(graph));
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
                        Some(Link::View { input, .. }) => at = input,
                        Some(Link::Same(t)) => at = t,
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
                 (reshape of a tensor not recorded as contiguous, contiguous, to, view.dtype, expand, ...): fxonnx \
                 cannot tell what torch shared, \
                 and a guess could give wrong results. Workaround: export the program after \
                 `ep.run_decompositions()`, which makes the update functional, or write it out of place",
                reader_after(graph, alias, index)
            )
            .into())
        };
        if write_back {
            let path = env.aliases.path(target).map_err(|through| refuse(through, base))?;
            let new_base = self.scatter_into_base(op, graph, env, base, &path, new, err)?;
            env.insert(base, new_base);
        }
        let node_of = |link: Option<Link<'g>>| match link {
            Some(Link::View { node, input, kind }) => Some((node, input, kind)),
            _ => None,
        };
        // Only aliases read afterwards, and those they are made from, are computed again.
        let mut needed: FxHashSet<&'g str> = FxHashSet::default();
        for &m in members.iter().rev() {
            if read_later(m) || needed.contains(m) {
                needed.insert(m);
                match env.aliases.link(m) {
                    Some(Link::View { input, .. }) => needed.insert(input),
                    Some(Link::Same(t)) => needed.insert(t),
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
                Some(Link::Same(t)) => {
                    if let Some(&v) = env.get(t) {
                        env.insert(m, v);
                    }
                    if stale.contains(t) {
                        stale.insert(m);
                    }
                }
                link => {
                    let Some((node, input, kind)) = node_of(link) else { continue };
                    if kind == ViewKind::Unknown || stale.contains(input) {
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
    ) -> Result<(), TranslateError> {
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
        err: &dyn Fn(OpError) -> TranslateError,
    ) -> Result<Value, TranslateError> {
        use crate::onnx::ir::DType;
        let base_value = lookup(env, base)?;
        if op.info(base_value).complex {
            return Err(err(format!(
                "mutates a view of the complex tensor `{base}` in place; writing it back is not supported"
            )
            .into()));
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
            let outputs = outputs.map_err(err)?;
            positions = outputs.0.get(slot).copied().flatten().ok_or_else(|| {
                err(format!("writing back into `{base}`: the view `{out}` could not be applied to its positions")
                    .into())
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alias_annotations() {
        use ViewKind::*;
        assert_eq!(first_arg("aten::slice.Tensor"), FirstArg::Viewed(Exact));
        assert_eq!(first_arg("aten::select.int"), FirstArg::Viewed(Exact));
        assert_eq!(first_arg("aten::view.default"), FirstArg::Viewed(Exact));
        assert_eq!(first_arg("aten::transpose.int"), FirstArg::Viewed(Exact));
        assert_eq!(first_arg("aten::split.Tensor"), FirstArg::Viewed(Exact));
        assert_eq!(first_arg("aten::expand.default"), FirstArg::Viewed(Repeating));
        assert_eq!(first_arg("aten::reshape.default"), FirstArg::Viewed(Unknown));
        assert_eq!(first_arg("aten::contiguous.default"), FirstArg::Viewed(Unknown));
        assert_eq!(first_arg("aten::view.dtype"), FirstArg::Viewed(Unknown));
        assert_eq!(first_arg("aten::fill_.Scalar"), FirstArg::Mutated);
        assert_eq!(first_arg("aten::copy_.default"), FirstArg::Mutated);
        assert_eq!(first_arg("aten::add_.Tensor"), FirstArg::Mutated);
        assert_eq!(first_arg("aten::add.Tensor"), FirstArg::Other);
        assert_eq!(first_arg("aten::clone.default"), FirstArg::Other);
    }

    #[test]
    fn paths_follow_views_and_in_place_results() {
        let mut a = Aliases::default();
        a.view("s1", "base", 1, ViewKind::Exact);
        a.view("s2", "s1", 2, ViewKind::Exact);
        a.same("fill", "s2");
        a.view("e", "base", 4, ViewKind::Repeating);
        assert_eq!(a.base("fill"), "base");
        assert_eq!(a.resolve("fill"), "s2");
        assert_eq!(a.path("fill"), Ok(vec![(1, "base", "s1"), (2, "s1", "s2")]));
        assert_eq!(a.members("base"), ["s1", "s2", "fill", "e"]);
        a.view("v", "e", 5, ViewKind::Exact);
        assert_eq!(a.path("v"), Err("e"));
    }

    /// A TensorMeta's JSON with sizes and strides given as ints or sympy `srepr`s.
    fn meta(sizes: &[&str], strides: &[&str]) -> String {
        let sym = |s: &&str| match s.parse::<i64>() {
            Ok(n) => format!("{{\"as_int\": {n}}}"),
            Err(_) => format!("{{\"as_expr\": {{\"expr_str\": \"{s}\", \"hint\": null}}}}"),
        };
        let list = |v: &[&str]| v.iter().map(sym).collect::<Vec<_>>().join(", ");
        format!("{{\"dtype\": 7, \"sizes\": [{}], \"strides\": [{}]}}", list(sizes), list(strides))
    }

    fn contiguous_meta(sizes: &[&str], strides: &[&str]) -> bool {
        let json = meta(sizes, strides);
        contiguous(&serde_json::from_str::<schema::ValueMeta>(&json).expect("a TensorMeta"))
    }

    #[test]
    fn contiguity_is_read_from_symbolic_strides() {
        let (b, n) = ("Symbol('s77', positive=True, integer=True)", "Symbol('s27', positive=True, integer=True)");
        let three_n = format!("Mul(Integer(3), {n})");
        let n_b = format!("Mul({b}, {n})");
        assert!(contiguous_meta(&[b, "3", n], &[&three_n, n, "1"]));
        // A dim of size 1 may have any stride; the product's order is free.
        assert!(contiguous_meta(&[n, "1", b], &[b, "7", "1"]));
        assert!(contiguous_meta(&["2", b, n], &[&n_b, n, "1"]));
        assert!(contiguous_meta(&["0", "3"], &["1", "1"]));
        // A transpose, a slice's stride, a size that is a sum: not known to be contiguous.
        assert!(!contiguous_meta(&["3", b], &["1", "3"]));
        assert!(!contiguous_meta(&[b, "3"], &["6", "1"]));
        let sum = format!("Add({n}, Integer(-1))");
        assert!(!contiguous_meta(&[b, &sum], &[&sum, "1"]));
        let json = r#"{"dtype": 7, "sizes": [{"as_int": 2}]}"#;
        assert!(!contiguous(&serde_json::from_str::<schema::ValueMeta>(json).expect("a TensorMeta")));
        let json = meta(&["2", "3"], &["3", "1"]);
        let meta_b = serde_json::from_str::<schema::ValueMeta>(&json).expect("a TensorMeta");
        assert_eq!(view_kind("aten::reshape.default", ViewKind::Unknown, Some(&meta_b)), ViewKind::Exact);
        assert_eq!(view_kind("aten::contiguous.default", ViewKind::Unknown, Some(&meta_b)), ViewKind::Unknown);
    }
}
