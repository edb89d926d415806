//! Weight-only quantization for ONNX Runtime (`--quantize int4|int8`): each `MatMul` whose second
//! operand is a float32 weight `[K, N]`, and each `Gemm` of a 2-D input by a constant weight
//! (`torch.nn.Linear` on 2-D inputs, `[K, N]` or transposed `[N, K]`, its bias read as
//! `MatMulNBits`' bias), becomes one `com.microsoft.MatMulNBits`, the weight stored as `bits`-bit
//! integers in blocks of `block_size` along K, each block with its own scale.
//!
//! Symmetric, as ONNX Runtime's own quantizer (MLAS) makes it: a block's value of largest
//! magnitude maps to the lowest level (-8 for 4 bits, -128 for 8), so that every one of the 2^bits
//! levels is used, and `w ≈ (q - z) · scale` with ONNX Runtime's default zero point
//! `z = 2^(bits-1)` (a scale of that value's sign). The error per weight is at most half a scale,
//! a whole one for the few of the other sign near the peak that the top level clips. CPU targets
//! ask for int8 arithmetic on the activations (`accuracy_level` 4), as ONNX Runtime GenAI's model
//! builder does: its MatMulNBits kernels are the fast ones (`reports/deploy.md`). Lossy by design:
//! the export report and `benches/weight_quantization.py` give the error against eager.
//!
//! Products of one input are packed into one product and a `Split`: quantized, every group
//! ([`quantize_weights`]); in float32 under the ONNX Runtime targets, groups of three or more
//! ([`pack_products`]).

use super::edit::input;
use crate::onnx::ir::{AttrValue, Attribute, DType, Dim, Model, Node, TensorData, Value, ValueInfo};
use crate::onnx::operators::contrib;

/// Bits per weight and weights per block (`--quantize`, `--quantize-block`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WeightQuantization {
    /// 4 or 8.
    pub bits: u8,
    /// Weights along K that share a scale: a power of two from 16 (32 and 128 are the usual).
    pub block_size: u32,
}

impl WeightQuantization {
    /// The block of `--quantize` without `--quantize-block` (the Python package reads it too).
    pub const DEFAULT_BLOCK: u32 = 32;

    /// `int4` or `int8`, with the [default block](Self::DEFAULT_BLOCK).
    pub fn parse(name: &str) -> Result<WeightQuantization, String> {
        match name {
            "int4" => Ok(WeightQuantization { bits: 4, block_size: Self::DEFAULT_BLOCK }),
            "int8" => Ok(WeightQuantization { bits: 8, block_size: Self::DEFAULT_BLOCK }),
            _ => Err(format!("unknown weight quantization `{name}`; choose int4 or int8")),
        }
    }

    /// The largest block ONNX Runtime's `MatMulNBits` kernels load (1.31: a model with 512 fails
    /// to load).
    pub const MAX_BLOCK: u32 = 256;

    /// Why ONNX Runtime's `MatMulNBits` cannot take this setting, if it cannot.
    pub fn check(&self) -> Result<(), String> {
        if !matches!(self.bits, 4 | 8) {
            return Err(format!("{} bits: MatMulNBits takes 4 or 8 here", self.bits));
        }
        if self.block_size < 16 || !self.block_size.is_power_of_two() || self.block_size > Self::MAX_BLOCK {
            return Err(format!(
                "block size {}: ONNX Runtime's MatMulNBits loads a power of two from 16 to {}",
                self.block_size,
                Self::MAX_BLOCK
            ));
        }
        Ok(())
    }
}

/// What [`quantize_weights`] did: weights quantized, and the `MatMulNBits` nodes they became.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Quantized {
    pub weights: usize,
    pub nodes: usize,
}

