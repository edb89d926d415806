//! A translation table from a user crate (torch.onnx's `custom_translation_table`), written with
//! the same macro as fxonnx's built-in table:
//!
//! - [`table`] overrides `aten::gelu` (written with Tanh/Erf instead of ONNX's `Gelu`) and translates
//!   the custom operator `fxonnx_samples::mix` into a node `Mix` of the custom domain
//!   [`DOMAIN`] at version [`DOMAIN_VERSION`] (torch's `custom_opsets`), for a runtime that
//!   implements it;
//! - [`reference::table`] translates the same operator into standard ONNX operators instead.
//!
//! ```
//! let options = fxonnx::ExportOptions { custom_translation_table: Some(fxonnx_custom_table::table()), ..Default::default() };
//! # let _ = options;
//! ```

use fxonnx::translate::prelude::*;

/// The custom ONNX domain `Mix` nodes belong to.
pub const DOMAIN: &str = "com.example.samples";
/// The version of [`DOMAIN`] the model imports.
pub const DOMAIN_VERSION: i64 = 2;

/// `0.5·x·(1 + erf(x/√2))`, or the tanh approximation, from elementary ONNX operators.
fn gelu_elementary(op: &mut Builder, x: Value, approximate: &str) -> OpResult<Value> {
    let t = dtype_of(op, x)?;
    let inner = match approximate {
        "none" => {
            let r = op.scalar(t, std::f64::consts::FRAC_1_SQRT_2);
            let xr = op.Mul(x, r);
            op.Erf(xr)
        }
        "tanh" => {
            let c = op.scalar(t, (2.0 / std::f64::consts::PI).sqrt());
            let k = op.scalar(t, 0.044715);
            let x3 = {
                let x2 = op.Mul(x, x);
                op.Mul(x2, x)
            };
            let kx3 = op.Mul(k, x3);
            let s = op.Add(x, kx3);
            let cs = op.Mul(c, s);
            op.Tanh(cs)
        }
        other => bail!("unknown approximate mode {other:?}"),
    };
    let (half, one) = (op.scalar(t, 0.5), op.scalar(t, 1.0));
    let p = op.Add(one, inner);
    let hx = op.Mul(half, x);
    Ok(op.Mul(hx, p))
}

fxonnx::translations! {
    /// gelu(Tensor self, *, str approximate='none') -> Tensor
    #[target("aten::gelu")]
    fn gelu(op, self_: Tensor, approximate: &str = "none") -> OpResult<Value> {
        gelu_elementary(op, self_, approximate)
    }

    /// fxonnx_samples::mix(Tensor[] xs, float[] weights, bool[] use, str[] tags, int[] dims, Tensor? bias) -> Tensor
    #[target("fxonnx_samples::mix")]
    fn mix(op, xs: Vec<Tensor>, weights: Vec<f64>, r#use: Vec<bool>, tags: Vec<&str>, dims: Vec<i64>, bias: Option<Tensor> = None) -> Value {
        let mut inputs: Vec<Option<Value>> = xs.into_iter().map(Some).collect();
        inputs.push(bias);
        let weights: Vec<f32> = weights.iter().map(|&w| w as f32).collect();
        let used: Vec<i64> = r#use.iter().map(|&u| u as i64).collect();
        op.custom(DOMAIN, DOMAIN_VERSION, "Mix", inputs)
            .attr_floats("weights", &weights)
            .attr_ints("use", &used)
            .attr_strs("tags", &tags)
            .attr_ints("dims", &dims)
            .out()
    }
}

/// `fxonnx_samples::mix` in standard ONNX operators, for runtimes without the custom domain.
pub mod reference {
    use fxonnx::translate::prelude::*;

    fxonnx::translations! {
        /// fxonnx_samples::mix(Tensor[] xs, float[] weights, bool[] use, str[] tags, int[] dims, Tensor? bias) -> Tensor
        #[target("fxonnx_samples::mix")]
        fn mix(op, xs: Vec<Tensor>, weights: Vec<f64>, r#use: Vec<bool>, tags: Vec<&str>, dims: Vec<i64>, bias: Option<Tensor> = None) -> OpResult<Value> {
            // Σ weights[i]·xs[i] over the used inputs, plus the bias, summed over `dims` (kept).
            let mut acc: Option<Value> = None;
            for ((&x, &w), &u) in xs.iter().zip(&weights).zip(&r#use) {
                if !u {
                    continue;
                }
                let t = dtype_of(op, x)?;
                let k = op.scalar(t, w);
                let term = op.Mul(x, k);
                acc = Some(match acc { Some(a) => op.Add(a, term), None => term });
            }
            let Some(mut acc) = acc else { bail!("mix with no used input") };
            if let Some(b) = bias {
                acc = op.Add(acc, b);
            }
            if !dims.is_empty() {
                let axes = op.const_i64s(&dims);
                acc = op.ReduceSum(acc, Some(axes)).keepdims(1).out();
            }
            let _ = tags;
            Ok(acc)
        }
    }
}
