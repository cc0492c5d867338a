//! The device side of a kernel: its nest of block and thread loops, the
//! phases of thread code between barriers, funcs computed per block in
//! shared memory and per thread in local arrays or the device heap, and
//! the statements each thread runs.

use super::*;
use crate::lower::loops::linear_difference;

/// What a kernel's nest binds.
#[derive(Default)]
pub(super) struct Nest {
    /// The func whose loops they are (for messages).
    pub(super) func_name: String,
    pub(super) func: Option<FuncId>,
    /// The block loops' bounds (host expressions), outermost first.
    pub(super) grid: Vec<(String, String)>,
    /// The thread loops' names and widths, outermost first.
    pub(super) block: Vec<(String, i128)>,
    /// Every loop of the kernel so far.
    bound: Vec<LoopVar>,
    /// Whether the code being emitted is thread code (inside a phase).
    in_phase: bool,
    /// The thread loops around the code being emitted, in its phase.
    thread_depth: usize,
    /// Shared allocations around the code being emitted: the phases in
    /// their scope end at a barrier.
    shared_scopes: usize,
    /// Bytes of shared memory the kernel declares.
    shared_bytes: i128,
    /// Whether the code being emitted follows other code of the block in
    /// a sequence (no more block loops may open there).
    in_sequence: bool,
}

/// Whether `s` computes an update stage.
fn has_update(s: &Stmt) -> bool {
    matches!(
        s,
        Stmt::Store {
            update: Some(_),
            ..
        }
    ) || s.children().iter().any(has_update)
}

/// Two nests of GPU loops where one kernel needs one.
fn several(nest: &Nest) -> Unsupported {
    of_loops(nest.func, format!(
        "several GPU loop nests under one loop of `{}`: put each func's blocks and threads outermost",
        nest.func_name
    ))
}