/// Rewrite every eligible `MatMul` and `Gemm` of the main graph, each `MatMulNBits` with
/// `accuracy_level` when given. Products of one activation by weights of the same K and no bias
/// (a layer's query, key and value projections; gate and up) become one `MatMulNBits` of their
/// weights side by side along N and a `Split` of its result, as ONNX Runtime GenAI's builder packs
/// Q/K/V: one kernel call, and one int8 quantization of the activation, instead of one each.
pub(crate) fn quantize_weights(model: &mut Model, q: WeightQuantization, accuracy_level: Option<i64>) -> Quantized {
    // Weights read through a `Transpose` (a tied LM head reads the embedding's [N, K] table so:
    // the table stays a Gather's, and the transposed copy is not folded in).
    let transposed: std::collections::HashMap<Value, Value> = model
        .graph
        .nodes
        .iter()
        .filter(|n| n.op_type == "Transpose" && n.domain.is_empty() && n.outputs.len() == 1)
        .filter(|n| {
            let perm = n.attributes.iter().find(|a| a.name == "perm");
            perm.is_none_or(|a| matches!(&a.value, AttrValue::Ints(p) if p[..] == [1, 0]))
        })
        .filter_map(|n| Some((n.outputs[0], input(n, 0)?)))
        .collect();
    let found: Vec<(usize, Eligible)> = (0..model.graph.nodes.len())
        .filter_map(|i| eligible(model, &model.graph.nodes[i], &transposed).map(|e| (i, e)))
        .collect();
    let can_split = can_split(model);
    let groups = groups(&found, |e| can_split && e.bias.is_none());
    let mut done = Quantized::default();
    // Node index -> the nodes in its place (none: a packed member after the first).
    let mut replace: std::collections::HashMap<usize, Vec<Node>> = std::collections::HashMap::new();
    for group in groups {
        let mut packed = Vec::new();
        let mut scales = Vec::new();
        let mut sizes = Vec::with_capacity(group.len());
        for &j in &group {
            let (_, e) = &found[j];
            let t = model.values[e.w.index()].constant.as_deref().expect("an eligible weight is a constant");
            // Read as float32 (not widened: a 4096 x 11008 weight is 180 MB as it is).
            let weights: Vec<f32> =
                t.raw.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
            let layout = if e.transposed { Layout::NK } else { Layout::KN };
            // [N, blocks, blob] and [N * blocks], column by column: members side by side along N
            // are their bytes one after the other.
            let (p, s) = quantize(&weights, e.k, e.n, layout, q);
            packed.extend_from_slice(&p);
            scales.extend_from_slice(&s);
            sizes.push(e.n as i64);
        }
        let (k, n) = (found[group[0]].1.k, sizes.iter().sum::<i64>() as usize);
        let blocks = k.div_ceil(q.block_size as usize);
        let blob = q.block_size as usize * q.bits as usize / 8;
        let packed =
            TensorData { dtype: DType::Uint8, dims: vec![n as i64, blocks as i64, blob as i64], raw: packed.into() };
        let Some(scales) = TensorData::from_f64_as(DType::Float, vec![(n * blocks) as i64], &scales) else { continue };
        // Unnamed: the save names them (a weight two MatMuls read is quantized for each).
        let packed = add_constant(model, packed);
        let scales = add_constant(model, scales);
        let (first, e) = &found[group[0]];
        let mut inputs = vec![Some(e.a), Some(packed), Some(scales)];
        if let Some(bias) = e.bias {
            // (zero points, g_idx) absent, then the bias.
            inputs.extend([None, None, Some(bias)]);
        }
        let attributes =
            [("K", k as i64), ("N", n as i64), ("bits", q.bits as i64), ("block_size", q.block_size as i64)]
                .into_iter()
                .chain(accuracy_level.map(|a| ("accuracy_level", a)))
                .map(|(name, v)| Attribute { name: name.into(), value: AttrValue::Int(v) })
                .collect();
        let node = &model.graph.nodes[*first];
        let mut product = Node {
            op_type: "MatMulNBits".into(),
            domain: contrib::DOMAIN.into(),
            name: node.name.clone(),
            inputs,
            outputs: node.outputs.clone(),
            attributes,
            metadata: node.metadata.clone(),
        };
        done.weights += group.len();
        done.nodes += 1;
        if group.len() == 1 {
            replace.insert(*first, vec![product]);
            continue;
        }
        // The packed product, its last axis split into the members' results.
        let outputs: Vec<Value> = group.iter().map(|&j| model.graph.nodes[found[j].0].outputs[0]).collect();
        let split = split_product(model, &mut product, outputs, &sizes);
        replace.insert(*first, vec![product, split]);
        for &j in &group[1..] {
            replace.insert(found[j].0, Vec::new());
        }
    }
    if done.weights > 0 {
        splice(model, replace);
        if !model.opset_imports.iter().any(|(d, _)| d == contrib::DOMAIN) {
            model.opset_imports.push((contrib::DOMAIN.into(), contrib::VERSION));
        }
    }
    done
}

