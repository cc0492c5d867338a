//! CUDA C++ emission from the lowered form, beside the Rust emitter
//! (`codegen::rust`), sharing what lies below both (`codegen::names`,
//! `codegen::lanes`).
//!
//! This first part is the expressions: every node of the IR as CUDA C++
//! with the DSL's semantics exactly (wrapping integers, Euclidean division
//! and remainder, division by zero giving 0, saturating and `as`
//! conversions, boundary conditions, IEEE floats without contraction),
//! through the helpers of [`PRELUDE`]. The same text compiles as host C++
//! (the prelude's `PL_HD` is empty there), which is how the tests check it
//! against the interpreter on machines without a GPU.
//!
//! Leaves name what the kernel binds, as the Rust emitter names them:
//! `__p{i}` a parameter, `__in{i}_min{d}` / `__in{i}_ext{d}` an input's
//! bounds, `__s[k]` a bounds symbol, a loop's and a coordinate's names from
//! `codegen::names`. A load reads `__in{i}` (or `__f{g}`, a func's buffer)
//! at `sum((c_d - min_d) * stride_d)` with `__in{i}_stride{d}` (`__f{g}_min{d}`,
//! `__f{g}_stride{d}`); a folded dimension wraps its coordinate first.

mod program;

pub use program::{
    generate, generate_with, launcher_name, Options, Unsupported, MAX_THREADS, TOO_LARGE,
};

use super::names;
use crate::ir::*;

/// The helpers every generated `.cu` starts with.
pub const PRELUDE: &str = include_str!("cuda/prelude.h");

/// What nvcc provides, for host C++: the tests compile a generated `.cu`
/// with the system's C++ compiler after [`PRELUDE`] and this, and run its
/// kernels' blocks and threads one after another. For nvcc and the host
/// alike it also holds the launch macro and the device memory pool
/// (`pl::device_alloc`: blocks kept across calls, as Halide's runtime
/// keeps them).
pub const EMULATION: &str = include_str!("cuda/emulation.h");

/// nvcc: `NVCC`, then `CUDA_HOME` or `CUDA_PATH` + `/bin/nvcc`, then
/// `PATH` (`cc` alone reads only `NVCC` and `PATH`). For the build
/// script's `pipeline_build::cuda()` and the tests.
pub fn nvcc() -> Option<std::path::PathBuf> {
    use std::path::Path;
    if let Some(n) = std::env::var_os("NVCC").filter(|n| !n.is_empty()) {
        return Some(n.into());
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(home) = std::env::var_os(var).filter(|h| !h.is_empty()) {
            let n = Path::new(&home).join("bin").join("nvcc");
            if n.exists() {
                return Some(n);
            }
        }
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("nvcc"))
        .find(|n| n.exists())
}

/// The C++ type of an element type.
pub fn c_type(t: Type) -> &'static str {
    match t {
        Type::Bool => "bool",
        Type::U8 => "uint8_t",
        Type::U16 => "uint16_t",
        Type::U32 => "uint32_t",
        Type::U64 => "uint64_t",
        Type::I8 => "int8_t",
        Type::I16 => "int16_t",
        Type::I32 => "int32_t",
        Type::I64 => "int64_t",
        Type::F32 => "float",
        Type::F64 => "double",
    }
}

/// An integer constant of type `t` (already wrapped into it).
pub fn int_lit(t: Type, v: i128) -> String {
    let ty = c_type(t);
    match t {
        Type::Bool => (if v != 0 { "true" } else { "false" }).into(),
        // The magnitude of i64's MIN has no literal.
        Type::I64 if v == i64::MIN as i128 => "((int64_t)(-9223372036854775807ll - 1))".into(),
        _ if v < 0 => format!("(({ty})-{}ll)", v.unsigned_abs()),
        _ => format!("(({ty}){v}ull)"),
    }
}

/// A float constant of type `t`: the shortest decimal that reads back as
/// the same value (C++ rounds decimal literals correctly), or its bits
/// where no literal says it (NaN, infinities).
pub fn float_lit(t: Type, v: f64) -> String {
    if t == Type::F32 {
        let f = v as f32;
        if !f.is_finite() {
            return format!("pl::f32_bits(0x{:08x}u)", f.to_bits());
        }
        format!("{}f", decimal(format!("{f:?}")))
    } else {
        if !v.is_finite() {
            return format!("pl::f64_bits(0x{:016x}ull)", v.to_bits());
        }
        decimal(format!("{v:?}"))
    }
}

