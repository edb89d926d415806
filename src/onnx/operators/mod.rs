//! The operator table: everything fxonnx knows about each ONNX operator of the default domain, one
//! record ([`Op`]) per operator, read by every layer that needs a fact about one:
//!
//! - the builder: the element types and shapes of new nodes' outputs ([`output_type`], [`Shape`]);
//! - the downgrade and the legalization (builder steps): the forms an operator lacks at older
//!   opsets ([`Form`]) and the element types ONNX Runtime has no kernel for (`runtime_gaps`);
//! - the export check and the optimizer: output shapes and ranks over symbolic dims, the contents
//!   of small int64 tensors (`syms`), evaluation on constants (`eval`, `derive`), no-op conditions,
//!   commutativity, randomness.
//!
//! What the ONNX schemas say is generated from them ([`onnx_schemas`], by `tests/ops_codegen.rs`): type
//! constraints, the types of older versions, and each output's element type where a type variable
//! bound to an input, or a single allowed type, decides it. The rest is written by hand, one family
//! of operators per file, each operator's record beside the functions it names — as tract keeps one
//! `TypedOp` per operator. An operator without a record has the schema's facts only: every other
//! question about it answers "unknown", which the passes read as "leave it alone".
//!
//! Rules read the graph through [`Facts`]: the builder, the optimizer's sweeps and the export check
//! each know values their own way. A shape rule answers `Ok(Some(shape))` when the shape follows
//! exactly, `Ok(None)` when it does not (a symbolic dim where a number is needed, a computed
//! argument), and `Err` when the inputs cannot be operands of the operator at all, where ONNX's own
//! inference fails too. Unknown is never an error.

use std::sync::OnceLock;

use super::ir::{AttrValue, DType, Dim, Graph, Node, TensorData, Value};
use crate::hash::FxHashMap;

pub(crate) mod contrib;
mod control;
mod dims;
mod elementwise;
mod eval;
mod movement;
mod nn;
pub(crate) mod onnx_schemas;
mod reduce;
mod types;

pub(crate) use dims::{clash, fixed, shape_text};
#[cfg(test)]
pub(crate) use eval::transpose;
pub(crate) use eval::{INPUT_LIMIT, OUTPUT_LIMIT};
pub(crate) use types::{output_container, output_type};

/// What a shape rule says of one output.
pub(crate) type Inferred = Result<Option<Vec<Dim>>, String>;

