//! The ONNX optimizer: rewrites a translated [`Model`] into a smaller one that computes the same
//! results. It runs as a sequence of passes, each recorded in [`OptimizeStats`] for the report.
//!
//! Order: cheap linear passes (each one sweep over the graph, hash maps keyed by value) iterated
//! until nothing changes, then the e-graph rewriter on windows of the graph, then (opset 23) the
//! attention over merged heads (`heads`), then the linear passes again to clean up what the
//! rewrites exposed. Every pass is exact: it removes or rewrites a node
//! only when the result is provably the same (element type, shape including symbolic dims, values).
//! The one lossy transform, weight quantization for ONNX Runtime (`quantize`), runs only when asked.

pub use quantize::WeightQuantization;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::hash::FxHashSet;
use crate::onnx::ir::{Model, Value};

pub(crate) mod cse;
pub(crate) mod dedup;
pub(crate) mod edit;
pub mod egraph;
pub(crate) mod fold;
pub(crate) mod gemm;
pub(crate) mod heads;
pub(crate) mod noop;
pub(crate) mod quantize;
/// The property test's graph generator: test machinery, not in the shipped library.
#[cfg(any(test, feature = "testing"))]
pub mod random;
pub(crate) mod shapes;
#[cfg(test)]
pub(crate) mod testing;
#[cfg(test)]
mod tests;

/// The runtime an export is optimized for (`--target`, `ExportOptions::target`).
///
/// Standard ONNX (the default) runs anywhere. Under an ONNX Runtime target the e-graph also
/// rewrites into ONNX Runtime's own operators (`com.microsoft`) and into the forms its load-time
/// fusions recognize, rule by rule where ONNX Runtime measured faster (`egraph/rules/onnxruntime.rs`;
/// the measurements by rule name in `reports/deploy.md`); the model still passes `onnx.checker`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
pub enum Target {
    #[default]
    #[serde(rename = "onnx")]
    Onnx,
    /// ONNX Runtime's CPU provider, where the rules were measured (`onnxruntime` is this one).
    #[serde(rename = "onnxruntime-cpu", alias = "onnxruntime")]
    OnnxRuntimeCpu,
    /// ONNX Runtime's CUDA provider: the same rules (each rewrites into an operator or a load-time
    /// fusion the CUDA provider has too); not measured on a GPU.
    #[serde(rename = "onnxruntime-cuda")]
    OnnxRuntimeCuda,
}

impl Target {
    /// Every name [`Target::parse`] takes.
    pub const NAMES: &'static [&'static str] = &["onnx", "onnxruntime", "onnxruntime-cpu", "onnxruntime-cuda"];

    /// The target named `name` (one of [`Target::NAMES`]).
    pub fn parse(name: &str) -> Result<Target, String> {
        match name {
            "onnx" => Ok(Target::Onnx),
            "onnxruntime" | "onnxruntime-cpu" => Ok(Target::OnnxRuntimeCpu),
            "onnxruntime-cuda" => Ok(Target::OnnxRuntimeCuda),
            _ => Err(format!("unknown target `{name}`; choose one of {}", Target::NAMES.join(", "))),
        }
    }

    /// ONNX Runtime, on any provider.
    pub fn is_onnxruntime(self) -> bool {
        self != Target::Onnx
    }
}

/// What the optimizer did, for the export report.
#[derive(Clone, Debug, Default)]
pub struct OptimizeStats {
    /// Main-graph node count before the first pass.
    pub nodes_before: usize,
    /// Main-graph node count after the last pass.
    pub nodes_after: usize,
    /// Each pass in the order it first ran: its name, node counts before its first run and after
    /// its last, how many rewrites it made, how often it ran and its total time.
    pub passes: Vec<PassRecord>,
    /// Rewrite rules that fired, by rule name, with how often.
    pub rules_fired: BTreeMap<String, usize>,
    /// Rounds of the linear passes (a round runs each of them once).
    pub rounds: usize,
    /// Total time spent optimizing.
    pub elapsed: Duration,
    /// E-graph windows built, and those stopped by an iteration or e-node limit.
    pub egraph_windows: usize,
    pub egraph_windows_stopped: usize,
    /// Possible matches the last e-graph round left out because their window would have passed
    /// the node limit (those an earlier round left out and a later one took are not counted).
    pub egraph_candidates_dropped: usize,
    /// Why rules did not apply: `"rule: reason"` with how often.
    pub rules_rejected: BTreeMap<String, usize>,
}

/// The runs of one pass.
#[derive(Clone, Debug)]
pub struct PassRecord {
    pub name: &'static str,
    pub nodes_before: usize,
    pub nodes_after: usize,
    /// Rewrites made (nodes dropped, values folded or merged, inputs made constant), all runs.
    pub changes: usize,
    pub runs: usize,
    pub elapsed: Duration,
}

