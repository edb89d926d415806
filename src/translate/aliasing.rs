//! Tensors that share memory: views of a base, and the results in-place ops return.
//!
//! The driver functionalizes an in-place op by binding the mutated name to the op's result. That
//! alone is exact only while nothing else aliases the tensor: torch's mutation of a view is seen
//! through its base and every other view of that base (Swin's shifted-window mask is built by
//! `fill_` on slices of `new_zeros`). So the driver keeps, per graph, how every alias was made
//! ([`Aliases`]); a mutation of a view is written back into its base (`lower.rs`), and every alias
//! read afterwards is computed again from the new base.
//!
//! Which ops alias and which mutate comes from the ATen schemas' alias annotations: a view takes
//! `Tensor(a) self` and returns `Tensor(a)`; an in-place op takes `Tensor(a!) self`. Of the views,
//! only those whose elements are a fixed selection of the base's can be written back through
//! ([`ViewKind::Exact`]); ops that alias only sometimes (`reshape`, `contiguous`, `to` copy when
//! they must) or reinterpret the bytes (`view.dtype`, `view_as_real`) make a mutation that reaches
//! them an error, never a guess.

use super::schemas;
use crate::hash::FxHashMap;
use crate::pt2::schema::{self, Argument};

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
    let Some(schema) = schemas::schema(key) else { return FirstArg::Other };
    let Some(&first) = schemas::arguments(schema).first() else { return FirstArg::Other };
    if first.starts_with("Tensor(a!)") {
        return FirstArg::Mutated;
    }
    let viewed = first.starts_with("Tensor(a)") || first.starts_with("Tensor(a -> *)");
    if !(viewed && schemas::returns(schema).contains("Tensor(a)")) {
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
}