/// The element type of output `i`, from the node and its inputs' types.
pub(crate) type TypeRule = fn(&Node, &dyn Fn(usize) -> Option<DType>, usize) -> Option<DType>;
/// The shape of output `i`.
pub(crate) type ShapeRule = fn(&dyn Facts, &Node, usize) -> Inferred;
/// The rank of output `i`.
pub(crate) type RankRule = fn(&dyn Facts, &Node, usize) -> Option<usize>;
/// The contents of output 0, when it is a small int64 tensor of dims.
pub(crate) type SymsRule = fn(&dyn Facts, &Node) -> Option<SymInts>;
/// The output on constant inputs.
pub(crate) type EvalRule = fn(&Node, &[Option<&TensorData>]) -> Option<TensorData>;
/// The output on a large constant (input 1 when the flag is set, else 0), as a derived tensor.
pub(crate) type DeriveRule = fn(&Node, &[Option<&TensorData>], bool) -> Option<TensorData>;
/// The constant shape input 1 giving the same output, from input 0's and the output's shapes.
pub(crate) type ShapeInputRule = fn(&Node, Option<&[Dim]>, &[Dim]) -> Option<Vec<i64>>;
/// The input a no-op's output equals, and the rule's name.
pub(crate) type NoopRule = fn(&dyn Facts, &Node) -> Option<(Value, &'static str)>;
/// The shapes a control-flow node gives its body's inputs that record none (or why the recorded
/// ones contradict them).
pub(crate) type BodyInputsRule = fn(&dyn Facts, &Node, &Graph) -> Result<Vec<(Value, Vec<Dim>)>, String>;

/// Everything fxonnx knows about one operator beyond its schema. Build records from [`Op::NONE`]:
/// `Op { name: "Relu", shape: Shape::Same, ..Op::NONE }`.
pub(crate) struct Op {
    pub name: &'static str,
    /// Output element types the schema cannot say (an attribute decides them); `None`: the
    /// schema's ([`onnx_schemas::output_type`]).
    pub types: Option<TypeRule>,
    /// Output shapes.
    pub shape: Shape,
    /// The rank of an output whose shape the rule cannot say.
    pub rank: Option<RankRule>,
    /// The optimizer records the shapes this operator's rule computes (every rule serves the
    /// export check). Widening the set changes which rewrites fire: a change to measure alone.
    pub learned: bool,
    /// The contents of output 0 when it is a small int64 tensor whose elements are dims
    /// (`Shape(x)` of a `[s43, 8]` value is `[s43, 8]`).
    pub syms: Option<SymsRule>,
    /// The output on constant inputs, computed exactly (`None`: left to the runtime).
    pub eval: Option<EvalRule>,
    /// The output on a large constant (input 1 when `second`, else 0) read nowhere else, recorded
    /// as a [`super::ir::Derived`] tensor computed while the model is written.
    pub derive: Option<DeriveRule>,
    /// Input 1 is a shape that the output's shape decides (`Reshape`'s target, `Expand`'s): the
    /// constant giving the same result, from input 0's shape (when known) and the output's, so a
    /// shape computed at run time can go.
    pub shape_input: Option<ShapeInputRule>,
    /// The output holds input 0's elements in their order, grouped as the shape input 1 says (a 0
    /// there copies an input dim): applied to another such node's output, it can read that node's
    /// input instead.
    pub regroups: bool,
    /// When the node is a no-op: the input its output equals, and the rule's name.
    pub noop: Option<NoopRule>,
    /// A no-op of this operator producing a graph output it cannot hand its name to becomes an
    /// `Identity`; the others stay as they are (both exact; exports keep their bytes).
    pub identity_at_output: bool,
    /// Its two inputs commute.
    pub commutative: bool,
    /// It draws random numbers: two nodes never merge.
    pub random: bool,
    /// It only moves values (no arithmetic): an element type can travel in another of its width.
    pub moves_values: bool,
    /// The element types its first type variable allows that ONNX Runtime's CPU provider has no
    /// kernel for (`tests/runtime_gaps.py` measured them): the builder carries them in a type that
    /// holds every value, as it does the spec's own gaps.
    pub runtime_gaps: &'static [DType],
    /// The opset the operator first appears in, when its builder form is newer and [`forms`] say
    /// what the older versions lack (`Pad` before its `axes` input).
    ///
    /// [`forms`]: Op::forms
    pub introduced: Option<i64>,
    /// Forms of the operator older opsets lack, in the order they are tried.
    pub forms: &'static [Form],
    /// A form ONNX Runtime mishandles, rewritten at every opset.
    pub for_runtimes: Option<Rewrite>,
    /// How its subgraph (`If`'s branches, `Loop`'s and `Scan`'s body) relates to the node.
    pub body: Option<Body>,
}

impl Op {
    /// A record that knows nothing: every field's "unknown".
    pub const NONE: Op = Op {
        name: "",
        types: None,
        shape: Shape::Unknown,
        rank: None,
        learned: false,
        syms: None,
        eval: None,
        derive: None,
        shape_input: None,
        regroups: false,
        noop: None,
        identity_at_output: false,
        commutative: false,
        random: false,
        moves_values: false,
        runtime_gaps: &[],
        introduced: None,
        forms: &[],
        for_runtimes: None,
        body: None,
    };

    /// This record under `name`.
    pub(super) const fn named(self, name: &'static str) -> Op {
        Op { name, ..self }
    }

    /// The shape of output `i` of `node`.
    pub fn infer_output(&self, facts: &dyn Facts, node: &Node, i: usize) -> Inferred {
        match self.shape {
            Shape::Unknown => Ok(None),
            Shape::Same => {
                // Extra outputs (BatchNormalization's and LayerNormalization's) are statistics.
                Ok(input(node, 0).and_then(|x| facts.shape(x)).filter(|_| i == 0).map(<[Dim]>::to_vec))
            }
            Shape::Broadcast if i > 0 => Ok(None),
            Shape::Broadcast => dims::broadcast_all(facts, node),
            Shape::Rule(rule) => rule(facts, node, i),
        }
    }
}

/// How an operator's output shapes follow from its inputs.
#[derive(Clone, Copy)]
pub(crate) enum Shape {
    Unknown,
    /// Output 0 has input 0's shape.
    Same,
    /// Output 0 is the inputs broadcast together.
    Broadcast,
    Rule(ShapeRule),
}

/// How a control-flow node's subgraph relates to the node: which outputs and inputs match.
#[derive(Clone, Copy)]
pub(crate) struct Body {
    /// Body outputs before the ones that become the node's (`Loop`'s condition).
    pub skip_outputs: usize,
    /// The loop-carried states: how many, and the first body input that is one. A state leaves
    /// each step with the type it entered with.
    pub states: fn(&Node) -> (usize, usize),
    /// The shapes the node gives the body's inputs that record none, or why the recorded ones
    /// contradict them.
    pub inputs: Option<BodyInputsRule>,
}

/// A form of an operator that opsets below `since` do not have.
pub(crate) struct Form {
    pub since: i64,
    /// What sets it apart, as the error names it: `ONNX operator Resize {form} needs opset 18`.
    pub form: &'static str,
    /// Whether the node being built uses the form.
    pub used: fn(&FormCtx) -> bool,
    pub older: Older,
}

/// What a node being built is, for [`Form::used`].
pub(crate) struct FormCtx<'a> {
    pub node: &'a Node,
    pub facts: &'a dyn Facts,
    /// How many outputs the translation takes.
    pub outputs: usize,
}