/// Under the ONNX Runtime targets, without quantization: three or more products of one float32
/// activation by float32 weights `[K, N]` of the same K (`MatMul`, no bias: a layer's query, key
/// and value projections) become one `MatMul` of the weights side by side along N and a `Split` of
/// its result, as [`quantize_weights`] packs them: one kernel call instead of three, for the small
/// key and value products mostly call. Two products (gate and up, each as large as the other)
/// measured no faster packed, and are left. The packed weight is a new tensor (the members' rows
/// one after the other); the members' weights are no longer read. Returns the products packed.
/// Measured: `reports/deploy.md`, `pack-products`.
pub(crate) fn pack_products(model: &mut Model) -> usize {
    if !can_split(model) {
        return 0;
    }
    let none = std::collections::HashMap::new();
    let found: Vec<(usize, Eligible)> = (0..model.graph.nodes.len())
        .filter_map(|i| eligible(model, &model.graph.nodes[i], &none).map(|e| (i, e)))
        .filter(|(i, e)| model.graph.nodes[*i].op_type == "MatMul" && !e.transposed && e.bias.is_none())
        .collect();
    let mut packed_products = 0;
    let mut replace: std::collections::HashMap<usize, Vec<Node>> = std::collections::HashMap::new();
    for group in groups(&found, |_| true).into_iter().filter(|g| g.len() >= 3) {
        let k = found[group[0]].1.k;
        let sizes: Vec<i64> = group.iter().map(|&j| found[j].1.n as i64).collect();
        let n = sizes.iter().sum::<i64>() as usize;
        // Row by row, each member's row of N_i floats after the previous member's.
        let mut packed = Vec::with_capacity(k * n * 4);
        let members: Vec<&[u8]> =
            group
                .iter()
                .map(|&j| {
                    &model.values[found[j].1.w.index()]
                        .constant
                        .as_deref()
                        .expect("an eligible weight is a constant")
                        .raw[..]
                })
                .collect();
        for row in 0..k {
            for (m, &j) in members.iter().zip(&group) {
                let width = found[j].1.n * 4;
                packed.extend_from_slice(&m[row * width..(row + 1) * width]);
            }
        }
        let packed = TensorData { dtype: DType::Float, dims: vec![k as i64, n as i64], raw: packed.into() };
        let packed = add_constant(model, packed);
        let (first, e) = &found[group[0]];
        let node = &model.graph.nodes[*first];
        let mut product = Node { inputs: vec![Some(e.a), Some(packed)], ..node.clone() };
        let outputs: Vec<Value> = group.iter().map(|&j| model.graph.nodes[found[j].0].outputs[0]).collect();
        let split = split_product(model, &mut product, outputs, &sizes);
        replace.insert(*first, vec![product, split]);
        for &j in &group[1..] {
            replace.insert(found[j].0, Vec::new());
        }
        packed_products += group.len();
    }
    if packed_products > 0 {
        splice(model, replace);
    }
    packed_products
}

/// `Split` takes its sizes as an input from opset 13 on.
fn can_split(model: &Model) -> bool {
    model.opset_imports.iter().any(|(d, v)| d.is_empty() && *v >= 13)
}

/// The products of `found` (indices into it) in groups: those `packable` by their activation and
/// K, in the order of their first member; the others each alone.
fn groups(found: &[(usize, Eligible)], packable: impl Fn(&Eligible) -> bool) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut by_input: std::collections::HashMap<(u32, usize), usize> = std::collections::HashMap::new();
    for (j, (_, e)) in found.iter().enumerate() {
        if packable(e) {
            if let Some(&g) = by_input.get(&(e.a.0, e.k)) {
                groups[g].push(j);
                continue;
            }
            by_input.insert((e.a.0, e.k), groups.len());
        }
        groups.push(vec![j]);
    }
    groups
}

