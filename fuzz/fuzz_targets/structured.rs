//! Structured mutations of the fixtures, as an attacker edits a .pt2: the zip stays valid, and
//! JSON fields (sizes, strides, offsets, dtypes, arguments, names, signatures) are set to extreme
//! values, deleted, duplicated or retyped; weight payloads are truncated. Each mutant is exported
//! in memory and checked (`common::export_and_check`).
#![no_main]

use arbitrary::Arbitrary;
use serde_json::Value;

#[path = "common.rs"]
mod common;

#[derive(Arbitrary, Debug)]
struct Plan {
    fixture: u8,
    edits: Vec<Edit>,
}

#[derive(Arbitrary, Debug)]
struct Edit {
    /// Which entry (JSON entries for JSON actions, any for payload actions).
    entry: u8,
    /// Which place in it (a JSON path, or a byte count for payloads).
    at: u32,
    action: Action,
}

#[derive(Arbitrary, Debug)]
enum Action {
    Int(Interesting),
    AnyInt(i64),
    Float(f64),
    Negate,
    Delete,
    Duplicate,
    Empty,
    Null,
    Str(Word),
    TruncatePayload,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Interesting {
    Zero,
    One,
    MinusOne,
    Two,
    I32Max,
    U32Max,
    Pow32,
    Pow40,
    Pow53,
    I64Max,
    I64Min,
    E18,
    NearMax,
}

impl Interesting {
    fn value(self) -> i64 {
        use Interesting::*;
        match self {
            Zero => 0,
            One => 1,
            MinusOne => -1,
            Two => 2,
            I32Max => i32::MAX as i64,
            U32Max => u32::MAX as i64,
            Pow32 => 1 << 32,
            Pow40 => 1 << 40,
            Pow53 => 1 << 53,
            I64Max => i64::MAX,
            I64Min => i64::MIN,
            E18 => 1_000_000_000_000_000_000,
            NearMax => i64::MAX - 7,
        }
    }
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Word {
    Empty,
    X,
    Op,
    Dots,
    Symbol,
    Model,
    Nul,
    Long,
}

impl Word {
    fn text(self) -> String {
        match self {
            Word::Empty => String::new(),
            Word::X => "x".into(),
            Word::Op => "torch.ops.aten.add.Tensor".into(),
            Word::Dots => "../../etc/passwd".into(),
            Word::Symbol => "s0".into(),
            Word::Model => "model".into(),
            Word::Nul => "\u{0}".into(),
            Word::Long => "a".repeat(10_000),
        }
    }
}

/// Every place in `v` (object keys and array positions), depth first, at most `limit` of them.
fn paths(v: &Value, prefix: &mut Vec<Step>, out: &mut Vec<Vec<Step>>, limit: usize) {
    if out.len() >= limit {
        return;
    }
    out.push(prefix.clone());
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                prefix.push(Step::Key(k.clone()));
                paths(child, prefix, out, limit);
                prefix.pop();
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                prefix.push(Step::Index(i));
                paths(child, prefix, out, limit);
                prefix.pop();
            }
        }
        _ => {}
    }
}

#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

fn at_mut<'v>(v: &'v mut Value, path: &[Step]) -> Option<&'v mut Value> {
    path.iter().try_fold(v, |v, step| match step {
        Step::Key(k) => v.get_mut(k.as_str()),
        Step::Index(i) => v.get_mut(*i),
    })
}

fn apply(root: &mut Value, path: &[Step], action: &Action) {
    let Some((last, parent_path)) = path.split_last() else { return };
    let Some(parent) = at_mut(root, parent_path) else { return };
    match action {
        Action::Delete => match (parent, last) {
            (Value::Object(m), Step::Key(k)) => {
                m.shift_remove(k);
            }
            (Value::Array(a), Step::Index(i)) if *i < a.len() => {
                a.remove(*i);
            }
            _ => {}
        },
        Action::Duplicate => {
            if let (Value::Array(a), Step::Index(i)) = (parent, last) {
                if let Some(item) = a.get(*i).cloned() {
                    a.insert(*i, item);
                }
            }
        }
        _ => {
            let Some(slot) = (match last {
                Step::Key(k) => parent.get_mut(k.as_str()),
                Step::Index(i) => parent.get_mut(*i),
            }) else {
                return;
            };
            *slot = match action {
                Action::Int(i) => Value::from(i.value()),
                Action::AnyInt(i) => Value::from(*i),
                Action::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
                Action::Negate => match slot.as_i64() {
                    Some(n) => Value::from(n.wrapping_neg()),
                    None => return,
                },
                Action::Empty => match slot {
                    Value::Array(_) => Value::Array(Vec::new()),
                    Value::Object(_) => Value::Object(Default::default()),
                    Value::String(_) => Value::String(String::new()),
                    _ => Value::from(0),
                },
                Action::Null => Value::Null,
                Action::Str(w) => Value::String(w.text()),
                Action::Delete | Action::Duplicate | Action::TruncatePayload => return,
            };
        }
    }
}

libfuzzer_sys::fuzz_target!(|plan: Plan| {
    let mut entries = common::entries(common::FIXTURES[plan.fixture as usize % common::FIXTURES.len()]);
    let json: Vec<usize> = (0..entries.len()).filter(|&i| entries[i].0.ends_with(".json")).collect();
    let mut parsed: Vec<Option<Value>> = vec![None; entries.len()];
    for edit in plan.edits.iter().take(8) {
        if let Action::TruncatePayload = edit.action {
            let n = entries.len();
            let (_, bytes) = &mut entries[edit.entry as usize % n];
            let keep = edit.at as usize % (bytes.len() + 1);
            bytes.truncate(keep);
            continue;
        }
        let i = json[edit.entry as usize % json.len()];
        let v = parsed[i].get_or_insert_with(|| serde_json::from_slice(&entries[i].1).unwrap_or(Value::Null));
        let mut all = Vec::new();
        paths(v, &mut Vec::new(), &mut all, 100_000);
        let path = &all[edit.at as usize % all.len()];
        apply(v, path, &edit.action);
    }
    for (i, v) in parsed.into_iter().enumerate() {
        if let Some(v) = v {
            entries[i].1 = serde_json::to_vec(&v).expect("JSON values serialize");
        }
    }
    common::export_and_check(common::archive(&entries));
});