/// How an older opset gets a form it lacks.
#[derive(Clone, Copy)]
pub(crate) enum Older {
    /// Nothing older computes the same: an error naming the form and the opset it needs.
    Nothing,
    /// The attribute holds the older version's only behaviour: it is dropped.
    DropAttribute(&'static str),
    /// The builder rewrites the node (`onnx/downgrade.rs`), or says why it cannot.
    Rewrite(Rewrite),
}

/// The rewrites into older or runtime-friendly forms, implemented by the builder
/// (`onnx/downgrade.rs`, `onnx/legalize.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Rewrite {
    /// `Reduce*` axes as an attribute (before 18).
    AxesAttribute,
    /// `Split` sizes instead of `num_outputs` (before 18).
    SplitSizes,
    /// `Pad`'s `axes` spread over every axis at run time (before 18).
    PadAxesAtRunTime,
    /// `Pad`'s `axes` spread over every axis where the rank is known (ONNX Runtime's transpose
    /// optimizer permutes pads as if they covered every axis).
    PadAxesSpread,
    /// `Shape` of the whole shape, then a `Slice` (before 15).
    ShapeThenSlice,
    /// `DFT`'s axis as an attribute (17 to 19).
    DftAxisAttribute,
    /// `LayerNormalization`'s function body (before 17).
    LayerNormBody,
    /// `HardSwish`'s function body (before 14).
    HardSwishBody,
    /// `Trilu` as a `Where` over a mask (before 14).
    TriluByMask,
    /// `BitwiseNot` as all ones minus the input (before 18).
    BitwiseNotBySub,
}

/// The contents of a small int64 tensor of rank 0 or 1, element by element.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct SymInts {
    pub scalar: bool,
    pub items: Vec<Dim>,
}

/// What a rule may ask of the values a node reads.
pub(crate) trait Facts {
    fn dtype(&self, v: Value) -> Option<DType>;
    fn shape(&self, v: Value) -> Option<&[Dim]>;
    /// The contents of `v` when it is a constant.
    fn constant(&self, v: Value) -> Option<&TensorData>;
    /// The elements of a small int64 tensor, when known.
    fn syms(&self, _v: Value) -> Option<&SymInts> {
        None
    }
    /// A dim a rule writes where it knows a shape's rank and other dims but not that one: only the
    /// export check's facts have one (it compares ranks and numbers); the optimizer's would read
    /// it as a symbol.
    fn unknown(&self) -> Option<Dim> {
        None
    }
    /// How many times `v` is read (as if read, when unknown).
    fn uses(&self, _v: Value) -> u32 {
        u32::MAX
    }
}

