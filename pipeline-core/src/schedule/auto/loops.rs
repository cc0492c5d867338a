//! Steps 3 and 4 of the auto-scheduler: the loops of one group (its head's
//! strips, column tiles, parallel loop and vectors, its members' places in
//! them) and of update definitions.

use super::access::{self, Edge};
use super::{Decision, FuncPlan, Machine};
use crate::ir::{FuncId, Pipeline, Type};
use std::fmt::Write;

/// One group, as step 2 formed it.
pub(super) struct Group<'a> {
    /// The pipeline after inlining.
    pub q: &'a Pipeline,
    /// The head.
    pub head: FuncId,
    /// The members besides the head, consumers first.
    pub members: Vec<FuncId>,
    /// How each func is read by its consumers.
    pub edges_of: &'a [Vec<Edge>],
    /// The members computed for each strip, not row by row.
    pub per_strip: &'a [bool],
    /// Estimated extents of every func, per dimension.
    pub extents: &'a [Vec<i64>],
    /// Whether the head is an output (else it is computed at root).
    pub output: bool,
    /// Whether a func the user placed is computed at the head's loops.
    pub hosts_pinned: bool,
    /// The machine model.
    pub machine: &'a Machine,
}

impl Group<'_> {
    fn extent(&self, f: FuncId, d: usize) -> i64 {
        self.extents[f].get(d).copied().unwrap_or(0)
    }

    /// As many lanes as a register holds of `f`'s type (at most 32 bytes'
    /// worth where `f` gathers: see [`access::gathers`]).
    fn lanes(&self, f: FuncId) -> usize {
        let mut width = self.machine.vector_bytes;
        if access::gathers(self.q, f) {
            width = width.min(32);
        }
        (width / bytes(self.q.funcs[f].ty)).clamp(4, 64)
    }

    /// A variable name for a new loop of the head.
    fn fresh(&self, base: &str) -> String {
        fresh(self.q, self.head, base)
    }
}

/// The plans of a group's head and members; what was weighed goes to
/// `report`.
pub(super) fn plan_group(g: &Group, report: &mut String) -> Vec<(FuncId, FuncPlan)> {
    let (q, h) = (g.q, g.head);
    let hf = &q.funcs[h];
    let mut directives = Vec::new();
    let mut why = String::new();
    if !g.output {
        directives.push("compute_root()".to_string());
        why += if hf.updates.is_empty() {
            "computed at root (read by several groups, at another resolution or at computed coordinates); "
        } else {
            "computed at root (it has update definitions); "
        };
    }
    let w = g.lanes(h);
    let mut plans = if hf.dims() == 1 {
        plan_line(g, &mut directives, &mut why);
        Vec::new()
    } else {
        plan_strips(g, &mut directives, &mut why, report)
    };
    let (u, uwhy) = update_directives(q, h, w, &g.extents[h], g.machine);
    directives.extend(u);
    why += &uwhy;
    plans.insert(
        0,
        (
            h,
            FuncPlan {
                decision: Decision::Head,
                directives,
                why,
            },
        ),
    );
    plans
}

/// A one-dimensional head: vectors, and chunks in parallel when long.
fn plan_line(g: &Group, directives: &mut Vec<String>, why: &mut String) {
    let h = g.head;
    let x = &g.q.funcs[h].vars[0];
    let n = g.extent(h, 0);
    let w = g.lanes(h);
    if n >= 1 << 16 {
        let (xo, xi) = (g.fresh(&format!("{x}o")), g.fresh(&format!("{x}i")));
        directives.push(format!("split({x}, {xo}, {xi}, 8192)"));
        directives.push(format!("parallel({xo})"));
        directives.push(format!("vectorize({xi}, {w})"));
        let _ = write!(why, "{n} points: chunks of 8192 in parallel, {w} lanes");
    } else if n >= w as i64 {
        directives.push(format!("vectorize({x}, {w})"));
        let _ = write!(why, "{n} points: {w} lanes");
    } else {
        let _ = write!(why, "{n} points: serial");
    }
}

