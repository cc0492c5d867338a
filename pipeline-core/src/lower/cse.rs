//! Common subexpressions of the bounds move into symbols of their own.
//!
//! Loop synthesis writes each func's region in a fused group from the
//! same pieces: in a chain of sliding stencils every `f.stored.min.x`,
//! `f.iteration.min.x` and so on is `max(M + c, f.min.x)` for one long `M`
//! (the first column the strip computes), spelt out in full each time. The
//! values of a run of consecutive symbol bindings are read as one graph of
//! shared nodes (value numbering); a node of some size that two places use
//! is bound once, just before its first use, and named there. What the
//! later passes and the generated code see is the same arithmetic, written
//! once. (Halide's `CSE` pass does the same for each expression.)
//!
//! ```text
//! let a = max(m + select(e >= 8, min(0, e - 8), 0) - 1, f.min)
//! let b = min(m + select(e >= 8, min(0, e - 8), 0) + 9, g.max)
//!   =>
//! let cse.0 = m + select(e >= 8, min(0, e - 8), 0)
//! let a = max(cse.0 - 1, f.min)
//! let b = min(cse.0 + 9, g.max)
//! ```
//!
//! Only symbol bindings are rewritten (never a loop's bounds, a condition
//! or a store, whose shapes the partitioning and the vector code read), and
//! none inside a vectorized loop.

use crate::hash::{HashMap, Table};
use crate::ir::{BinOp, Expr, ExprKind, LoopVar, Stmt, SymId, Type, UnOp};
use crate::schedule::LoopKind;
use std::sync::Arc;

/// The smallest subexpression worth a binding of its own, in nodes as it
/// is written (a subexpression bound already counts as one): `(a + 7) >> 3`
/// is 4.
const MIN_NODES: usize = 4;

/// Binds the common subexpressions of `s`'s runs of symbol bindings.
/// `names` are the names of the local symbols, numbered after the
/// `global` ones of the bounds program; the new ones (`cse.N`) are
/// appended to it.
pub fn cse(s: Stmt, global: usize, names: &mut Vec<String>) -> Stmt {
    let mut c = Cse {
        global,
        names,
        made: 0,
    };
    c.stmt(s)
}

struct Cse<'a> {
    global: usize,
    names: &'a mut Vec<String>,
    made: usize,
}

impl Cse<'_> {
    fn new_sym(&mut self) -> SymId {
        let s = self.global + self.names.len();
        self.names.push(format!("cse.{}", self.made));
        self.made += 1;
        s
    }

    fn stmt(&mut self, s: Stmt) -> Stmt {
        match s {
            Stmt::LetSym { .. } => {
                let mut run = Vec::new();
                let mut rest = s;
                while let Stmt::LetSym { sym, value, body } = rest {
                    run.push((sym, value));
                    rest = *body;
                }
                let body = self.stmt(rest);
                // A symbol holds an i64 (`Stmt::LetSym`): conditions and
                // narrower integers inside the values stay where they are.
                let i64_only = |t: Type| t == Type::I64;
                share(run, &mut || self.new_sym(), &i64_only)
                    .into_iter()
                    .rev()
                    .fold(body, |body, (sym, value)| Stmt::LetSym {
                        sym,
                        value,
                        body: Box::new(body),
                    })
            }
            Stmt::For {
                kind: LoopKind::Vectorized,
                ..
            } => s,
            s => s.map_children(|c| self.stmt(c)),
        }
    }
}