/// How often each rule fired, by rule name (what a pass records in [`OptimizeStats::rules_fired`]).
pub(crate) type Firings = BTreeMap<String, usize>;

pub(crate) trait Fire {
    fn fire(&mut self, rule: &str);
}

impl Fire for Firings {
    fn fire(&mut self, rule: &str) {
        match self.get_mut(rule) {
            Some(n) => *n += 1,
            None => {
                self.insert(rule.to_string(), 1);
            }
        }
    }
}

impl OptimizeStats {
    /// Run `pass` on `model` and record it; returns the pass's number of rewrites.
    fn run(
        &mut self,
        name: &'static str,
        model: &mut Model,
        pass: impl FnOnce(&mut Model, &mut Firings) -> usize,
    ) -> usize {
        let start = Instant::now();
        let nodes_before = model.graph.nodes.len();
        let changes = pass(model, &mut self.rules_fired);
        let elapsed = start.elapsed();
        let nodes_after = model.graph.nodes.len();
        match self.passes.iter_mut().find(|p| p.name == name) {
            Some(p) => {
                p.nodes_after = nodes_after;
                p.changes += changes;
                p.runs += 1;
                p.elapsed += elapsed;
            }
            None => self.passes.push(PassRecord { name, nodes_before, nodes_after, changes, runs: 1, elapsed }),
        }
        changes
    }
}

fn dce(model: &mut Model, _: &mut Firings) -> usize {
    let before = model.graph.nodes.len();
    crate::onnx::dce::eliminate_dead_code(&mut model.graph);
    before - model.graph.nodes.len()
}

/// Only what every export needs: drop nodes and initializers nothing reads (`--no-optimize`).
pub fn clean_up(model: &mut Model) -> OptimizeStats {
    let start = Instant::now();
    let mut stats = OptimizeStats { nodes_before: model.graph.nodes.len(), ..Default::default() };
    stats.run("dead-code elimination", model, dce);
    stats.nodes_after = model.graph.nodes.len();
    stats.elapsed = start.elapsed();
    stats
}

/// Most rounds of the linear passes; each round is linear in the graph, and a round that changes
/// nothing ends the loop (typically after two or three).
const MAX_ROUNDS: usize = 6;

/// A linear pass: one sweep over the graph.
///
/// The contract every pass keeps, which [`linear_passes`] relies on to skip a settled pass: a run
/// that reports no rewrite (returns 0) changes nothing — no node, value, initializer, name or
/// metadata — and a pass is deterministic, so on an unchanged graph it would report none again.
struct Pass {
    name: &'static str,
    /// Returns how many nodes it changed; 0 only when it changed nothing at all.
    run: fn(&mut Model, &mut Firings) -> usize,
    /// Whether dropping the nodes a dead-code elimination removed can let the pass rewrite
    /// something it did not on the graph before (see [`may_enable`]).
    enabled_by: fn(&Removed) -> bool,
}

/// The passes of a round after dead-code elimination, in order.
const PASSES: [Pass; 6] = [
    // Compares initializers; dead ones only leave.
    Pass { name: "initializer deduplication", run: dedup::run, enabled_by: |_| false },
    Pass { name: "transposes into Gemm", run: gemm::run, enabled_by: |_| false },
    // Folds a weight's `Transpose` only for the weight's sole reader.
    Pass { name: "constant folding", run: fold::run, enabled_by: |r| r.constant_read },
    // Does not count readers.
    Pass { name: "shape folding", run: shapes::run, enabled_by: |_| false },
    // Drops a `Dropout` whose mask is unread.
    Pass { name: "no-op removal", run: noop::run, enabled_by: |r| r.later_output_read },
    // Does not count readers.
    Pass { name: "common-subexpression elimination", run: cse::run, enabled_by: |_| false },
];

/// What a dead-code elimination removed, as far as the passes' decisions can tell.
#[derive(Default)]
struct Removed {
    /// Nodes (of any graph).
    any: bool,
    /// A removed node read a constant (its reader count dropped: constant folding folds a weight's
    /// `Transpose` only for the weight's sole reader).
    constant_read: bool,
    /// A removed node read a later output of a node with a no-op rule (no-op removal drops a
    /// `Dropout` whose mask is unread).
    later_output_read: bool,
}

fn dce_observed(model: &mut Model, removed: &mut Removed) -> usize {
    let before = model.graph.nodes.len();
    let mut reads: FxHashSet<Value> = FxHashSet::default();
    crate::onnx::dce::eliminate_dead_code_observed(&mut model.graph, &mut |n| {
        removed.any = true;
        n.for_each_read(&mut |v| {
            reads.insert(v);
        });
    });
    if !reads.is_empty() {
        removed.constant_read = reads.iter().any(|&v| model.value(v).constant.is_some());
        // A no-op rule may depend on a later output being unread (Dropout's mask).
        removed.later_output_read = model.graph.nodes.iter().any(|n| {
            n.outputs.len() > 1
                && reads.contains(&n.outputs[1])
                && crate::onnx::operators::of(n).is_some_and(|op| op.noop.is_some())
        });
    }
    before - model.graph.nodes.len()
}