/// A head of two dimensions or more: strips of rows along its largest
/// dimension after the first (in parallel where there is work enough),
/// column tiles where the sliding rows overflow half of L2, vectors; the
/// members computed a row at a time inside the strips. Returns the
/// members' plans.
fn plan_strips(
    g: &Group,
    directives: &mut Vec<String>,
    why: &mut String,
    report: &mut String,
) -> Vec<(FuncId, FuncPlan)> {
    let (q, h) = (g.q, g.head);
    let hf = &q.funcs[h];
    // The strip dimension: the largest after the first.
    let s = (1..hf.dims())
        .max_by_key(|&d| (g.extent(h, d), std::cmp::Reverse(d)))
        .expect("two dimensions or more");
    let rows = g.extent(h, s);
    let width = g.extent(h, 0);
    let halos = halos(g, s);
    let halo = |f: FuncId| halos[f].1 - halos[f].0;
    let (strip, weighed) = choose_strip(g, rows, &halo);
    let _ = writeln!(
        report,
        "group `{}` ({} rows of {} along `{}`, members: {}): strip heights {}",
        hf.name,
        rows,
        width,
        hf.vars[s],
        if g.members.is_empty() {
            "none".to_string()
        } else {
            g.members
                .iter()
                .map(|&f| format!("{} (+{} rows)", q.funcs[f].name, halo(f)))
                .collect::<Vec<_>>()
                .join(", ")
        },
        weighed
    );
    let parallel = rows as f64 * width as f64 >= (1 << 14) as f64 && rows > strip;
    let (tile, column_bytes) = column_tile(g, s, width);
    let (x, y) = (&hf.vars[0], &hf.vars[s]);
    let (yo, yi) = (g.fresh(&format!("{y}o")), g.fresh(&format!("{y}i")));
    let (xo, xi) = (g.fresh(&format!("{x}o")), g.fresh(&format!("{x}i")));
    // (Also where a func the user placed is computed at the head's loops,
    // which may name `yi`.)
    if parallel || !g.members.is_empty() || g.hosts_pinned {
        directives.push(format!("split({y}, {yo}, {yi}, {strip})"));
    }
    let (store_loop, inner_x) = match tile {
        Some(t) => {
            directives.push(format!("split({x}, {xo}, {xi}, {t})"));
            directives.push(format!("reorder({xi}, {yi}, {xo}, {yo})"));
            (xo.clone(), xi.clone())
        }
        None => (yo.clone(), x.clone()),
    };
    if parallel {
        directives.push(format!("parallel({yo})"));
    }
    let w = g.lanes(h);
    if width >= w as i64 {
        directives.push(format!("vectorize({inner_x}, {w})"));
    }
    let _ = write!(
        why,
        "{}{}{}",
        match (parallel, g.members.is_empty()) {
            (true, _) => format!("strips of {strip} rows along `{y}`, in parallel"),
            (false, false) => format!("strips of {strip} rows along `{y}`, serial (little work)"),
            (false, true) => "serial (little work)".to_string(),
        },
        match tile {
            Some(t) =>
                format!(", columns of {t} (the sliding rows take {column_bytes} bytes per column)"),
            None => String::new(),
        },
        if width >= w as i64 {
            format!(", {w} lanes")
        } else {
            String::new()
        }
    );
    g.members
        .iter()
        .map(|&f| (f, member_plan(g, f, halo(f), &store_loop, &yi)))
        .collect()
}

