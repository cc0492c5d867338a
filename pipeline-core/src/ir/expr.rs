//! Expressions of the IR.
//!
//! Semantics, stated once (for users: the guide's *Expressions and types*, `pipeline::guide::language`): every expression has one scalar
//! [`Type`]; integer arithmetic wraps; integer `/` and `%` are Euclidean with
//! `x / 0 == 0 == x % 0`; shifts take their amount modulo the bit width; float `%`
//! is the floored remainder `a - b * floor(a / b)`; casts are Rust `as`. Loads are
//! side-effect free, so `Select` may evaluate only the branch it takes (generated
//! code and the interpreter both do, which keeps guarded loads such as a
//! `constant()` boundary condition in range). Coordinates are `i32`; bounds
//! computations use `i64` and the [`ExprKind::Sym`] leaves of a bounds program.

use super::types::Type;
use std::sync::Arc;

/// Index of a func in [`super::Pipeline::funcs`].
pub type FuncId = usize;
/// Index of an input image in [`super::Pipeline::inputs`].
pub type InputId = usize;
/// Index of a symbol of a bounds program (an `i64` computed at run time).
pub type SymId = usize;

/// A loop variable of a lowered stage: loop `name` of stage `stage` (0 for
/// the pure definition, `k + 1` for update `k`) of func `func`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LoopVar {
    /// The func the stage belongs to.
    pub func: FuncId,
    /// 0: the pure definition; k + 1: update k.
    pub stage: usize,
    /// The loop's name in the schedule (`x`, `yo`, `x_v`, an rdom variable).
    /// Shared: loop variables are cloned with every expression that reads
    /// them, and a string copy each time was one in twenty of the
    /// allocations of a 100-func pipeline's expansion.
    pub name: std::sync::Arc<str>,
}

/// Where a load reads from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    /// A func of the pipeline.
    Func(FuncId),
    /// An input image.
    Input(InputId),
}

/// How a boundary condition maps a coordinate into `[min, min + extent)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoundaryMode {
    /// `clamp_edge()`: aaa|abc.
    ClampEdge,
    /// `mirror()`: cba|abc.
    Mirror,
    /// `mirror_interior()`: cb|abc.
    MirrorInterior,
    /// `wrap()`: abc|abc.
    Wrap,
    /// The clamped coordinate of `constant(v)`, only ever loaded under a guard
    /// that the original coordinate is inside; its bounds are the intersection
    /// of the coordinate's interval with the source, so an empty or distant
    /// source demands nothing.
    GuardedClamp,
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// Wrapping negation (ints), negation (floats).
    Neg,
    /// Bitwise not (ints), logical not (bool).
    Not,
    /// Absolute value keeping the type (wrapping: `abs(i32::MIN) == i32::MIN`).
    Abs,
}

/// Binary operators. Both operands have the same type except for shifts,
/// whose amount may be any integer type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (Euclidean for ints, x / 0 == 0)
    Div,
    /// `%` (Euclidean for ints, floored for floats)
    Rem,
    /// `min`
    Min,
    /// `max`
    Max,
    /// `&` (bitwise on ints, logical on bool)
    And,
    /// `|`
    Or,
    /// `^`
    Xor,
    /// `<<`
    Shl,
    /// `>>` (arithmetic on signed ints)
    Shr,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl BinOp {
    /// True for the comparisons, whose result is `bool`.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }

    /// The operator's spelling in the DSL (`min`/`max` are functions).
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Min => "min",
            BinOp::Max => "max",
            BinOp::And => "&",
            BinOp::Or => "|",
            BinOp::Xor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
        }
    }
}

/// Float math built-ins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MathFn {
    /// `sqrt(a)`
    Sqrt,
    /// `exp(a)`
    Exp,
    /// `log(a)` (natural)
    Log,
    /// `pow(a, b)`
    Pow,
    /// `sin(a)`
    Sin,
    /// `cos(a)`
    Cos,
    /// `tan(a)`
    Tan,
    /// `atan2(y, x)`
    Atan2,
    /// `floor(a)`
    Floor,
    /// `ceil(a)`
    Ceil,
    /// `round(a)`: half away from zero, like Rust's `round`.
    Round,
    /// `trunc(a)`
    Trunc,
    /// `fast_exp(a)`: within 1e-3 relative of `exp`.
    FastExp,
    /// `fast_log(a)`: within 1e-3 relative of `log`.
    FastLog,
    /// `fma(a, b, c)`: `a * b + c` rounded once (IEEE 754 fusedMultiplyAdd,
    /// Rust's `mul_add`).
    Fma,
}

