//! Higher-order ops: `cond` → If, `while_loop` → Loop, `scan` and `map` → Scan, and
//! `with_effects` (side effects torch orders with tokens; ONNX has none).

use crate::translate::prelude::*;
use crate::translations;

/// A formal input of the subgraph being built, typed like `like` (shape left to inference:
/// loop-carried shapes may change between iterations).
fn formal_like(op: &mut Builder, like: Value, drop_leading: bool) -> Value {
    let dtype = op.dtype(like);
    let shape = if drop_leading { op.shape(like).and_then(|s| s.get(1..).map(|s| s.to_vec())) } else { None };
    let (complex, container) = (op.info(like).complex, op.info(like).container);
    let v = op.add_input(dtype, shape);
    op.info_mut(v).complex = complex;
    op.info_mut(v).container = container;
    v
}

/// An operand passed into an inlined subgraph: a tensor, or a symbolic (or constant) int, float or
/// bool, which the subgraph's placeholder receives as a 0-d value.
fn subgraph_operand(op: &mut Builder, ctx: &NodeCtx<'_>, arg: &Argument<'_>) -> OpResult<Value> {
    use {Argument as A, SymBoolArgument as B, SymFloatArgument as F, SymIntArgument as I};
    match arg {
        A::Tensor(t) => ctx.value(&t.name),
        A::SymInt(I::AsName(n)) | A::SymFloat(F::AsName(n)) | A::SymBool(B::AsName(n)) => ctx.value(n),
        A::SymInt(I::AsInt(i)) | A::Int(i) => Ok(op.scalar_i64(*i)),
        A::SymFloat(F::AsFloat(f)) | A::Float(f) => Ok(op.scalar(DType::Float, *f)),
        A::SymBool(B::AsBool(b)) | A::Bool(b) => Ok(op.scalar(DType::Bool, f64::from(u8::from(*b)))),
        other => Err(OpError::new(format!("operand of kind {} is not supported", other.kind()))),
    }
}

/// The one value a loop's condition returns.
fn predicate(outs: &[Value]) -> OpResult<Value> {
    match outs {
        [p] => Ok(*p),
        _ => Err(OpError::new(format!("while_loop: the condition returns {} values, not one", outs.len()))),
    }
}