/// The bindings of `run` (in order), with the subexpressions they share
/// bound before their first use, to symbols that `new_sym` numbers; only
/// subexpressions of a type `bindable` accepts are bound.
pub fn share(
    run: Vec<(SymId, Expr)>,
    new_sym: &mut dyn FnMut() -> SymId,
    bindable: &dyn Fn(Type) -> bool,
) -> Vec<(SymId, Expr)> {
    if run.len() < 2 {
        return run;
    }
    let mut graph = Graph::default();
    let roots: Vec<Option<usize>> = run.iter().map(|(_, v)| graph.intern(v)).collect();
    let mut uses = vec![0usize; graph.nodes.len()];
    for r in roots.iter().flatten() {
        uses[*r] += 1;
    }
    for node in &graph.nodes {
        node.key.children().for_each(|c| uses[c] += 1);
    }
    if !uses
        .iter()
        .enumerate()
        .any(|(n, &u)| u >= 2 && graph.size[n] >= MIN_NODES)
    {
        return run;
    }
    let mut out = Vec::new();
    let mut bound: HashMap<usize, SymId> = HashMap::default();
    for ((sym, value), root) in run.into_iter().zip(roots) {
        let Some(root) = root else {
            out.push((sym, value));
            continue;
        };
        let value = match bound.get(&root) {
            Some(&s) => Expr::new(ExprKind::Sym(s), value.ty),
            None => {
                let mut b = Builder {
                    g: &graph,
                    uses: &uses,
                    bound: &mut bound,
                    out: &mut out,
                    new_sym: &mut *new_sym,
                    bindable,
                };
                let (e, _) = b.build(root, true);
                bound.insert(root, sym);
                e
            }
        };
        out.push((sym, value));
    }
    out
}

/// Rebuilds expressions from a [`Graph`], binding shared nodes.
struct Builder<'a> {
    g: &'a Graph,
    uses: &'a [usize],
    /// The symbol that names each node bound so far.
    bound: &'a mut HashMap<usize, SymId>,
    /// The bindings made so far.
    out: &'a mut Vec<(SymId, Expr)>,
    new_sym: &'a mut dyn FnMut() -> SymId,
    bindable: &'a dyn Fn(Type) -> bool,
}

impl Builder<'_> {
    /// Node `n` as an expression, each shared node in it bound (in `out`)
    /// the first time it is met and named by its symbol after that; and the
    /// expression's size.
    fn build(&mut self, n: usize, root: bool) -> (Expr, usize) {
        let g = self.g;
        let ty = g.nodes[n].ty;
        if let Some(&s) = self.bound.get(&n) {
            return (Expr::new(ExprKind::Sym(s), ty), 1);
        }
        let mut size = 1;
        let mut sub = |c: usize| {
            let (e, k) = self.build(c, false);
            size += k;
            Arc::new(e)
        };
        let kind = match &g.nodes[n].key {
            Key::Int(v) => ExprKind::Int(*v),
            Key::Sym(s) => ExprKind::Sym(*s),
            Key::Loop(l) => ExprKind::Loop(l.clone()),
            Key::Param(i) => ExprKind::Param(*i),
            Key::InputMin(i, d) => ExprKind::InputMin(*i, *d),
            Key::InputExtent(i, d) => ExprKind::InputExtent(*i, *d),
            Key::Unary(op, a) => ExprKind::Unary(*op, sub(*a)),
            Key::Binary(op, a, b) => {
                let a = sub(*a);
                ExprKind::Binary(*op, a, sub(*b))
            }
            Key::Select(c, a, b) => {
                let c = sub(*c);
                let a = sub(*a);
                ExprKind::Select(c, a, sub(*b))
            }
            Key::Cast(a) => ExprKind::Cast(sub(*a)),
        };
        let e = Expr::new(kind, ty);
        if root || self.uses[n] < 2 || size < MIN_NODES || !(self.bindable)(ty) {
            return (e, size);
        }
        let s = (self.new_sym)();
        self.out.push((s, e));
        self.bound.insert(n, s);
        (Expr::new(ExprKind::Sym(s), ty), 1)
    }
}

/// A node of the graph: its operation and the ids of its operands.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Key {
    Int(i128),
    Sym(SymId),
    Loop(LoopVar),
    Param(usize),
    InputMin(usize, usize),
    InputExtent(usize, usize),
    Unary(UnOp, usize),
    Binary(BinOp, usize, usize),
    Select(usize, usize, usize),
    Cast(usize),
}