impl MathFn {
    /// Looks a built-in up by its DSL name.
    pub fn from_name(name: &str) -> Option<MathFn> {
        Some(match name {
            "sqrt" => MathFn::Sqrt,
            "exp" => MathFn::Exp,
            "log" => MathFn::Log,
            "pow" => MathFn::Pow,
            "sin" => MathFn::Sin,
            "cos" => MathFn::Cos,
            "tan" => MathFn::Tan,
            "atan2" => MathFn::Atan2,
            "floor" => MathFn::Floor,
            "ceil" => MathFn::Ceil,
            "round" => MathFn::Round,
            "trunc" => MathFn::Trunc,
            "fast_exp" => MathFn::FastExp,
            "fast_log" => MathFn::FastLog,
            "fma" => MathFn::Fma,
            _ => return None,
        })
    }

    /// The DSL name.
    pub fn name(self) -> &'static str {
        match self {
            MathFn::Sqrt => "sqrt",
            MathFn::Exp => "exp",
            MathFn::Log => "log",
            MathFn::Pow => "pow",
            MathFn::Sin => "sin",
            MathFn::Cos => "cos",
            MathFn::Tan => "tan",
            MathFn::Atan2 => "atan2",
            MathFn::Floor => "floor",
            MathFn::Ceil => "ceil",
            MathFn::Round => "round",
            MathFn::Trunc => "trunc",
            MathFn::FastExp => "fast_exp",
            MathFn::FastLog => "fast_log",
            MathFn::Fma => "fma",
        }
    }

    /// Number of operands.
    pub fn arity(self) -> usize {
        match self {
            MathFn::Pow | MathFn::Atan2 => 2,
            MathFn::Fma => 3,
            _ => 1,
        }
    }
}

/// A typed expression.
pub struct Expr {
    /// What the expression computes.
    pub kind: ExprKind,
    /// Its type.
    pub ty: Type,
    /// Whether the node is what [`crate::analysis::simplify::simplify`]
    /// made of it: simplifying it again changes nothing, and is skipped.
    simplified: bool,
}

impl Clone for Expr {
    /// A shallow copy: the children are shared, not copied.
    fn clone(&self) -> Expr {
        Expr {
            kind: self.kind.clone(),
            ty: self.ty,
            simplified: self.simplified,
        }
    }
}

impl PartialEq for Expr {
    fn eq(&self, other: &Expr) -> bool {
        self.ty == other.ty && self.kind == other.kind
    }
}

impl std::fmt::Debug for Expr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Expr")
            .field("kind", &self.kind)
            .field("ty", &self.ty)
            .finish()
    }
}

impl Drop for Expr {
    /// Drops the children on a new stack segment where the tree is deep (the
    /// derived drop recursed once per level on the caller's stack). Only a
    /// child this node holds alone is dropped with it; a shared one loses a
    /// reference.
    fn drop(&mut self) {
        // A direct match, not `for_each_child_ref`: every node of every
        // rebuilt tree comes through here, in a macro that runs unoptimized
        // in a default build.
        let alone = |e: &Arc<Expr>| Arc::strong_count(e) == 1 && !e.is_leaf();
        let deep = match &self.kind {
            ExprKind::Unary(_, a) | ExprKind::Cast(a) | ExprKind::SaturatingCast(a) => alone(a),
            ExprKind::Binary(_, a, b)
            | ExprKind::Let {
                value: a, body: b, ..
            } => alone(a) || alone(b),
            ExprKind::Select(a, b, c)
            | ExprKind::Boundary {
                coord: a,
                min: b,
                extent: c,
                ..
            } => alone(a) || alone(b) || alone(c),
            ExprKind::Math(_, args) | ExprKind::Load { args, .. } => {
                args.iter().any(|e| !e.is_leaf())
            }
            _ => false,
        };
        if !deep {
            return;
        }
        let kind = std::mem::replace(&mut self.kind, ExprKind::Int(0));
        crate::deep(move || drop(kind));
    }
}