/// Rust's `{:?}` of a finite float as a C++ floating literal: it has a
/// `.` or an exponent already, except for whole numbers (`3`).
fn decimal(s: String) -> String {
    if s.contains(['.', 'e']) {
        s
    } else {
        format!("{s}.0")
    }
}

/// Emits expressions of definition `func` (update `update`), or of loop
/// bounds where both are `None`.
pub struct Exprs<'a> {
    /// The pipeline.
    pub p: &'a Pipeline,
    /// The func whose definition the expressions are of.
    pub func: Option<FuncId>,
    /// Its update, `None` for its pure definition.
    pub update: Option<usize>,
    /// How many symbols the bounds program has: those above are bound by
    /// the lowered statements (`__q{k}`).
    pub n_global: usize,
    /// The storage folding of each func's buffer, per dimension (empty:
    /// not allocated yet, or not folded).
    pub folds: &'a [Vec<Option<i64>>],
    /// The C++ type of index arithmetic (64-bit integer expressions of
    /// loops, symbols and constants alone): `int64_t` on the host, the
    /// kernel's index type `I` in kernels.
    pub index: &'static str,
    /// Loads read elsewhere (a thread's vector lanes read them through
    /// windows): each with the C++ expression that stands for it.
    pub loads: &'a [(Expr, String)],
}

