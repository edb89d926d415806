//! ATen's aliases (`divide` is `div`, `clip` is `clamp`, `swapaxes` is `transpose`): one table,
//! so an alias is dispatched to the translation of the op it names instead of a copy per alias.
//!
//! An alias overload maps to the canonical overload whose arguments have the same types and
//! defaults in the same order (names may differ: `swapaxes(self, axis0, axis1)` is
//! `transpose.int(self, dim0, dim1)`; the driver renames the arguments as for in-place ops). An
//! alias overload without such a twin is not served: an omitted argument must mean the same.
//!
//! The prims that mean what an ATen op means on the arguments prims accept (`prims::sin` is
//! `aten::sin`; `prims::add(self, other)` is `aten::add.Tensor` with its `alpha` left at 1) are a
//! second table, served the same way; a twin may have trailing arguments the prim lacks when they
//! all have defaults.

use super::aten_schemas;

/// `(alias, the op it names)`, as torch documents them ("Alias for `torch.div`").
pub(crate) const ALIASES: &[(&str, &str)] = &[
    ("absolute", "abs"),
    ("arccos", "acos"),
    ("arccosh", "acosh"),
    ("arcsin", "asin"),
    ("arcsinh", "asinh"),
    ("arctan", "atan"),
    ("arctan2", "atan2"),
    ("arctanh", "atanh"),
    ("clip", "clamp"),
    ("concat", "cat"),
    ("concatenate", "cat"),
    ("det", "linalg_det"),
    ("divide", "div"),
    ("fix", "trunc"),
    ("ger", "outer"),
    ("greater", "gt"),
    ("greater_equal", "ge"),
    ("inverse", "linalg_inv"),
    ("less", "lt"),
    ("less_equal", "le"),
    ("linalg_matmul", "matmul"),
    ("matrix_power", "linalg_matrix_power"),
    ("moveaxis", "movedim"),
    ("multiply", "mul"),
    ("negative", "neg"),
    ("not_equal", "ne"),
    ("orgqr", "linalg_householder_product"),
    ("row_stack", "vstack"),
    ("special_digamma", "digamma"),
    ("special_erf", "erf"),
    ("special_erfc", "erfc"),
    ("special_erfinv", "erfinv"),
    ("special_exp2", "exp2"),
    ("special_expit", "sigmoid"),
    ("special_expm1", "expm1"),
    ("special_gammainc", "igamma"),
    ("special_gammaincc", "igammac"),
    ("special_gammaln", "lgamma"),
    ("special_i0", "i0"),
    ("special_log1p", "log1p"),
    ("special_log_softmax", "log_softmax"),
    ("special_logit", "logit"),
    ("special_logsumexp", "logsumexp"),
    ("special_multigammaln", "mvlgamma"),
    ("special_polygamma", "polygamma"),
    ("special_psi", "digamma"),
    ("special_sinc", "sinc"),
    ("special_softmax", "softmax"),
    ("special_xlogy", "xlogy"),
    ("subtract", "sub"),
    ("swapaxes", "transpose"),
    ("swapdims", "transpose"),
    ("true_divide", "div"),
];

/// `(prim, the ATen op it means)`: elementwise prims take operands of one dtype (torch's refs
/// promote before calling them), where the ATen op's own promotion changes nothing. Prims that mean
/// something else (`prims::div` truncates integers) have their own translations.
pub(crate) const PRIMS: &[(&str, &str)] = &[
    ("abs", "abs"),
    ("acos", "acos"),
    ("acosh", "acosh"),
    ("add", "add"),
    ("asin", "asin"),
    ("asinh", "asinh"),
    ("atan", "atan"),
    ("atanh", "atanh"),
    ("ceil", "ceil"),
    ("cos", "cos"),
    ("cosh", "cosh"),
    ("eq", "eq"),
    ("erf", "erf"),
    ("exp", "exp"),
    ("floor", "floor"),
    ("ge", "ge"),
    ("gt", "gt"),
    ("le", "le"),
    ("log", "log"),
    ("lt", "lt"),
    ("mul", "mul"),
    ("ne", "ne"),
    ("neg", "neg"),
    ("pow", "pow"),
    ("remainder", "remainder"),
    ("reshape", "reshape"),
    ("round", "round"),
    ("sin", "sin"),
    ("sinh", "sinh"),
    ("sqrt", "sqrt"),
    ("squeeze", "squeeze"),
    ("sub", "sub"),
    ("tan", "tan"),
    ("tanh", "tanh"),
    ("transpose", "permute"),
    ("where", "where"),
];

