//! Random well-typed pipelines: a small syntax tree of their own (so that a
//! failure can be minimized by rewriting it), printed as the text that
//! `pipeline!` takes.

use super::corpus::Rng;
use pipeline_core::ir::Type;
use std::fmt::Write as _;

/// How far the inputs extend around the outputs in every dimension: a func
/// reads an input directly (without a boundary condition) only at offsets
/// that keep every output within this distance of the input's edge.
pub const MARGIN: i64 = 8;

/// The margin of the inputs around the outputs in each dimension: funcs
/// read at offsets along x and y only, and the third and fourth dimensions
/// at their own variable or at a constant inside every output (smaller than
/// its extent there), so that those dimensions need none (and 4-D inputs
/// stay small).
pub const MARGINS: [i64; 4] = [MARGIN, MARGIN, 0, 0];

/// The smallest extent of every output in each dimension (the test runs at
/// 7x5 and 18x11, then 3 along the third dimension and 2 along the fourth):
/// an update at a constant point writes inside `MARGINS[d] + [0, e)`, where
/// every output reads, and reads inputs directly from there.
pub const EXTENTS: [usize; 4] = [7, 5, 3, 2];

/// The boundary conditions an input can be read through.
const BOUNDARIES: [&str; 5] = [
    "clamp_edge()",
    "mirror()",
    "mirror_interior()",
    "wrap()",
    "constant(1)",
];

/// The templates a pipeline may instantiate, each a function from a 2-D func
/// (of any numeric type) to a 2-D func of the same type that reads it at
/// offsets up to `k` (+1) from the point.
const TEMPLATES: [(&str, &str); 2] = [
    (
        "blur3",
        "fn blur3(f: Func, k: i32) -> Func {\n    t(x, y) = f(x - k, y) + f(x, y) + f(x + k, y);\n    t\n}",
    ),
    (
        "cross",
        "fn cross(f: Func, k: i32) -> Func {\n    v(x, y) = max(f(x, y - k), f(x, y + k));\n    h(x, y) = min(v(x, y), f(x + 1, y));\n    h\n}",
    ),
];

/// The boundary conditions a `bool` func can be read through: `constant`
/// takes a `bool` there.
const BOOL_BOUNDARIES: [&str; 5] = [
    "clamp_edge()",
    "mirror()",
    "mirror_interior()",
    "wrap()",
    "constant(true)",
];

