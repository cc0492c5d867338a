//! What a closure of the generated code must copy: a stage outlined into a
//! function of its own, and the body of a parallel loop, take local copies
//! of the values they read, because LLVM cannot keep a value behind a
//! captured reference in a register across stores through a raw pointer.
//!
//! Both sides are names, not tokens: [`Readable`] holds the values bound so
//! far, and [`names_read`] finds what a statement's code may read from its
//! lowered form. (Scanning the generated tokens for identifiers, as this
//! used to, cloned every token of every outlined stage, some of them twice,
//! and crossed the compiler's bridge once a token in a real build.)

use super::{input_name, local_sym_name, reader_name};
use crate::analysis::bounds::BoundsProgram;
use crate::codegen::names;
use crate::hash::Table;
use crate::ir::*;

/// The values a loop body may read, by name, in the order they were bound:
/// syms, params, inputs, coordinates and loop variables of enclosing
/// loops, and the reader views of funcs computed so far. It grows as code
/// is generated and shrinks back at the end of each scope. Names are kept
/// as [`Name`]s and spelt only for the copies made (spelling every one
/// bound and read cost 19 M of the 100-func chain's 706 M instructions,
/// unoptimized).
#[derive(Clone, Default)]
pub(super) struct Readable {
    order: Vec<Name>,
    /// How many times each bound name is bound.
    count: Table<Name, u32>,
}

impl Readable {
    /// Binds `name` (again, if it was bound already).
    pub(super) fn push(&mut self, name: Name) {
        *self.count.get_or_insert_with(name.clone(), || 0) += 1;
        self.order.push(name);
    }

    /// How many bindings there are: a scope to return to.
    pub(super) fn len(&self) -> usize {
        self.order.len()
    }

    /// Forgets the bindings made after the first `n`.
    pub(super) fn truncate(&mut self, n: usize) {
        for name in self.order.drain(n..) {
            let left = self.count.get_mut(&name).expect("a bound name is counted");
            *left -= 1;
            if *left == 0 {
                self.count.remove(&name);
            }
        }
    }

    /// Whether `name` is bound.
    pub(super) fn contains(&self, name: &Name) -> bool {
        self.count.contains_key(name)
    }

    /// The bound names that `used` holds, but for `except`, in the order
    /// they were bound (so the generated code does not depend on hashing).
    pub(super) fn copies<'a>(
        &'a self,
        used: &'a Table<Name, ()>,
        except: &'a Name,
    ) -> impl Iterator<Item = &'a Name> + 'a {
        let mut seen = Table::default();
        self.order
            .iter()
            .filter(move |n| *n != except && used.contains_key(n) && seen.insert(*n, ()).is_none())
    }
}

/// The names of the values that the generated code of `s` may read from
/// outside it: every one it reads, and perhaps a few it only binds.
pub(super) fn names_read(s: &Stmt, b: &BoundsProgram) -> Table<Name, ()> {
    let mut out = Table::default();
    stmt(s, b, &mut out);
    out
}

/// A value the generated code binds or reads, before it is spelt out
/// (also the key of `Gen::named`'s identifiers).
#[derive(Clone, PartialEq, Eq, Hash)]
pub(super) enum Name {
    Coord(Coord),
    Param(usize),
    InputMin(usize, usize),
    InputExtent(usize, usize),
    /// The bounds program's symbols, `__s`.
    Syms,
    LocalSym(SymId),
    Loop(LoopVar),
    Reader(FuncId),
    Input(usize),
}

impl Name {
    /// The identifier the generated code binds it to.
    pub(super) fn spelt(&self) -> String {
        match self {
            Name::Coord(c) => names::coord(*c),
            Name::Param(i) => names::param(*i),
            Name::InputMin(i, d) => names::input_min(*i, *d),
            Name::InputExtent(i, d) => names::input_extent(*i, *d),
            Name::Syms => "__s".to_string(),
            Name::LocalSym(s) => local_sym_name(*s),
            Name::Loop(v) => names::loop_var(v),
            Name::Reader(f) => reader_name(*f),
            Name::Input(i) => input_name(*i),
        }
    }
}