/// Whether dropping the nodes `removed` describes can let pass `p` (of [`PASSES`]) rewrite something
/// it did not on the graph before. Dropped nodes are dead: every live node keeps its inputs, their
/// types, shapes and contents, and what the shape table learns; only reader counts go down.
fn may_enable(p: usize, removed: &Removed) -> bool {
    (PASSES[p].enabled_by)(removed)
}

/// The linear passes, repeated until a round changes nothing. Returns the rewrites made.
///
/// A pass whose last run rewrote nothing is not run again while the graph stays the same for it:
/// every pass is deterministic and one that reports no rewrite mutates nothing, so it would find
/// nothing again. Only dead-code elimination changes the graph without the other passes' help, and
/// [`may_enable`] says when what it dropped matters. So after a round that changed nothing but
/// dead nodes, the next round would change nothing (elimination is idempotent): it is not run, nor
/// is the closing elimination.
fn linear_passes(model: &mut Model, stats: &mut OptimizeStats) -> usize {
    let uses = edit::UsesCache::new();
    // Per pass: its last run rewrote nothing, and the graph has not changed for it since.
    let mut settled = [false; PASSES.len()];
    let dce = |stats: &mut OptimizeStats, model: &mut Model, settled: &mut [bool; PASSES.len()]| {
        let mut removed = Removed::default();
        let n = stats.run("dead-code elimination", model, |m, _| dce_observed(m, &mut removed));
        if removed.any {
            uses.invalidate();
            for (p, s) in settled.iter_mut().enumerate() {
                *s &= !may_enable(p, &removed);
            }
        }
        n
    };
    let mut total = 0;
    for _ in 0..MAX_ROUNDS {
        stats.rounds += 1;
        let removed = dce(stats, model, &mut settled);
        let mut changes = 0;
        for (p, pass) in PASSES.iter().enumerate() {
            if settled[p] {
                continue;
            }
            let c = stats.run(pass.name, model, pass.run);
            if c > 0 {
                uses.invalidate();
                settled = [false; PASSES.len()];
            } else {
                settled[p] = true;
            }
            changes += c;
        }
        total += removed + changes;
        if changes == 0 {
            return total;
        }
    }
    dce(stats, model, &mut settled);
    total
}

/// Optimize `model` in place, as standard ONNX.
pub fn optimize(model: &mut Model) -> OptimizeStats {
    optimize_for(model, Target::Onnx)
}

/// Optimize `model` in place for `target`.
pub fn optimize_for(model: &mut Model, target: Target) -> OptimizeStats {
    let start = Instant::now();
    let mut stats = OptimizeStats { nodes_before: model.graph.nodes.len(), ..Default::default() };
    linear_passes(model, &mut stats);
    let opset = model.opset_imports.iter().find(|(d, _)| d.is_empty()).map_or(0, |(_, v)| *v);
    // The e-graph rewriter works on the graph the linear passes left; when it rewrote anything,
    // the linear passes run again to fold and clean up what it exposed.
    let fired_before: usize = stats.rules_fired.values().sum();
    let start_rewrite = Instant::now();
    let nodes_before = model.graph.nodes.len();
    egraph::rewrite(model, opset, target, &mut stats);
    // The ONNX Runtime rules may write ONNX Runtime's own operators: the model imports their domain.
    let contrib = crate::onnx::operators::contrib::DOMAIN;
    if model.graph.nodes.iter().any(|n| n.domain == contrib) && !model.opset_imports.iter().any(|(d, _)| d == contrib) {
        model.opset_imports.push((contrib.into(), crate::onnx::operators::contrib::VERSION));
    }
    let rewrites = stats.rules_fired.values().sum::<usize>() - fired_before;
    stats.passes.push(PassRecord {
        name: "e-graph rewrite",
        nodes_before,
        nodes_after: model.graph.nodes.len(),
        changes: rewrites,
        runs: 1,
        elapsed: start_rewrite.elapsed(),
    });
    // Opset 23's 3-D attention, on the Attention and RotaryEmbedding nodes the e-graph made.
    let moved = if opset >= 23 { stats.run("attention heads", model, heads::run) } else { 0 };
    if rewrites > 0 || moved > 0 {
        linear_passes(model, &mut stats);
    }
    stats.nodes_after = model.graph.nodes.len();
    stats.elapsed = start.elapsed();
    stats
}