impl Key {
    fn children(&self) -> impl Iterator<Item = usize> {
        let (a, b, c) = match *self {
            Key::Unary(_, a) | Key::Cast(a) => (Some(a), None, None),
            Key::Binary(_, a, b) => (Some(a), Some(b), None),
            Key::Select(c, a, b) => (Some(c), Some(a), Some(b)),
            _ => (None, None, None),
        };
        [a, b, c].into_iter().flatten()
    }
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct Node {
    key: Key,
    ty: Type,
}

/// Expressions as one graph in which equal subexpressions are one node.
#[derive(Default)]
struct Graph {
    nodes: Vec<Node>,
    ids: Table<Node, usize>,
    /// Each node's size as a tree.
    size: Vec<usize>,
}

impl Graph {
    /// The node of `e`, or `None` when `e` holds something other than the
    /// integer arithmetic of bounds (such a value is left as it is).
    fn intern(&mut self, e: &Expr) -> Option<usize> {
        crate::deep(|| self.intern_here(e))
    }

    fn intern_here(&mut self, e: &Expr) -> Option<usize> {
        let key = match &e.kind {
            ExprKind::Int(v) => Key::Int(*v),
            ExprKind::Sym(s) => Key::Sym(*s),
            ExprKind::Loop(l) => Key::Loop(l.clone()),
            ExprKind::Param(i) => Key::Param(*i),
            ExprKind::InputMin(i, d) => Key::InputMin(*i, *d),
            ExprKind::InputExtent(i, d) => Key::InputExtent(*i, *d),
            ExprKind::Unary(op, a) => Key::Unary(*op, self.intern(a)?),
            ExprKind::Binary(op, a, b) => Key::Binary(*op, self.intern(a)?, self.intern(b)?),
            ExprKind::Select(c, a, b) => {
                Key::Select(self.intern(c)?, self.intern(a)?, self.intern(b)?)
            }
            ExprKind::Cast(a) => Key::Cast(self.intern(a)?),
            _ => return None,
        };
        let node = Node { key, ty: e.ty };
        if let Some(&id) = self.ids.get(&node) {
            return Some(id);
        }
        let size = 1 + node.key.children().map(|c| self.size[c]).sum::<usize>();
        let id = self.nodes.len();
        self.nodes.push(node.clone());
        self.size.push(size);
        self.ids.insert(node, id);
        Some(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(s: SymId) -> Expr {
        Expr::new(ExprKind::Sym(s), Type::I64)
    }
    fn int(v: i128) -> Expr {
        Expr::new(ExprKind::Int(v), Type::I64)
    }
    fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::new(ExprKind::Binary(op, Arc::new(a), Arc::new(b)), Type::I64)
    }
    fn lets(run: Vec<(SymId, Expr)>, end: Stmt) -> Stmt {
        run.into_iter()
            .rev()
            .fold(end, |body, (sym, value)| Stmt::LetSym {
                sym,
                value,
                body: Box::new(body),
            })
    }
    fn flatten(mut s: &Stmt) -> Vec<(SymId, &Expr)> {
        let mut out = Vec::new();
        while let Stmt::LetSym { sym, value, body } = s {
            out.push((*sym, value));
            s = body;
        }
        out
    }

    /// Evaluates `e` with the symbols' values in `env`.
    fn eval(e: &Expr, env: &HashMap<SymId, i128>) -> i128 {
        match &e.kind {
            ExprKind::Int(v) => *v,
            ExprKind::Sym(s) => env[s],
            ExprKind::Binary(BinOp::Add, a, b) => eval(a, env) + eval(b, env),
            ExprKind::Binary(BinOp::Sub, a, b) => eval(a, env) - eval(b, env),
            ExprKind::Binary(BinOp::Mul, a, b) => eval(a, env) * eval(b, env),
            ExprKind::Binary(BinOp::Max, a, b) => eval(a, env).max(eval(b, env)),
            ExprKind::Binary(BinOp::Min, a, b) => eval(a, env).min(eval(b, env)),
            other => unreachable!("{other:?}"),
        }
    }

    fn run_all(s: &Stmt, inputs: &[(SymId, i128)]) -> HashMap<SymId, i128> {
        let mut env: HashMap<SymId, i128> = inputs.iter().copied().collect();
        for (sym, value) in flatten(s) {
            let v = eval(value, &env);
            env.insert(sym, v);
        }
        env
    }

    #[test]
    fn a_shared_sum_is_bound_once_before_its_first_use() {
        // m = (s0 * 8 + s1) * 2, used by three bindings.
        let m = || {
            bin(
                BinOp::Mul,
                bin(BinOp::Add, bin(BinOp::Mul, sym(0), int(8)), sym(1)),
                int(2),
            )
        };
        let run = vec![
            (10, bin(BinOp::Add, sym(2), int(1))),
            (11, bin(BinOp::Max, bin(BinOp::Sub, m(), int(1)), sym(3))),
            (12, bin(BinOp::Min, bin(BinOp::Add, m(), int(9)), sym(10))),
            (13, bin(BinOp::Add, m(), sym(11))),
        ];
        let before = lets(run.clone(), Stmt::Block(vec![]));
        let mut names = Vec::new();
        let after = cse(before.clone(), 20, &mut names);
        assert_eq!(names, ["cse.0"]);
        let order: Vec<SymId> = flatten(&after).iter().map(|(s, _)| *s).collect();
        assert_eq!(
            order,
            [10, 20, 11, 12, 13],
            "bound just before its first use"
        );
        let (_, shared) = flatten(&after)[1];
        assert_eq!(*shared, m());
        let inputs = [(0, 5), (1, -3), (2, 7), (3, 40)];
        let (a, b) = (run_all(&before, &inputs), run_all(&after, &inputs));
        for s in [10, 11, 12, 13] {
            assert_eq!(a[&s], b[&s], "symbol {s}");
        }
    }

    #[test]
    fn a_repeated_value_names_the_first_binding() {
        let v = || {
            bin(
                BinOp::Max,
                bin(BinOp::Add, sym(0), int(3)),
                bin(BinOp::Sub, sym(1), int(2)),
            )
        };
        let before = lets(vec![(5, v()), (6, v())], Stmt::Block(vec![]));
        let mut names = Vec::new();
        let after = cse(before, 9, &mut names);
        assert!(names.is_empty());
        let got = flatten(&after);
        assert_eq!(*got[0].1, v());
        assert_eq!(*got[1].1, sym(5));
    }

    #[test]
    fn only_i64_subexpressions_become_symbols() {
        // Both values share the condition `(s0 <= s1) && (s2 <= s3)` (7
        // nodes, a bool) and the i64 sum `s0 * 8 + s2` (5 nodes).
        let cond = || {
            let le = |a, b| {
                Expr::new(
                    ExprKind::Binary(BinOp::Le, Arc::new(sym(a)), Arc::new(sym(b))),
                    Type::Bool,
                )
            };
            Expr::new(
                ExprKind::Binary(BinOp::And, Arc::new(le(0, 1)), Arc::new(le(2, 3))),
                Type::Bool,
            )
        };
        let sum = || bin(BinOp::Add, bin(BinOp::Mul, sym(0), int(8)), sym(2));
        let select = |a: Expr| {
            Expr::new(
                ExprKind::Select(Arc::new(cond()), Arc::new(a), Arc::new(int(0))),
                Type::I64,
            )
        };
        let before = lets(
            vec![
                (5, select(sum())),
                (6, select(bin(BinOp::Add, sum(), int(1)))),
            ],
            Stmt::Block(vec![]),
        );
        let mut names = Vec::new();
        let after = cse(before, 9, &mut names);
        let got = flatten(&after);
        assert_eq!(names, ["cse.0"], "{got:?}");
        assert_eq!((got[0].0, got[0].1), (9, &sum()));
        assert!(got.iter().all(|(_, v)| v.ty == Type::I64));
    }

    #[test]
    fn small_or_unshared_subexpressions_stay() {
        let before = lets(
            vec![
                (5, bin(BinOp::Add, bin(BinOp::Add, sym(0), int(3)), int(1))),
                (6, bin(BinOp::Max, bin(BinOp::Add, sym(0), int(3)), sym(1))),
            ],
            Stmt::Block(vec![]),
        );
        let mut names = Vec::new();
        let after = cse(before.clone(), 9, &mut names);
        assert!(names.is_empty());
        assert_eq!(format!("{after:?}"), format!("{before:?}"));
    }
}