impl Exprs<'_> {
    /// `e` as a C++ expression of type `c_type(e.ty)`.
    pub fn expr(&self, e: &Expr) -> String {
        crate::deep(|| self.expr_here(e))
    }

    fn expr_here(&self, e: &Expr) -> String {
        if let (ExprKind::Load { .. }, false) = (&e.kind, self.loads.is_empty()) {
            if let Some((_, with)) = self.loads.iter().find(|(l, _)| l == e) {
                return with.clone();
            }
        }
        if self.index != "int64_t"
            && is_index(e)
            && e.any(&mut |n| matches!(n.kind, ExprKind::Sym(_) | ExprKind::Loop(_)))
        {
            return self.index_expr(e);
        }
        let sub = |x: &Expr| self.expr(x);
        let ty = c_type(e.ty);
        match &e.kind {
            ExprKind::Int(v) => int_lit(e.ty, *v),
            ExprKind::Float(v) => float_lit(e.ty, *v),
            ExprKind::Bool(b) => b.to_string(),
            ExprKind::Var(d) => names::coord(Coord::Pure(
                self.func.expect("a pure variable outside a stage"),
                *d,
            )),
            ExprKind::RVar(r) => names::coord(Coord::Reduction(
                self.func.expect("an rvar outside a stage"),
                self.update.expect("an rvar outside an update"),
                *r,
            )),
            ExprKind::Param(i) => names::param(*i),
            ExprKind::InputMin(i, d) => names::input_min(*i, *d),
            ExprKind::InputExtent(i, d) => names::input_extent(*i, *d),
            ExprKind::Sym(s) if *s >= self.n_global => format!("__q{s}"),
            ExprKind::Sym(s) => format!("__s[{s}]"),
            ExprKind::Loop(v) => names::loop_var(v),
            ExprKind::LetVar(id) => names::let_value(*id),
            // A lambda binds the value once (C++ has no `let` expression).
            ExprKind::Let { id, value, body } => format!(
                "([&]() -> {ty} {{ const {} {} = {}; return {}; }}())",
                c_type(value.ty),
                names::let_value(*id),
                sub(value),
                sub(body)
            ),
            ExprKind::Unary(op, a) => {
                let x = sub(a);
                match (op, a.ty) {
                    (UnOp::Neg, t) if t.is_int() => format!("pl::neg<{ty}>({x})"),
                    (UnOp::Neg, _) => format!("(-({x}))"),
                    (UnOp::Not, Type::Bool) => format!("(!({x}))"),
                    (UnOp::Not, _) => format!("(({ty})~({x}))"),
                    (UnOp::Abs, t) if t.is_signed() => format!("pl::abs_w<{ty}>({x})"),
                    (UnOp::Abs, t) if t.is_float() => format!("pl::fabs_({x})"),
                    (UnOp::Abs, _) => x,
                }
            }
            ExprKind::Binary(op, a, b) => self.binary(*op, a, b),
            ExprKind::Select(c, a, b) => format!("(({}) ? ({}) : ({}))", sub(c), sub(a), sub(b)),
            ExprKind::Cast(a) => self.cast(e.ty, a, false),
            ExprKind::SaturatingCast(a) => self.cast(e.ty, a, true),
            ExprKind::Math(m, args) => {
                let a: Vec<String> = args.iter().map(sub).collect();
                let name = match m {
                    MathFn::Sqrt => "sqrt_",
                    MathFn::Exp | MathFn::FastExp => "exp_",
                    MathFn::Log | MathFn::FastLog => "log_",
                    MathFn::Pow => "pow_",
                    MathFn::Sin => "sin_",
                    MathFn::Cos => "cos_",
                    MathFn::Tan => "tan_",
                    MathFn::Atan2 => "atan2_",
                    MathFn::Floor => "floor_",
                    MathFn::Ceil => "ceil_",
                    MathFn::Round => "round_",
                    MathFn::Trunc => "trunc_",
                    MathFn::Fma => "fma_",
                };
                format!("pl::{name}({})", a.join(", "))
            }
            ExprKind::Load { source, args, .. } => self.load(*source, args),
            // Clamped to an input's edge: to its first and last coordinates
            // (the kernel's `__in{i}_last{d}`), in 32 bits.
            ExprKind::Boundary {
                mode: BoundaryMode::ClampEdge | BoundaryMode::GuardedClamp,
                coord,
                min,
                extent,
            } if matches!((&min.kind, &extent.kind), (ExprKind::InputMin(i, d), ExprKind::InputExtent(j, e)) if (i, d) == (j, e)) =>
            {
                let ExprKind::InputMin(i, d) = min.kind else {
                    unreachable!("matched above")
                };
                format!(
                    "pl::clamp_last({}, (int32_t){}, __in{i}_last{d})",
                    sub(coord),
                    names::input_min(i, d)
                )
            }
            ExprKind::Boundary {
                mode,
                coord,
                min,
                extent,
            } => {
                let helper = names::boundary_map(*mode);
                format!(
                    "pl::{helper}({}, {}, {})",
                    sub(coord),
                    sub(min),
                    sub(extent)
                )
            }
        }
    }

    /// Index arithmetic ([`is_index`]) in the kernel's index type `I`,
    /// where the bounds' infinities (the least and most 64-bit integers)
    /// are `pl::inf` and symbols are read as `pl::sym` gives them: the
    /// host's (`__sn[k]`, and `__qnN` unpacked from the launch) or the
    /// kernel's own (`__qnN` beside `__qN`).
    fn index_expr(&self, e: &Expr) -> String {
        let sub = |x: &Expr| self.index_expr(x);
        let ty = self.index;
        match &e.kind {
            ExprKind::Int(v) if *v == i64::MAX as i128 => format!("pl::inf<{ty}>()"),
            ExprKind::Int(v) if *v == i64::MIN as i128 => format!("pl::ninf<{ty}>()"),
            ExprKind::Int(v) => int_lit(e.ty, *v),
            ExprKind::Sym(s) if *s >= self.n_global => format!("__qn{s}"),
            ExprKind::Sym(s) => format!("pl::pick<{ty}>(__s[{s}], __sn[{s}])"),
            ExprKind::Loop(v) => names::loop_var(v),
            ExprKind::Unary(_, a) => format!("pl::neg<{ty}>({})", sub(a)),
            ExprKind::Binary(op, a, b) => {
                let f = match op {
                    BinOp::Add => "iadd",
                    BinOp::Sub => "isub",
                    BinOp::Mul => "imul",
                    BinOp::Div => "div_e",
                    BinOp::Rem => "rem_e",
                    BinOp::Min => "min_i",
                    _ => "max_i",
                };
                format!("pl::{f}<{ty}>({}, {})", sub(a), sub(b))
            }
            ExprKind::Select(c, a, b) => {
                format!("(({}) ? ({}) : ({}))", self.expr(c), sub(a), sub(b))
            }
            _ => unreachable!("not index arithmetic: {e:?}"),
        }
    }

    fn binary(&self, op: BinOp, a: &Expr, b: &Expr) -> String {
        let (x, y) = (self.expr(a), self.expr(b));
        let t = a.ty;
        let ty = c_type(t);
        if t.is_int() {
            let call = |f: &str| format!("pl::{f}<{ty}>({x}, {y})");
            // In a kernel, a coordinate moved by a small constant: exact in
            // plain arithmetic in the 32-bit kernels (`pl::cadd`).
            if self.index == "I" && t == Type::I32 && is_coordinate(a) && is_coordinate(b) {
                match op {
                    BinOp::Add => return format!("pl::cadd<I>({x}, {y})"),
                    BinOp::Sub => return format!("pl::csub<I>({x}, {y})"),
                    _ => {}
                }
            }
            return match op {
                BinOp::Add => call("add"),
                BinOp::Sub => call("sub"),
                BinOp::Mul => call("mul"),
                BinOp::Div => call("div_e"),
                BinOp::Rem => call("rem_e"),
                BinOp::Min => call("min_i"),
                BinOp::Max => call("max_i"),
                BinOp::And => format!("(({ty})(({x}) & ({y})))"),
                BinOp::Or => format!("(({ty})(({x}) | ({y})))"),
                BinOp::Xor => format!("(({ty})(({x}) ^ ({y})))"),
                // The amount may have another integer type.
                BinOp::Shl => format!("pl::shl_w<{ty}>({x}, {y})"),
                BinOp::Shr => format!("pl::shr_w<{ty}>({x}, {y})"),
                cmp => format!("(({x}) {} ({y}))", cmp.symbol()),
            };
        }
        if t.is_float() {
            return match op {
                BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div => {
                    format!("(({x}) {} ({y}))", op.symbol())
                }
                BinOp::Rem => format!("pl::rem_f<{ty}>({x}, {y})"),
                BinOp::Min => format!("pl::min_f<{ty}>({x}, {y})"),
                BinOp::Max => format!("pl::max_f<{ty}>({x}, {y})"),
                cmp if cmp.is_comparison() => format!("(({x}) {} ({y}))", cmp.symbol()),
                other => unreachable!("{other:?} on floats is rejected by the checker"),
            };
        }
        match op {
            BinOp::And => format!("(({x}) && ({y}))"),
            BinOp::Or => format!("(({x}) || ({y}))"),
            BinOp::Xor => format!("(({x}) != ({y}))"),
            cmp if cmp.is_comparison() => format!("(({x}) {} ({y}))", cmp.symbol()),
            other => unreachable!("{other:?} on bools is rejected by the checker"),
        }
    }

    /// `a` converted to `to`: Rust's `as`, or `saturating_cast`.
    fn cast(&self, to: Type, a: &Expr, saturate: bool) -> String {
        let x = self.expr(a);
        let (from, ty) = (a.ty, c_type(to));
        if from == to {
            return x;
        }
        match (from, to) {
            (_, Type::Bool) if from.is_float() => format!("(({x}) != 0)"),
            (_, Type::Bool) => format!("(({x}) != 0)"),
            (Type::Bool, _) => format!("(({ty})({x}))"),
            (Type::F64, Type::F32) if saturate => format!("pl::sat_f32({x})"),
            _ if from.is_float() && to.is_int() => format!("pl::f2i<{ty}>({x})"),
            _ if from.is_int() && to.is_int() && saturate => {
                format!("pl::sat_i<{ty}, {}>({x})", c_type(from))
            }
            // Integer to integer wraps (C++ converts modulo 2^N), integer
            // to float and float to float round to nearest.
            _ => format!("(({ty})({x}))"),
        }
    }

    /// A load of `source` at `args`: its buffer at the offset of the
    /// coordinates from its first point, by its strides (a `bool` func's
    /// byte compared with 0).
    fn load(&self, source: Source, args: &[Expr]) -> String {
        let at = self.offset(source, args);
        match source {
            Source::Input(i) => format!("pl::ldg(&__in{i}[{at}])"),
            Source::Func(g) if self.p.funcs[g].ty == Type::Bool => format!("(__f{g}[{at}] != 0)"),
            Source::Func(g) => format!("__f{g}[{at}]"),
        }
    }

    /// The offset in `source`'s buffer of the point at `args`, computed in
    /// the kernel's index type `I` (`int32_t` where the launcher found
    /// every buffer below 2^31 elements, else `int64_t`).
    pub fn offset(&self, source: Source, args: &[Expr]) -> String {
        let no_folds = Vec::new();
        let (base, folds) = match source {
            Source::Input(i) => (format!("__in{i}"), &no_folds),
            Source::Func(g) => (format!("__f{g}"), self.folds.get(g).unwrap_or(&no_folds)),
        };
        let terms: Vec<String> = args
            .iter()
            .enumerate()
            .map(|(d, c)| {
                let c = self.expr(c);
                let offset = match folds.get(d).copied().flatten() {
                    // A power of two (as loop synthesis folds): the
                    // Euclidean remainder is the low bits, in two's
                    // complement too.
                    Some(n) if n > 0 && n & (n - 1) == 0 => {
                        format!("((I)({c}) & (I){})", n - 1)
                    }
                    Some(n) => format!("(I)pl::rem_near((int64_t)({c}), {n}ll)"),
                    None => format!("((I)({c}) - (I){base}_min{d})"),
                };
                format!("{offset} * (I){base}_stride{d}")
            })
            .collect();
        if terms.is_empty() {
            "0".to_string()
        } else {
            terms.join(" + ")
        }
    }
}