fn stmt(s: &Stmt, b: &BoundsProgram, out: &mut Table<Name, ()>) {
    // A store's expressions name its func's coordinates.
    let stage = match s {
        Stmt::Store { func, update, .. } => Some((*func, *update)),
        _ => None,
    };
    for e in s.own_exprs() {
        expr(e, stage, b, out);
    }
    if let Stmt::CopyToOutput { func, .. } = s {
        out.insert(Name::Reader(*func), ());
    }
    for c in s.children() {
        stmt(c, b, out);
    }
}

fn expr(
    e: &Expr,
    stage: Option<(FuncId, Option<usize>)>,
    b: &BoundsProgram,
    out: &mut Table<Name, ()>,
) {
    e.visit(&mut |n| {
        let name = match &n.kind {
            ExprKind::Var(d) => match stage {
                Some((f, _)) => Name::Coord(Coord::Pure(f, *d)),
                None => return,
            },
            ExprKind::RVar(r) => match stage {
                Some((f, Some(k))) => Name::Coord(Coord::Reduction(f, k, *r)),
                _ => return,
            },
            ExprKind::Param(i) => Name::Param(*i),
            ExprKind::InputMin(i, d) => Name::InputMin(*i, *d),
            ExprKind::InputExtent(i, d) => Name::InputExtent(*i, *d),
            ExprKind::Sym(s) if *s < b.syms.len() => Name::Syms,
            ExprKind::Sym(s) => Name::LocalSym(*s),
            ExprKind::Loop(v) => Name::Loop(v.clone()),
            ExprKind::Load {
                source: Source::Func(g),
                ..
            } => Name::Reader(*g),
            // (Boundary conditions name the input's bounds as
            // `InputMin` and `InputExtent` nodes.)
            ExprKind::Load {
                source: Source::Input(i),
                ..
            } => Name::Input(*i),
            _ => return,
        };
        out.insert(name, ());
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::HashSet;

    /// The outermost statements that are stages of `f`, in order.
    fn stages_of<'s>(s: &'s Stmt, f: FuncId, out: &mut Vec<&'s Stmt>) {
        if s.stage_func() == Some(f) {
            out.push(s);
            return;
        }
        s.children().iter().for_each(|c| stages_of(c, f, out));
    }

    #[test]
    fn a_stage_may_read_what_its_definition_names_and_nothing_else() {
        let source = "
            fn blur(input: Image<u16, 2>, k: u16) -> Image<u16, 2> {
                let c = input.clamp_edge();
                bx(x, y) = c(x - 1, y) + c(x, y) + c(x + 1, y);
                out(x, y) = (bx(x, y - 1) + bx(x, y + 1)) / k;
                out
            }
            schedule blur {
                bx.compute_root().parallel(y);
                out.split(y, yo, yi, 8).parallel(yo).vectorize(x, 8);
            }";
        let (p, sched) = crate::scheduled_from_source(source, "blur").unwrap();
        let Ok(lowered) = crate::lower_pipeline(&p, &sched) else {
            panic!("the blur lowers")
        };
        let id = |name: &str| p.funcs.iter().position(|f| f.name == name).unwrap();
        let (bx, out) = (id("bx"), id("out"));
        let names = |f: FuncId| {
            let mut stages = Vec::new();
            stages_of(&lowered.body, f, &mut stages);
            assert!(!stages.is_empty(), "no stage of {}", p.funcs[f].name);
            let mut all: HashSet<String> = HashSet::default();
            for s in stages {
                all.extend(
                    names_read(s, &lowered.bounds)
                        .iter()
                        .map(|(n, _)| n.spelt()),
                );
            }
            all
        };
        let (of_bx, of_out) = (names(bx), names(out));
        // bx reads the input, clamped by its bounds, at its own coordinates.
        for n in ["__in0", "__in0_min0", "__in0_ext0", "__s"] {
            assert!(of_bx.contains(n), "bx: {n} missing from {of_bx:?}");
        }
        assert!(of_bx.contains(&names::coord(Coord::Pure(bx, 0))));
        assert!(!of_bx
            .iter()
            .any(|n| n.starts_with("__r") || n.starts_with("__p")));
        // out reads bx's buffer and the parameter, never the input.
        assert!(of_out.contains(&reader_name(bx)), "{of_out:?}");
        assert!(of_out.contains(&names::param(0)), "{of_out:?}");
        assert!(!of_out.iter().any(|n| n.starts_with("__in")), "{of_out:?}");
    }
}
