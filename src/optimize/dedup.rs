//! Initializer deduplication: initializers with the same element type, dims and bytes become one
//! (the first in graph order), as onnxscript's `DeduplicateInitializers` does.
//!
//! Weights can be hundreds of megabytes and live in the archive's memory map, where every page read
//! is a page fault (and readahead from disk on a cold cache), so candidates are grouped by a
//! fingerprint of the element type, dims and first bytes only — one page per tensor; tensors that
//! share a fingerprint are compared in full, which stops at the first differing byte.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use crate::hash::{FxBuild, FxHashSet, FxHasher};

use super::edit::{self, Action, Subst};
use super::Fire;
use crate::onnx::ir::{Model, TensorData, Value};

/// Bytes from the start of a tensor that go into its fingerprint.
const PREFIX: usize = 256;

fn fingerprint(t: &TensorData) -> u64 {
    // Only groups candidates (equal tensors always share a fingerprint; a group is compared in
    // full), so a fast hash does.
    let mut h = FxHasher::default();
    (t.dtype as i32).hash(&mut h);
    t.dims.hash(&mut h);
    // Only the prefix of a derived (folded) weight is computed.
    t.raw.len().hash(&mut h);
    t.raw.prefix(PREFIX)[..].hash(&mut h);
    h.finish()
}

pub(crate) fn run(model: &mut Model, fired: &mut super::Firings) -> usize {
    // Only graph inputs and outputs are needed here (no reader counts): they are few.
    let pins: FxHashSet<Value> = model.graph.inputs.iter().chain(&model.graph.outputs).copied().collect();
    let mut groups: HashMap<u64, Vec<Value>, FxBuild> =
        HashMap::with_capacity_and_hasher(model.graph.initializers.len(), FxBuild::default());
    let mut subst = Subst::new(model.values.len());
    let mut merged = 0;
    let mut kept = Vec::with_capacity(model.graph.initializers.len());
    for &v in &model.graph.initializers {
        // Graph inputs and outputs keep their own values.
        let pinned = pins.contains(&v);
        let Some(t) = edit::constant(model, v) else { continue };
        if pinned {
            kept.push(v);
            continue;
        }
        let candidates = groups.entry(fingerprint(t)).or_default();
        let same = candidates.iter().copied().find(|&c| edit::constant(model, c).is_some_and(|c| c == t));
        match same {
            Some(first) => {
                subst.set(v, first);
                merged += 1;
                fired.fire("dedup: initializer");
            }
            None => {
                candidates.push(v);
                kept.push(v);
            }
        }
    }
    if merged == 0 {
        return 0;
    }
    model.graph.initializers = kept;
    edit::sweep_from(model, subst, |_, _, node| Action::Keep(node));
    merged
}