/// The record of `op_type` (default domain), if fxonnx knows more of it than its schema.
pub(crate) fn get(op_type: &str) -> Option<&'static Op> {
    static TABLE: OnceLock<FxHashMap<&'static str, &'static Op>> = OnceLock::new();
    TABLE
        .get_or_init(|| {
            let mut t = FxHashMap::default();
            for family in FAMILIES {
                for op in *family {
                    let twice = t.insert(op.name, op);
                    debug_assert!(twice.is_none(), "{} has two records", op.name);
                }
            }
            t
        })
        .get(op_type)
        .copied()
}

/// The record of `op_type` in `domain`: the default domain's, ONNX Runtime's contrib operators
/// ([`contrib`]); other domains have none.
pub(crate) fn get_in(domain: &str, op_type: &str) -> Option<&'static Op> {
    match domain {
        "" => get(op_type),
        contrib::DOMAIN => contrib::OPS.iter().find(|op| op.name == op_type),
        _ => None,
    }
}

/// The record of a node's operator.
pub(crate) fn of(node: &Node) -> Option<&'static Op> {
    get_in(&node.domain, &node.op_type)
}

/// `node` on constant inputs (`None`: an omitted optional input), where its operator's record
/// evaluates it exactly.
pub(crate) fn eval(node: &Node, inputs: &[Option<&TensorData>]) -> Option<TensorData> {
    of(node)?.eval?(node, inputs)
}

/// Every record, by family.
const FAMILIES: &[&[Op]] = &[elementwise::OPS, elementwise::RANDOM, movement::OPS, reduce::OPS, nn::OPS, control::OPS];

/// Every operator with a record, for tests.
#[cfg(test)]
pub(crate) fn names() -> impl Iterator<Item = &'static str> {
    FAMILIES.iter().flat_map(|f| f.iter().map(|op| op.name))
}

// --- reading nodes -----------------------------------------------------------------------------

/// Input `i` of `node`, when present.
pub(crate) fn input(node: &Node, i: usize) -> Option<Value> {
    node.inputs.get(i).copied().flatten()
}

pub(crate) fn attr_int(node: &Node, name: &str, default: i64) -> i64 {
    match node.attr(name) {
        Some(AttrValue::Int(i)) => *i,
        _ => default,
    }
}

pub(crate) fn attr_ints<'n>(node: &'n Node, name: &str) -> Option<&'n [i64]> {
    match node.attr(name) {
        Some(AttrValue::Ints(v)) => Some(v),
        _ => None,
    }
}

pub(crate) fn attr_str<'n>(node: &'n Node, name: &str) -> Option<&'n str> {
    match node.attr(name) {
        Some(AttrValue::String(v)) => Some(v),
        _ => None,
    }
}

/// The subgraph attribute `name` of `node`.
pub(crate) fn attr_graph<'n>(node: &'n Node, name: &str) -> Option<&'n Graph> {
    match node.attr(name) {
        Some(AttrValue::Graph(g)) => Some(g),
        _ => None,
    }
}

/// Normalize an axis against `rank`.
pub(crate) fn norm_axis(axis: i64, rank: usize) -> Option<usize> {
    let r = rank as i64;
    let a = if axis < 0 { axis + r } else { axis };
    (0..r).contains(&a).then_some(a as usize)
}

/// The contents of input `i` as integers (axes, shapes, starts), when it is a small int constant.
pub(crate) fn const_ints(facts: &dyn Facts, node: &Node, i: usize) -> Option<Vec<i64>> {
    let t = facts.constant(input(node, i)?)?;
    if t.numel() > 1 << 16 || !matches!(t.dtype, DType::Int64 | DType::Int32) {
        return None;
    }
    t.to_i64s()
}

/// The integer contents of input `k`: a constant, or a shape computation whose every element is
/// known (`Concat(Shape(x)[0:1], [8])` of a static `x`).
pub(crate) fn ints(facts: &dyn Facts, node: &Node, k: usize) -> Option<Vec<i64>> {
    const_ints(facts, node, k).or_else(|| {
        let s = facts.syms(input(node, k)?)?;
        if s.scalar {
            return None;
        }
        s.items.iter().map(fixed).collect()
    })
}

#[cfg(test)]
mod tests;
