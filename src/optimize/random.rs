//! Random small graphs of the operators translations emit, for checking the optimizer's rewrites
//! as properties: a graph and its optimized form compute the same outputs. `tests/optimizer_props.rs`
//! runs thousands of them through ONNX Runtime (`tests/check_pairs.py`), and the `optimizer` fuzz
//! target drives the same generator with libFuzzer's bytes. Every choice is read from a byte
//! string (zeros once it runs out), so a failing case is its bytes.
//!
//! A graph is built step by step from a pool of values with known element types and shapes:
//! graph inputs (some with a symbolic first dim, `N`), constants, and each step's results. A step
//! is an elementwise op (with special constants: 0, 1, -1, 0.5, 2 make the no-op and identity
//! rewrites fire), a comparison and `Where`, a cast, a layout op (Transpose, Reshape, Unsqueeze,
//! Squeeze, Concat, Slice, Gather, Expand, Flatten), a reduction, MatMul/Gemm, Softmax, a shape
//! computation (Shape, Gather, Concat into a Reshape), a repeated subexpression, a constant-only
//! subgraph, or one of the patterns the e-graph fuses (Gelu in its erf and tanh forms, layer and
//! RMS normalization, hard sigmoid and swish, Conv then BatchNormalization, MatMul then Add,
//! attention). Every value gets the type and shape ONNX computes for it, as the FX graph records
//! them (a few intermediate ones none, as a translation's own values), and the generated graph
//! must pass the shape check before it is optimized: a graph that does not is the generator's
//! bug, and is reported as such.

use std::rc::Rc;

use super::OptimizeStats;
use crate::onnx::builder::Builder;
use crate::onnx::ir::{AttrValue, DType, Dim, Model, TensorData, Value};

/// A generated graph and what the optimizer made of it.
pub struct Case {
    pub original: Model,
    pub optimized: Model,
    pub stats: OptimizeStats,
}

/// The graph `bytes` describe, and its optimized form. `Err` says why there is none: the
/// generated graph fails the shape check (`generator: ...`, a bug of this module), or the
/// optimized one does (`optimizer: ...`, a bug of the optimizer).
pub fn case(bytes: &[u8]) -> Result<Case, String> {
    let original = generate(bytes);
    crate::translate::lower::check_types(&original).map_err(|e| format!("generator: {e}"))?;
    let mut optimized = original.clone();
    let stats = super::optimize(&mut optimized);
    crate::translate::lower::check_types(&optimized).map_err(|e| format!("optimizer: {e}"))?;
    let (a, b) = (&original.graph.outputs, &optimized.graph.outputs);
    if a.len() != b.len() {
        return Err(format!("optimizer: {} outputs became {}", a.len(), b.len()));
    }
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (original.value(x), optimized.value(y));
        if (&x.name, x.dtype, &x.shape) != (&y.name, y.dtype, &y.shape) {
            return Err(format!("optimizer: output `{}` changed its name, type or shape", x.name));
        }
    }
    Ok(Case { original, optimized, stats })
}

/// The graph `bytes` describe (at opset 20, torch.onnx's, or 23, where RMS normalization and
/// attention fuse).
pub fn generate(bytes: &[u8]) -> Model {
    let mut d = Draw { bytes, at: 0 };
    let opset = if d.chance(70) { 20 } else { 23 };
    let mut g = Gen { d, b: Builder::new(opset), pool: Vec::new(), sym: Rc::from("N") };
    g.inputs();
    let steps = 1 + g.d.below(12);
    for _ in 0..steps {
        g.step();
    }
    g.finish()
}

/// Choices read from bytes.
struct Draw<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Draw<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.bytes.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    /// A number below `n` (0 for `n` of 0 or 1).
    fn below(&mut self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        let v = u16::from_le_bytes([self.byte(), self.byte()]) as usize;
        v % n
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<'t, T>(&mut self, items: &'t [T]) -> &'t T {
        &items[self.below(items.len())]
    }

    /// A float constant: the special values the no-op rules look for, or one in [-2, 2].
    fn float(&mut self) -> f64 {
        match self.below(10) {
            0 => 0.0,
            1 => 1.0,
            2 => -1.0,
            3 => 0.5,
            4 => 2.0,
            _ => (self.below(129) as f64 - 64.0) / 32.0,
        }
    }
}

/// A value of the pool: its element type and shape.
#[derive(Clone)]
struct T {
    v: Value,
    dt: DType,
    dims: Vec<Dim>,
}

struct Gen<'a> {
    d: Draw<'a>,
    b: Builder,
    pool: Vec<T>,
    sym: Rc<str>,
}

fn is_float(dt: DType) -> bool {
    matches!(dt, DType::Float | DType::Double | DType::Float16)
}

fn fixed(dims: &[Dim]) -> Option<Vec<i64>> {
    dims.iter().map(|d| if let Dim::Fixed(n) = d { Some(*n) } else { None }).collect()
}

fn dims_of(v: &[i64]) -> Vec<Dim> {
    v.iter().map(|&n| Dim::Fixed(n)).collect()
}

/// NumPy broadcasting of two shapes, `None` where they do not broadcast.
fn broadcast(a: &[Dim], b: &[Dim]) -> Option<Vec<Dim>> {
    let n = a.len().max(b.len());
    let at = |s: &[Dim], i: usize| if i + s.len() >= n { s[i + s.len() - n].clone() } else { Dim::Fixed(1) };
    (0..n)
        .map(|i| match (at(a, i), at(b, i)) {
            (x, y) if x == y => Some(x),
            (Dim::Fixed(1), y) => Some(y),
            (x, Dim::Fixed(1)) => Some(x),
            _ => None,
        })
        .collect()
}

