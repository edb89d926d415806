//! Rules as data: a name, an opset gate, one or more patterns, and a function that checks the
//! conditions and builds the replacement — or says why it did not apply.
//!
//! Patterns are s-expressions over ONNX operators, without attribute children: `(Transpose:p2
//! (Transpose:p1 ?x))` matches a transpose of a transpose and binds their attribute leaves to `p1`
//! and `p2` (unlabelled operators get a fresh attribute variable). `Absent` matches an omitted
//! optional input. A variable written `#c` instead of `?c` must be a constant of the model for the
//! window selection to consider the match (the e-graph pattern binds it as `?c`). Commuted variants (both input orders of every commutative binary operator) are
//! generated here, so the rule set has no commutativity rules and the e-graph stays small.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use egg::{Applier, ENodeOrVar, Id, PatternAst, Rewrite, Subst, Symbol, Var};

use super::analysis::{add_with, Data, OGraph, OnnxAnalysis};
use super::lang::{AttrSet, ONode, OpKey};
use crate::onnx::ir::{AttrValue, DType, Dim, Model, Node, TensorData, Value};

/// Why a rule did not apply (kept short: it is a key of the statistics).
pub type Skip = &'static str;

/// A rewrite rule: where it matches, from which opset, a cheap test on the graph, and the check
/// and rewrite.
pub struct Rule {
    /// Its name in the statistics.
    pub name: &'static str,
    /// Lowest default-domain opset the replacement is valid in.
    pub min_opset: i64,
    /// Patterns (see the module documentation); a match of any of them is a match of the rule.
    pub patterns: &'static [&'static str],
    /// A cheap test on the graph, run before any e-graph is built (the rule itself still checks
    /// everything).
    pub precheck: Option<Precheck>,
    /// Check the match exactly and build the replacement, or say why it does not apply.
    pub apply: fn(&mut Ctx, &Bind) -> Result<Id, Skip>,
}

/// Nodes that may enter a window: single-output default-domain operators without subgraphs (a
/// subgraph body reads outer values by name, which windows leave to the nodes outside them).
pub fn eligible(n: &Node) -> bool {
    n.domain.is_empty() && n.outputs.len() == 1 && !n.attributes.iter().any(|a| matches!(a.value, AttrValue::Graph(_)))
}

/// The eligible node producing each value (a window only follows reads to eligible producers).
pub struct Producers<'a> {
    nodes: &'a [Node],
    /// Per value: index of its producer, or `NONE`.
    of: Vec<u32>,
}

const NONE: u32 = u32::MAX;

impl<'a> Producers<'a> {
    pub fn new(model: &'a Model) -> Self {
        let nodes = &model.graph.nodes[..];
        let mut of = vec![NONE; model.values.len()];
        for (i, n) in nodes.iter().enumerate() {
            if eligible(n) {
                if let Some(slot) = of.get_mut(n.outputs[0].index()) {
                    *slot = i as u32;
                }
            }
        }
        Producers { nodes, of }
    }

    /// Index of the node producing `v`.
    pub fn index(&self, v: Value) -> Option<usize> {
        self.of.get(v.index()).copied().filter(|&i| i != NONE).map(|i| i as usize)
    }

    pub fn node(&self, v: Value) -> Option<&'a Node> {
        self.index(v).map(|i| &self.nodes[i])
    }
}

/// A test on the graph node a pattern is rooted at that fails only where the rule cannot fire on
/// the window's e-graph before any rewrite (every fact then comes from the model). It acts at one
/// of two points of the window selection (`window::select`), which give different windows.
#[derive(Clone, Copy)]
pub enum Precheck {
    /// A node that fails is no candidate of the rule.
    Root(fn(&Model, &Node, &Producers) -> bool),
    /// Candidates are made as without a test, so their nodes join windows (a node in a window hands
    /// its metadata to the node that replaces its value); a window where every rule it was picked
    /// for fails at every node is not built.
    Window(fn(&Model, &Node, &Producers) -> bool),
}

/// A parsed pattern (also used by the window selection to find possible matches cheaply).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Pat {
    /// A variable; `true` when it must bind a constant.
    Var(String, bool),
    Absent,
    Op {
        op: String,
        label: Option<String>,
        args: Vec<Pat>,
    },
}

impl Pat {
    pub fn parse(s: &str) -> Result<Pat, String> {
        let tokens: Vec<String> =
            s.replace('(', " ( ").replace(')', " ) ").split_whitespace().map(str::to_string).collect();
        let mut pos = 0;
        let p = Self::parse_at(&tokens, &mut pos)?;
        if pos != tokens.len() {
            return Err(format!("trailing tokens in pattern {s}"));
        }
        Ok(p)
    }

