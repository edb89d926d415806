//! TEMPORARY placeholder until the real symbolic module lands (replaced by src/sym.rs from the sym helper).
#[derive(Debug, Clone, PartialEq)]
pub enum SymExpr {
    Int(i64),
    Symbol(String),
    Other(String),
}
#[derive(Debug, thiserror::Error)]
#[error("cannot parse {0}")]
pub struct SymError(String);
pub fn parse(s: &str) -> Result<SymExpr, SymError> {
    if let Some(r) = s.strip_prefix("Integer(") {
        return r.trim_end_matches(')').parse().map(SymExpr::Int).map_err(|_| SymError(s.into()));
    }
    if let Some(r) = s.strip_prefix("Symbol('") {
        return Ok(SymExpr::Symbol(r.split('\'').next().unwrap_or("").into()));
    }
    Ok(SymExpr::Other(s.into()))
}
impl SymExpr {
    pub fn as_int(&self) -> Option<i64> {
        if let SymExpr::Int(i) = self {
            Some(*i)
        } else {
            None
        }
    }
    pub fn rename(&self, f: &dyn Fn(&str) -> Option<String>) -> SymExpr {
        match self {
            SymExpr::Symbol(s) => SymExpr::Symbol(f(s).unwrap_or(s.clone())),
            o => o.clone(),
        }
    }
}
impl std::fmt::Display for SymExpr {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            SymExpr::Int(i) => write!(f, "{i}"),
            SymExpr::Symbol(s) => write!(f, "{s}"),
            SymExpr::Other(s) => write!(f, "{s}"),
        }
    }
}
