//! ATen's aliases (`divide` is `div`, `clip` is `clamp`, `swapaxes` is `transpose`): one table,
//! so an alias is dispatched to the translation of the op it names instead of a copy per alias.
//!
//! An alias overload maps to the canonical overload whose arguments have the same types and
//! defaults in the same order (names may differ: `swapaxes(self, axis0, axis1)` is
//! `transpose.int(self, dim0, dim1)`; the driver renames the arguments as for in-place ops). An
//! alias overload without such a twin is not served: an omitted argument must mean the same.

use super::schemas;

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
    ("det", "linalg_det"),
    ("divide", "div"),
    ("ger", "outer"),
    ("greater", "gt"),
    ("greater_equal", "ge"),
    ("inverse", "linalg_inv"),
    ("less", "lt"),
    ("less_equal", "le"),
    ("matrix_power", "linalg_matrix_power"),
    ("multiply", "mul"),
    ("negative", "neg"),
    ("not_equal", "ne"),
    ("row_stack", "vstack"),
    ("special_digamma", "digamma"),
    ("special_erf", "erf"),
    ("special_erfc", "erfc"),
    ("special_erfinv", "erfinv"),
    ("special_exp2", "exp2"),
    ("special_expit", "sigmoid"),
    ("special_expm1", "expm1"),
    ("special_gammaln", "lgamma"),
    ("special_i0", "i0"),
    ("special_log1p", "log1p"),
    ("special_logsumexp", "logsumexp"),
    ("special_multigammaln", "mvlgamma"),
    ("special_polygamma", "polygamma"),
    ("special_psi", "digamma"),
    ("special_sinc", "sinc"),
    ("special_xlogy", "xlogy"),
    ("subtract", "sub"),
    ("swapaxes", "transpose"),
    ("swapdims", "transpose"),
];

/// The canonical key of an alias overload (`aten::divide.Tensor_mode` → `aten::div.Tensor_mode`,
/// `aten::swapaxes.default` → `aten::transpose.int`); in-place aliases map to the canonical in-place
/// op (`aten::multiply_.Tensor` → `aten::mul_.Tensor`).
pub(crate) fn canonical(key: &str) -> Option<String> {
    let (ns, rest) = key.split_once("::")?;
    if ns != "aten" {
        return None;
    }
    let (name, _) = rest.split_once('.').unwrap_or((rest, "default"));
    let (base, inplace) = match name.strip_suffix('_') {
        Some(b) => (b, "_"),
        None => (name, ""),
    };
    let &(_, target) = ALIASES.iter().find(|(alias, _)| *alias == base)?;
    let want = signature(schemas::schema(key)?);
    schemas::overloads(&format!("aten::{target}{inplace}"))
        .find(|k| schemas::schema(k).map(signature).as_ref() == Some(&want))
        .map(str::to_string)
}

/// A schema's argument types with their defaults, and its return types, without argument names
/// or alias annotations: `(Tensor, int=0) -> Tensor`.
fn signature(schema: &str) -> String {
    let types: Vec<String> = schemas::arguments(schema)
        .into_iter()
        .map(|a| {
            let (decl, default) = a.split_once('=').map_or((a, None), |(d, v)| (d, Some(v)));
            let ty = decl.trim().rsplit_once(' ').map_or(decl, |(ty, _)| ty);
            match default {
                Some(v) => format!("{ty}={v}"),
                None => ty.to_string(),
            }
        })
        .collect();
    let strip = |s: &str| s.replace("(a!)", "").replace("(a)", "").replace("(a -> *)", "");
    format!("({}) -> {}", strip(&types.join(", ")), strip(schemas::returns(schema)))
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
        // `special_round(self, *, decimals=0)` has no twin: `round.decimals` has no default.
        assert_eq!(canonical("aten::special_round.default"), None);
    }
}