    fn parse_at(t: &[String], pos: &mut usize) -> Result<Pat, String> {
        let tok = t.get(*pos).ok_or("unexpected end of pattern")?;
        *pos += 1;
        if tok == "(" {
            let head = t.get(*pos).ok_or("unexpected end of pattern")?.clone();
            *pos += 1;
            let (op, label) = match head.split_once(':') {
                Some((o, l)) => (o.to_string(), Some(l.to_string())),
                None => (head, None),
            };
            let mut args = Vec::new();
            while t.get(*pos).map(|s| s.as_str()) != Some(")") {
                args.push(Self::parse_at(t, pos)?);
            }
            *pos += 1;
            Ok(Pat::Op { op, label, args })
        } else if let Some(v) = tok.strip_prefix('?') {
            Ok(Pat::Var(v.to_string(), false))
        } else if let Some(v) = tok.strip_prefix('#') {
            Ok(Pat::Var(v.to_string(), true))
        } else if tok == "Absent" {
            Ok(Pat::Absent)
        } else {
            Err(format!("bad pattern token {tok}"))
        }
    }

    /// Every pattern obtained by swapping the inputs of commutative operators.
    pub fn commuted(&self) -> Vec<Pat> {
        match self {
            Pat::Var(..) | Pat::Absent => vec![self.clone()],
            Pat::Op { op, label, args } => {
                let mut combos: Vec<Vec<Pat>> = vec![Vec::new()];
                for a in args {
                    let alts = a.commuted();
                    combos = combos
                        .into_iter()
                        .flat_map(|c| {
                            alts.iter().map(move |x| {
                                let mut c = c.clone();
                                c.push(x.clone());
                                c
                            })
                        })
                        .collect();
                }
                let mut out = BTreeSet::new();
                for c in combos {
                    if crate::onnx::operators::get(op).is_some_and(|o| o.commutative) && c.len() == 2 {
                        out.insert(Pat::Op {
                            op: op.clone(),
                            label: label.clone(),
                            args: vec![c[1].clone(), c[0].clone()],
                        });
                    }
                    out.insert(Pat::Op { op: op.clone(), label: label.clone(), args: c });
                }
                out.into_iter().collect()
            }
        }
    }

    /// The egg pattern text: attribute leaves appended as the last child of every operator.
    #[cfg(test)]
    pub fn to_egg(&self) -> String {
        let mut n = 0;
        self.egg_at(&mut n)
    }

    /// The same pattern built directly as egg's AST (no text round trip: compiling every variant
    /// is part of each export's time).
    fn to_ast(&self, ast: &mut PatternAst<ONode>, n: &mut usize) -> Result<Id, String> {
        let var = |name: &str| format!("?{name}").parse::<Var>().map_err(|e| format!("{e}"));
        Ok(match self {
            Pat::Var(v, _) => ast.add(ENodeOrVar::Var(var(v)?)),
            Pat::Absent => ast.add(ENodeOrVar::ENode(ONode::Absent)),
            Pat::Op { op, label, args } => {
                let mut children = Vec::with_capacity(args.len() + 1);
                for a in args {
                    children.push(a.to_ast(ast, n)?);
                }
                let attrs = match label {
                    Some(l) => var(l)?,
                    None => {
                        *n += 1;
                        var(&format!("_attrs{n}"))?
                    }
                };
                children.push(ast.add(ENodeOrVar::Var(attrs)));
                let key = OpKey { op: op.as_str().into(), domain: "".into(), outputs: 1 };
                ast.add(ENodeOrVar::ENode(ONode::Op(key, children)))
            }
        })
    }

    #[cfg(test)]
    fn egg_at(&self, n: &mut usize) -> String {
        match self {
            Pat::Var(v, _) => format!("?{v}"),
            Pat::Absent => "Absent".into(),
            Pat::Op { op, label, args } => {
                let mut s = format!("({op}");
                for a in args {
                    s.push(' ');
                    s.push_str(&a.egg_at(n));
                }
                match label {
                    Some(l) => s.push_str(&format!(" ?{l})")),
                    None => {
                        *n += 1;
                        s.push_str(&format!(" ?_attrs{n})"));
                    }
                }
                s
            }
        }
    }
}

/// One variant: the rule it belongs to, its pattern tree, and its egg rewrite, compiled the first
/// time a window needs it (compiling all of them would cost a few ms of every export).
pub struct Variant {
    /// The rule's index in its list (a key of the memo of rule results).
    pub rule: usize,
    pub def: &'static Rule,
    pub pat: Pat,
    index: usize,
    rewrite: OnceLock<Rewrite<ONode, OnnxAnalysis>>,
}