impl Program<'_> {
    /// Device code of a kernel's nest from `s` down to the statements
    /// without GPU loops: block and thread loops bind their variables from
    /// `blockIdx` and `threadIdx` (axes numbered outermost first, `@j`,
    /// fixed once all are known), guarded by their bounds; serial loops,
    /// bindings and conditions on the way run in every thread.
    ///
    /// Code inside the blocks and outside the kernel func's thread loops
    /// is the block's: every thread runs it alike. There, a nest of thread
    /// loops is a phase (`PL_PHASE`), and so is each stage of another func
    /// computed per block, its points shared out among the block's threads
    /// ([`Program::shared_out`]); such a func's buffer is in shared memory
    /// (its size bounded by a constant), and each phase in its scope ends
    /// at a barrier, so that readers see its points and the next writers
    /// wait for the readers.
    pub(super) fn nest(
        &mut self,
        s: &Stmt,
        nest: &mut Nest,
        code: &mut String,
        depth: usize,
    ) -> Result<(), Unsupported> {
        if !has_gpu_loop(s) {
            return if nest.in_phase {
                self.device_stmt(s, code, depth)
            } else {
                self.shared_out(s, code, depth)
            };
        }
        let pad = "  ".repeat(depth);
        match s {
            Stmt::For {
                var,
                min,
                max,
                kind,
                body,
                ..
            } => {
                if nest.func.is_none() {
                    nest.func = Some(var.func);
                    nest.func_name = self.p().funcs[var.func].name.clone();
                }
                // Thread loops of a func computed per block: that func's
                // stage is the block's to share out.
                if !nest.in_phase && nest.func != Some(var.func) && *kind != LoopKind::GpuBlock {
                    return self.shared_out(s, code, depth);
                }
                let e = self.exprs(None);
                let v = names::loop_var(var);
                let (lo, hi) = (e.expr(min), e.expr(max));
                let mut opened = false;
                match kind {
                    LoopKind::GpuBlock => {
                        let bound = &nest.bound;
                        let inner = |x: &Expr| x.any(&mut |n| matches!(&n.kind, ExprKind::Loop(l) if bound.contains(l)));
                        if inner(min) || inner(max) {
                            return Err(of_loops(var.func, format!(
                                "the blocks of loop `{}` of `{}` depend on a loop of the kernel: make the outer loops of its tiles the blocks",
                                var.name, nest.func_name
                            )));
                        }
                        if nest.in_phase || nest.in_sequence {
                            return Err(several(nest));
                        }
                        // The grid is the loop's extent exactly (the launch
                        // evaluates the same bounds, in the host's types):
                        // no guard.
                        let j = nest.grid.len();
                        let host = self.host_exprs();
                        nest.grid.push((host.expr(min), host.expr(max)));
                        let _ = writeln!(
                            code,
                            "{pad}const I {v} = ({lo}) + (I)blockIdx.@{j};\n{pad}{{"
                        );
                    }
                    LoopKind::GpuThread => {
                        let width = match (lanes_of(min, max), min.as_int(), max.as_int()) {
                            (Some((_, w, _)), ..) => w as i128,
                            (None, Some(a), Some(b)) => b - a + 1,
                            _ => {
                                return Err(of_loops(var.func, format!(
                                    "the threads of loop `{}` of `{}` have no constant extent: split it (`gpu_tile`) and put the inner loop on threads",
                                    var.name, nest.func_name
                                )))
                            }
                        };
                        let width = width.max(1);
                        // The block's shape is its first phase's; a later
                        // phase of the same func's threads must fit it.
                        let j = nest.thread_depth;
                        match nest.block.get(j) {
                            None => nest.block.push((v.clone(), width)),
                            Some(&(_, w)) if w == width => {}
                            Some(_) => return Err(several(nest)),
                        }
                        if !nest.in_phase {
                            let _ = writeln!(code, "{pad}PL_PHASE {{");
                            nest.in_phase = true;
                            opened = true;
                        }
                        nest.thread_depth += 1;
                        let _ = writeln!(
                            code,
                            "{pad}const I {v} = ({lo}) + (I)threadIdx.@{j};\n{pad}if ({v} <= ({hi})) {{"
                        );
                    }
                    _ => {
                        // A serial loop around GPU loops: every thread runs it.
                        let _ = writeln!(code, "{pad}for (int64_t {v} = {lo}; {v} <= {hi}; {v}++) {{");
                    }
                }
                nest.bound.push(var.clone());
                if *kind == LoopKind::GpuThread {
                    self.thread_bounds.push((var.clone(), max.clone()));
                }
                let nested = self.nest(body, nest, code, depth + 1);
                if *kind == LoopKind::GpuThread {
                    self.thread_bounds.pop();
                }
                nested?;
                let _ = writeln!(code, "{pad}}}");
                if *kind == LoopKind::GpuThread {
                    nest.thread_depth -= 1;
                }
                if opened {
                    let _ = writeln!(code, "{pad}}}");
                    nest.in_phase = false;
                    self.barrier(nest, code, &pad);
                }
            }
            Stmt::LetSym { .. } | Stmt::LetCoord { .. } => {
                self.bind(s);
                let (open, body) = self.scope(s).expect("a binding or a condition");
                let _ = writeln!(code, "{pad}{open}");
                self.nest(body, nest, code, depth + 1)?;
                let _ = writeln!(code, "{pad}}}");
            }
            Stmt::Block(stmts) => {
                let before = nest.in_sequence;
                nest.in_sequence |= stmts.len() > 1;
                for s in stmts {
                    self.nest(s, nest, code, depth)?;
                }
                nest.in_sequence = before;
            }
            Stmt::Allocate {
                func,
                region,
                fold,
                body,
            } if !nest.in_phase => {
                // A func computed per block: in shared memory, as large as
                // the most any block computes (checked: a bound wrong by
                // mistake stops the kernel, never writes past the array).
                let f = *func;
                let ty = self.p().funcs[f].ty;
                let (c_ty, elem) = (buffer_type(ty), (ty.bits().max(8) / 8) as i128);
                let Some(capacity) = self.capacity(region, fold) else {
                    let d = (0..region.len())
                        .find(|&d| self.capacity(&region[d..=d], &fold[d..=d]).is_none())
                        .unwrap_or(0);
                    return Err(placed(f, format!(
                        "`{}` is computed per block of `{}`, in shared memory, but no constant bounds how much of its dimension {d} a block computes: compute it at the blocks of tiles of constant size (`gpu_tile`)",
                        self.p().funcs[f].name,
                        nest.func_name
                    )));
                };
                nest.shared_bytes += capacity * elem;
                if nest.shared_bytes > MAX_SHARED_BYTES {
                    let others = if nest.shared_bytes > capacity * elem {
                        format!(", {} with the kernel's other funcs per block", nest.shared_bytes)
                    } else {
                        String::new()
                    };
                    return Err(placed(f, format!(
                        "`{}` is computed per block of `{}` in {} bytes of shared memory{others}; a block has at most {MAX_SHARED_BYTES} (48 KiB): make the tiles smaller",
                        self.p().funcs[f].name,
                        nest.func_name,
                        capacity * elem,
                    )));
                }
                *code += &self.bounded_layout(f, region, fold, &pad);
                let _ = writeln!(
                    code,
                    "{pad}  __shared__ {c_ty} __sh{f}[{capacity}];\n{pad}  {c_ty}* __f{f} = __sh{f};"
                );
                nest.shared_scopes += 1;
                self.nest(body, nest, code, depth + 1)?;
                nest.shared_scopes -= 1;
                let _ = writeln!(code, "{pad}}}");
            }
            Stmt::Allocate { func, .. } => {
                return Err(placed(*func, format!(
                    "`{}` is computed inside the threads of `{}` but outside some of them: compute it at the blocks, at the innermost thread loop, or inside it",
                    self.p().funcs[*func].name,
                    nest.func_name
                )))
            }
            _ => return Err(several(nest)),
        }
        Ok(())
    }

    /// A barrier after a phase of thread loops, where shared memory is in
    /// scope.
    fn barrier(&self, nest: &Nest, code: &mut String, pad: &str) {
        if nest.shared_scopes > 0 {
            let _ = writeln!(code, "{pad}__syncthreads();");
        }
    }

    /// Records the value of a local symbol `s` binds (resolved only where
    /// a buffer's bound asks for it).
    pub(super) fn bind(&mut self, s: &Stmt) {
        if let Stmt::LetSym { sym, value, .. } = s {
            self.sym_values.insert(*sym, value.clone());
        }
    }

    /// `e` with the local symbols bound around it replaced by their values,
    /// in terms of loops and global symbols.
    fn resolved(&self, e: &Expr) -> Expr {
        e.rewrite(&mut |n| match &n.kind {
            ExprKind::Sym(s) => match self.sym_values.get(s) {
                Some(v) => self.resolved(v),
                None => n,
            },
            _ => n,
        })
    }

    /// A constant bound of the elements of a buffer over `region` (folded
    /// as `fold` says) wherever the loops around are, if there is one.
    fn capacity(&self, region: &[(Expr, Expr)], fold: &[Option<i64>]) -> Option<i128> {
        let mut n: i128 = 1;
        for (d, (lo, hi)) in region.iter().enumerate() {
            let bound = match fold[d] {
                Some(factor) => factor as i128,
                None => self.extent_bound(lo, hi)?,
            };
            n = n.saturating_mul(bound.max(1));
        }
        Some(n)
    }

    /// A constant bound of the extent `hi - lo + 1` wherever the loops
    /// around are: `min(a + 31, m) - max(a, n) + 1` is at most 32; where
    /// a bound is a selection (a sliding window's first iteration), the
    /// larger of its two sides'.
    fn extent_bound(&self, lo: &Expr, hi: &Expr) -> Option<i128> {
        let (lo, hi) = (simplify(&self.resolved(lo)), simplify(&self.resolved(hi)));
        extent_bound_of(&lo, &hi)
    }

    /// A stage at the block level of a kernel (a func computed per block,
    /// or the kernel's own code outside thread loops): one phase whose
    /// points the block's threads share out, consecutive threads at
    /// consecutive points of the innermost loop, the block's rows of
    /// threads over the next loop. Only a pure definition's
    /// loops are shared out, those of its outer loops whose bounds do not
    /// depend on each other; what is inside runs in the thread, and a stage
    /// with nothing to share (an update, whose points may depend on each
    /// other) runs in the block's first thread.
    fn shared_out(&mut self, s: &Stmt, code: &mut String, depth: usize) -> Result<(), Unsupported> {
        let pad = "  ".repeat(depth);
        // Bindings and conditions first: every thread evaluates them alike.
        if let Some((open, body)) = self.scope(s) {
            self.bind(s);
            let _ = writeln!(code, "{pad}{open}");
            self.shared_out(body, code, depth + 1)?;
            let _ = writeln!(code, "{pad}}}");
            return Ok(());
        }
        if let Stmt::Block(stmts) = s {
            for s in stmts {
                self.shared_out(s, code, depth)?;
            }
            return Ok(());
        }
        let mut loops: Vec<(&LoopVar, &Expr, &Expr)> = Vec::new();
        let mut body = s;
        if !has_update(s) {
            while let Stmt::For {
                var,
                min,
                max,
                kind,
                body: inner,
                ..
            } = body
            {
                let outer = |x: &Expr| {
                    x.any(&mut |n| matches!(&n.kind, ExprKind::Loop(l) if loops.iter().any(|(v, _, _)| *v == l)))
                };
                if !matches!(
                    kind,
                    LoopKind::Serial | LoopKind::GpuThread | LoopKind::Parallel
                ) || outer(min)
                    || outer(max)
                {
                    break;
                }
                loops.push((var, min, max));
                body = inner;
            }
        }
        let _ = writeln!(
            code,
            "{pad}PL_PHASE {{\n{pad}  const I __tyz = threadIdx.y + (I)blockDim.y * threadIdx.z, __nyz = (I)blockDim.y * blockDim.z;\n{pad}  const I __tid = threadIdx.x + (I)blockDim.x * __tyz, __threads = (I)blockDim.x * __nyz; (void)__tid; (void)__threads; (void)__tyz; (void)__nyz;"
        );
        self.threads_serial = true;
        if loops.is_empty() {
            let _ = writeln!(code, "{pad}  if (__tid == 0) {{");
            self.device_stmt(s, code, depth + 2)?;
            let _ = writeln!(code, "{pad}  }}");
        } else {
            // The innermost loop across `threadIdx.x`, the next across the
            // block's other threads (y and z as one), the rest in every
            // thread: consecutive threads at consecutive points, and no
            // division. One loop takes every thread of the block.
            let e = self.exprs(None);
            let n = loops.len();
            let mut inner = pad.clone() + "  ";
            let mut closing = 0;
            for (k, (var, lo_expr, hi_expr)) in loops.iter().enumerate() {
                let v = names::loop_var(var);
                let (start, step) = match n - 1 - k {
                    _ if n == 1 => ("__tid", "__threads"),
                    0 => ("(I)threadIdx.x", "(I)blockDim.x"),
                    1 => ("__tyz", "__nyz"),
                    _ => ("0", "1"),
                };
                // Where a constant bounds the loop's extent, so does the
                // number of steps each thread takes (the block's shape is a
                // constant too): unrolled, each step guarded.
                let (lo, hi) = (e.expr(lo_expr), e.expr(hi_expr));
                let (open, scopes) = match self.extent_bound(lo_expr, hi_expr).filter(|_| step != "1") {
                    Some(bound) => (
                        format!("#pragma unroll\n{inner}for (I __k{k} = 0; __k{k} < ({bound} + {step} - 1) / {step}; __k{k}++) {{\n{inner}  const I {v} = {lo} + {start} + __k{k} * {step};\n{inner}  if ({v} <= {hi}) {{"),
                        2,
                    ),
                    None => (
                        format!("for (I {v} = {lo} + {start}, __hi{k} = {hi}; {v} <= __hi{k}; {v} += {step}) {{"),
                        1,
                    ),
                };
                let _ = writeln!(code, "{inner}{open}");
                inner += &"  ".repeat(scopes);
                closing += scopes;
            }
            self.device_stmt(body, code, depth + 1 + closing)?;
            for _ in 0..closing {
                inner.truncate(inner.len() - 2);
                let _ = writeln!(code, "{inner}}}");
            }
        }
        self.threads_serial = false;
        // The next phase may read what this one wrote, or write what
        // it read.
        let _ = writeln!(code, "{pad}}}\n{pad}__syncthreads();");
        Ok(())
    }

    /// Opens the scope of func `f`'s buffer inside a kernel (closed by
    /// `}`): its layout over `region`, bound as the names loads and stores
    /// read, and its element count `__n{f}`.
    fn kernel_layout(
        &mut self,
        f: FuncId,
        region: &[(Expr, Expr)],
        fold: &[Option<i64>],
        pad: &str,
    ) -> String {
        // In the kernel's index type, as the offsets compute with them.
        let layout = self.layout(f, region, fold, &format!("__n{f}"), |d| {
            (
                format!("const I __f{f}_min{d}"),
                format!("const I __f{f}_stride{d}"),
            )
        });
        format!(
            "{pad}{{ int64_t __n{f} = 1;\n{}",
            indent(&layout, &format!("{pad}  "))
        )
    }

    /// Func `f`'s buffer over `region` in an array of [`Program::capacity`]
    /// elements: dense with dimension 0 fastest, each dimension as long as
    /// the constant that bounds its extent (a folded one, its fold), so
    /// that the strides are constants; an extent beyond its bound (a bound
    /// wrong by mistake) stops the kernel, never writes past the array.
    /// Opens a scope, as [`Program::kernel_layout`] does.
    fn bounded_layout(
        &mut self,
        f: FuncId,
        region: &[(Expr, Expr)],
        fold: &[Option<i64>],
        pad: &str,
    ) -> String {
        self.folds[f] = fold.to_vec();
        let mut out = format!("{pad}{{\n");
        let mut stride: i128 = 1;
        for (d, (lo, hi)) in region.iter().enumerate() {
            let bound = match fold[d] {
                Some(n) => n as i128,
                None => self
                    .extent_bound(lo, hi)
                    .expect("a capacity bounds every dimension"),
            };
            let e = self.exprs(None);
            let ix = self.range_type(lo, hi);
            let _ = write!(
                out,
                "{pad}  const {ix} __lo{f}_{d} = {}, __hi{f}_{d} = {}; const I __f{f}_min{d} = __lo{f}_{d}; const I __f{f}_stride{d} = {stride};",
                e.expr(lo),
                e.expr(hi)
            );
            if fold[d].is_none() {
                let _ = write!(
                    out,
                    " if (__hi{f}_{d} >= __lo{f}_{d} && __hi{f}_{d} - __lo{f}_{d} >= {bound}) PL_TRAP();"
                );
            }
            out += "\n";
            stride = stride.saturating_mul(bound.max(1));
        }
        out
    }

    /// A loop's `max` as a constant: `max` itself, or the constant side of
    /// `min(c, e)` where the thread loops' bounds imply `c <= e` (a
    /// split's tail that no thread reaches).
    pub(super) fn constant_max(&self, max: &Expr) -> Option<i128> {
        max.as_int().or_else(|| {
            let ExprKind::Binary(BinOp::Min, a, b) = &max.kind else {
                return None;
            };
            let (c, e) = match (a.as_int(), b.as_int()) {
                (Some(c), None) => (c, b),
                (None, Some(c)) => (c, a),
                _ => return None,
            };
            // c <= e, as c - e < 1.
            let diff = Expr::binary(BinOp::Sub, Expr::i64(c), (**e).clone());
            implied(
                &Expr::binary(BinOp::Lt, diff, Expr::i64(1)),
                &self.thread_bounds,
            )
            .then_some(c)
        })
    }

    /// A loop in a thread as a loop: unrolled into guarded steps where a
    /// constant bounds its extent by a few, fully unrolled where its
    /// bounds are constants (a thread's own column: a sliding window's
    /// first step then differs from the others at compile time).
    pub(super) fn serial_loop(
        &mut self,
        s: &Stmt,
        out: &mut String,
        depth: usize,
    ) -> Result<(), Unsupported> {
        let Stmt::For {
            var,
            min,
            max,
            kind,
            body,
            ..
        } = s
        else {
            unreachable!("a loop")
        };
        let pad = "  ".repeat(depth);
        let v = names::loop_var(var);
        let tight = self.constant_max(max).map(Expr::i64);
        let max = tight.as_ref().unwrap_or(max);
        let e = self.exprs(None);
        let (lo, hi) = (e.expr(min), e.expr(max));
        // Index arithmetic's loops count in the kernel's index
        // type (32 bits where the launcher found the symbols small).
        let ty = self.range_type(min, max);
        // A loop of at most a few iterations whatever the block
        // (a sliding window's new rows, a thread's own column):
        // unrolled to that many guarded steps, no loop to run.
        if let Some(n) = self
            .extent_bound(min, max)
            .filter(|&n| ty == "I" && (1..=MAX_STEPS).contains(&n))
        {
            let _ = writeln!(
                out,
                "{pad}#pragma unroll\n{pad}for (I __k_{v} = 0; __k_{v} < {n}; __k_{v}++) {{\n{pad}  const I {v} = {lo} + __k_{v};\n{pad}  if ({v} <= {hi}) {{"
            );
            self.device_stmt(body, out, depth + 2)?;
            let _ = writeln!(out, "{pad}  }}\n{pad}}}");
            return Ok(());
        }
        let few =
            matches!((min.as_int(), max.as_int()), (Some(a), Some(b)) if b - a < MAX_UNROLLED);
        if few || matches!(kind, LoopKind::Unrolled | LoopKind::Vectorized) {
            let _ = writeln!(out, "{pad}#pragma unroll");
        }
        let _ = writeln!(out, "{pad}for ({ty} {v} = {lo}; {v} <= {hi}; {v}++) {{");
        // Inside, the loop's bound is known as the threads' are.
        self.thread_bounds.push((var.clone(), max.clone()));
        let inner = self.device_stmt(body, out, depth + 1);
        self.thread_bounds.pop();
        inner?;
        let _ = writeln!(out, "{pad}}}");
        Ok(())
    }

    /// Device code for `s` inside a kernel.
    pub(super) fn device_stmt(
        &mut self,
        s: &Stmt,
        out: &mut String,
        depth: usize,
    ) -> Result<(), Unsupported> {
        let pad = "  ".repeat(depth);
        match s {
            Stmt::Block(stmts) => {
                for s in stmts {
                    self.device_stmt(s, out, depth)?;
                }
            }
            Stmt::For { kind, .. } => {
                if kind.is_gpu() && !(self.threads_serial && *kind == LoopKind::GpuThread) {
                    return Err("a GPU loop inside a kernel's serial code".into());
                }
                // A vectorized loop's lanes, where their count is a constant
                // (`lanes.rs`).
                if *kind == LoopKind::Vectorized && self.vector_lanes(s, out, depth)? {
                    return Ok(());
                }
                self.serial_loop(s, out, depth)?;
            }
            // A split's guard, less what the loops' own bounds imply (the
            // tail's threads stop at the loop's guard already).
            Stmt::If { cond, body } => {
                match residual(cond, &self.thread_bounds) {
                    None => {
                        let _ = writeln!(out, "{pad}{{");
                    }
                    Some(rest) => {
                        let _ = writeln!(out, "{pad}if ({}) {{", self.exprs(None).expr(&rest));
                    }
                }
                self.device_stmt(body, out, depth + 1)?;
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::LetSym { .. } | Stmt::LetCoord { .. } => {
                self.bind(s);
                let (open, body) = self.scope(s).expect("a binding");
                let _ = writeln!(out, "{pad}{open}");
                self.device_stmt(body, out, depth + 1)?;
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::Store {
                func,
                update,
                args,
                value,
            } => {
                let e = self.exprs(Some((*func, *update)));
                let at = e.offset(Source::Func(*func), args);
                let mut v = e.expr(value);
                if self.p().funcs[*func].ty == Type::Bool {
                    v = format!("(uint8_t)({v})");
                }
                let _ = writeln!(out, "{pad}__f{func}[{at}] = {v};");
            }
            // A func computed inside a kernel: a buffer of each thread's
            // own, a local array where a constant bounds it (registers or
            // the cached local memory, as Halide's), else from the device
            // heap.
            Stmt::Allocate {
                func,
                region,
                fold,
                body,
            } => {
                let f = *func;
                let ty = self.p().funcs[f].ty;
                let c_ty = buffer_type(ty);
                let elem = (ty.bits().max(8) / 8) as i128;
                let local = self
                    .capacity(region, fold)
                    .filter(|&n| n * elem <= MAX_LOCAL_BYTES);
                match local {
                    // Checked as shared memory is: a wrong bound stops the
                    // kernel.
                    Some(n) => {
                        *out += &self.bounded_layout(f, region, fold, &pad);
                        let _ = writeln!(
                            out,
                            "{pad}  {c_ty} __loc{f}[{n}];\n{pad}  {c_ty}* __f{f} = __loc{f};\n{pad}  {{"
                        );
                        self.device_stmt(body, out, depth + 2)?;
                        let _ = writeln!(out, "{pad}  }}\n{pad}}}");
                    }
                    // Out of device heap, the kernel stops (the launch
                    // fails): never a result computed from a missing buffer.
                    None => {
                        *out += &self.kernel_layout(f, region, fold, &pad);
                        let _ = writeln!(
                            out,
                            "{pad}  {c_ty}* __f{f} = ({c_ty}*)malloc((__n{f} > 0 ? __n{f} : 1) * sizeof({c_ty}));\n{pad}  if (!__f{f}) PL_TRAP();\n{pad}  {{"
                        );
                        self.device_stmt(body, out, depth + 2)?;
                        let _ = writeln!(out, "{pad}  }}\n{pad}  free(__f{f});\n{pad}}}");
                    }
                }
            }
            Stmt::CopyToOutput { .. } => {
                return Err("a copy into an output inside a kernel".into());
            }
        }
        Ok(())
    }
}

/// Whether every conjunct of `cond` holds wherever the thread loops of
/// `bounds` (each with its largest value) run: `p < q` with `p` growing
/// with those loops and below `q` at their largest values.
pub(super) fn implied(cond: &Expr, bounds: &[(LoopVar, Expr)]) -> bool {
    match &cond.kind {
        ExprKind::Binary(BinOp::And, a, b) => implied(a, bounds) && implied(b, bounds),
        ExprKind::Binary(BinOp::Lt, p, q) => {
            let mut p = (**p).clone();
            for (v, max) in bounds {
                if q.uses_loop(v) {
                    return false;
                }
                if !p.uses_loop(v) {
                    continue;
                }
                let next = p.with_loop(
                    v,
                    &Expr::binary(
                        BinOp::Add,
                        Expr::new(ExprKind::Loop(v.clone()), Type::I64),
                        Expr::i64(1),
                    ),
                );
                let step = linear_difference(&next, &p)
                    .or_else(|| simplify(&Expr::binary(BinOp::Sub, next, p.clone())).as_int());
                if step.is_none_or(|k| k <= 0) {
                    return false;
                }
                p = p.with_loop(v, max);
            }
            below(&p, q)
        }
        _ => false,
    }
}

/// `cond` without the conjuncts that `bounds` imply ([`implied`]); `None`
/// where it implies them all.
pub(super) fn residual(cond: &Expr, bounds: &[(LoopVar, Expr)]) -> Option<Expr> {
    match &cond.kind {
        ExprKind::Binary(BinOp::And, a, b) => match (residual(a, bounds), residual(b, bounds)) {
            (None, rest) | (rest, None) => rest,
            (Some(x), Some(y)) => Some(Expr::binary(BinOp::And, x, y)),
        },
        _ if implied(cond, bounds) => None,
        _ => Some(cond.clone()),
    }
}

/// [`Program::extent_bound`] of resolved and simplified bounds.
fn extent_bound_of(lo: &Expr, hi: &Expr) -> Option<i128> {
    fn operands<'e>(e: &'e Expr, op: BinOp, out: &mut Vec<&'e Expr>) {
        match &e.kind {
            ExprKind::Binary(o, a, b) if *o == op => {
                operands(a, op, out);
                operands(b, op, out);
            }
            _ => out.push(e),
        }
    }
    if let ExprKind::Select(_, a, b) = &lo.kind {
        return Some(extent_bound_of(a, hi)?.max(extent_bound_of(b, hi)?));
    }
    if let ExprKind::Select(_, a, b) = &hi.kind {
        return Some(extent_bound_of(lo, a)?.max(extent_bound_of(lo, b)?));
    }
    let (mut highs, mut lows) = (Vec::new(), Vec::new());
    operands(hi, BinOp::Min, &mut highs);
    operands(lo, BinOp::Max, &mut lows);
    let mut best: Option<i128> = None;
    for h in &highs {
        for l in &lows {
            let extent = Expr::binary(
                BinOp::Add,
                Expr::binary(BinOp::Sub, (*h).clone(), (*l).clone()),
                Expr::i64(1),
            );
            if let Some(c) = simplify(&extent).as_int() {
                best = Some(best.map_or(c, |b| b.min(c)));
            }
        }
    }
    best.map(|b| b.max(0))
}

