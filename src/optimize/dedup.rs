//! Initializer deduplication: initializers with the same element type, dims and bytes become one
//! (the first in graph order), as onnxscript's `DeduplicateInitializers` does.
//!
//! Weights can be hundreds of megabytes and live in the archive's memory map, where every page read
//! is a page fault (and readahead from disk on a cold cache), so candidates are grouped by a
//! fingerprint of the element type, dims and first bytes only — one page per tensor; tensors that
//! share a fingerprint are compared in full, which stops at the first differing byte.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use super::edit::{self, Action, Facts, Subst};
use super::Fire;
use crate::onnx::ir::{Model, TensorData, Value};

/// Bytes from the start of a tensor that go into its fingerprint.
const PREFIX: usize = 256;

fn fingerprint(t: &TensorData) -> u64 {
    // SipHash with fixed keys: the same bytes always give the same fingerprint.
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (t.dtype as i32).hash(&mut h);
    t.dims.hash(&mut h);
    // Only the prefix of a derived (folded) weight is computed.
    t.raw.len().hash(&mut h);
    t.raw.prefix(PREFIX)[..].hash(&mut h);
    h.finish()
}

pub(crate) fn run(model: &mut Model, rules: &mut super::Rules) -> usize {
    let facts = Facts::new(model);
    let mut groups: HashMap<u64, Vec<Value>> = HashMap::new();
    let mut subst = Subst::new(model.values.len());
    let mut merged = 0;
    let mut kept = Vec::with_capacity(model.graph.initializers.len());
    for &v in &model.graph.initializers {
        // Graph inputs and outputs keep their own values.
        let pinned = facts.is_output(v) || facts.is_input.get(v.index()).copied().unwrap_or(false);
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
                rules.fire("dedup: initializer");
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
