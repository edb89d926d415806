//! The ONNX optimizer: rewrites a translated [`Model`] into a smaller one that computes the same
//! results. It runs as a sequence of passes, each recorded in [`OptimizeStats`] for the report.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::onnx::ir::Model;

pub mod egraph;

/// What the optimizer did, for the export report.
#[derive(Clone, Debug, Default)]
pub struct OptimizeStats {
    /// Main-graph node count before the first pass.
    pub nodes_before: usize,
    /// Main-graph node count after the last pass.
    pub nodes_after: usize,
    /// Each pass in the order it ran: its name, node counts before and after, and its time.
    pub passes: Vec<PassRecord>,
    /// Rewrite rules that fired, by rule name, with how often.
    pub rules_fired: BTreeMap<String, usize>,
    /// Total time spent optimizing.
    pub elapsed: Duration,
    /// E-graph windows built, and those stopped by an iteration / e-node / time limit.
    pub egraph_windows: usize,
    pub egraph_windows_stopped: usize,
    /// Possible matches left out because their window would have passed the node limit.
    pub egraph_candidates_dropped: usize,
    /// Why rules did not apply: `"rule: reason"` with how often.
    pub rules_rejected: BTreeMap<String, usize>,
}

/// One run of one pass.
#[derive(Clone, Debug)]
pub struct PassRecord {
    pub name: &'static str,
    pub nodes_before: usize,
    pub nodes_after: usize,
    pub elapsed: Duration,
}

impl OptimizeStats {
    /// Run `pass` on `model` and record it.
    fn run(&mut self, name: &'static str, model: &mut Model, pass: impl FnOnce(&mut Model, &mut Self)) {
        let start = Instant::now();
        let nodes_before = model.graph.nodes.len();
        pass(model, self);
        self.passes.push(PassRecord {
            name,
            nodes_before,
            nodes_after: model.graph.nodes.len(),
            elapsed: start.elapsed(),
        });
    }
}

/// Only what every export needs: drop nodes and initializers nothing reads (`--no-optimize`).
pub fn clean_up(model: &mut Model) -> OptimizeStats {
    let start = Instant::now();
    let mut stats = OptimizeStats { nodes_before: model.graph.nodes.len(), ..Default::default() };
    stats.run("dead-code elimination", model, |m, _| crate::onnx::dce::eliminate_dead_code(&mut m.graph));
    stats.nodes_after = model.graph.nodes.len();
    stats.elapsed = start.elapsed();
    stats
}

/// Optimize `model` in place.
pub fn optimize(model: &mut Model) -> OptimizeStats {
    let start = Instant::now();
    let mut stats = OptimizeStats { nodes_before: model.graph.nodes.len(), ..Default::default() };
    let opset = model.opset_imports.iter().find(|(d, _)| d.is_empty()).map_or(0, |(_, v)| *v);
    stats.run("e-graph rewrite", model, |m, s| egraph::rewrite(m, opset, s));
    stats.run("dead-code elimination", model, |m, _| crate::onnx::dce::eliminate_dead_code(&mut m.graph));
    stats.nodes_after = model.graph.nodes.len();
    stats.elapsed = start.elapsed();
    stats
}