/// The canonical key of an alias overload (`aten::divide.Tensor_mode` → `aten::div.Tensor_mode`,
/// `aten::swapaxes.default` → `aten::transpose.int`); in-place aliases map to the canonical in-place
/// op (`aten::multiply_.Tensor` → `aten::mul_.Tensor`).
pub(crate) fn canonical(key: &str) -> Option<String> {
    let (ns, rest) = key.split_once("::")?;
    let (name, _) = rest.split_once('.').unwrap_or((rest, "default"));
    let (base, inplace) = match name.strip_suffix('_') {
        Some(b) => (b, "_"),
        None => (name, ""),
    };
    let table = match ns {
        "aten" => ALIASES,
        "prims" => PRIMS,
        _ => return None,
    };
    let &(_, target) = table.iter().find(|(alias, _)| *alias == base)?;
    let want = signature(aten_schemas::schema(key)?);
    let twins: Vec<&str> = aten_schemas::overloads(&format!("aten::{target}{inplace}")).collect();
    let exact = twins.iter().find(|k| aten_schemas::schema(k).map(signature).as_ref() == Some(&want));
    let defaulted_tail = || {
        twins.iter().find(|k| aten_schemas::schema(k).map(signature).is_some_and(|s| extends_with_defaults(&s, &want)))
    };
    exact.or_else(defaulted_tail).map(|k| k.to_string())
}

/// Whether signature `longer` is `shorter` with trailing arguments that all have defaults.
fn extends_with_defaults(longer: &Signature, shorter: &Signature) -> bool {
    longer.returns == shorter.returns
        && longer.args.len() > shorter.args.len()
        && longer.args[..shorter.args.len()] == shorter.args[..]
        && longer.args[shorter.args.len()..].iter().all(|a| a.contains('='))
}

/// A schema's argument types with their defaults, and its return types, without argument names
/// or alias annotations: `(Tensor, int=0) -> Tensor`.
#[derive(PartialEq)]
struct Signature {
    args: Vec<String>,
    returns: String,
}

fn signature(schema: &str) -> Signature {
    let strip = |s: &str| s.replace("(a!)", "").replace("(a)", "").replace("(a -> *)", "");
    let args = aten_schemas::arguments(schema)
        .into_iter()
        .map(|a| {
            let (decl, default) = a.split_once('=').map_or((a, None), |(d, v)| (d, Some(v)));
            let ty = strip(decl.trim().rsplit_once(' ').map_or(decl, |(ty, _)| ty));
            match default {
                Some(v) => format!("{ty}={v}"),
                None => ty,
            }
        })
        .collect();
    Signature { args, returns: strip(aten_schemas::returns(schema)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_find_the_overload_with_the_same_arguments() {
        assert_eq!(canonical("aten::divide.Tensor").as_deref(), Some("aten::div.Tensor"));
        assert_eq!(canonical("aten::divide.Tensor_mode").as_deref(), Some("aten::div.Tensor_mode"));
        assert_eq!(canonical("aten::multiply_.Tensor").as_deref(), Some("aten::mul_.Tensor"));
        assert_eq!(canonical("aten::swapaxes.default").as_deref(), Some("aten::transpose.int"));
        assert_eq!(canonical("aten::clip.Tensor").as_deref(), Some("aten::clamp.Tensor"));
        assert_eq!(canonical("aten::clip.default").as_deref(), Some("aten::clamp.default"));
        assert_eq!(canonical("aten::greater_equal.Scalar").as_deref(), Some("aten::ge.Scalar"));
        assert_eq!(canonical("aten::div.Tensor"), None);
        assert_eq!(canonical("prims::sin.default").as_deref(), Some("aten::sin.default"));
        assert_eq!(canonical("prims::add.default").as_deref(), Some("aten::add.Tensor"));
        assert_eq!(canonical("prims::transpose.default").as_deref(), Some("aten::permute.default"));
        // `special_round(self, *, decimals=0)` has no twin: `round.decimals` has no default.
        assert_eq!(canonical("aten::special_round.default"), None);
    }
}