/// The expression nodes.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// An integer constant, already wrapped into the type.
    Int(i128),
    /// A float constant (an f32 constant holds an exactly representable f64).
    Float(f64),
    /// A boolean constant.
    Bool(bool),
    /// The pure variable of dimension `n` of the enclosing definition (i32).
    Var(usize),
    /// Reduction variable `n` of the enclosing update (i32).
    RVar(usize),
    /// Scalar parameter `n` of the pipeline.
    Param(usize),
    /// The first coordinate of dimension `d` of an input (i32).
    InputMin(InputId, usize),
    /// The extent of dimension `d` of an input (i32).
    InputExtent(InputId, usize),
    /// A symbol of a bounds program (i64).
    Sym(SymId),
    /// The current value of a loop (i64), in lowered statements only.
    Loop(LoopVar),
    /// A unary operation.
    Unary(UnOp, Arc<Expr>),
    /// A binary operation.
    Binary(BinOp, Arc<Expr>, Arc<Expr>),
    /// `select(c, a, b)`: a where c holds, else b.
    Select(Arc<Expr>, Arc<Expr>, Arc<Expr>),
    /// Rust `as` conversion to `ty`.
    Cast(Arc<Expr>),
    /// `saturating_cast::<ty>(e)`: clamp into ty's range, then convert.
    SaturatingCast(Arc<Expr>),
    /// A float built-in.
    Math(MathFn, Vec<Expr>),
    /// A read of a func or input at integer coordinates. `site` indexes
    /// the checker's table of the user's tokens of each call.
    Load {
        /// What is read.
        source: Source,
        /// One i32 coordinate per dimension.
        args: Vec<Expr>,
        /// The call site, for diagnostics.
        site: usize,
    },
    /// `let` binding: `body`, in which `LetVar(id)` stands for `value`.
    /// Ids are unique within a definition's elaboration; an inner binding of
    /// the same id shadows an outer one.
    Let {
        /// The binding's id.
        id: usize,
        /// The bound value (evaluated once).
        value: Arc<Expr>,
        /// Where it is used.
        body: Arc<Expr>,
    },
    /// The value bound by the enclosing `Let` with this id.
    LetVar(usize),
    /// A boundary condition applied to one coordinate: maps `coord` into
    /// `[min, min + extent)` (all i32).
    Boundary {
        /// How the coordinate is mapped.
        mode: BoundaryMode,
        /// The coordinate asked for.
        coord: Arc<Expr>,
        /// The first valid coordinate.
        min: Arc<Expr>,
        /// The number of valid coordinates.
        extent: Arc<Expr>,
    },
}