/// The most iterations of a serial loop inside a kernel that are unrolled
/// into guarded steps where a constant bounds its extent.
const MAX_STEPS: i128 = 4;

/// The most iterations of a serial loop with constant bounds inside a
/// kernel that are unrolled.
const MAX_UNROLLED: i128 = 16;

/// Whether `p < q` always: their difference a negative constant (`p` and `q`
/// sums of the same terms), or `p` a
/// minimum (under additions) one side of which is below `q`.
fn below(p: &Expr, q: &Expr) -> bool {
    if let Some(k) = linear_difference(p, q) {
        return k < 0;
    }
    split_min(p).is_some_and(|(a, b)| below(&a, q) || below(&b, q))
}

/// `p` as `min(a, b)`, with additions and subtractions of other terms
/// moved inside.
fn split_min(p: &Expr) -> Option<(Expr, Expr)> {
    let with = |op, x: Expr, y: &Expr| Expr::binary(op, x, y.clone());
    match &p.kind {
        ExprKind::Binary(BinOp::Min, a, b) => Some(((**a).clone(), (**b).clone())),
        ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub), x, y) => {
            if let Some((a, b)) = split_min(x) {
                return Some((with(*op, a, y), with(*op, b, y)));
            }
            match op {
                BinOp::Add => split_min(y).map(|(a, b)| {
                    (
                        with(BinOp::Add, (**x).clone(), &a),
                        with(BinOp::Add, (**x).clone(), &b),
                    )
                }),
                _ => None,
            }
        }
        _ => None,
    }
}