/// `product`'s result (the members' `outputs` side by side on the last axis, of `sizes`) made a new
/// value, and the `Split` that gives the members' results from it.
fn split_product(model: &mut Model, product: &mut Node, outputs: Vec<Value>, sizes: &[i64]) -> Node {
    let whole = model.values[outputs[0].index()].clone();
    let n: i64 = sizes.iter().sum();
    let shape = whole.shape.map(|mut s| {
        if let Some(last) = s.last_mut() {
            *last = Dim::Fixed(n);
        }
        s
    });
    let result = Value(model.values.len() as u32);
    model.values.push(ValueInfo { dtype: Some(DType::Float), shape, ..Default::default() });
    let split_sizes = add_constant(model, TensorData::from_i64s(vec![sizes.len() as i64], sizes));
    product.outputs = vec![result];
    Node {
        op_type: "Split".into(),
        domain: String::new(),
        name: String::new(),
        inputs: vec![Some(result), Some(split_sizes)],
        outputs,
        attributes: vec![Attribute { name: "axis".into(), value: AttrValue::Int(-1) }],
        metadata: product.metadata.clone(),
    }
}

/// Each node index of `replace` replaced by its nodes (none: a packed member after the first). The
/// packed product stands where its first member stood: every member's readers come after their own
/// member, so after it. The weights no longer read go.
fn splice(model: &mut Model, mut replace: std::collections::HashMap<usize, Vec<Node>>) {
    let nodes = std::mem::take(&mut model.graph.nodes);
    for (i, node) in nodes.into_iter().enumerate() {
        match replace.remove(&i) {
            Some(new) => model.graph.nodes.extend(new),
            None => model.graph.nodes.push(node),
        }
    }
    crate::onnx::dce::eliminate_dead_code(&mut model.graph);
}

/// A product `MatMulNBits` can compute: activation `a` by the constant weight `w` (`[K, N]`, or
/// `[N, K]` when `transposed`), plus `bias` (`[N]`).
struct Eligible {
    a: Value,
    w: Value,
    transposed: bool,
    bias: Option<Value>,
    k: usize,
    n: usize,
}

/// A float32 `MatMul` by a constant `[K, N]` weight (or the `Transpose` of a constant `[N, K]`
/// one, `transposed` maps such transposes to their input), or a `Gemm` of a 2-D input by a constant
/// weight with alpha and beta 1 and a bias of N or none; K and N at least 16 (smaller products gain
/// nothing from a quantized kernel).
fn eligible(model: &Model, node: &Node, transposed: &std::collections::HashMap<Value, Value>) -> Option<Eligible> {
    if !node.domain.is_empty() {
        return None;
    }
    let (a, mut w) = (input(node, 0)?, input(node, 1)?);
    let mut through_transpose = false;
    if node.op_type == "MatMul" && model.values[w.index()].constant.is_none() {
        w = *transposed.get(&w)?;
        through_transpose = true;
    }
    let (ai, wi) = (&model.values[a.index()], &model.values[w.index()]);
    let t = wi.constant.as_deref()?;
    let big = t.dims.len() == 2 && t.dims.iter().all(|&d| d >= 16);
    let rank = ai.shape.as_ref().map_or(0, Vec::len);
    if ai.dtype != Some(DType::Float) || t.dtype != DType::Float || !big || t.raw.len() != 4 * t.numel() as usize {
        return None;
    }
    let (rows, cols) = (t.dims[0] as usize, t.dims[1] as usize);
    match node.op_type.as_str() {
        "MatMul" if rank >= 2 && through_transpose => {
            Some(Eligible { a, w, transposed: true, bias: None, k: cols, n: rows })
        }
        "MatMul" if rank >= 2 => Some(Eligible { a, w, transposed: false, bias: None, k: rows, n: cols }),
        "Gemm" if rank == 2 => {
            let float = |name: &str| {
                node.attributes.iter().find(|a| a.name == name).map_or(Some(1.0), |a| match a.value {
                    AttrValue::Float(f) => Some(f),
                    _ => None,
                })
            };
            let int = |name: &str| crate::onnx::operators::attr_int(node, name, 0);
            if float("alpha")? != 1.0 || int("transA") != 0 {
                return None;
            }
            let transposed = int("transB") != 0;
            let n = if transposed { t.dims[0] } else { t.dims[1] };
            let bias = match input(node, 2) {
                None => None,
                Some(c) => {
                    let ci = &model.values[c.index()];
                    let per_column =
                        ci.shape.as_deref() == Some(&[Dim::Fixed(n)][..]) && ci.dtype == Some(DType::Float);
                    if float("beta")? != 1.0 || !per_column {
                        return None;
                    }
                    Some(c)
                }
            };
            let (k, n) = if transposed { (cols, rows) } else { (rows, cols) };
            Some(Eligible { a, w, transposed, bias, k, n })
        }
        _ => None,
    }
}