translations! {
    /// cond(Tensor pred, GraphModule true_fn, GraphModule false_fn, Tensor[] operands) -> Tensor[]
    #[target("higher_order::cond")]
    fn cond[ctx](
        op,
        pred: Operand,
        true_fn: SubGraph,
        false_fn: SubGraph,
        operands: Vec<Tensor>,
    ) -> OpResult<Vec<Value>> {
        let pred = operand_value(op, pred, DType::Bool);
        // ONNX branches take no inputs: they read the operands from the enclosing scope.
        let mut branches = Vec::with_capacity(2);
        for g in [&true_fn, &false_fn] {
            op.begin_subgraph(g.name);
            let outs = match ctx.inline(op, g.graph, &operands) {
                Ok(o) => o,
                Err(e) => {
                    op.end_subgraph(vec![]);
                    return Err(e);
                }
            };
            branches.push(op.end_subgraph(outs));
        }
        let n = branches[0].outputs.len();
        if branches[1].outputs.len() != n {
            bail!("cond: the branches return {} and {} values", n, branches[1].outputs.len());
        }
        let else_branch = branches.pop().unwrap_or_default();
        let then_branch = branches.pop().unwrap_or_default();
        Ok(op.If(pred).then_branch(then_branch).else_branch(else_branch).outs_vec(n))
    }

    /// while_loop(GraphModule cond_fn, GraphModule body_fn, Tensor[] carried_inputs,
    ///     Tensor[] additional_inputs) -> Tensor[]
    #[target("higher_order::while_loop")]
    fn while_loop[ctx](
        op,
        cond_fn: SubGraph,
        body_fn: SubGraph,
        carried_inputs: Vec<Tensor>,
        additional_inputs: Vec<Tensor>,
    ) -> OpResult<Vec<Value>> {
        let with_extra = |vals: &[Value]| vals.iter().chain(additional_inputs.iter()).copied().collect::<Vec<_>>();
        // The first test runs before the loop; the body runs the step, then the next test.
        let first = ctx.inline(op, cond_fn.graph, &with_extra(&carried_inputs))?;
        let first = cast(op, predicate(&first)?, DType::Bool);
        op.begin_subgraph(body_fn.name);
        let _iter = op.add_input(Some(DType::Int64), Some(vec![]));
        let _cond = op.add_input(Some(DType::Bool), Some(vec![]));
        let formals: Vec<Value> = carried_inputs
            .iter()
            .enumerate()
            .map(|(k, &c)| {
                let v = formal_like(op, c, false);
                // The rank stays (translations of views and reductions need it); each size is a
                // symbol of its own, as an iteration may change it.
                let shape = op.shape(c).map(|s| {
                    (0..s.len()).map(|d| Dim::Param(format!("{}_carried{k}_d{d}", body_fn.name).into())).collect()
                });
                op.info_mut(v).shape = shape;
                v
            })
            .collect();
        let body = (|| {
            let next = ctx.inline(op, body_fn.graph, &with_extra(&formals))?;
            if next.len() != carried_inputs.len() {
                bail!("while_loop: the body returns {} values for {} carried ones", next.len(), carried_inputs.len());
            }
            let next: Vec<Value> = next
                .iter()
                .zip(&carried_inputs)
                .map(|(&n, &c)| match op.dtype(c) {
                    // An optional keeps its element type (`Cast` takes tensors).
                    Some(t) if op.info(c).container == Container::Tensor => cast(op, n, t),
                    _ => n,
                })
                .collect();
            let again = ctx.inline(op, cond_fn.graph, &with_extra(&next))?;
            let again = cast(op, predicate(&again)?, DType::Bool);
            Ok::<_, OpError>(std::iter::once(again).chain(next).collect::<Vec<_>>())
        })();
        let outs = match body {
            Ok(o) => o,
            Err(e) => {
                op.end_subgraph(vec![]);
                return Err(e);
            }
        };
        let body = op.end_subgraph(outs);
        Ok(op.Loop(None, Some(first), &carried_inputs).body(body).outs_vec(carried_inputs.len()))
    }

    /// scan(GraphModule combine_fn, Tensor[] init, Tensor[] xs, Tensor[] additional_inputs) -> Tensor[]
    #[target("higher_order::scan")]
    fn scan[ctx](
        op,
        combine_fn: SubGraph,
        init: Vec<Tensor>,
        xs: Vec<Tensor>,
        additional_inputs: Vec<Tensor>,
    ) -> OpResult<Vec<Value>> {
        op.begin_subgraph(combine_fn.name);
        let mut formals: Vec<Value> = init.iter().map(|&c| formal_like(op, c, false)).collect();
        formals.extend(xs.iter().map(|&x| formal_like(op, x, true)));
        formals.extend(additional_inputs.iter().copied());
        let outs = match ctx.inline(op, combine_fn.graph, &formals) {
            Ok(o) => o,
            Err(e) => {
                op.end_subgraph(vec![]);
                return Err(e);
            }
        };
        let n = outs.len();
        let body = op.end_subgraph(outs);
        let inputs: Vec<Value> = init.iter().chain(xs.iter()).copied().collect();
        Ok(op.Scan(&inputs).body(body).num_scan_inputs(xs.len() as i64).outs_vec(n))
    }

    /// map_impl(GraphModule f, Tensor[] xs, Tensor[] pos_args) -> Tensor[]
    #[target("higher_order::map_impl")]
    fn map_impl[ctx](op, f: SubGraph, xs: Vec<Tensor>, pos_args: Vec<Tensor>) -> OpResult<Vec<Value>> {
        // A scan without state: every output is stacked along a new leading axis.
        op.begin_subgraph(f.name);
        let mut formals: Vec<Value> = xs.iter().map(|&x| formal_like(op, x, true)).collect();
        formals.extend(pos_args.iter().copied());
        let outs = match ctx.inline(op, f.graph, &formals) {
            Ok(o) => o,
            Err(e) => {
                op.end_subgraph(vec![]);
                return Err(e);
            }
        };
        let n = outs.len();
        let body = op.end_subgraph(outs);
        Ok(op.Scan(&xs).body(body).num_scan_inputs(xs.len() as i64).outs_vec(n))
    }

    /// wrap_with_set_grad_enabled(bool enable_grad, GraphModule body, *args) -> Tensor[]
    #[target(
        "higher_order::wrap_with_set_grad_enabled",
        "higher_order::wrap_with_autocast",
        "higher_order::invoke_subgraph"
    )]
    fn wrap_with_set_grad_enabled[ctx](op) -> OpResult<Vec<Value>> {
        // Grad mode does not change what inference computes, and a subgraph torch.compile marked for
        // reuse (`invoke_subgraph`) computes what its body does: inline the body. Its operands
        // follow the subgraph argument positionally; `invoke_subgraph`'s identifier string is not one.
        let args = &ctx.node.inputs;
        let Some(at) = args.iter().position(|a| matches!(a.arg, Argument::Graph(_))) else {
            bail!("wrap_with_set_grad_enabled has no subgraph argument to inline");
        };
        let Argument::Graph(g) = &args[at].arg else {
            bail!("wrap_with_set_grad_enabled has no subgraph argument to inline")
        };
        let operands: Vec<Value> = args[at + 1..]
            .iter()
            .filter(|a| !matches!(a.arg, Argument::String(_)))
            .map(|a| subgraph_operand(op, ctx, &a.arg))
            .collect::<OpResult<_>>()?;
        ctx.inline(op, &g.graph, &operands)
    }

    /// with_effects(Tensor token, OpOverload op, *args) -> (Tensor token, *results)
    #[target("higher_order::with_effects")]
    fn with_effects(op, token: Tensor, effect: OperatorName) -> OpResult<Vec<Option<Value>>> {
        match effect.0 {
            "torch.ops.aten._print.default" => {
                op.warn("dropped a side effect: aten._print (ONNX graphs cannot print)");
                Ok(vec![Some(token), None])
            }
            "torch.ops.aten._linalg_check_errors.default" => {
                op.warn(concat!(
                     "dropped a runtime check: aten._linalg_check_errors (ONNX cannot raise; singular or ",
                     "non-definite inputs give NaN or inf instead of an error)"
                 ));
                Ok(vec![Some(token), None])
            }
            other => bail!("side-effecting op {other} under with_effects has no ONNX equivalent"),
        }
    }
}