/// Rows each member computes beyond a strip's along dimension `s`: the
/// offsets of its first and last row relative to the strip's, through its
/// consumers (indexed by func).
fn halos(g: &Group, s: usize) -> Vec<(i64, i64)> {
    let mut offsets: Vec<(i64, i64)> = vec![(0, 0); g.q.funcs.len()];
    for &f in &g.members {
        let mut off = (i64::MAX, i64::MIN);
        for e in &g.edges_of[f] {
            if let Some((lo, hi)) = e.shifts[s] {
                let c = offsets[e.consumer];
                off = (off.0.min(c.0 + lo), off.1.max(c.1 + hi));
            }
        }
        offsets[f] = if off.0 > off.1 { (0, 0) } else { off };
    }
    offsets
}

/// The strip height of a group of `rows` rows, and the candidates weighed
/// with their modelled times (for the report).
///
/// The modelled time of strips of `strip` rows: the work of all strips
/// shared by the threads, plus half a strip for the last thread to finish.
/// Each strip computes its members' halo rows again and costs about two
/// rows more (its sliding windows start afresh, its buffers are taken and
/// given back). Only heights giving each thread four strips where the image
/// allows are candidates.
fn choose_strip(g: &Group, rows: i64, halo: &dyn Fn(FuncId) -> i64) -> (i64, String) {
    let (q, m) = (g.q, g.machine);
    let row_cost =
        |f: FuncId| access::cost(&q.funcs[f].pure).max(1) as f64 * g.extent(f, 0).max(1) as f64;
    let group: Vec<FuncId> = std::iter::once(g.head)
        .chain(g.members.iter().copied())
        .collect();
    let strip_time = |strip: i64| -> f64 {
        let tasks = (rows + strip - 1) / strip;
        let per_strip: f64 = group
            .iter()
            .map(|&f| row_cost(f) * (strip + halo(f) + 2) as f64)
            .sum::<f64>();
        tasks as f64 * per_strip / m.threads as f64 + per_strip / 2.0
    };
    let candidates: Vec<i64> = [8i64, 16, 32, 64, 128, 256]
        .into_iter()
        .filter(|&c| c == 8 || c <= rows)
        .collect();
    let wanted_tasks = (4 * m.threads as i64).min(rows / 8).max(1);
    let strip = candidates
        .iter()
        .copied()
        .filter(|&c| (rows + c - 1) / c >= wanted_tasks)
        .min_by(|&a, &b| strip_time(a).total_cmp(&strip_time(b)).then(b.cmp(&a)))
        .unwrap_or(8);
    let weighed = candidates
        .iter()
        .map(|&c| {
            format!(
                "{c}: {} strips, cost {:.3e}{}",
                (rows + c - 1) / c,
                strip_time(c),
                if c == strip { " (chosen)" } else { "" }
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    (strip, weighed)
}

/// The width of column tiles when the rows the members keep (those one row
/// of their consumers reads, folded to a power of two) exceed half of L2
/// over the group's `width`; and those bytes per column.
fn column_tile(g: &Group, s: usize, width: i64) -> (Option<i64>, i64) {
    let l2 = g.machine.l2_bytes as i64;
    let column_bytes: i64 = g
        .members
        .iter()
        .filter(|&&f| !g.per_strip[f])
        .map(|&f| {
            let rows = g.edges_of[f]
                .iter()
                .map(|e| e.overlap(s) + 1)
                .max()
                .unwrap_or(1);
            (rows as u64).next_power_of_two() as i64 * bytes(g.q.funcs[f].ty) as i64
        })
        .sum();
    let tile = (column_bytes > 0 && column_bytes * width > l2 / 2).then(|| {
        let w = g.lanes(g.head) as i64 * 4;
        (((l2 / 2) / column_bytes) / w * w).max(w)
    });
    (tile, column_bytes)
}

/// A member's place in its head's strips: sliding down them (stored at
/// `store_loop`) when its consumers read `halo` rows more than a strip,
/// else a row at a time; vectorized.
fn member_plan(g: &Group, f: FuncId, halo: i64, store_loop: &str, yi: &str) -> FuncPlan {
    let name = &g.q.funcs[g.head].name;
    let mut directives = Vec::new();
    let why = if g.per_strip[f] {
        directives.push(format!("compute_at({name}, {store_loop})"));
        format!(
            "read by `{name}` only, at another resolution: computed for each of its strips, the rows the strip reads"
        )
    } else if halo > 0 {
        directives.push(format!("store_at({name}, {store_loop})"));
        directives.push(format!("compute_at({name}, {yi})"));
        format!(
            "a stencil of its consumers in `{name}`'s group: slides down each strip, {halo} rows at its top edge"
        )
    } else {
        directives.push(format!("compute_at({name}, {yi})"));
        format!("read by its consumers in `{name}`'s group row by row: computed a row at a time")
    };
    let w = g.lanes(f);
    if g.extent(f, 0) >= w as i64 {
        directives.push(format!("vectorize({}, {w})", g.q.funcs[f].vars[0]));
    }
    FuncPlan {
        decision: Decision::Fused { head: g.head },
        directives,
        why,
    }
}

/// The loops of `f`'s updates: a pure dimension 0 innermost and
/// vectorized (moving it inside the reduction loops keeps every point's
/// order of updates), the reduction loops in their order, and the largest
/// other pure dimension in parallel where there is work enough (its
/// iterations write disjoint slabs). `extents` are `f`'s estimated ones.
fn update_directives(
    q: &Pipeline,
    f: FuncId,
    lanes: usize,
    extents: &[i64],
    m: &Machine,
) -> (Vec<String>, String) {
    use crate::schedule::update::{update_vars, UpdateVar};
    let mut out = Vec::new();
    let mut why = String::new();
    let extent = |d: usize| extents.get(d).copied().unwrap_or(0);
    for k in 0..q.funcs[f].updates.len() {
        let vars = update_vars(q, f, k);
        let mut chain = vec![format!("update({k})")];
        let mut said = Vec::new();
        let x = vars.iter().find(|(_, v)| *v == UpdateVar::Pure(0));
        if let Some((x, _)) = x.filter(|_| extent(0) >= lanes as i64) {
            let reductions: Vec<&str> = vars
                .iter()
                .filter(|(_, v)| matches!(v, UpdateVar::Reduction(_)))
                .map(|(n, _)| n.as_str())
                .collect();
            if !reductions.is_empty() {
                chain.push(format!("reorder({x}, {})", reductions.join(", ")));
            }
            chain.push(format!("vectorize({x}, {lanes})"));
            said.push(format!("`{x}` innermost, {lanes} lanes"));
        }
        let outer = vars
            .iter()
            .filter_map(|(n, v)| match v {
                UpdateVar::Pure(d) if *d > 0 => Some((n, extent(*d))),
                _ => None,
            })
            .max_by_key(|&(_, e)| e);
        let points: i64 = extents.iter().product();
        if let Some((y, e)) = outer.filter(|&(_, e)| e >= 2 * m.threads as i64 && points >= 1 << 14)
        {
            chain.push(format!("parallel({y})"));
            said.push(format!("`{y}` ({e}) in parallel"));
        }
        if said.is_empty() {
            let _ = write!(why, "; update {k} serial");
        } else {
            out.push(chain.join("."));
            let _ = write!(why, "; update {k}: {}", said.join(", "));
        }
    }
    (out, why)
}

/// Bytes of one value of a type in memory.
fn bytes(t: Type) -> usize {
    (t.bits() as usize).div_ceil(8)
}

/// A variable name for a new loop of `f`: `base`, or `base2`, ... when a
/// variable of `f` already has that name.
fn fresh(p: &Pipeline, f: FuncId, base: &str) -> String {
    let taken = |n: &str| p.funcs[f].vars.iter().any(|v| v == n);
    if !taken(base) {
        return base.to_string();
    }
    (2..)
        .map(|k| format!("{base}{k}"))
        .find(|n| !taken(n))
        .expect("a free name")
}