/// Whether `e` is a coordinate of the stage (32 bits) or a constant within
/// 2^16, or one moved by at most 8 such constants: within 2^24 + 2^19 of 0
/// in a 32-bit kernel, where every coordinate is within 2^24 (see
/// [`is_index`]).
fn is_coordinate(e: &Expr) -> bool {
    fn moved(e: &Expr, depth: usize) -> bool {
        match &e.kind {
            ExprKind::Int(v) => v.abs() <= 1 << 16,
            ExprKind::Var(_) | ExprKind::RVar(_) => true,
            ExprKind::Binary(BinOp::Add | BinOp::Sub, a, b) => {
                depth < 8
                    && matches!(b.kind, ExprKind::Int(_))
                    && moved(a, depth + 1)
                    && moved(b, depth)
            }
            _ => false,
        }
    }
    moved(e, 0)
}

/// Whether `e` is index arithmetic: a 64-bit integer of loop variables,
/// symbols, small constants and the bounds' infinities under additions,
/// subtractions, products by a small constant (a loop's by a tile's size),
/// divisions, remainders, minima, maxima and selections. Where every
/// symbol a kernel reads lies
/// within 2^24 of 0 or is an infinity (what a launcher checks before it
/// takes the 32-bit kernels, `pl::index_narrow`), such values are
/// coordinates, extents and their sums, an infinity is 2^28 there, and 32
/// bits compute them exactly.
fn is_index(e: &Expr) -> bool {
    if e.ty != Type::I64 {
        return false;
    }
    match &e.kind {
        ExprKind::Int(v) => v.abs() <= 1 << 24 || *v == i64::MAX as i128 || *v == i64::MIN as i128,
        ExprKind::Sym(_) | ExprKind::Loop(_) => true,
        ExprKind::Unary(UnOp::Neg, a) => is_index(a),
        // A loop over tiles by the tile's size (the product stays within
        // the extent and a tile), anything else by a small constant.
        ExprKind::Binary(BinOp::Mul, a, b) => {
            let by = |x: &Expr, y: &Expr| {
                x.as_int().is_some_and(|v| {
                    v.abs()
                        <= if matches!(y.kind, ExprKind::Loop(_)) {
                            1 << 16
                        } else {
                            64
                        }
                })
            };
            (by(a, b) || by(b, a)) && is_index(a) && is_index(b)
        }
        ExprKind::Binary(
            BinOp::Add | BinOp::Sub | BinOp::Div | BinOp::Rem | BinOp::Min | BinOp::Max,
            a,
            b,
        ) => is_index(a) && is_index(b),
        ExprKind::Select(_, a, b) => is_index(a) && is_index(b),
        _ => false,
    }
}