/// How the weight's elements lie: `[K, N]` (a MatMul's) or `[N, K]` (a Gemm's with transB).
#[derive(Clone, Copy)]
enum Layout {
    KN,
    NK,
}

/// The weight `w` (`[k, n]`, or `[n, k]` by `layout`, row-major) as `MatMulNBits` stores it: per
/// output column, per block along K, the levels `q + 2^(bits-1)` packed little end first (two
/// per byte for 4 bits); and the scales, column by column.
fn quantize(w: &[f32], k: usize, n: usize, layout: Layout, q: WeightQuantization) -> (Vec<u8>, Vec<f64>) {
    let at = |r: usize, col: usize| match layout {
        Layout::KN => w[r * n + col],
        Layout::NK => w[col * k + r],
    };
    let bs = q.block_size as usize;
    let blocks = k.div_ceil(bs);
    let zero = 1u32 << (q.bits - 1); // 8 or 128: the default zero point, the level of 0
    let top = (1u32 << q.bits) - 1; // 15 or 255
    let blob = bs * q.bits as usize / 8;
    let mut packed = vec![0u8; n * blocks * blob];
    let mut scales = Vec::with_capacity(n * blocks);
    for col in 0..n {
        for b in 0..blocks {
            let rows = b * bs..((b + 1) * bs).min(k);
            // The value of largest magnitude, with its sign, maps to the lowest level (stored 0).
            let peak = rows.clone().map(|r| at(r, col)).fold(0.0f32, |m, v| if v.abs() > m.abs() { v } else { m });
            let scale = peak / -(zero as f32);
            let reciprocal = if scale != 0.0 { 1.0 / scale } else { 0.0 };
            scales.push(scale as f64);
            let out = &mut packed[(col * blocks + b) * blob..][..blob];
            for (j, r) in (0..bs).map(|j| (j, b * bs + j)) {
                // In float32, rounding half away from zero after the shift, as MLAS does; padding
                // past K holds the zero point (a weight of 0).
                let v = if r < k { at(r, col) } else { 0.0 };
                let stored = (v * reciprocal + zero as f32).round().clamp(0.0, top as f32) as u8;
                if q.bits == 8 {
                    out[j] = stored;
                } else {
                    out[j / 2] |= stored << (4 * (j % 2));
                }
            }
        }
    }
    (packed, scales)
}