impl Variant {
    pub fn rewrite(&self) -> &Rewrite<ONode, OnnxAnalysis> {
        self.rewrite.get_or_init(|| {
            let rule = self.def;
            let mut ast = PatternAst::default();
            let mut n = 0;
            if let Err(e) = self.pat.to_ast(&mut ast, &mut n) {
                // Rule patterns are literals of this crate: a bad one is a bug caught by the tests.
                panic!("rule {}: {e}", rule.name);
            }
            let searcher = egg::Pattern::new(ast);
            // Sorted by name: the memo key must name the same variable in every variant.
            let mut vars = searcher.vars();
            vars.sort_by_cached_key(|v| v.to_string());
            let applier = RuleApplier { rule: self.rule, def: rule, vars };
            match Rewrite::new(format!("{}#{}", rule.name, self.index), searcher, applier) {
                Ok(r) => r,
                Err(e) => panic!("rule {}: {e}", rule.name),
            }
        })
    }
}

/// Every variant of the rule lists, in order (the caller keeps them: they are parsed and commuted
/// once per process).
pub fn variants(lists: &[&'static [Rule]]) -> Vec<Variant> {
    let mut out = Vec::new();
    for (ri, rule) in lists.iter().flat_map(|l| l.iter()).enumerate() {
        for p in rule.patterns {
            let pat = match Pat::parse(p) {
                Ok(p) => p,
                Err(e) => panic!("rule {}: {e}", rule.name),
            };
            for v in pat.commuted() {
                let index = out.len();
                out.push(Variant { rule: ri, def: rule, pat: v, index, rewrite: OnceLock::new() });
            }
        }
    }
    out
}

struct RuleApplier {
    rule: usize,
    def: &'static Rule,
    vars: Vec<Var>,
}

impl Applier<ONode, OnnxAnalysis> for RuleApplier {
    fn apply_one(
        &self,
        egraph: &mut OGraph,
        eclass: Id,
        subst: &Subst,
        _ast: Option<&PatternAst<ONode>>,
        _name: Symbol,
    ) -> Vec<Id> {
        let rule = self.def;
        // The bound classes determine the matched node (hash-consing), so they alone key the memo;
        // the matched class id changes when it is merged, and recomputing would add a second copy
        // of every constant the rule builds.
        let key: Vec<Id> =
            self.vars.iter().map(|v| subst.get(*v).map_or(Id::from(usize::MAX >> 1), |&i| egraph.find(i))).collect();
        let key = (self.rule, key);
        let result = match egraph.analysis.memo.get(&key) {
            Some(r) => *r,
            None => {
                let r = if egraph.analysis.opset < rule.min_opset {
                    Err("opset too old")
                } else {
                    let mut ctx = Ctx { eg: egraph, matched: eclass };
                    (rule.apply)(&mut ctx, &Bind { subst })
                };
                let r = match r {
                    Ok(id) => Some(id),
                    Err(why) => {
                        *egraph.analysis.rejected.entry((rule.name, why)).or_default() += 1;
                        None
                    }
                };
                egraph.analysis.memo.insert(key, r);
                r
            }
        };
        match result {
            // Counted when it teaches the e-graph something (a re-found match does not).
            Some(id) if egraph.union(eclass, id) => {
                *egraph.analysis.fired.entry(rule.name).or_default() += 1;
                vec![id]
            }
            _ => vec![],
        }
    }
}

/// The classes a match bound, by variable or attribute label name (without `?`).
pub struct Bind<'a> {
    subst: &'a Subst,
}

impl Bind<'_> {
    /// The class bound to `name`, when the matched pattern variant has it.
    pub fn try_get(&self, name: &str) -> Option<Id> {
        let var: Var = format!("?{name}").parse().ok()?;
        self.subst.get(var).copied()
    }

    pub fn get(&self, name: &str) -> Id {
        let var: Var = match format!("?{name}").parse() {
            Ok(v) => v,
            Err(e) => panic!("bad variable {name}: {e}"),
        };
        match self.subst.get(var) {
            Some(&id) => id,
            // Every name a rule reads is in its patterns; the unit tests run every rule.
            None => panic!("rule reads unbound variable {name}"),
        }
    }
}

/// What a rule sees: the e-graph with typed helpers.
pub struct Ctx<'a> {
    pub eg: &'a mut OGraph,
    /// The class the pattern matched.
    pub matched: Id,
}