/// What a read reads: an input (through a boundary condition or not), an
/// earlier func, or, inside the compile-time loop that builds family `k`,
/// its previous member `gK[l - 1]`.
#[derive(Clone, Copy, PartialEq)]
pub enum Src {
    Input(usize, Option<&'static str>),
    Func(usize),
    Member(usize),
}

/// An expression of a generated pipeline, which knows its type.
#[derive(Clone)]
pub struct Expr {
    pub ty: Type,
    pub kind: Kind,
}

/// The forms of [`Expr`].
#[derive(Clone)]
pub enum Kind {
    /// Text that stands alone: a literal, a variable, a parameter, an affine
    /// coordinate such as `x - 1`.
    Leaf(String),
    /// `src(coordinates)`.
    Read(Src, Vec<Expr>),
    /// `e as T`, or `saturating_cast::<T>(e)` when saturating.
    Cast(Box<Expr>, bool),
    /// A prefix operator: `-`, `!`.
    Unary(&'static str, Box<Expr>),
    /// An infix operator.
    Binary(&'static str, Box<Expr>, Box<Expr>),
    /// A built-in function.
    Call(&'static str, Vec<Expr>),
    /// `if c { a } else { b }`.
    If(Box<Expr>, Box<Expr>, Box<Expr>),
    /// An inline reduction (`sum`, `maximum`, ...) over `i` in `-1..=1`.
    Fold(&'static str, Box<Expr>),
    /// A block, `{ let a0 = e0; let a1 = e1; value }`: each name is in
    /// scope in the values after it.
    Block(Vec<(String, Expr)>, Box<Expr>),
}

impl Expr {
    fn leaf(ty: Type, text: impl Into<String>) -> Expr {
        Expr {
            ty,
            kind: Kind::Leaf(text.into()),
        }
    }

    /// The operands of this node.
    pub fn children(&self) -> Vec<&Expr> {
        match &self.kind {
            Kind::Leaf(_) => vec![],
            Kind::Read(_, c) | Kind::Call(_, c) => c.iter().collect(),
            Kind::Cast(a, _) | Kind::Unary(_, a) | Kind::Fold(_, a) => vec![a],
            Kind::Binary(_, a, b) => vec![a, b],
            Kind::If(c, a, b) => vec![c, a, b],
            Kind::Block(lets, value) => lets
                .iter()
                .map(|(_, e)| e)
                .chain(std::iter::once(&**value))
                .collect(),
        }
    }

    fn children_mut(&mut self) -> Vec<&mut Expr> {
        match &mut self.kind {
            Kind::Leaf(_) => vec![],
            Kind::Read(_, c) | Kind::Call(_, c) => c.iter_mut().collect(),
            Kind::Cast(a, _) | Kind::Unary(_, a) | Kind::Fold(_, a) => vec![a],
            Kind::Binary(_, a, b) => vec![a, b],
            Kind::If(c, a, b) => vec![c, a, b],
            Kind::Block(lets, value) => lets
                .iter_mut()
                .map(|(_, e)| e)
                .chain(std::iter::once(&mut **value))
                .collect(),
        }
    }

    /// The number of nodes.
    pub fn size(&self) -> usize {
        1 + self.children().iter().map(|c| c.size()).sum::<usize>()
    }

    /// The `n`th node in preorder.
    pub fn nth_mut(&mut self, n: usize) -> Option<&mut Expr> {
        if n == 0 {
            return Some(self);
        }
        let mut n = n - 1;
        for c in self.children_mut() {
            let size = c.size();
            if n < size {
                return c.nth_mut(n);
            }
            n -= size;
        }
        None
    }

    /// Every source this expression reads.
    fn reads(&self, out: &mut Vec<Src>) {
        if let Kind::Read(s, _) = &self.kind {
            out.push(*s);
        }
        for c in self.children() {
            c.reads(out);
        }
    }

    fn print(&self, s: &mut String) {
        match &self.kind {
            Kind::Leaf(t) => s.push_str(t),
            Kind::Read(src, coords) => {
                match src {
                    Src::Input(k, None) => write!(s, "in{k}").unwrap(),
                    Src::Input(k, Some(b)) => write!(s, "in{k}.{b}").unwrap(),
                    Src::Func(k) => write!(s, "f{k}").unwrap(),
                    Src::Member(k) => write!(s, "g{k}[l - 1]").unwrap(),
                }
                s.push('(');
                for (i, c) in coords.iter().enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    c.print(s);
                }
                s.push(')');
            }
            Kind::Cast(a, false) => {
                s.push('(');
                a.print(s);
                write!(s, " as {})", self.ty.name()).unwrap();
            }
            Kind::Cast(a, true) => {
                write!(s, "saturating_cast::<{}>(", self.ty.name()).unwrap();
                a.print(s);
                s.push(')');
            }
            Kind::Unary(op, a) => {
                write!(s, "({op}").unwrap();
                a.print(s);
                s.push(')');
            }
            Kind::Binary(op, a, b) => {
                s.push('(');
                a.print(s);
                write!(s, " {op} ").unwrap();
                b.print(s);
                s.push(')');
            }
            Kind::Call(f, args) => {
                write!(s, "{f}(").unwrap();
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    a.print(s);
                }
                s.push(')');
            }
            Kind::If(c, a, b) => {
                s.push_str("if ");
                c.print(s);
                s.push_str(" { ");
                a.print(s);
                s.push_str(" } else { ");
                b.print(s);
                s.push_str(" }");
            }
            Kind::Fold(f, a) => {
                write!(s, "{f}(-1..=1, |i| ").unwrap();
                a.print(s);
                s.push(')');
            }
            Kind::Block(lets, value) => {
                s.push_str("{ ");
                for (name, e) in lets {
                    write!(s, "let {name} = ").unwrap();
                    e.print(s);
                    s.push_str("; ");
                }
                value.print(s);
                s.push_str(" }");
            }
        }
    }
}

/// An update of a func: `lhs op= value;`, inside `for {rdom} { .. }` when
/// `rdom` is given: a reduction domain (`r in rdom(1..16)`) or a
/// compile-time loop (`l in 0..3`), which repeats the update. `lhs` may fix some
/// coordinates to constants (`9, y`): the update then runs at those points
/// only.
#[derive(Clone)]
pub struct Update {
    pub rdom: Option<String>,
    pub lhs: String,
    pub op: &'static str,
    pub value: Expr,
}

/// How a func is defined.
#[derive(Clone)]
pub enum Def {
    /// A pure definition, then its updates in order.
    Pure(Expr, Vec<Update>),
    /// `let fK = template(source, k);`.
    Template(&'static str, Src, i64),
    /// `let fK = fJ.mode;`: func `j` through a boundary condition, defined
    /// everywhere.
    Bounded(usize, &'static str),
    /// A func family `gK` of `count` members built by a compile-time loop,
    /// `gK[0] = base`, then `gK[l] = step` for `l` in `1..count` (`step`
    /// reads `gK[l - 1]` and may use `l`), and `let fK = gK[count - 1];`.
    Family {
        base: Expr,
        step: Expr,
        count: usize,
    },
}

/// A func of a generated pipeline, named `f` and its index.
#[derive(Clone)]
pub struct Func {
    pub dims: usize,
    pub ty: Type,
    pub def: Def,
}

/// A generated pipeline, named `random`.
#[derive(Clone)]
pub struct Program {
    /// Each input's element type and dimensions.
    pub inputs: Vec<(Type, usize)>,
    /// Each scalar parameter's type.
    pub params: Vec<Type>,
    pub funcs: Vec<Func>,
    pub outputs: Vec<usize>,
}

/// The pure variables of a func of `dims` dimensions (funcs have at most 4).
const VARS: [&str; 4] = ["x", "y", "c", "w"];

impl Program {
    /// The funcs the outputs need, directly or not.
    fn live(&self) -> Vec<bool> {
        let mut live = vec![false; self.funcs.len()];
        let mut stack = self.outputs.clone();
        while let Some(f) = stack.pop() {
            if std::mem::replace(&mut live[f], true) {
                continue;
            }
            let mut reads = Vec::new();
            match &self.funcs[f].def {
                Def::Pure(e, updates) => {
                    e.reads(&mut reads);
                    for u in updates {
                        u.value.reads(&mut reads);
                    }
                }
                Def::Template(_, s, _) => reads.push(*s),
                Def::Bounded(j, _) => reads.push(Src::Func(*j)),
                Def::Family { base, step, .. } => {
                    base.reads(&mut reads);
                    step.reads(&mut reads);
                }
            }
            stack.extend(reads.into_iter().filter_map(|s| match s {
                Src::Func(g) => Some(g),
                Src::Input(..) | Src::Member(_) => None,
            }));
        }
        live
    }

    /// The text of the `pipeline!` invocation (without a schedule block);
    /// funcs the outputs do not need are left out.
    pub fn source(&self) -> String {
        let live = self.live();
        let mut s = String::new();
        for (name, text) in TEMPLATES {
            if self
                .funcs
                .iter()
                .zip(&live)
                .any(|(f, &l)| l && matches!(f.def, Def::Template(t, ..) if t == name))
            {
                s += text;
                s += "\n\n";
            }
        }
        s += "fn random(";
        let mut args: Vec<String> = self
            .inputs
            .iter()
            .enumerate()
            .map(|(k, (ty, dims))| format!("in{k}: Image<{}, {dims}>", ty.name()))
            .collect();
        args.extend(
            self.params
                .iter()
                .enumerate()
                .map(|(k, ty)| format!("p{k}: {}", ty.name())),
        );
        let image =
            |f: usize| format!("Image<{}, {}>", self.funcs[f].ty.name(), self.funcs[f].dims);
        let outputs: Vec<String> = self.outputs.iter().map(|&f| image(f)).collect();
        let names: Vec<String> = self.outputs.iter().map(|f| format!("f{f}")).collect();
        let (outputs, names) = if outputs.len() == 1 {
            (outputs[0].clone(), names[0].clone())
        } else {
            (
                format!("({})", outputs.join(", ")),
                format!("({})", names.join(", ")),
            )
        };
        writeln!(s, "{}) -> {outputs} {{", args.join(", ")).unwrap();
        for (k, f) in self.funcs.iter().enumerate() {
            if !live[k] {
                continue;
            }
            match &f.def {
                Def::Template(t, src, by) => {
                    let mut arg = String::new();
                    Expr {
                        ty: f.ty,
                        kind: Kind::Read(*src, vec![]),
                    }
                    .print(&mut arg);
                    // The read without its empty coordinates: the func value.
                    arg.truncate(arg.len() - 2);
                    writeln!(s, "    let f{k} = {t}({arg}, {by});").unwrap();
                }
                Def::Bounded(j, mode) => writeln!(s, "    let f{k} = f{j}.{mode};").unwrap(),
                Def::Family { base, step, count } => {
                    let vars = VARS[..f.dims].join(", ");
                    let (mut first, mut next) = (String::new(), String::new());
                    base.print(&mut first);
                    step.print(&mut next);
                    writeln!(s, "    g{k}[0]({vars}) = {first};").unwrap();
                    writeln!(s, "    for l in 1..{count} {{").unwrap();
                    writeln!(s, "        g{k}[l]({vars}) = {next};\n    }}").unwrap();
                    writeln!(s, "    let f{k} = g{k}[{}];", count - 1).unwrap();
                }
                Def::Pure(e, updates) => {
                    let mut rhs = String::new();
                    e.print(&mut rhs);
                    let vars = VARS[..f.dims].join(", ");
                    writeln!(s, "    f{k}({vars}) = {rhs};").unwrap();
                    for u in updates {
                        let mut value = String::new();
                        u.value.print(&mut value);
                        let line = format!("f{k}({}) {}= {value};", u.lhs, u.op);
                        match &u.rdom {
                            Some(r) => writeln!(s, "    for {r} {{\n        {line}\n    }}"),
                            None => writeln!(s, "    {line}"),
                        }
                        .unwrap();
                    }
                }
            }
        }
        writeln!(s, "    {names}\n}}").unwrap();
        s
    }
}

/// What the generator knows of a source while reading it.
#[derive(Clone, Copy)]
struct Info {
    ty: Type,
    dims: usize,
    /// How far from its point it reads inputs directly (without a boundary
    /// condition), through any chain of funcs; `None` when it never does.
    reach: Option<i64>,
    /// Which dimensions have a natural extent (the guide's *Sizes*): a
    /// boundary condition applies only to a func with one in every
    /// dimension. Never claimed where the compiler might find none.
    extents: [bool; 4],
}

/// The state of the generation of one pipeline.
pub struct Generator<'r> {
    rng: &'r mut Rng,
    program: Program,
    infos: Vec<Info>,
    /// The dimensions of the func being defined.
    dims: usize,
    /// How far the func being defined reads inputs directly.
    reach: Option<i64>,
    /// Whether `i` (an inline reduction's variable) is in scope.
    in_fold: bool,
    /// Whether `l` (a compile-time loop's variable) is in scope.
    in_loop: bool,
    /// Whether the func being defined reads inputs only through boundary
    /// conditions (and funcs that do), so that a boundary condition can
    /// apply to it in turn.
    bounded_reads: bool,
    /// The constants that stand for the pure variables in the value of an
    /// update at a constant point (`f(9, y) = ...`), dimension by dimension.
    point: [Option<i64>; 4],
    /// The dimension whose constant moves with `l` in such an update inside
    /// a compile-time loop (`f(9 + l, y) = ...`).
    stepped: Option<usize>,
    /// The names a block binds (`let a3 = ...;`) in scope, with their types.
    lets: Vec<(String, Type)>,
    /// How many names blocks have bound, so that every name is new.
    bound: usize,
}

/// A zero of type `ty` (`false` for `bool`): what minimization replaces a
/// subexpression with.
pub fn zero(ty: Type) -> Expr {
    match ty {
        Type::Bool => Expr::leaf(ty, "false"),
        _ => Expr::leaf(ty, format!("0{}", ty.name())),
    }
}

/// A literal of type `ty`, chosen among small and extreme values.
fn literal(ty: Type, rng: &mut Rng) -> Expr {
    let text = match ty {
        Type::Bool => rng.pick(&["true", "false"]).to_string(),
        Type::F32 | Type::F64 => {
            let v = *rng.pick(&["0.5", "2.0", "1.25", "-0.75", "3.0", "0.0", "100.5"]);
            format!("{v}{}", ty.name())
        }
        _ => {
            let v: i128 = match rng.below(8) {
                0 => ty.int_max(),
                1 if ty.is_signed() => -3,
                2 => 0,
                3 => 7,
                4 => 100,
                _ => rng.below(4) as i128 + 1,
            };
            format!("{v}{}", ty.name())
        }
    };
    let text = if text.starts_with('-') {
        format!("({text})")
    } else {
        text
    };
    Expr::leaf(ty, text)
}

/// The dimension whose pure variable a generated coordinate is affine in,
/// as the compiler recognizes it when it looks for a func's natural extent
/// (`x`, `y - 2`, `2 * x + 1`, `x / 2`): `None` for anything else, such as
/// `x + 1 + i` in an inline reduction, a constant, or a computed
/// coordinate.
fn affine_var(text: &str) -> Option<usize> {
    let words: Vec<&str> = text.split(' ').collect();
    let words = match words.as_slice() {
        ["2", "*", rest @ ..] => rest,
        all => all,
    };
    let (var, rest) = words.split_first()?;
    let d = VARS.iter().position(|v| v == var)?;
    rest.iter()
        .all(|w| ["/", "+", "-"].contains(w) || w.parse::<i64>().is_ok())
        .then_some(d)
}

/// A func's or an input's number of dimensions: mostly 2, sometimes 3 or 4
/// (the most a func has; rarely, since it multiplies the points computed).
fn dims_of(rng: &mut Rng) -> usize {
    match rng.below(100) {
        0..4 => 4,
        4..12 => 3,
        _ => 2,
    }
}

impl<'r> Generator<'r> {
    /// A random pipeline of 1 or 2 inputs and 2 to 7 funcs (and sometimes
    /// one more, a func that a boundary condition then applies to).
    pub fn program(rng: &'r mut Rng) -> Program {
        let mut g = Generator {
            rng,
            program: Program {
                inputs: vec![],
                params: vec![],
                funcs: vec![],
                outputs: vec![],
            },
            infos: vec![],
            dims: 2,
            reach: None,
            in_fold: false,
            in_loop: false,
            bounded_reads: false,
            point: [None; 4],
            stepped: None,
            lets: vec![],
            bound: 0,
        };
        for _ in 0..1 + g.rng.below(2) {
            let ty = *g.rng.pick(&Type::ELEMENTS);
            let dims = dims_of(g.rng);
            g.program.inputs.push((ty, dims));
        }
        for _ in 0..g.rng.below(3) {
            let ty = *g.rng.pick(&Type::ELEMENTS);
            g.program.params.push(ty);
        }
        let n = 2 + g.rng.below(6);
        for k in 0..n {
            g.func(k + 1 == n);
        }
        let last = g.program.funcs.len() - 1;
        g.program.outputs.push(last);
        if g.rng.chance(30) {
            // Not a `bool` func nor a func value: neither can be an output.
            let others: Vec<usize> = (0..last)
                .filter(|&k| {
                    let f = &g.program.funcs[k];
                    f.ty != Type::Bool && !matches!(f.def, Def::Bounded(..))
                })
                .collect();
            if !others.is_empty() {
                let other = *g.rng.pick(&others);
                g.program.outputs.push(other);
            }
        }
        g.program
    }

    fn info(&self, s: Src) -> Info {
        match s {
            Src::Input(k, b) => {
                let dims = self.program.inputs[k].1;
                Info {
                    ty: self.program.inputs[k].0,
                    dims,
                    reach: b.is_none().then_some(0),
                    extents: [0, 1, 2, 3].map(|d| d < dims),
                }
            }
            Src::Func(k) => self.infos[k],
            Src::Member(_) => unreachable!("only a family's own step reads its members"),
        }
    }

    /// Which dimensions of a func whose pure definition is `e` have a
    /// natural extent: those of a pure variable some read of `e` takes
    /// (affinely) at a coordinate where its source has one. Only reads that
    /// the compiler's constant folding cannot drop count: not those in a
    /// conditional (its condition may fold to a constant) or a comparison
    /// (`a == a` folds), nor in a `let` (which may go unused); nor members of
    /// the family being defined. That never overclaims.
    fn natural_extents(&self, e: &Expr) -> [bool; 4] {
        let mut extents = [false; 4];
        let mut stack = vec![e];
        while let Some(e) = stack.pop() {
            match &e.kind {
                Kind::If(..) | Kind::Call("select", _) => continue,
                Kind::Binary(op, ..) if ["==", "!=", "<", "<=", ">", ">="].contains(op) => continue,
                Kind::Block(_, value) => {
                    stack.push(value);
                    continue;
                }
                Kind::Read(src, coords) if !matches!(src, Src::Member(_)) => {
                    let source = self.info(*src).extents;
                    for (k, c) in coords.iter().enumerate() {
                        if let Kind::Leaf(text) = &c.kind {
                            if let Some(d) = affine_var(text) {
                                extents[d] |= source[k];
                            }
                        }
                    }
                }
                _ => {}
            }
            stack.extend(e.children());
        }
        extents
    }

    /// Defines the next func (sometimes two: a func and then that func
    /// through a boundary condition); the last one is an output, so neither
    /// a `bool` func nor a func value.
    fn func(&mut self, last: bool) {
        self.reach = None;
        self.in_fold = false;
        let choice = self.rng.below(100);
        let special = match choice {
            0..8 => Some(self.table()),
            8..14 => Some(self.histogram()),
            14..21 => self.template(),
            21..29 if !last => {
                if self.bounded_sources().is_empty() {
                    // None to apply one to yet: first a func that can take
                    // one.
                    self.bounded_reads = true;
                    let func = self.pure(self.program.funcs.len(), true);
                    self.bounded_reads = false;
                    self.push(func);
                    self.reach = None;
                }
                self.bounded()
            }
            29..36 => Some(self.family(self.program.funcs.len())),
            _ => None,
        };
        let func = special.unwrap_or_else(|| self.pure(self.program.funcs.len(), !last));
        self.push(func);
    }

    /// Adds `func`, whose reads made `self.reach`.
    fn push(&mut self, func: Func) {
        let extents = match &func.def {
            Def::Pure(e, _) => self.natural_extents(e),
            // The template's own funcs are not followed: claim none.
            Def::Template(..) => [false; 4],
            Def::Bounded(j, _) => self.infos[*j].extents,
            Def::Family { base, step, .. } => {
                let (a, b) = (self.natural_extents(base), self.natural_extents(step));
                [0, 1, 2, 3].map(|d| a[d] || b[d])
            }
        };
        self.infos.push(Info {
            ty: func.ty,
            dims: func.dims,
            reach: self.reach,
            extents,
        });
        self.program.funcs.push(func);
    }

    /// The text of pure variable `d` in the expression being generated: the
    /// variable, or the constant that stands for it in an update at a
    /// constant point.
    fn var(&self, d: usize) -> String {
        match self.point[d] {
            Some(v) if self.stepped == Some(d) => format!("({v} + l)"),
            Some(v) => v.to_string(),
            None => VARS[d].to_string(),
        }
    }

    /// A func with a pure definition (sometimes a block of `let`s), of any
    /// type (`bool` when `boolean` allows it), sometimes updated by a scan
    /// along x, at a constant point (in some dimensions) or at every point.
    fn pure(&mut self, k: usize, boolean: bool) -> Func {
        self.dims = dims_of(self.rng);
        let ty = if boolean && self.rng.chance(12) {
            Type::Bool
        } else {
            *self.rng.pick(&Type::ELEMENTS)
        };
        let value = if self.rng.chance(10) {
            self.block(ty, 2)
        } else {
            self.expr(ty, 3)
        };
        let mut updates = Vec::new();
        if ty != Type::Bool && self.rng.chance(15) {
            updates.push(self.scan(k, ty));
        }
        // Compound assignments that the type has.
        let ops: &[&'static str] = if ty == Type::Bool {
            &["", "&", "|", "^"]
        } else {
            &["", "+", "*"]
        };
        if self.rng.chance(12) {
            updates.push(self.point_update(ty, ops));
        }
        if self.rng.chance(10) {
            let op = *self.rng.pick(ops);
            let value = self.expr(ty, 2);
            updates.push(Update {
                rdom: None,
                lhs: VARS[..self.dims].join(", "),
                op,
                value,
            });
        }
        Func {
            dims: self.dims,
            ty,
            def: Def::Pure(value, updates),
        }
    }

    /// An update at a constant point in some dimensions (at least one) and
    /// at every point in the others, such as `f(9, y) += ...`, sometimes
    /// repeated by a compile-time loop along one of them (`for l in 0..3 {
    /// f(9 + l, y) += ...; }`, the value may use `l`): the constants lie
    /// inside every output region (see [`EXTENTS`]), so that its value reads
    /// inputs directly only where a read at the point may.
    fn point_update(&mut self, ty: Type, ops: &[&'static str]) -> Update {
        let fixed = self.rng.below(self.dims);
        let count = if self.rng.chance(30) {
            (2 + self.rng.below(2)).min(EXTENTS[fixed])
        } else {
            1
        };
        let mut point = [None; 4];
        for (d, p) in point.iter_mut().enumerate().take(self.dims) {
            if d == fixed {
                // Room for the loop's steps.
                *p = Some(MARGINS[d] + self.rng.below(EXTENTS[d] - count + 1) as i64);
            } else if self.rng.chance(40) {
                *p = Some(MARGINS[d] + self.rng.below(EXTENTS[d]) as i64);
            }
        }
        self.point = point;
        let looped = count > 1;
        if looped {
            self.stepped = Some(fixed);
            self.in_loop = true;
        }
        let value = self.expr(ty, 2);
        let lhs: Vec<String> = (0..self.dims)
            .map(|d| match point[d] {
                Some(_) => self.var(d),
                None => VARS[d].to_string(),
            })
            .collect();
        self.point = [None; 4];
        self.stepped = None;
        self.in_loop = false;
        let op = *self.rng.pick(ops);
        Update {
            rdom: looped.then(|| format!("l in 0..{count}")),
            lhs: lhs.join(", "),
            op,
            value,
        }
    }

    /// The funcs a boundary condition can apply to: those with a natural
    /// extent in every dimension that never read inputs directly.
    fn bounded_sources(&self) -> Vec<usize> {
        (0..self.program.funcs.len())
            .filter(|&j| {
                let i = self.infos[j];
                i.reach.is_none() && i.extents[..i.dims].iter().all(|&e| e)
            })
            .collect()
    }

    /// A func value through a boundary condition, `let fK = fJ.mode;`, of
    /// an earlier func that has a natural extent in every dimension and never
    /// reads inputs directly (so that it is defined wherever the condition
    /// reads it), if there is one.
    fn bounded(&mut self) -> Option<Func> {
        let sources = self.bounded_sources();
        if sources.is_empty() {
            return None;
        }
        let j = *self.rng.pick(&sources);
        let info = self.infos[j];
        // Mostly `clamp_edge` and `constant`, whose source region follows
        // the coordinates; `mirror`, `mirror_interior` and `wrap` need the
        // func over its whole natural extent, at every point of a
        // `compute_at`, which makes trials slow.
        let k = match self.rng.below(10) {
            0..=3 => 0,
            4..=6 => 4,
            r => r - 6,
        };
        let mode = if info.ty == Type::Bool {
            BOOL_BOUNDARIES[k]
        } else {
            BOUNDARIES[k]
        };
        Some(Func {
            dims: info.dims,
            ty: info.ty,
            def: Def::Bounded(j, mode),
        })
    }

    /// A func family `gK` built by a compile-time loop of 1 to 3 steps, each
    /// combining the previous member (read at a shift along x) with an
    /// expression that may use the loop variable `l`.
    fn family(&mut self, k: usize) -> Func {
        self.dims = dims_of(self.rng);
        let ty = *self.rng.pick(&Type::ELEMENTS);
        let base = self.expr(ty, 2);
        let base_reach = self.reach.take();
        self.in_loop = true;
        let other = self.expr(ty, 2);
        self.in_loop = false;
        let count = 2 + self.rng.below(3);
        // Each step moves the reach of the first member by the shift.
        let reach = base_reach.max(self.reach.take());
        let steps = count as i64 - 1;
        let mut shift = self.rng.below(3) as i64 - 1;
        if reach.is_some_and(|r| r + steps * shift.abs() > MARGIN) {
            shift = 0;
        }
        self.reach = reach.map(|r| r + steps * shift.abs());
        let coords = (0..self.dims)
            .map(|d| {
                let text = match (d, shift) {
                    (0, s) if s < 0 => format!("x - {}", -s),
                    (0, s) if s > 0 => format!("x + {s}"),
                    _ => VARS[d].to_string(),
                };
                Expr::leaf(Type::I32, text)
            })
            .collect();
        let previous = Expr {
            ty,
            kind: Kind::Read(Src::Member(k), coords),
        };
        let step = match self.rng.below(4) {
            0 => {
                let f = *self.rng.pick(&["min", "max"]);
                Expr {
                    ty,
                    kind: Kind::Call(f, vec![previous, other]),
                }
            }
            _ => {
                let op = *self.rng.pick(&["+", "-", "*"]);
                self.binary(ty, op, previous, other)
            }
        };
        Func {
            dims: self.dims,
            ty,
            def: Def::Family { base, step, count },
        }
    }
    /// A lookup table: a 1-D func of its coordinate, parameters and literals.
    fn table(&mut self) -> Func {
        let ty = *self.rng.pick(&Type::ELEMENTS);
        let i = Expr::leaf(Type::I32, "x");
        let scaled = Expr {
            ty: Type::I32,
            kind: Kind::Binary(
                ["*", "+", "^"][self.rng.below(3)],
                Box::new(i),
                Box::new(literal(Type::I32, self.rng)),
            ),
        };
        let value = Expr {
            ty,
            kind: Kind::Cast(Box::new(scaled), self.rng.chance(50)),
        };
        Func {
            dims: 1,
            ty,
            def: Def::Pure(value, vec![]),
        }
    }

    /// A histogram of an input, 16 bins: a scatter over a reduction domain.
    fn histogram(&mut self) -> Func {
        let k = self.rng.below(self.program.inputs.len());
        let dims = self.program.inputs[k].1;
        let at = ["rx, ry", "rx, ry, 1", "rx, ry, 1, 0"][dims - 2];
        let count = Type::U32;
        Func {
            dims: 1,
            ty: count,
            def: Def::Pure(
                literal(count, self.rng),
                vec![Update {
                    rdom: Some(format!(
                        "(rx, ry) in rdom(0..in{k}.width(), 0..in{k}.height())"
                    )),
                    lhs: format!("clamp(in{k}({at}) as i32, 0, 15)"),
                    op: "+",
                    value: Expr::leaf(count, "1"),
                }],
            ),
        }
    }

    /// A template instance over a 2-D numeric source, if there is one.
    fn template(&mut self) -> Option<Func> {
        let mut sources: Vec<Src> = (0..self.program.funcs.len())
            .map(Src::Func)
            .chain((0..self.program.inputs.len()).map(|k| Src::Input(k, None)))
            .filter(|&s| {
                let i = self.info(s);
                i.dims == 2 && i.ty != Type::Bool && i.reach.is_none_or(|r| r + 3 <= MARGIN)
            })
            .collect();
        for k in 0..self.program.inputs.len() {
            if self.program.inputs[k].1 == 2 {
                sources.push(Src::Input(k, Some(*self.rng.pick(&BOUNDARIES))));
            }
        }
        if sources.is_empty() {
            return None;
        }
        let src = *self.rng.pick(&sources);
        let by = 1 + self.rng.below(2) as i64;
        let info = self.info(src);
        self.reach = info.reach.map(|r| r + by + 1);
        let (name, _) = *self.rng.pick(&TEMPLATES);
        Some(Func {
            dims: 2,
            ty: info.ty,
            def: Def::Template(name, src, by),
        })
    }

    /// A running sum (or maximum, or xor) along x of func `k`, over
    /// `MARGIN + 1..MARGIN + 5`: inside every output region, so that the
    /// func's region, which covers the reduction domain, reads inputs only
    /// where a direct read at the point may.
    fn scan(&mut self, k: usize, ty: Type) -> Update {
        let rest: String = VARS[1..self.dims]
            .iter()
            .map(|v| format!(", {v}"))
            .collect();
        let prev = Expr::leaf(ty, format!("f{k}(r - 1{rest})"));
        let here = Expr::leaf(ty, format!("f{k}(r{rest})"));
        let ops: &[&str] = if ty.is_int() {
            &["+", "max", "^"]
        } else {
            &["+", "max"]
        };
        let value = match *self.rng.pick(ops) {
            "max" => Expr {
                ty,
                kind: Kind::Call("max", vec![prev, here]),
            },
            op => Expr {
                ty,
                kind: Kind::Binary(op, Box::new(prev), Box::new(here)),
            },
        };
        Update {
            rdom: Some(format!("r in rdom({}..{})", MARGIN + 1, MARGIN + 5)),
            lhs: format!("r{rest}"),
            op: "",
            value,
        }
    }

    /// An expression of type `ty`, at most `depth` operators deep.
    fn expr(&mut self, ty: Type, depth: usize) -> Expr {
        if depth == 0 || self.rng.chance(20) {
            return self.leaf(ty);
        }
        let d = depth - 1;
        if ty == Type::Bool {
            if self.rng.chance(5) {
                return self.block(ty, d);
            }
            return match self.rng.below(4) {
                0 => {
                    let (a, b) = (self.expr(ty, d), self.expr(ty, d));
                    let op = *self.rng.pick(&["&&", "||", "&", "^"]);
                    self.binary(ty, op, a, b)
                }
                1 => {
                    let a = self.expr(ty, d);
                    Expr {
                        ty,
                        kind: Kind::Unary("!", Box::new(a)),
                    }
                }
                _ => {
                    let u = *self.rng.pick(&Type::ELEMENTS);
                    let (a, b) = (self.expr(u, d), self.operand(u, d));
                    let op = *self.rng.pick(&["==", "!=", "<", "<=", ">", ">="]);
                    self.binary(ty, op, a, b)
                }
            };
        }
        match self.rng.below(14) {
            0..=2 => {
                let ops: &[&str] = if ty.is_int() {
                    &["+", "-", "*", "/", "%", "&", "|", "^", "+", "-"]
                } else {
                    &["+", "-", "*", "/", "%", "+", "-"]
                };
                let op = *self.rng.pick(ops);
                let a = self.expr(ty, d);
                let b = self.operand(ty, d);
                self.binary(ty, op, a, b)
            }
            3 if ty.is_int() => {
                let op = *self.rng.pick(&["<<", ">>"]);
                let a = self.expr(ty, d);
                let amount = *self.rng.pick(&Type::ELEMENTS[..8]);
                let b = if self.rng.chance(70) {
                    Expr::leaf(ty, (1 + self.rng.below(ty.bits() as usize - 1)).to_string())
                } else {
                    self.expr(amount, d)
                };
                self.binary(ty, op, a, b)
            }
            4 | 5 => {
                let from = *self.rng.pick(&Type::ELEMENTS);
                let a = self.expr(from, d);
                Expr {
                    ty,
                    kind: Kind::Cast(Box::new(a), self.rng.chance(40)),
                }
            }
            6 => {
                let c = self.expr(Type::Bool, d);
                let (a, b) = (self.expr(ty, d), self.expr(ty, d));
                if self.rng.chance(50) {
                    Expr {
                        ty,
                        kind: Kind::Call("select", vec![c, a, b]),
                    }
                } else {
                    Expr {
                        ty,
                        kind: Kind::If(Box::new(c), Box::new(a), Box::new(b)),
                    }
                }
            }
            7 => {
                let f = *self.rng.pick(&["min", "max", "clamp"]);
                let mut args = vec![self.expr(ty, d), self.operand(ty, d)];
                if f == "clamp" {
                    args.push(self.operand(ty, d));
                }
                Expr {
                    ty,
                    kind: Kind::Call(f, args),
                }
            }
            8 if ty.is_float() || ty.is_signed() => {
                let a = self.expr(ty, d);
                if self.rng.chance(50) {
                    Expr {
                        ty,
                        kind: Kind::Unary("-", Box::new(a)),
                    }
                } else {
                    Expr {
                        ty,
                        kind: Kind::Call("abs", vec![a]),
                    }
                }
            }
            8 => {
                // absd of two operands whose unsigned type is `ty`.
                let u = if self.rng.chance(50) {
                    ty
                } else {
                    Type::signed_of_bits(ty.bits())
                };
                let args = vec![self.expr(u, d), self.expr(u, d)];
                Expr {
                    ty,
                    kind: Kind::Call("absd", args),
                }
            }
            9 if ty.is_float() => {
                // `fast_exp` and `fast_log` may be approximate (the guide
                // allows 1e-3 relative) but are computed exactly today by
                // the interpreter, the executor and the generated code
                // alike, so they are compared bit for bit like everything
                // else (as `tests/vector_ops.rs` does); a tolerance would
                // mean nothing once a value goes through a cast or a
                // comparison.
                let f = if self.rng.chance(50) {
                    *self.rng.pick(&["fast_exp", "fast_log"])
                } else {
                    *self.rng.pick(&[
                        "sqrt", "floor", "ceil", "round", "trunc", "exp", "log", "sin", "pow",
                        "atan2", "fma", "lerp",
                    ])
                };
                let arity = match f {
                    "pow" | "atan2" => 2,
                    "fma" | "lerp" => 3,
                    _ => 1,
                };
                let args = (0..arity).map(|_| self.expr(ty, d)).collect();
                Expr {
                    ty,
                    kind: Kind::Call(f, args),
                }
            }
            10 if !self.in_fold => {
                self.in_fold = true;
                let term = self.read(ty, true);
                self.in_fold = false;
                let f = *self.rng.pick(&["sum", "maximum", "minimum", "product"]);
                Expr {
                    ty,
                    kind: Kind::Fold(f, Box::new(term)),
                }
            }
            11 if self.rng.chance(50) => self.block(ty, d),
            _ => self.leaf(ty),
        }
    }

    /// A block of one or two `let`s (of any type, `bool` included) and a
    /// value of type `ty` that may use them, like the values after them.
    fn block(&mut self, ty: Type, depth: usize) -> Expr {
        let scope = self.lets.len();
        let mut lets = Vec::new();
        for _ in 0..1 + self.rng.below(2) {
            let t = match self.rng.below(10) {
                0 => Type::Bool,
                1..=4 => ty,
                _ => *self.rng.pick(&Type::ELEMENTS),
            };
            let value = self.expr(t, depth);
            let name = format!("a{}", self.bound);
            self.bound += 1;
            self.lets.push((name.clone(), t));
            lets.push((name, value));
        }
        let value = self.expr(ty, depth);
        self.lets.truncate(scope);
        Expr {
            ty,
            kind: Kind::Block(lets, Box::new(value)),
        }
    }

    /// `e` as a value of type `ty`: cast between numbers (saturating or
    /// not), a `bool` through an integer (it converts to no float), and a
    /// number to a `bool` by a comparison (nothing converts to `bool`).
    fn convert(&mut self, e: Expr, ty: Type) -> Expr {
        if e.ty == ty {
            return e;
        }
        if ty == Type::Bool {
            let op = *self.rng.pick(&["<", "!=", ">="]);
            let bound = literal(e.ty, self.rng);
            return self.binary(ty, op, e, bound);
        }
        if e.ty == Type::Bool {
            let int = if ty.is_float() { Type::U8 } else { ty };
            let int = Expr {
                ty: int,
                kind: Kind::Cast(Box::new(e), false),
            };
            return self.convert(int, ty);
        }
        Expr {
            ty,
            kind: Kind::Cast(Box::new(e), self.rng.chance(30)),
        }
    }

    /// The second operand of a binary operation of type `ty`: of that type,
    /// or of one that converts to it (mixed operands).
    fn operand(&mut self, ty: Type, depth: usize) -> Expr {
        if self.rng.chance(25) {
            let narrower: Vec<Type> = Type::ELEMENTS
                .iter()
                .copied()
                .filter(|&u| u != ty && Type::unify(ty, u) == Some(ty))
                .collect();
            if !narrower.is_empty() {
                let u = *self.rng.pick(&narrower);
                return self.expr(u, depth);
            }
        }
        if self.rng.chance(15) && ty.is_int() {
            // An unsuffixed literal, typed by the other operand.
            return Expr::leaf(ty, (1 + self.rng.below(9)).to_string());
        }
        self.expr(ty, depth)
    }

    fn binary(&mut self, ty: Type, op: &'static str, a: Expr, b: Expr) -> Expr {
        Expr {
            ty,
            kind: Kind::Binary(op, Box::new(a), Box::new(b)),
        }
    }

    /// A leaf of type `ty`: a read (converted when the source has another
    /// type), a name a block bound, a literal, a parameter, a coordinate, or
    /// a compile-time loop's variable.
    fn leaf(&mut self, ty: Type) -> Expr {
        if !self.lets.is_empty() && self.rng.chance(30) {
            let (name, t) = self.rng.pick(&self.lets).clone();
            return self.convert(Expr::leaf(t, name), ty);
        }
        if self.in_loop && ty != Type::Bool && self.rng.chance(20) {
            return Expr {
                ty,
                kind: Kind::Cast(Box::new(Expr::leaf(Type::I32, "l")), false),
            };
        }
        match self.rng.below(10) {
            0..=5 if ty != Type::Bool => self.read(ty, false),
            0..=2 => self.read(ty, false),
            6 => {
                let params: Vec<usize> = (0..self.program.params.len())
                    .filter(|&k| self.program.params[k] == ty)
                    .collect();
                if params.is_empty() {
                    literal(ty, self.rng)
                } else {
                    Expr::leaf(ty, format!("p{}", self.rng.pick(&params)))
                }
            }
            7 if ty != Type::Bool => {
                let d = self.rng.below(self.dims);
                let v = self.var(d);
                Expr {
                    ty,
                    kind: Kind::Cast(Box::new(Expr::leaf(Type::I32, v)), false),
                }
            }
            _ if ty == Type::Bool => {
                let u = *self.rng.pick(&Type::ELEMENTS);
                let a = self.read(u, false);
                let b = literal(u, self.rng);
                self.binary(ty, "<", a, b)
            }
            _ => literal(ty, self.rng),
        }
    }

    /// A read of an input or an earlier func, converted to `ty` if needed;
    /// in an inline reduction (`fold`), at `x + i`. Dimensions past the
    /// second are read at the func's own variable or at a constant.
    fn read(&mut self, ty: Type, fold: bool) -> Expr {
        let mut sources: Vec<Src> = (0..self.program.funcs.len()).map(Src::Func).collect();
        for k in 0..self.program.inputs.len() {
            sources.push(Src::Input(k, None));
            sources.push(Src::Input(k, Some(*self.rng.pick(&BOUNDARIES))));
        }
        if self.bounded_reads {
            sources.retain(|&s| self.info(s).reach.is_none());
        }
        // Sources of the type asked for, twice as likely.
        let same: Vec<Src> = sources
            .iter()
            .copied()
            .filter(|&s| self.info(s).ty == ty)
            .collect();
        sources.extend(same);
        let src = *self.rng.pick(&sources);
        let info = self.info(src);
        let coords: Vec<Expr> = match info.dims {
            1 => vec![self.gather()],
            dims => {
                // A func through a boundary condition is read at offsets or
                // down- or upsampled, not at a computed coordinate: that
                // would need its source over its whole natural extent at
                // every point of a `compute_at`, which makes trials slow.
                let bounded = matches!(src, Src::Func(j) if matches!(self.program.funcs[j].def, Def::Bounded(..)));
                let mode = match info.reach {
                    Some(_) => 0,
                    None if bounded => self.rng.below(3),
                    None => self.rng.below(6),
                };
                let mut coords = Vec::new();
                for (d, &extent) in EXTENTS.iter().enumerate().take(dims) {
                    let var = self.var(d);
                    let text = if d >= 2 {
                        if self.dims > d && self.rng.chance(70) {
                            var
                        } else {
                            self.rng.below(extent).to_string()
                        }
                    } else {
                        let k = self.rng.below(5) as i64 - 2;
                        let i = if fold && d == 0 { " + i" } else { "" };
                        let offset = match k {
                            0 => String::new(),
                            k if k < 0 => format!(" - {}", -k),
                            k => format!(" + {k}"),
                        };
                        if let Some(r) = info.reach {
                            let reach = r + k.abs() + fold as i64;
                            if reach > MARGIN {
                                // Too far for a direct read: read at the point.
                                coords.push(Expr::leaf(Type::I32, format!("{var}{i}")));
                                self.reach = Some(self.reach.unwrap_or(0).max(r + fold as i64));
                                continue;
                            }
                            self.reach = Some(self.reach.unwrap_or(0).max(reach));
                        }
                        match mode {
                            1 => format!("2 * {var}{offset}{i}"),
                            2 => format!("{var} / 2{offset}{i}"),
                            3 if d == 0 => {
                                coords.push(self.gather());
                                continue;
                            }
                            _ => format!("{var}{offset}{i}"),
                        }
                    };
                    coords.push(Expr::leaf(Type::I32, text));
                }
                coords
            }
        };
        let read = Expr {
            ty: info.ty,
            kind: Kind::Read(src, coords),
        };
        self.convert(read, ty)
    }

    /// A coordinate computed from data, bounded by a clamp.
    fn gather(&mut self) -> Expr {
        let from = *self.rng.pick(&Type::ELEMENTS);
        let value = self.read(from, false);
        let index = Expr {
            ty: Type::I32,
            kind: Kind::Cast(Box::new(value), false),
        };
        Expr {
            ty: Type::I32,
            kind: Kind::Call(
                "clamp",
                vec![
                    index,
                    Expr::leaf(Type::I32, "-2"),
                    Expr::leaf(Type::I32, "17"),
                ],
            ),
        }
    }
}