fn add_constant(model: &mut Model, t: TensorData) -> Value {
    let v = Value(model.values.len() as u32);
    let shape = t.dims.iter().map(|&d| Dim::Fixed(d)).collect();
    model.values.push(ValueInfo {
        dtype: Some(t.dtype),
        shape: Some(shape),
        constant: Some(Box::new(t)),
        ..Default::default()
    });
    model.graph.initializers.push(v);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 4-bit levels pack two per byte, low nibble first; the block past K is padded with the zero
    /// point; a block's value of largest magnitude maps to the lowest level, so all 16 are used
    /// (MLAS's symmetric form), and the other sign's peak is clipped to the top level.
    #[test]
    fn four_bit_blocks_pack_low_nibble_first() {
        // k = 20, n = 1: one block of 16 and one of 4 + 12 padding.
        let q = WeightQuantization { bits: 4, block_size: 16 };
        let w: Vec<f32> = (0..20).map(|i| [-8.0, 7.0, 8.0, 3.0].get(i).copied().unwrap_or(0.0)).collect();
        let (packed, scales) = quantize(&w, 20, 1, Layout::KN, q);
        // -8 has the largest magnitude (the first of -8 and 8): scale -8 / -8 = 1.
        assert_eq!(scales, vec![1.0, 0.0]);
        assert_eq!(packed.len(), 2 * 8);
        // -8 + 8 = 0 (low), 7 + 8 = 15 (high); 8 clipped to 15, 3 + 8 = 11; the rest zero points.
        assert_eq!(packed[0], 15 << 4);
        assert_eq!(packed[1], 15 | 11 << 4);
        assert!(packed[2..].iter().all(|&b| b == 0x88), "{packed:?}");
        // A block whose peak is positive takes a negative scale: the peak still maps to level 0.
        let (packed, scales) = quantize(&[4.0; 16], 16, 1, Layout::KN, q);
        assert_eq!(scales, vec![-0.5]);
        assert!(packed.iter().all(|&b| b == 0), "{packed:?}");
    }

    #[test]
    fn dequantized_weights_are_within_half_a_scale() {
        let (k, n) = (64, 3);
        let w: Vec<f32> = (0..k * n).map(|i| ((i * 37 % 101) as f32 - 50.0) / 17.0).collect();
        for q in [WeightQuantization { bits: 4, block_size: 32 }, WeightQuantization { bits: 8, block_size: 16 }] {
            let (packed, scales) = quantize(&w, k, n, Layout::KN, q);
            let transposed: Vec<f32> =
                (0..n).flat_map(|c| (0..k).map(move |r| (r, c))).map(|(r, c)| w[r * n + c]).collect();
            assert_eq!(
                quantize(&transposed, k, n, Layout::NK, q),
                (packed.clone(), scales.clone()),
                "[N, K] reads alike"
            );
            let (bs, blocks, blob) =
                (q.block_size as usize, k / q.block_size as usize, q.block_size as usize * q.bits as usize / 8);
            for col in 0..n {
                for r in 0..k {
                    let (b, j) = (r / bs, r % bs);
                    let byte = packed[(col * blocks + b) * blob + if q.bits == 8 { j } else { j / 2 }];
                    let stored = if q.bits == 8 { byte as i64 } else { (byte >> (4 * (j % 2)) & 15) as i64 };
                    let scale = scales[col * blocks + b];
                    let back = (stored - (1 << (q.bits - 1))) as f64 * scale;
                    // Half a scale, but a whole one at the top level, which clips the other sign's peak.
                    let top = stored == (1 << q.bits) - 1;
                    let bound = scale.abs() * if top { 1.0 } else { 0.5 } + 1e-6;
                    assert!((back - w[r * n + col] as f64).abs() <= bound, "{q:?} {r} {col}");
                }
            }
        }
    }

    /// A tied LM head multiplies by the transpose of the embedding table the Gather reads: the
    /// product is quantized from the table read as [N, K], and the table stays for the Gather.
    #[test]
    fn a_weight_read_through_a_transpose_is_quantized() {
        let values: Vec<String> = (0..48 * 32).map(|i| format!("{}", ((i * 31) % 97) as f64 / 97.0 - 0.5)).collect();
        let text = format!(
            "(int64[2] ids, float[2,32] x) => (float[2,32] e, float[2,48] y) <float[48,32] table = {{{}}}> {{ \
             e = Gather(table, ids) # float[2,32] t = Transpose <perm = [1, 0]> (table) # float[32,48] \
             y = MatMul(x, t) # float[2,48] }}",
            values.join(", ")
        );
        let (mut model, names) = crate::onnx::testing::parse(18, &text);
        let table: Vec<f32> = {
            let t = model.values[names["table"].index()].constant.as_deref().unwrap();
            t.raw.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
        };
        let q = WeightQuantization { bits: 4, block_size: 16 };
        let done = quantize_weights(&mut model, q, Some(4));
        assert_eq!(done, Quantized { weights: 1, nodes: 1 });
        let ops: Vec<&str> = model.graph.nodes.iter().map(|n| n.op_type.as_str()).collect();
        assert_eq!(ops, ["Gather", "MatMulNBits"]);
        let product = &model.graph.nodes[1];
        let int = |name: &str| crate::onnx::operators::attr_int(product, name, -1);
        assert_eq!((int("K"), int("N")), (32, 48));
        let constant = |v: Option<Value>| model.values[v.unwrap().index()].constant.as_deref().unwrap().clone();
        let (packed, scales) = quantize(&table, 32, 48, Layout::NK, q);
        assert_eq!(&constant(product.inputs[1]).raw[..], &packed[..]);
        assert_eq!(constant(product.inputs[2]).to_f64s().unwrap(), scales);
        assert_eq!(model.graph.nodes[0].inputs[0], Some(names["table"]));
    }

    /// Products of one input by weights of one K become one `MatMulNBits` of the weights side by
    /// side and a `Split` into the products, where the first stood; a product of another input
    /// stays on its own, reading the split.
    /// Without quantization (the ONNX Runtime targets), the three products of one input are one
    /// MatMul of their weights side by side, row by row, and a Split; two products stay apart.
    #[test]
    fn float_products_of_one_input_are_packed_into_one() {
        let weight = |name: &str, k: usize, n: usize, seed: usize| {
            let values: Vec<String> = (0..k * n).map(|i| format!("{}", (i * 3 + seed * 100) as f64)).collect();
            format!("float[{k},{n}] {name} = {{{}}}", values.join(", "))
        };
        let text = format!(
            "(float[N,16] x) => (float[N,16] o, float[N,16] v, float[N,16] u) <{}, {}, {}, {}, {}, {}> {{ \
             q = MatMul(x, wq) # float[N,16] k = MatMul(x, wk) # float[N,16] v = MatMul(x, wv) # float[N,16] \
             qk = Add(q, k) # float[N,16] o = MatMul(qk, wo) # float[N,16] g = MatMul(o, wg) # float[N,16] \
             h = MatMul(o, wh) # float[N,16] u = Mul(g, h) # float[N,16] }}",
            weight("wq", 16, 16, 1),
            weight("wk", 16, 16, 2),
            weight("wv", 16, 16, 3),
            weight("wo", 16, 16, 4),
            weight("wg", 16, 16, 5),
            weight("wh", 16, 16, 6),
        );
        let (mut model, names) = crate::onnx::testing::parse(18, &text);
        let rows = |name: &str| -> Vec<Vec<u8>> {
            let t = model.values[names[name].index()].constant.as_deref().unwrap();
            t.raw.chunks_exact(t.dims[1] as usize * 4).map(<[u8]>::to_vec).collect()
        };
        let (wq, wk, wv) = (rows("wq"), rows("wk"), rows("wv"));
        assert_eq!(pack_products(&mut model), 3);
        let ops: Vec<&str> = model.graph.nodes.iter().map(|n| n.op_type.as_str()).collect();
        assert_eq!(ops, ["MatMul", "Split", "Add", "MatMul", "MatMul", "MatMul", "Mul"]);
        let (packed, split) = (&model.graph.nodes[0], &model.graph.nodes[1]);
        assert_eq!(packed.inputs[0], Some(names["x"]));
        let constant = |v: Option<Value>| model.values[v.unwrap().index()].constant.as_deref().unwrap().clone();
        let w = constant(packed.inputs[1]);
        assert_eq!(w.dims, [16, 48]);
        let expected: Vec<u8> = (0..16).flat_map(|r| [&wq[r], &wk[r], &wv[r]].into_iter().flatten().copied()).collect();
        assert_eq!(&w.raw[..], &expected[..]);
        assert_eq!(constant(split.inputs[1]).to_f64s().unwrap(), [16.0, 16.0, 16.0]);
        assert_eq!(split.outputs, [names["q"], names["k"], names["v"]]);
        let shape = model.values[packed.outputs[0].index()].shape.clone();
        assert_eq!(shape, Some(vec![Dim::Param("N".into()), Dim::Fixed(48)]));
        // Gate and up (two products of `o`) stay as they were.
        assert_eq!(model.graph.nodes[4].inputs[1], Some(names["wg"]));
    }

    #[test]
    fn products_of_one_input_are_packed_into_one() {
        let weight = |name: &str, k: usize, n: usize, seed: usize| {
            let values: Vec<String> =
                (0..k * n).map(|i| format!("{}", ((i * 31 + seed * 7) % 97) as f64 / 97.0 - 0.5)).collect();
            format!("float[{k},{n}] {name} = {{{}}}", values.join(", "))
        };
        let text = format!(
            "(float[2,32] x) => (float[2,16] o, float[2,16] v) <{}, {}, {}, {}> {{ q = MatMul(x, wq) # float[2,32] \
             k = MatMul(x, wk) # float[2,32] v = MatMul(x, wv) # float[2,16] qk = Add(q, k) # float[2,32] \
             o = MatMul(qk, wo) # float[2,16] }}",
            weight("wq", 32, 32, 1),
            weight("wk", 32, 32, 2),
            weight("wv", 32, 16, 3),
            weight("wo", 32, 16, 4),
        );
        let (mut model, names) = crate::onnx::testing::parse(18, &text);
        let read = |model: &Model, name: &str| -> Vec<f32> {
            let t = model.values[names[name].index()].constant.as_deref().unwrap();
            t.raw.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
        };
        let q = WeightQuantization { bits: 4, block_size: 16 };
        let alone: Vec<_> = [("wq", 32), ("wk", 32), ("wv", 16)]
            .iter()
            .map(|&(w, n)| quantize(&read(&model, w), 32, n, Layout::KN, q))
            .collect();
        let done = quantize_weights(&mut model, q, Some(4));
        assert_eq!(done, Quantized { weights: 4, nodes: 2 });
        let ops: Vec<&str> = model.graph.nodes.iter().map(|n| n.op_type.as_str()).collect();
        assert_eq!(ops, ["MatMulNBits", "Split", "Add", "MatMulNBits"]);
        let (packed, split) = (&model.graph.nodes[0], &model.graph.nodes[1]);
        let int = |node: &Node, name: &str| crate::onnx::operators::attr_int(node, name, -1);
        assert_eq!((int(packed, "K"), int(packed, "N"), int(packed, "accuracy_level")), (32, 80, 4));
        assert_eq!(packed.inputs[0], Some(names["x"]));
        let constant = |v: Option<Value>| model.values[v.unwrap().index()].constant.as_deref().unwrap().clone();
        let bytes: Vec<u8> = alone.iter().flat_map(|(p, _)| p.iter().copied()).collect();
        let scales: Vec<f64> = alone.iter().flat_map(|(_, s)| s.iter().copied()).collect();
        assert_eq!(constant(packed.inputs[1]).dims, [80, 2, 8]);
        assert_eq!(&constant(packed.inputs[1]).raw[..], &bytes[..]);
        assert_eq!(constant(packed.inputs[2]).to_f64s().unwrap(), scales);
        assert_eq!(split.inputs[0], Some(packed.outputs[0]));
        assert_eq!(constant(split.inputs[1]).to_f64s().unwrap(), [32.0, 32.0, 16.0]);
        assert_eq!(split.outputs, [names["q"], names["k"], names["v"]]);
        let shape = model.values[packed.outputs[0].index()].shape.clone();
        assert_eq!(shape, Some(vec![Dim::Fixed(2), Dim::Fixed(80)]));
        // The float weights are gone; the product of the sum reads it alone.
        assert_eq!(model.graph.nodes[3].inputs[0], Some(names["qk"]));
        assert_eq!(int(&model.graph.nodes[3], "N"), 16);
        assert!(model.graph.initializers.iter().all(|v| model.values[v.index()].dtype != Some(DType::Float)
            || model.values[v.index()].shape.as_ref().map_or(0, Vec::len) == 1));
    }

    #[test]
    fn settings_outside_the_kernel_are_refused() {
        assert!(WeightQuantization { bits: 3, block_size: 32 }.check().is_err());
        assert!(WeightQuantization { bits: 4, block_size: 48 }.check().is_err());
        assert!(WeightQuantization { bits: 4, block_size: 8 }.check().is_err());
        // ONNX Runtime 1.31 fails to load a MatMulNBits of block 512.
        assert!(WeightQuantization { bits: 4, block_size: 256 }.check().is_ok());
        assert!(WeightQuantization { bits: 4, block_size: 512 }.check().is_err());
        assert!(WeightQuantization::parse("int4").and_then(|q| q.check()).is_ok());
        assert!(WeightQuantization::parse("fp8").is_err());
    }
}