/// A child as [`Expr::for_each_child_ref`] passes it: an operand, held by
/// reference count, or a call's argument, held in place.
enum ChildRef<'a> {
    Held(&'a Arc<Expr>),
    Inline(&'a Expr),
}

impl Expr {
    /// An integer constant of type `ty`, wrapped into it.
    pub fn int(ty: Type, v: i128) -> Expr {
        Expr {
            simplified: false,
            kind: ExprKind::Int(ty.wrap(v)),
            ty,
        }
    }

    /// An i32 constant.
    pub fn i32(v: i128) -> Expr {
        Expr::int(Type::I32, v)
    }

    /// An i64 constant.
    pub fn i64(v: i128) -> Expr {
        Expr::int(Type::I64, v)
    }

    /// A float constant of type `ty` (rounded to f32 when `ty` is f32).
    pub fn float(ty: Type, v: f64) -> Expr {
        let v = if ty == Type::F32 { v as f32 as f64 } else { v };
        Expr {
            simplified: false,
            kind: ExprKind::Float(v),
            ty,
        }
    }

    /// A boolean constant.
    pub fn bool(v: bool) -> Expr {
        Expr {
            simplified: false,
            kind: ExprKind::Bool(v),
            ty: Type::Bool,
        }
    }

    /// A leaf or node of the given type.
    pub fn new(kind: ExprKind, ty: Type) -> Expr {
        Expr {
            kind,
            ty,
            simplified: false,
        }
    }

    /// A binary operation; the type is bool for comparisons, else `a`'s.
    pub fn binary(op: BinOp, a: Expr, b: Expr) -> Expr {
        let ty = if op.is_comparison() { Type::Bool } else { a.ty };
        Expr::new(ExprKind::Binary(op, Arc::new(a), Arc::new(b)), ty)
    }

    /// `select(c, a, b)`.
    pub fn select(c: Expr, a: Expr, b: Expr) -> Expr {
        let ty = a.ty;
        Expr::new(ExprKind::Select(Arc::new(c), Arc::new(a), Arc::new(b)), ty)
    }

    /// `e as ty`, or `e` itself when it already has that type.
    pub fn cast(ty: Type, e: Expr) -> Expr {
        if e.ty == ty {
            e
        } else {
            Expr::new(ExprKind::Cast(Arc::new(e)), ty)
        }
    }

    /// A symbol of a bounds program (i64).
    pub fn sym(s: SymId) -> Expr {
        Expr::new(ExprKind::Sym(s), Type::I64)
    }

    /// `let` binding of `value` around `body(LetVar(id))`, skipped for leaves,
    /// which are as cheap to repeat as to name.
    pub fn bind(id: usize, value: Expr, body: impl FnOnce(Expr) -> Expr) -> Expr {
        if value.is_cheap_leaf() {
            return body(value);
        }
        let var = Expr::new(ExprKind::LetVar(id), value.ty);
        let b = body(var);
        let ty = b.ty;
        Expr::new(
            ExprKind::Let {
                id,
                value: Arc::new(value),
                body: Arc::new(b),
            },
            ty,
        )
    }

    /// A constant or a variable: as cheap to repeat as to name, so never
    /// bound by a `let`.
    pub fn is_cheap_leaf(&self) -> bool {
        matches!(
            self.kind,
            ExprKind::Int(_)
                | ExprKind::Float(_)
                | ExprKind::Bool(_)
                | ExprKind::Var(_)
                | ExprKind::RVar(_)
                | ExprKind::Param(_)
                | ExprKind::LetVar(_)
        )
    }

    /// The constant value if this is an integer constant.
    pub fn as_int(&self) -> Option<i128> {
        match self.kind {
            ExprKind::Int(v) => Some(v),
            _ => None,
        }
    }

    /// Calls `f` on each direct child.
    pub fn for_each_child<'a>(&'a self, mut f: impl FnMut(&'a Expr)) {
        self.for_each_child_ref(|c| match c {
            ChildRef::Held(e) => f(e),
            ChildRef::Inline(e) => f(e),
        })
    }

    /// Calls `f` on each direct child, saying how the node holds it.
    fn for_each_child_ref<'a>(&'a self, mut f: impl FnMut(ChildRef<'a>)) {
        let mut held = |e| f(ChildRef::Held(e));
        match &self.kind {
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Bool(_)
            | ExprKind::Var(_)
            | ExprKind::RVar(_)
            | ExprKind::Param(_)
            | ExprKind::InputMin(..)
            | ExprKind::InputExtent(..)
            | ExprKind::Sym(_)
            | ExprKind::Loop(_)
            | ExprKind::LetVar(_) => {}
            ExprKind::Let { value, body, .. } => {
                held(value);
                held(body)
            }
            ExprKind::Unary(_, a) | ExprKind::Cast(a) | ExprKind::SaturatingCast(a) => held(a),
            ExprKind::Binary(_, a, b) => {
                held(a);
                held(b)
            }
            ExprKind::Select(c, a, b) => {
                held(c);
                held(a);
                held(b)
            }
            ExprKind::Boundary {
                coord, min, extent, ..
            } => {
                held(coord);
                held(min);
                held(extent)
            }
            ExprKind::Math(_, args) | ExprKind::Load { args, .. } => {
                args.iter().for_each(|e| f(ChildRef::Inline(e)))
            }
        }
    }

    /// True if the node has no children.
    // Inlined even without optimization (where every traversal asks it of
    // every node, and the call cost more than the answer).
    #[inline(always)]
    pub fn is_leaf(&self) -> bool {
        match &self.kind {
            ExprKind::Unary(..)
            | ExprKind::Cast(_)
            | ExprKind::SaturatingCast(_)
            | ExprKind::Binary(..)
            | ExprKind::Select(..)
            | ExprKind::Let { .. }
            | ExprKind::Boundary { .. } => false,
            ExprKind::Math(_, args) | ExprKind::Load { args, .. } => args.is_empty(),
            _ => true,
        }
    }

    /// A deep copy: every node anew, none shared with `self`. For
    /// passes that tell nodes apart by address (the Rust emitter's memos),
    /// where a node shared by two places could stand for different values
    /// in each.
    pub fn unshared(&self) -> Expr {
        crate::deep(|| Expr::new(self.kind_with_children(false, &mut Expr::unshared), self.ty))
    }

    /// This node with its children replaced by `new`, in
    /// [`Expr::for_each_child`] order.
    pub fn with_children(&self, new: Vec<Expr>) -> Expr {
        let mut new = new.into_iter();
        let mut next = |_: &Expr| new.next().expect("one replacement per child");
        Expr::new(self.kind_with_children(false, &mut next), self.ty)
    }

    /// This node's operation on the children `f` makes of its own, in
    /// order. With `share`, a child `f` returns as it was
    /// ([`Expr::same_node`]) stays shared.
    fn kind_with_children(&self, share: bool, f: &mut dyn FnMut(&Expr) -> Expr) -> ExprKind {
        let mut held = |e: &Arc<Expr>| {
            let n = f(e);
            if share && n.same_node(e) {
                Arc::clone(e)
            } else {
                Arc::new(n)
            }
        };
        match &self.kind {
            ExprKind::Unary(op, a) => ExprKind::Unary(*op, held(a)),
            ExprKind::Cast(a) => ExprKind::Cast(held(a)),
            ExprKind::SaturatingCast(a) => ExprKind::SaturatingCast(held(a)),
            ExprKind::Binary(op, x, y) => ExprKind::Binary(*op, held(x), held(y)),
            ExprKind::Select(c, x, y) => ExprKind::Select(held(c), held(x), held(y)),
            ExprKind::Let { id, value, body } => ExprKind::Let {
                id: *id,
                value: held(value),
                body: held(body),
            },
            ExprKind::Boundary {
                mode,
                coord,
                min,
                extent,
            } => ExprKind::Boundary {
                mode: *mode,
                coord: held(coord),
                min: held(min),
                extent: held(extent),
            },
            ExprKind::Math(m, args) => ExprKind::Math(*m, args.iter().map(f).collect()),
            ExprKind::Load { source, args, site } => ExprKind::Load {
                source: *source,
                args: args.iter().map(f).collect(),
                site: *site,
            },
            leaf => leaf.clone(),
        }
    }

    /// Whether `other` is this node: the same operation on the same
    /// (shared) children, or an equal leaf. Shallow, so cheap; false says
    /// nothing of the values.
    fn same_node(&self, other: &Expr) -> bool {
        let same = Arc::ptr_eq;
        let all_same = |a: &[Expr], b: &[Expr]| {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same_node(y))
        };
        self.ty == other.ty
            && match (&self.kind, &other.kind) {
                (ExprKind::Unary(o, a), ExprKind::Unary(p, b)) => o == p && same(a, b),
                (ExprKind::Cast(a), ExprKind::Cast(b))
                | (ExprKind::SaturatingCast(a), ExprKind::SaturatingCast(b)) => same(a, b),
                (ExprKind::Binary(o, a, b), ExprKind::Binary(p, c, d)) => {
                    o == p && same(a, c) && same(b, d)
                }
                (ExprKind::Select(a, b, c), ExprKind::Select(d, e, f)) => {
                    same(a, d) && same(b, e) && same(c, f)
                }
                (ExprKind::Math(m, a), ExprKind::Math(n, b)) => m == n && all_same(a, b),
                (
                    ExprKind::Load { source, args, site },
                    ExprKind::Load {
                        source: s,
                        args: a,
                        site: t,
                    },
                ) => source == s && site == t && all_same(args, a),
                (
                    ExprKind::Let { id, value, body },
                    ExprKind::Let {
                        id: i,
                        value: v,
                        body: b,
                    },
                ) => id == i && same(value, v) && same(body, b),
                (
                    ExprKind::Boundary {
                        mode,
                        coord,
                        min,
                        extent,
                    },
                    ExprKind::Boundary {
                        mode: m,
                        coord: c,
                        min: n,
                        extent: e,
                    },
                ) => mode == m && same(coord, c) && same(min, n) && same(extent, e),
                (a, b) => self.is_leaf() && other.is_leaf() && a == b,
            }
    }

    /// Rebuilds the expression bottom-up: `f` sees each node after its children
    /// have been rewritten and returns its replacement.
    pub fn rewrite(&self, f: &mut impl FnMut(Expr) -> Expr) -> Expr {
        rewrite_dyn(self, f)
    }

    /// [`Expr::rewrite`] for the simplifier: nodes it made before are
    /// kept as they are, without a visit, and the nodes it makes are
    /// marked so.
    pub(crate) fn simplify_with(&self, f: &mut dyn FnMut(Expr) -> Expr) -> Expr {
        if self.simplified {
            return self.clone();
        }
        let mut out = if self.is_leaf() {
            f(self.clone())
        } else {
            crate::deep(|| {
                let kind = self.kind_with_children(true, &mut |e| e.simplify_with(f));
                f(Expr::new(kind, self.ty))
            })
        };
        out.simplified = true;
        out
    }

    fn rewrite_here(&self, f: &mut dyn FnMut(Expr) -> Expr) -> Expr {
        let kind = self.kind_with_children(true, &mut |e| rewrite_dyn(e, f));
        f(Expr::new(kind, self.ty))
    }

    /// Visits every node, parents before children.
    pub fn visit(&self, f: &mut impl FnMut(&Expr)) {
        if self.is_leaf() {
            return f(self);
        }
        crate::deep(|| {
            f(self);
            self.for_each_child(|c| c.visit(f));
        })
    }

    /// The conjuncts of a boolean: `a && (b && c)` is `[a, b, c]`.
    pub fn conjuncts(&self) -> Vec<&Expr> {
        match &self.kind {
            ExprKind::Binary(BinOp::And, a, b) if self.ty == Type::Bool => {
                let mut out = a.conjuncts();
                out.extend(b.conjuncts());
                out
            }
            _ => vec![self],
        }
    }

    /// True if any node satisfies `pred` (parents before children; stops
    /// at the first).
    pub fn any(&self, pred: &mut impl FnMut(&Expr) -> bool) -> bool {
        any_dyn(self, pred)
    }

    /// Whether loop `v`'s variable appears in the expression.
    pub fn uses_loop(&self, v: &LoopVar) -> bool {
        self.any(&mut |n| matches!(&n.kind, ExprKind::Loop(l) if l == v))
    }

    /// The expression with `value` in place of loop `v`'s variable.
    pub fn with_loop(&self, v: &LoopVar, value: &Expr) -> Expr {
        self.rewrite(&mut |n| match &n.kind {
            ExprKind::Loop(l) if l == v => value.clone(),
            _ => n,
        })
    }
}

/// [`Expr::any`] with one `pred` for the whole tree.
fn any_dyn(e: &Expr, pred: &mut dyn FnMut(&Expr) -> bool) -> bool {
    if e.is_leaf() {
        return pred(e);
    }
    crate::deep(|| {
        if pred(e) {
            return true;
        }
        let mut found = false;
        e.for_each_child(|c| found = found || any_dyn(c, pred));
        found
    })
}

/// [`Expr::rewrite`] with one `f` for the whole tree: wrapping `f` in a
/// new closure per level made each call of it go through as many closures
/// as the node was deep (a stack overflow on a sum of 20,000 terms, and
/// quadratic time).
fn rewrite_dyn(e: &Expr, f: &mut dyn FnMut(Expr) -> Expr) -> Expr {
    // A leaf goes no deeper: no stack check (half the nodes of a tree are
    // leaves, and the check reads a thread-local).
    if e.is_leaf() {
        return f(e.clone());
    }
    crate::deep(|| e.rewrite_here(f))
}