impl Gen<'_> {
    // ------------------------------------------------------------------------------ building

    /// A node of `op` on `inputs` with `attrs`, its output of type `dt` and shape `dims` (left
    /// unknown now and then for a value that is no graph output, as a translation's own are).
    fn node(
        &mut self,
        op: &'static str,
        inputs: &[Value],
        attrs: Vec<(&str, AttrValue)>,
        dt: DType,
        dims: Vec<Dim>,
    ) -> T {
        let mut call = self.b.call(op, 1, inputs.iter().map(|&v| Some(v)).collect());
        for (name, a) in attrs {
            call = call.attr(name, a);
        }
        let v = call.out();
        let declare = !self.d.chance(8);
        let info = self.b.info_mut(v);
        info.dtype = Some(dt);
        info.shape = declare.then(|| dims.clone());
        T { v, dt, dims }
    }

    /// [`node`](Self::node), the result kept in the pool.
    fn push(
        &mut self,
        op: &'static str,
        inputs: &[Value],
        attrs: Vec<(&str, AttrValue)>,
        dt: DType,
        dims: Vec<Dim>,
    ) -> T {
        let t = self.node(op, inputs, attrs, dt, dims);
        self.pool.push(t.clone());
        t
    }

    fn constant(&mut self, dt: DType, dims: Vec<i64>, values: &[f64]) -> T {
        let data = TensorData::from_f64_as(dt, dims.clone(), values)
            .unwrap_or_else(|| TensorData::from_i64s(dims.clone(), &[]));
        let v = self.b.add_initializer(data);
        T { v, dt, dims: dims_of(&dims) }
    }

    /// A constant of `dims` with random values (ints for integer types, 0/1 for bool).
    fn random_constant(&mut self, dt: DType, dims: Vec<i64>) -> T {
        let n: i64 = dims.iter().product();
        let values: Vec<f64> = (0..n)
            .map(|_| match dt {
                DType::Bool => self.d.below(2) as f64,
                d if is_float(d) => self.d.float(),
                _ => self.d.below(9) as f64 - 4.0,
            })
            .collect();
        self.constant(dt, dims, &values)
    }

    fn ints(&mut self, values: &[i64]) -> Value {
        self.b.add_initializer(TensorData::from_i64s(vec![values.len() as i64], values))
    }

    /// A pool value that `ok` accepts, the later ones likelier.
    fn pick(&mut self, ok: impl Fn(&T) -> bool) -> Option<T> {
        let found: Vec<&T> = self.pool.iter().filter(|t| ok(t)).collect();
        if found.is_empty() {
            return None;
        }
        // The newer half twice as likely: chains grow.
        let k = self.d.below(found.len() + found.len() / 2);
        let k = if k < found.len() { k } else { found.len() / 2 + (k - found.len()) };
        Some(found[k.min(found.len() - 1)].clone())
    }

    fn pick_float(&mut self) -> Option<T> {
        self.pick(|t| is_float(t.dt))
    }

    /// A second operand for an elementwise op on `x`: a pool value of its type that broadcasts
    /// with it, or a constant (a scalar, or of `x`'s trailing fixed dims).
    fn operand(&mut self, x: &T) -> T {
        if self.d.chance(35) {
            let (dt, dims) = (x.dt, x.dims.clone());
            if let Some(y) = self.pick(|t| t.dt == dt && t.v != x.v && broadcast(&t.dims, &dims).is_some()) {
                return y;
            }
        }
        let value = if is_float(x.dt) { self.d.float() } else { self.d.below(5) as f64 - 1.0 };
        let trailing: Vec<i64> =
            x.dims.iter().rev().map_while(|d| if let Dim::Fixed(n) = d { Some(*n) } else { None }).collect();
        let keep = self.d.below(trailing.len().min(2) + 1);
        let mut dims: Vec<i64> = trailing[..keep].to_vec();
        dims.reverse();
        if dims.is_empty() || self.d.chance(50) {
            let n: i64 = dims.iter().product();
            return self.constant(x.dt, dims, &vec![value; n as usize]);
        }
        self.random_constant(x.dt, dims)
    }

    // ------------------------------------------------------------------------------ the graph

    fn inputs(&mut self) {
        let n = 1 + self.d.below(3);
        for k in 0..n {
            let dt = match self.d.below(10) {
                0 => DType::Double,
                1 => DType::Int64,
                2 => DType::Float16,
                _ => DType::Float,
            };
            let rank = self.d.below(5);
            let mut dims: Vec<Dim> = (0..rank).map(|_| Dim::Fixed(1 + self.d.below(4) as i64)).collect();
            if rank > 0 && self.d.chance(30) {
                dims[0] = Dim::Param(self.sym.clone());
            }
            let v = self.b.add_input(Some(dt), Some(dims.clone()));
            self.b.info_mut(v).name = format!("x{k}");
            self.pool.push(T { v, dt, dims });
        }
        // Not every pool holds a float: one to start the float ops from.
        if !self.pool.iter().any(|t| is_float(t.dt)) {
            let v = self.b.add_input(Some(DType::Float), Some(vec![Dim::Fixed(2), Dim::Fixed(3)]));
            self.b.info_mut(v).name = format!("x{n}");
            self.pool.push(T { v, dt: DType::Float, dims: vec![Dim::Fixed(2), Dim::Fixed(3)] });
        }
    }

    fn finish(mut self) -> Model {
        // The outputs: the last value, and now and then others (an input itself included).
        let mut outputs = vec![self.pool.len() - 1];
        for _ in 0..self.d.below(3) {
            let k = self.d.below(self.pool.len());
            if !outputs.contains(&k) {
                outputs.push(k);
            }
        }
        let mut values = Vec::new();
        for (i, k) in outputs.into_iter().enumerate() {
            let t = self.pool[k].clone();
            if values.contains(&t.v) {
                continue;
            }
            let info = self.b.info_mut(t.v);
            info.dtype = Some(t.dt);
            info.shape = Some(t.dims.clone());
            if info.name.is_empty() {
                info.name = format!("y{i}");
            }
            values.push(t.v);
        }
        self.b.graph_mut().outputs = values;
        self.b.finish()
    }

    fn step(&mut self) {
        let done = match self.d.below(24) {
            0..=3 => self.unary(),
            4..=7 => self.binary(),
            8 => self.compare_where(),
            9 => self.cast(),
            10 => self.transpose(),
            11 => self.reshape(),
            12 => self.unsqueeze_squeeze(),
            13 => self.concat(),
            14 => self.slice_gather(),
            15 => self.reduce(),
            16 => self.matmul(),
            17 => self.softmax_expand(),
            18 => self.shape_reshape(),
            19 => self.repeat(),
            20 => self.constant_subgraph(),
            21 => self.clip_min_max(),
            _ => self.pattern(),
        };
        if done.is_none() {
            // Nothing of the kind fits the pool: an elementwise op always does.
            let _ = self.unary();
        }
    }

    // ------------------------------------------------------------------------------ steps

    fn unary(&mut self) -> Option<()> {
        let x = self.pick_float()?;
        let op = *self.d.pick(&[
            "Relu",
            "Neg",
            "Abs",
            "Tanh",
            "Sigmoid",
            "Exp",
            "Erf",
            "Identity",
            "Floor",
            "Ceil",
            "Sqrt",
            "Reciprocal",
            "Sin",
            "Softplus",
        ]);
        // ONNX Runtime's CPU kernels: float16 has few of these.
        let op = if x.dt == DType::Float16 && !matches!(op, "Relu" | "Neg" | "Abs" | "Identity" | "Sigmoid" | "Tanh") {
            "Abs"
        } else {
            op
        };
        self.push(op, &[x.v], vec![], x.dt, x.dims);
        Some(())
    }

    fn binary(&mut self) -> Option<()> {
        let x = self.pick(|t| !matches!(t.dt, DType::Bool))?;
        let y = self.operand(&x);
        let dims = broadcast(&x.dims, &y.dims)?;
        let ops: &[&'static str] = if is_float(x.dt) {
            &["Add", "Sub", "Mul", "Div", "Max", "Min", "Pow"]
        } else {
            // Integer division by a zero that a graph input may hold would end the run.
            &["Add", "Sub", "Mul", "Max", "Min"]
        };
        let op = *self.d.pick(ops);
        let op = if x.dt == DType::Float16 && matches!(op, "Pow") { "Mul" } else { op };
        let (a, b) = if self.d.chance(25) && op != "Pow" { (y.v, x.v) } else { (x.v, y.v) };
        self.push(op, &[a, b], vec![], x.dt, dims);
        Some(())
    }

    fn compare_where(&mut self) -> Option<()> {
        let x = self.pick(|t| matches!(t.dt, DType::Float | DType::Double | DType::Int64))?;
        let y = self.operand(&x);
        let dims = broadcast(&x.dims, &y.dims)?;
        let op = *self.d.pick(&["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"]);
        let c = self.node(op, &[x.v, y.v], vec![], DType::Bool, dims.clone());
        let c = if self.d.chance(20) { self.node("Not", &[c.v], vec![], DType::Bool, dims.clone()) } else { c };
        if self.d.chance(20) {
            self.pool.push(c);
            return Some(());
        }
        let other = self.operand(&x);
        let out = broadcast(&broadcast(&dims, &x.dims)?, &other.dims)?;
        let (a, b) = if self.d.chance(50) { (x.v, other.v) } else { (other.v, x.v) };
        self.push("Where", &[c.v, a, b], vec![], x.dt, out);
        Some(())
    }

    fn cast(&mut self) -> Option<()> {
        let x = self.pick(|t| t.dt != DType::Float16)?;
        // Casts whose results are defined for every value: no float to integer (out of range or
        // NaN is undefined there), no narrowing of integers.
        let to = match x.dt {
            DType::Float => *self.d.pick(&[DType::Double, DType::Float, DType::Bool]),
            DType::Double => *self.d.pick(&[DType::Float, DType::Double]),
            DType::Int64 => *self.d.pick(&[DType::Float, DType::Double, DType::Int64]),
            DType::Int32 => *self.d.pick(&[DType::Int64, DType::Float]),
            DType::Bool => *self.d.pick(&[DType::Float, DType::Int64, DType::Int32]),
            _ => return None,
        };
        let t = self.push("Cast", &[x.v], vec![("to", AttrValue::Int(to as i64))], to, x.dims.clone());
        if self.d.chance(40) && matches!((x.dt, to), (DType::Float, DType::Double) | (DType::Int32, DType::Int64)) {
            // Back again: the pair is a no-op (cast-cast).
            self.push("Cast", &[t.v], vec![("to", AttrValue::Int(x.dt as i64))], x.dt, x.dims);
        }
        Some(())
    }

    fn permutation(&mut self, rank: usize) -> Vec<i64> {
        let mut perm: Vec<i64> = (0..rank as i64).collect();
        for i in (1..rank).rev() {
            let j = self.d.below(i + 1);
            perm.swap(i, j);
        }
        perm
    }

    fn transpose(&mut self) -> Option<()> {
        let x = self.pick(|t| t.dims.len() >= 2)?;
        let perm = self.permutation(x.dims.len());
        let dims: Vec<Dim> = perm.iter().map(|&p| x.dims[p as usize].clone()).collect();
        let t = self.push("Transpose", &[x.v], vec![("perm", AttrValue::Ints(perm.clone()))], x.dt, dims.clone());
        if self.d.chance(40) {
            // Another transpose: the inverse (the pair cancels) or any (the pair merges).
            let second = if self.d.chance(50) {
                (0..perm.len() as i64).map(|i| perm.iter().position(|&p| p == i).unwrap_or(0) as i64).collect()
            } else {
                self.permutation(perm.len())
            };
            let out: Vec<Dim> = second.iter().map(|&p| dims[p as usize].clone()).collect();
            self.push("Transpose", &[t.v], vec![("perm", AttrValue::Ints(second))], x.dt, out);
        }
        Some(())
    }

    /// `n` as a product of `parts` factors (in order), from its prime factors.
    fn factor(&mut self, mut n: i64, parts: usize) -> Vec<i64> {
        let mut out = vec![1i64; parts.max(1)];
        let mut p = 2;
        while n > 1 {
            while n % p == 0 {
                let k = self.d.below(out.len());
                out[k] *= p;
                n /= p;
            }
            p += 1;
        }
        out
    }

    fn reshape(&mut self) -> Option<()> {
        let x = self.pick(|t| !t.dims.is_empty())?;
        match fixed(&x.dims) {
            Some(dims) => {
                let n: i64 = dims.iter().product();
                let rank = 1 + self.d.below(4);
                let out = self.factor(n, rank);
                // The target as given: one dim may be -1 (inferred), or 0 (copied, where it is
                // the input's own size at that axis).
                let mut target = out.clone();
                let k = self.d.below(rank);
                match self.d.below(3) {
                    0 => target[k] = -1,
                    1 if k < dims.len() && dims[k] == out[k] => target[k] = 0,
                    _ => {}
                }
                let shape = self.ints(&target);
                let t = self.push("Reshape", &[x.v, shape], vec![], x.dt, dims_of(&out));
                if self.d.chance(30) {
                    // Back to the input's shape: the pair is a no-op.
                    let back = self.ints(&dims);
                    self.push("Reshape", &[t.v, back], vec![], x.dt, x.dims);
                }
            }
            None => {
                // A symbolic first dim: kept (0), the rest flattened (needs them fixed).
                let rest = fixed(&x.dims[1..])?;
                let shape = self.ints(&[0, -1]);
                let n: i64 = rest.iter().product();
                self.push("Reshape", &[x.v, shape], vec![], x.dt, vec![x.dims[0].clone(), Dim::Fixed(n)]);
            }
        }
        Some(())
    }

    fn unsqueeze_squeeze(&mut self) -> Option<()> {
        let x = self.pick(|t| t.dims.len() < 4)?;
        let rank = x.dims.len() as i64 + 1;
        let axis = self.d.below(rank as usize) as i64;
        let mut dims = x.dims.clone();
        dims.insert(axis as usize, Dim::Fixed(1));
        let given = if self.d.chance(30) { axis - rank } else { axis };
        let axes = self.ints(&[given]);
        let t = self.push("Unsqueeze", &[x.v, axes], vec![], x.dt, dims.clone());
        match self.d.below(3) {
            0 => {
                // Squeeze it away again.
                let axes = self.ints(&[axis]);
                self.push("Squeeze", &[t.v, axes], vec![], x.dt, x.dims);
            }
            1 if dims.len() < 4 => {
                // Another unsqueeze (unsqueeze-unsqueeze).
                let axis2 = self.d.below(dims.len() + 1);
                let mut out = dims.clone();
                out.insert(axis2, Dim::Fixed(1));
                let axes = self.ints(&[axis2 as i64]);
                self.push("Unsqueeze", &[t.v, axes], vec![], x.dt, out);
            }
            _ => {}
        }
        Some(())
    }

    fn concat(&mut self) -> Option<()> {
        let x = self.pick(|t| !t.dims.is_empty())?;
        let axis = self.d.below(x.dims.len());
        // A partner: x itself, a pool value of the same shape off `axis`, or a constant.
        let same_off_axis = |t: &T| {
            t.dt == x.dt
                && t.dims.len() == x.dims.len()
                && t.dims.iter().zip(&x.dims).enumerate().all(|(i, (a, b))| i == axis || a == b)
        };
        let y = match self.d.below(3) {
            0 => x.clone(),
            1 => self.pick(same_off_axis).unwrap_or_else(|| x.clone()),
            _ => match fixed(&x.dims) {
                Some(mut dims) => {
                    dims[axis] = 1 + self.d.below(3) as i64;
                    self.random_constant(x.dt, dims)
                }
                None => x.clone(),
            },
        };
        let mut dims = x.dims.clone();
        dims[axis] = match (&x.dims[axis], &y.dims[axis]) {
            (Dim::Fixed(a), Dim::Fixed(b)) => Dim::Fixed(a + b),
            _ => return None,
        };
        let given = if self.d.chance(30) { axis as i64 - x.dims.len() as i64 } else { axis as i64 };
        self.push("Concat", &[x.v, y.v], vec![("axis", AttrValue::Int(given))], x.dt, dims);
        Some(())
    }

    fn slice_gather(&mut self) -> Option<()> {
        let x = self.pick(|t| t.dims.iter().any(|d| matches!(d, Dim::Fixed(n) if *n > 0)))?;
        let axes: Vec<usize> = (0..x.dims.len()).filter(|&i| matches!(x.dims[i], Dim::Fixed(n) if n > 0)).collect();
        let axis = *self.d.pick(&axes);
        let Dim::Fixed(n) = x.dims[axis] else { return None };
        if self.d.chance(50) {
            // Slice [start, end) with step 1, 2 or -1 (from the end backwards).
            let step = *self.d.pick(&[1i64, 1, 2, -1]);
            let (start, end, len) = if step > 0 {
                let s = self.d.below(n as usize) as i64;
                let e = s + 1 + self.d.below((n - s) as usize) as i64;
                let e_given = if e == n && self.d.chance(50) { i64::MAX } else { e };
                (s, e_given, (e - s + step - 1) / step)
            } else {
                let s = n - 1 - self.d.below(n as usize) as i64;
                (s, i64::MIN, s + 1)
            };
            let (starts, ends, ax, steps) =
                (self.ints(&[start]), self.ints(&[end]), self.ints(&[axis as i64]), self.ints(&[step]));
            let mut dims = x.dims.clone();
            dims[axis] = Dim::Fixed(len);
            self.push("Slice", &[x.v, starts, ends, ax, steps], vec![], x.dt, dims);
        } else {
            // Gather: a scalar index (the axis goes) or a 1-D list (its length replaces it).
            let mut dims = x.dims.clone();
            let index = |d: &mut Draw| d.below(2 * n as usize) as i64 - n;
            let indices = if self.d.chance(40) {
                dims.remove(axis);
                let i = index(&mut self.d);
                self.b.add_initializer(TensorData::from_i64s(vec![], &[i]))
            } else {
                let k = 1 + self.d.below(3);
                let list: Vec<i64> = (0..k).map(|_| index(&mut self.d)).collect();
                dims[axis] = Dim::Fixed(k as i64);
                self.ints(&list)
            };
            self.push("Gather", &[x.v, indices], vec![("axis", AttrValue::Int(axis as i64))], x.dt, dims);
        }
        Some(())
    }

    fn reduce(&mut self) -> Option<()> {
        let x = self.pick(|t| !t.dims.is_empty() && t.dt != DType::Float16)?;
        let op = *self.d.pick(&["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd"]);
        let op = if !is_float(x.dt) && op == "ReduceMean" { "ReduceSum" } else { op };
        let rank = x.dims.len();
        let mut axes: Vec<usize> = (0..rank).filter(|_| self.d.chance(50)).collect();
        if axes.is_empty() {
            axes.push(self.d.below(rank));
        }
        let keep = self.d.chance(50);
        let dims: Vec<Dim> = (0..rank)
            .filter_map(|i| match (axes.contains(&i), keep) {
                (true, true) => Some(Dim::Fixed(1)),
                (true, false) => None,
                (false, _) => Some(x.dims[i].clone()),
            })
            .collect();
        let given: Vec<i64> =
            axes.iter().map(|&a| if self.d.chance(20) { a as i64 - rank as i64 } else { a as i64 }).collect();
        let axes_v = self.ints(&given);
        let r = self.node(op, &[x.v, axes_v], vec![("keepdims", AttrValue::Int(keep as i64))], x.dt, dims.clone());
        // A sum divided by the count is a mean (sum-div-mean).
        let count: Option<i64> =
            axes.iter().map(|&a| if let Dim::Fixed(n) = x.dims[a] { Some(n) } else { None }).product();
        match (op, count) {
            ("ReduceSum", Some(n)) if is_float(x.dt) && self.d.chance(50) => {
                let c = self.constant(x.dt, vec![], &[n as f64]);
                self.push("Div", &[r.v, c.v], vec![], x.dt, dims);
            }
            _ => self.pool.push(r),
        }
        Some(())
    }

    fn matmul(&mut self) -> Option<()> {
        let x = self.pick(|t| {
            matches!(t.dt, DType::Float | DType::Double)
                && !t.dims.is_empty()
                && matches!(t.dims.last(), Some(Dim::Fixed(_)))
        })?;
        let Some(Dim::Fixed(k)) = x.dims.last().cloned() else { return None };
        let m = 1 + self.d.below(4) as i64;
        if x.dims.len() == 2 && self.d.chance(35) {
            // Gemm on the weight as stored ([m, k], transB) with a bias: what `linear` gives.
            let w = self.random_constant(x.dt, vec![m, k]);
            let bias = self.random_constant(x.dt, vec![m]);
            let dims = vec![x.dims[0].clone(), Dim::Fixed(m)];
            self.push("Gemm", &[x.v, w.v, bias.v], vec![("transB", AttrValue::Int(1))], x.dt, dims);
            return Some(());
        }
        let mut dims = x.dims.clone();
        let w = if self.d.chance(40) {
            // The weight transposed in the graph (folded into the constant, or into a Gemm).
            let w = self.random_constant(x.dt, vec![m, k]);
            self.node("Transpose", &[w.v], vec![("perm", AttrValue::Ints(vec![1, 0]))], x.dt, dims_of(&[k, m])).v
        } else {
            self.random_constant(x.dt, vec![k, m]).v
        };
        *dims.last_mut()? = Dim::Fixed(m);
        if dims.len() == 1 {
            dims = vec![Dim::Fixed(m)];
        }
        let y = self.node("MatMul", &[x.v, w], vec![], x.dt, dims.clone());
        if self.d.chance(50) {
            // And a bias (matmul-add-gemm on 2-D).
            let bias = self.random_constant(x.dt, vec![m]);
            self.push("Add", &[y.v, bias.v], vec![], x.dt, dims);
        } else {
            self.pool.push(y);
        }
        Some(())
    }

    fn softmax_expand(&mut self) -> Option<()> {
        if self.d.chance(50) {
            let x = self.pick(|t| !t.dims.is_empty() && matches!(t.dt, DType::Float | DType::Double))?;
            let axis = self.d.below(x.dims.len()) as i64 - if self.d.chance(50) { x.dims.len() as i64 } else { 0 };
            self.push("Softmax", &[x.v], vec![("axis", AttrValue::Int(axis))], x.dt, x.dims);
        } else {
            let x = self.pick(|t| t.dims.len() < 4)?;
            let lead = 1 + self.d.below(3) as i64;
            let mut target: Vec<i64> = vec![lead];
            target.extend(x.dims.iter().map(|d| if let Dim::Fixed(n) = d { *n } else { 1 }));
            let shape = self.ints(&target);
            let mut dims = vec![Dim::Fixed(lead)];
            dims.extend(x.dims.iter().cloned());
            self.push("Expand", &[x.v, shape], vec![], x.dt, dims);
        }
        Some(())
    }

    /// The shape read in the graph: Shape, Gather of one dim, Concat with constants, Reshape.
    fn shape_reshape(&mut self) -> Option<()> {
        let x = self.pick(|t| t.dims.len() >= 2 && fixed(&t.dims[1..]).is_some())?;
        let rank = x.dims.len();
        let shape = self.node("Shape", &[x.v], vec![], DType::Int64, dims_of(&[rank as i64]));
        let zero = self.b.add_initializer(TensorData::from_i64s(vec![], &[0]));
        let d0 = self.node("Gather", &[shape.v, zero], vec![("axis", AttrValue::Int(0))], DType::Int64, vec![]);
        let axes = self.ints(&[0]);
        let d0 = self.node("Unsqueeze", &[d0.v, axes], vec![], DType::Int64, dims_of(&[1]));
        let minus_one = self.ints(&[-1]);
        let target =
            self.node("Concat", &[d0.v, minus_one], vec![("axis", AttrValue::Int(0))], DType::Int64, dims_of(&[2]));
        let n: i64 = fixed(&x.dims[1..])?.iter().product();
        self.push("Reshape", &[x.v, target.v], vec![], x.dt, vec![x.dims[0].clone(), Dim::Fixed(n)]);
        Some(())
    }

    /// The same computation twice on the same input, both results used (common subexpressions).
    fn repeat(&mut self) -> Option<()> {
        let x = self.pick_float()?;
        let op = *self.d.pick(&["Relu", "Neg", "Sigmoid", "Abs"]);
        let a = self.node(op, &[x.v], vec![], x.dt, x.dims.clone());
        let b = self.node(op, &[x.v], vec![], x.dt, x.dims.clone());
        self.push("Add", &[a.v, b.v], vec![], x.dt, x.dims);
        Some(())
    }

    /// Arithmetic on constants only (folded), then applied to a value.
    fn constant_subgraph(&mut self) -> Option<()> {
        let x = self.pick_float()?;
        let dims: Vec<i64> = x.dims.iter().rev().take(1).map(|d| if let Dim::Fixed(n) = d { *n } else { 1 }).collect();
        let a = self.random_constant(x.dt, dims.clone());
        let b = self.random_constant(x.dt, dims.clone());
        let op = *self.d.pick(&["Add", "Mul", "Sub", "Max"]);
        let c = self.node(op, &[a.v, b.v], vec![], x.dt, dims_of(&dims));
        let c = if self.d.chance(50) { self.node("Neg", &[c.v], vec![], x.dt, dims_of(&dims)) } else { c };
        let out = broadcast(&x.dims, &c.dims)?;
        self.push("Mul", &[x.v, c.v], vec![], x.dt, out);
        Some(())
    }

    fn clip_min_max(&mut self) -> Option<()> {
        let x = self.pick(|t| matches!(t.dt, DType::Float | DType::Double))?;
        // 0.0 - k: a bound of zero is +0 (`Max(x, -0)` keeps a negative zero that a fused Clip
        // may not: signed zeros are no value change, but a Reciprocal after makes them ±inf).
        let (lo, hi) = (0.0 - self.d.below(3) as f64, 1.0 + self.d.below(6) as f64);
        match self.d.below(3) {
            0 => {
                let (l, h) = (self.constant(x.dt, vec![], &[lo]), self.constant(x.dt, vec![], &[hi]));
                self.push("Clip", &[x.v, l.v, h.v], vec![], x.dt, x.dims);
            }
            1 => {
                // Min(Max(x, lo), hi) is a Clip (min-max-clip).
                let l = self.constant(x.dt, vec![], &[lo]);
                let m = self.node("Max", &[x.v, l.v], vec![], x.dt, x.dims.clone());
                let h = self.constant(x.dt, vec![], &[hi]);
                self.push("Min", &[m.v, h.v], vec![], x.dt, x.dims);
            }
            _ => {
                // Relu twice, or a Relu then a Clip from 0 (relu-relu, relu-clip).
                let r = self.node("Relu", &[x.v], vec![], x.dt, x.dims.clone());
                if self.d.chance(50) {
                    self.push("Relu", &[r.v], vec![], x.dt, x.dims);
                } else {
                    let (l, h) = (self.constant(x.dt, vec![], &[0.0]), self.constant(x.dt, vec![], &[6.0]));
                    self.push("Clip", &[r.v, l.v, h.v], vec![], x.dt, x.dims);
                }
            }
        }
        Some(())
    }

    // ------------------------------------------------------------------------------ fusions

    fn pattern(&mut self) -> Option<()> {
        match self.d.below(9) {
            0 => self.gelu(),
            1 => self.layer_norm(),
            2 => self.rms_norm(),
            3 => self.hard_sigmoid(),
            4 => self.conv_bn(),
            5 => self.attention(),
            6 => self.attention_cache(),
            7 => self.rotary(),
            _ => self.gelu_tanh(),
        }
    }

    fn scalar(&mut self, dt: DType, v: f64) -> Value {
        self.constant(dt, vec![], &[v]).v
    }

    /// `x * 0.5 * (1 + erf(x / sqrt 2))`, in the forms torch's decompositions write.
    fn gelu(&mut self) -> Option<()> {
        let x = self.pick(|t| matches!(t.dt, DType::Float | DType::Double))?;
        let (dt, dims) = (x.dt, x.dims.clone());
        let by_mul = self.d.chance(50);
        let s = if by_mul {
            self.scalar(dt, std::f64::consts::FRAC_1_SQRT_2)
        } else {
            self.scalar(dt, std::f64::consts::SQRT_2)
        };
        let inner = self.node(if by_mul { "Mul" } else { "Div" }, &[x.v, s], vec![], dt, dims.clone());
        let e = self.node("Erf", &[inner.v], vec![], dt, dims.clone());
        let one = self.scalar(dt, 1.0);
        let plus = self.node("Add", &[e.v, one], vec![], dt, dims.clone());
        let half = self.scalar(dt, 0.5);
        if self.d.chance(50) {
            let xh = self.node("Mul", &[x.v, half], vec![], dt, dims.clone());
            self.push("Mul", &[xh.v, plus.v], vec![], dt, dims);
        } else {
            let xp = self.node("Mul", &[x.v, plus.v], vec![], dt, dims.clone());
            self.push("Mul", &[xp.v, half], vec![], dt, dims);
        }
        Some(())
    }

    fn gelu_tanh(&mut self) -> Option<()> {
        let x = self.pick(|t| matches!(t.dt, DType::Float | DType::Double))?;
        let (dt, dims) = (x.dt, x.dims.clone());
        let three = self.scalar(dt, 3.0);
        let cube = self.node("Pow", &[x.v, three], vec![], dt, dims.clone());
        let k = self.scalar(dt, 0.044715);
        let kc = self.node("Mul", &[cube.v, k], vec![], dt, dims.clone());
        let sum = self.node("Add", &[x.v, kc.v], vec![], dt, dims.clone());
        let c = self.scalar(dt, (2.0 / std::f64::consts::PI).sqrt());
        let scaled = self.node("Mul", &[sum.v, c], vec![], dt, dims.clone());
        let t = self.node("Tanh", &[scaled.v], vec![], dt, dims.clone());
        let one = self.scalar(dt, 1.0);
        let plus = self.node("Add", &[t.v, one], vec![], dt, dims.clone());
        let half = self.scalar(dt, 0.5);
        let xh = self.node("Mul", &[x.v, half], vec![], dt, dims.clone());
        self.push("Mul", &[xh.v, plus.v], vec![], dt, dims);
        Some(())
    }

    /// Mean and variance over the last axis, normalized, scaled and shifted.
    fn layer_norm(&mut self) -> Option<()> {
        let x = self
            .pick(|t| matches!(t.dt, DType::Float | DType::Double) && matches!(t.dims.last(), Some(Dim::Fixed(_))))?;
        let (dt, dims) = (x.dt, x.dims.clone());
        let Some(Dim::Fixed(n)) = dims.last().cloned() else { return None };
        let mut kept = dims.clone();
        *kept.last_mut()? = Dim::Fixed(1);
        let ax = self.ints(&[-1]);
        let keep = || vec![("keepdims", AttrValue::Int(1))];
        let mean = self.node("ReduceMean", &[x.v, ax], keep(), dt, kept.clone());
        let centered = self.node("Sub", &[x.v, mean.v], vec![], dt, dims.clone());
        let two = self.scalar(dt, 2.0);
        let sq = self.node("Pow", &[centered.v, two], vec![], dt, dims.clone());
        let ax2 = self.ints(&[-1]);
        let var = self.node("ReduceMean", &[sq.v, ax2], keep(), dt, kept.clone());
        let eps = self.scalar(dt, 1e-5);
        let ve = self.node("Add", &[var.v, eps], vec![], dt, kept.clone());
        let sd = self.node("Sqrt", &[ve.v], vec![], dt, kept);
        let normed = self.node("Div", &[centered.v, sd.v], vec![], dt, dims.clone());
        let scale = self.random_constant(dt, vec![n]);
        let scaled = self.node("Mul", &[normed.v, scale.v], vec![], dt, dims.clone());
        if self.d.chance(70) {
            let bias = self.random_constant(dt, vec![n]);
            self.push("Add", &[scaled.v, bias.v], vec![], dt, dims);
        } else {
            self.pool.push(scaled);
        }
        Some(())
    }

    fn rms_norm(&mut self) -> Option<()> {
        let x = self
            .pick(|t| matches!(t.dt, DType::Float | DType::Double) && matches!(t.dims.last(), Some(Dim::Fixed(_))))?;
        let (dt, dims) = (x.dt, x.dims.clone());
        let Some(Dim::Fixed(n)) = dims.last().cloned() else { return None };
        let mut kept = dims.clone();
        *kept.last_mut()? = Dim::Fixed(1);
        let two = self.scalar(dt, 2.0);
        let sq = self.node("Pow", &[x.v, two], vec![], dt, dims.clone());
        let ax = self.ints(&[-1]);
        let ms = self.node("ReduceMean", &[sq.v, ax], vec![("keepdims", AttrValue::Int(1))], dt, kept.clone());
        let eps = self.scalar(dt, 1e-6);
        let me = self.node("Add", &[ms.v, eps], vec![], dt, kept.clone());
        let r = self.node("Sqrt", &[me.v], vec![], dt, kept.clone());
        let normed = if self.d.chance(50) {
            self.node("Div", &[x.v, r.v], vec![], dt, dims.clone())
        } else {
            let inv = self.node("Reciprocal", &[r.v], vec![], dt, kept);
            self.node("Mul", &[x.v, inv.v], vec![], dt, dims.clone())
        };
        let w = self.random_constant(dt, vec![n]);
        self.push("Mul", &[w.v, normed.v], vec![], dt, dims);
        Some(())
    }

    /// `Clip(x + 3, 0, 6) / 6`, and times x (hard swish).
    fn hard_sigmoid(&mut self) -> Option<()> {
        let x = self.pick(|t| matches!(t.dt, DType::Float | DType::Double))?;
        let (dt, dims) = (x.dt, x.dims.clone());
        let three = self.scalar(dt, 3.0);
        let a = self.node("Add", &[x.v, three], vec![], dt, dims.clone());
        let (zero, six) = (self.scalar(dt, 0.0), self.scalar(dt, 6.0));
        let c = self.node("Clip", &[a.v, zero, six], vec![], dt, dims.clone());
        let six2 = self.scalar(dt, 6.0);
        if self.d.chance(50) {
            self.push("Div", &[c.v, six2], vec![], dt, dims);
        } else {
            let m = self.node("Mul", &[x.v, c.v], vec![], dt, dims.clone());
            self.push("Div", &[m.v, six2], vec![], dt, dims);
        }
        Some(())
    }

    /// A float32 input of its own, convolved with a constant kernel (or multiplied by a constant
    /// matrix, Gemm), then batch-normalized with constant statistics (batchnorm-conv,
    /// batchnorm-gemm), sometimes after a zero padding (pad-conv).
    fn conv_bn(&mut self) -> Option<()> {
        let (n, c, h, w) = (
            1 + self.d.below(2) as i64,
            1 + self.d.below(3) as i64,
            2 + self.d.below(4) as i64,
            2 + self.d.below(4) as i64,
        );
        let k = self.pool.len();
        if self.d.chance(30) {
            let x = self.b.add_input(Some(DType::Float), Some(dims_of(&[n, c])));
            self.b.info_mut(x).name = format!("rows{k}");
            let oc = 1 + self.d.below(3) as i64;
            let w = self.random_constant(DType::Float, vec![oc, c]);
            let mut inputs = vec![x, w.v];
            if self.d.chance(50) {
                inputs.push(self.random_constant(DType::Float, vec![oc]).v);
            }
            let y = self.node("Gemm", &inputs, vec![("transB", AttrValue::Int(1))], DType::Float, dims_of(&[n, oc]));
            return self.batch_norm(y.v, oc, dims_of(&[n, oc]));
        }
        let x = self.b.add_input(Some(DType::Float), Some(dims_of(&[n, c, h, w])));
        self.b.info_mut(x).name = format!("img{k}");
        let (mut x, mut h, mut w) = (x, h, w);
        if self.d.chance(30) {
            let pads = self.ints(&[0, 0, 1, 1, 0, 0, 1, 1]);
            x = self.node("Pad", &[x, pads], vec![], DType::Float, dims_of(&[n, c, h + 2, w + 2])).v;
            (h, w) = (h + 2, w + 2);
        }
        let oc = 1 + self.d.below(3) as i64;
        let kernel = self.random_constant(DType::Float, vec![oc, c, 1 + (h > 2) as i64, 1 + (w > 2) as i64]);
        let (kh, kw) = (1 + (h > 2) as i64, 1 + (w > 2) as i64);
        let conv_dims = dims_of(&[n, oc, h - kh + 1, w - kw + 1]);
        let mut inputs = vec![x, kernel.v];
        if self.d.chance(50) {
            inputs.push(self.random_constant(DType::Float, vec![oc]).v);
        }
        let y = self.node("Conv", &inputs, vec![], DType::Float, conv_dims.clone());
        self.batch_norm(y.v, oc, conv_dims)
    }

    /// BatchNormalization of `y` (`oc` channels) with constant statistics.
    fn batch_norm(&mut self, y: Value, oc: i64, dims: Vec<Dim>) -> Option<()> {
        let scale = self.random_constant(DType::Float, vec![oc]);
        let bias = self.random_constant(DType::Float, vec![oc]);
        let mean = self.random_constant(DType::Float, vec![oc]);
        let var_values: Vec<f64> = (0..oc).map(|_| 0.25 + self.d.below(8) as f64 / 4.0).collect();
        let var = self.constant(DType::Float, vec![oc], &var_values);
        self.push(
            "BatchNormalization",
            &[y, scale.v, bias.v, mean.v, var.v],
            vec![("epsilon", AttrValue::Float(1e-5))],
            DType::Float,
            dims,
        );
        Some(())
    }

    /// `softmax(q kᵀ * scale) v` on inputs of their own (batch, heads, sequence, head size), its
    /// scores masked by a boolean input now and then (`Where(mask, scores, -inf)`).
    fn attention(&mut self) -> Option<()> {
        let (b, h) = (1 + self.d.below(2) as i64, 1 + self.d.below(2) as i64);
        let (s, d) = (1 + self.d.below(4) as i64, 1 + self.d.below(4) as i64);
        let k = self.pool.len();
        let mut qkv = Vec::new();
        for name in ["q", "k", "v"] {
            let v = self.b.add_input(Some(DType::Float), Some(dims_of(&[b, h, s, d])));
            self.b.info_mut(v).name = format!("{name}{k}");
            qkv.push(v);
        }
        let kt = self.node(
            "Transpose",
            &[qkv[1]],
            vec![("perm", AttrValue::Ints(vec![0, 1, 3, 2]))],
            DType::Float,
            dims_of(&[b, h, d, s]),
        );
        let scores = self.node("MatMul", &[qkv[0], kt.v], vec![], DType::Float, dims_of(&[b, h, s, s]));
        let scale = self.scalar(DType::Float, 1.0 / (d as f64).sqrt());
        let mut scaled = self.node("Mul", &[scores.v, scale], vec![], DType::Float, dims_of(&[b, h, s, s]));
        if self.d.chance(50) {
            let mask = self.b.add_input(Some(DType::Bool), Some(dims_of(&[1, 1, s, s])));
            self.b.info_mut(mask).name = format!("mask{k}");
            let ninf = self.scalar(DType::Float, f64::NEG_INFINITY);
            scaled = self.node("Where", &[mask, scaled.v, ninf], vec![], DType::Float, dims_of(&[b, h, s, s]));
        }
        let p =
            self.node("Softmax", &[scaled.v], vec![("axis", AttrValue::Int(-1))], DType::Float, dims_of(&[b, h, s, s]));
        self.push("MatMul", &[p.v, qkv[2]], vec![], DType::Float, dims_of(&[b, h, s, d]));
        Some(())
    }

    /// A float32 input of its own named `{name}{k}`.
    fn float_input(&mut self, name: &str, dims: &[i64]) -> Value {
        let k = self.pool.len();
        let v = self.b.add_input(Some(DType::Float), Some(dims_of(dims)));
        self.b.info_mut(v).name = format!("{name}{k}");
        v
    }

    /// A decode step's attention at opset 23 on inputs of its own: the cache grown by the new keys
    /// and values (`Concat` on the sequence axis, kept as outputs now and then), each key/value
    /// head repeated for a group of query heads (`Unsqueeze`, `Expand`, `Reshape`) or not, an
    /// additive mask now and then, causal now and then (attention-kv).
    fn attention_cache(&mut self) -> Option<()> {
        if self.b.opset() < 23 {
            return None;
        }
        let (b, kv, group) = (1 + self.d.below(2) as i64, 1 + self.d.below(2) as i64, 1 + self.d.below(2) as i64);
        let (s, p, d) = (1 + self.d.below(3) as i64, 1 + self.d.below(4) as i64, 1 + self.d.below(4) as i64);
        let (hq, t) = (kv * group, p + s);
        let q = self.float_input("q", &[b, hq, s, d]);
        let mut grown = Vec::new();
        for name in ["k", "v"] {
            let past = self.float_input(&format!("past_{name}"), &[b, kv, p, d]);
            let new = self.float_input(name, &[b, kv, s, d]);
            let cache = self.node(
                "Concat",
                &[past, new],
                vec![("axis", AttrValue::Int(2))],
                DType::Float,
                dims_of(&[b, kv, t, d]),
            );
            if self.d.chance(50) {
                self.pool.push(cache.clone());
            }
            grown.push(cache.v);
        }
        if group > 1 || self.d.chance(30) {
            for x in grown.iter_mut() {
                let axes = self.ints(&[2]);
                let u = self.node("Unsqueeze", &[*x, axes], vec![], DType::Float, dims_of(&[b, kv, 1, t, d]));
                let sizes = self.ints(&[1, 1, group, 1, 1]);
                let e = self.node("Expand", &[u.v, sizes], vec![], DType::Float, dims_of(&[b, kv, group, t, d]));
                let shape = self.ints(&[b, hq, t, d]);
                *x = self.node("Reshape", &[e.v, shape], vec![], DType::Float, dims_of(&[b, hq, t, d])).v;
            }
        }
        let mut inputs = vec![q, grown[0], grown[1]];
        if self.d.chance(50) {
            inputs.push(self.float_input("bias", &[b, 1, s, t]));
        }
        let mut attrs = vec![("scale", AttrValue::Float(1.0 / (d as f32).sqrt()))];
        if self.d.chance(20) {
            attrs.push(("is_causal", AttrValue::Int(1)));
        }
        self.push("Attention", &inputs, attrs, DType::Float, dims_of(&[b, hq, s, d]));
        Some(())
    }

    /// transformers' rotary embedding at opset 23 on inputs of its own: `x * cos + rotate_half(x) *
    /// sin`, `cos = Cos(Concat(f, f))` unsqueezed over the heads, the angles per sequence or shared
    /// by the batch (rotary-embedding).
    fn rotary(&mut self) -> Option<()> {
        if self.b.opset() < 23 {
            return None;
        }
        let (b, h, s, half) = (
            1 + self.d.below(2) as i64,
            1 + self.d.below(2) as i64,
            1 + self.d.below(3) as i64,
            1 + self.d.below(3) as i64,
        );
        let d = 2 * half;
        let fb = if self.d.chance(50) { 1 } else { b };
        let x = self.float_input("x", &[b, h, s, d]);
        let f = self.float_input("angles", &[fb, s, half]);
        let last = || vec![("axis", AttrValue::Int(-1))];
        let cat = self.node("Concat", &[f, f], last(), DType::Float, dims_of(&[fb, s, d]));
        let mut turned = Vec::new();
        for op in ["Cos", "Sin"] {
            let c = self.node(op, &[cat.v], vec![], DType::Float, dims_of(&[fb, s, d]));
            let heads = self.ints(&[1]);
            turned.push(self.node("Unsqueeze", &[c.v, heads], vec![], DType::Float, dims_of(&[fb, 1, s, d])).v);
        }
        let xd = dims_of(&[b, h, s, d]);
        let a = self.node("Mul", &[x, turned[0]], vec![], DType::Float, xd.clone());
        let (zero, mid, end, axis, one) =
            (self.ints(&[0]), self.ints(&[half]), self.ints(&[i64::MAX]), self.ints(&[3]), self.ints(&[1]));
        let x1 = self.node("Slice", &[x, zero, mid, axis, one], vec![], DType::Float, dims_of(&[b, h, s, half]));
        let x2 = self.node("Slice", &[x, mid, end, axis, one], vec![], DType::Float, dims_of(&[b, h, s, half]));
        let n = self.node("Neg", &[x2.v], vec![], DType::Float, dims_of(&[b, h, s, half]));
        let r = self.node("Concat", &[n.v, x1.v], last(), DType::Float, xd.clone());
        let m = self.node("Mul", &[r.v, turned[1]], vec![], DType::Float, xd.clone());
        self.push("Add", &[a.v, m.v], vec![], DType::Float, xd);
        Some(())
    }
}

#[cfg(test)]
mod tests {
    /// The generator's graphs pass the shape check, and the optimizer's too, on the first few
    /// thousand byte strings of a simple sequence (the property test proper, with ONNX Runtime,
    /// is `tests/optimizer_props.rs`).
    #[test]
    fn generated_graphs_are_consistent_before_and_after_optimizing() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut fired = std::collections::BTreeSet::new();
        for _ in 0..2000 {
            let bytes: Vec<u8> = (0..256)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state as u8
                })
                .collect();
            match super::case(&bytes) {
                Ok(c) => fired.extend(c.stats.rules_fired.keys().cloned()),
                Err(e) => panic!("{e}\nbytes: {bytes:?}"),
            }
        }
        assert!(fired.len() >= 8, "rules fired: {fired:?}");
    }
}