impl Ctx<'_> {
    pub fn data(&self, id: Id) -> &Data {
        &self.eg[id].data
    }
    pub fn dtype(&self, id: Id) -> Option<DType> {
        self.eg[id].data.dtype
    }
    pub fn shape(&self, id: Id) -> Option<&[Dim]> {
        self.eg[id].data.shape.as_deref()
    }
    pub fn rank(&self, id: Id) -> Option<usize> {
        self.shape(id).map(|s| s.len())
    }
    /// Fixed sizes, when every dimension is fixed.
    pub fn konst(&self, id: Id) -> Option<&TensorData> {
        self.eg[id].data.konst.as_ref()
    }
    pub fn values(&self, id: Id) -> Option<Vec<f64>> {
        self.konst(id)?.to_f64s()
    }
    pub fn ints(&self, id: Id) -> Option<Vec<i64>> {
        self.konst(id)?.to_i64s()
    }
    /// The value of a one-element constant.
    pub fn scalar(&self, id: Id) -> Option<f64> {
        // Checked before decoding: a large constant may be a derived weight, computed on reading.
        if self.konst(id)?.numel() != 1 {
            return None;
        }
        let v = self.values(id)?;
        if v.len() == 1 {
            Some(v[0])
        } else {
            None
        }
    }
    pub fn uses(&self, id: Id) -> u32 {
        self.eg[id].data.uses
    }
    pub fn is_absent(&self, id: Id) -> bool {
        self.eg[id].nodes.iter().any(|n| matches!(n, ONode::Absent))
    }
    /// The attribute set bound to a label.
    pub fn attrs(&self, id: Id) -> AttrSet {
        for n in &self.eg[id].nodes {
            if let ONode::Attrs(a) = n {
                return self.eg.analysis.attrs.get(*a).clone();
            }
        }
        Vec::new()
    }
    pub fn add_op(
        &mut self,
        op: &str,
        inputs: &[Id],
        attrs: AttrSet,
        dtype: Option<DType>,
        shape: Option<Vec<Dim>>,
    ) -> Id {
        let a = self.eg.analysis.attrs.intern(attrs);
        let a = self.eg.add(ONode::Attrs(a));
        let mut children = inputs.to_vec();
        children.push(a);
        let key = OpKey { op: op.into(), domain: "".into(), outputs: 1 };
        add_with(self.eg, ONode::Op(key, children), Data { dtype, shape, konst: None, uses: 0 })
    }
    /// A node with the type and shape of the matched value (for replacements that compute it).
    pub fn add_like_matched(&mut self, op: &str, inputs: &[Id], attrs: AttrSet) -> Id {
        let d = self.data(self.matched).clone();
        self.add_op(op, inputs, attrs, d.dtype, d.shape)
    }
    pub fn add_const(&mut self, t: TensorData) -> Id {
        let k = self.eg.analysis.consts.len() as u32;
        self.eg.analysis.consts.push(t);
        self.eg.add(ONode::Const(k))
    }
    /// A node of `domain` with one output per entry of `outputs` (their facts): one `Proj` class
    /// per output, in order.
    pub fn add_multi(&mut self, domain: &str, op: &str, inputs: &[Id], attrs: AttrSet, outputs: &[Data]) -> Vec<Id> {
        let a = self.eg.analysis.attrs.intern(attrs);
        let a = self.eg.add(ONode::Attrs(a));
        let mut children = inputs.to_vec();
        children.push(a);
        let key = OpKey { op: op.into(), domain: domain.into(), outputs: outputs.len() as u32 };
        let tuple = add_with(self.eg, ONode::Op(key, children), Data::default());
        outputs.iter().enumerate().map(|(i, d)| add_with(self.eg, ONode::Proj(i as u32, [tuple]), d.clone())).collect()
    }
    /// The class of an existing single-output node reading `inputs` with attributes `attrs`, if the
    /// e-graph has it.
    pub fn find_op(&mut self, op: &str, inputs: &[Id], attrs: AttrSet) -> Option<Id> {
        let a = self.eg.analysis.attrs.intern(attrs);
        let a = self.eg.add(ONode::Attrs(a));
        let mut children = inputs.to_vec();
        children.push(a);
        self.lookup_op(op, &children)
    }
    /// The class of an existing single-output node, if the e-graph has it.
    pub fn lookup_op(&self, op: &str, children: &[Id]) -> Option<Id> {
        let key = OpKey { op: op.into(), domain: "".into(), outputs: 1 };
        self.eg.lookup(ONode::Op(key, children.to_vec()))
    }
}
