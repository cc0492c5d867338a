//! How the lanes of a vectorized loop read memory: the view of each
//! source, dense and strided vector loads, loads that read every phase of
//! a stride together ([`Lanes::plan_phases`]), taps at constant distances
//! from computed coordinates ([`Lanes::plan_taps`]), gathers, the edges
//! of `clamp_edge`, and next-row prefetches.

use super::*;

impl Lanes<'_, '_> {
    /// The view a load of `source` reads, and whether it is the stage's own
    /// func.
    fn view(&self, source: Source) -> (Code, bool) {
        let (f, _) = self.stage.get();
        match source {
            Source::Input(i) => (ident(input_name(i)), false),
            Source::Func(g) if Some(g) == f => (self.g.writer(g), true),
            Source::Func(g) => (ident(reader_name(g)), false),
        }
    }

    /// The stride of dimension 0 of `source` in elements: an input's where
    /// its schedule declares it (else 1, made so by the entry), and 1 for a
    /// func's buffer.
    fn stride0(&self, source: Source) -> usize {
        match source {
            Source::Input(i) => self.g.input_stride0(i),
            Source::Func(_) => 1,
        }
    }

    /// The storage fold of each dimension of `source`.
    fn folds(&self, source: Source) -> Vec<Option<i64>> {
        match source {
            Source::Func(g) => self.g.folds.borrow().get(&g).cloned().unwrap_or_default(),
            Source::Input(_) => Vec::new(),
        }
    }

    pub(super) fn load(&self, e: &Expr, source: Source, args: &[Expr], guarded: bool) -> R<Code> {
        if !guarded {
            if let Some(name) = self.vector_load(e, source, args) {
                return Ok(code!(#name[__i]));
            }
        }
        // A gather, or a load only some lanes evaluate: one load per lane.
        let (view, _) = self.view(source);
        let folds = self.folds(source);
        let c = args
            .iter()
            .enumerate()
            .map(|(d, a)| {
                let v = self.lane(a, guarded)?;
                Ok(wrap_fold(
                    code!((#v) as i64),
                    folds.get(d).copied().flatten(),
                ))
            })
            .collect::<R<Vec<Code>>>()?;
        Ok(self.g.element_load(source, e.ty, &view, code!([#(#c),*])))
    }

    /// A load evaluated in every lane at coordinates that vary otherwise
    /// than `vector_load` reads: the lanes' offsets computed as vectors
    /// and read by the level's gather (`View::gather`), instead of each
    /// lane's coordinates and offset in scalar code. `None` for folded
    /// storage, for the buffer being written (read through its writer) and
    /// for a `bool` func's bytes (the lane loop converts them).
    pub(super) fn gather(&self, e: &Expr, source: Source, args: &[Expr]) -> R<Option<Code>> {
        let (view, own) = self.view(source);
        if own
            || e.ty == Type::Bool
            || self.folds(source).iter().any(Option::is_some)
            || args.iter().any(|a| a.ty != Type::I32)
        {
            return Ok(None);
        }
        if let Some(taps) = self.tap(e, source, args)? {
            return Ok(Some(taps));
        }
        let w = self.lanes_lit();
        let (coords, dense0) = self.offset_args(source, args)?;
        Ok(Some(
            code!(unsafe { #view.gather::<_, #w>(__isa, #coords, #dense0) }),
        ))
    }

    /// The lanes' coordinates of a load as an array of vectors, and
    /// whether its source's dimension 0 is dense: the arguments that
    /// `View::gather` and `View::tap_offsets` compute offsets from.
    fn offset_args(&self, source: Source, args: &[Expr]) -> R<(Code, bool)> {
        let coords = args.iter().map(|a| self.vec(a)).collect::<R<Vec<Code>>>()?;
        Ok((code!([#(#coords),*]), self.stride0(source) == 1))
    }

    /// A load that [`Lanes::gather`] would read, when the store reads
    /// others of the same source at coordinates that differ from its own
    /// by constants only (the 8 nodes around a point that a trilinear
    /// interpolation reads): the group's offsets are computed once, at
    /// the first of its loads emitted (`View::tap_offsets`), and each
    /// load reads its lanes at them plus its distance from that load
    /// (`View::taps`). `None` for a load [`Lanes::plan_taps`] did not
    /// put in a group.
    fn tap(&self, e: &Expr, source: Source, args: &[Expr]) -> R<Option<Code>> {
        if !self.tapped.borrow().contains(&(e as *const Expr)) {
            return Ok(None);
        }
        let (rests, consts): (Vec<Option<Expr>>, Vec<i128>) = args
            .iter()
            .map(|a| {
                let (rest, k) = split_constant(a);
                (rest.cloned(), k)
            })
            .unzip();
        let (view, _) = self.view(source);
        let w = self.lanes_lit();
        let found = self
            .gathers
            .borrow()
            .taps
            .iter()
            .find(|t| t.source == source && t.rests == rests)
            .cloned();
        let group = match found {
            Some(g) => g,
            None => {
                let (coords, dense0) = self.offset_args(source, args)?;
                let (_, offsets) = self.temp();
                // SAFETY (of the generated block): this load's lanes are
                // inside the view, as bounds inference proved.
                self.loads.borrow_mut().push(code! {
                    let #offsets: [isize; #w] =
                        unsafe { #view.tap_offsets::<_, #w>(__isa, #coords, #dense0) };
                });
                let g = TapGroup {
                    source,
                    rests,
                    base: consts.clone(),
                    offsets,
                };
                self.gathers.borrow_mut().taps.push(g.clone());
                g
            }
        };
        let k = consts
            .iter()
            .zip(&group.base)
            .map(|(a, b)| unsuffixed_lit!((a - b) as i64));
        let offsets = &group.offsets;
        // SAFETY (of the generated block): each lane reads the element at
        // its own coordinates, which bounds inference proved inside the
        // view: the group's offsets of those coordinates less the
        // constants, plus the constants' distance in memory.
        Ok(Some(code!(unsafe {
            #view.taps::<_, #w>(__isa, &#offsets, #view.tap_delta([#(#k),*]))
        })))
    }

    /// Finds the loads `value` evaluates in every lane that read as taps
    /// ([`Lanes::tap`]): those of a source and non-constant parts of
    /// coordinates to which the loads add at least two distinct constants.
    pub(super) fn plan_taps(&self, value: &Expr) {
        let mut seen: HashMap<String, (Vec<Vec<i128>>, Vec<*const Expr>)> = HashMap::default();
        visit_every_lane(value, &mut |n| {
            let ExprKind::Load { source, args, .. } = &n.kind else {
                return;
            };
            if args.iter().any(|a| a.ty != Type::I32) {
                return;
            }
            let (rests, consts): (Vec<Option<&Expr>>, Vec<i128>) =
                args.iter().map(split_constant).unzip();
            let (ks, nodes) = seen.entry(format!("{source:?} {rests:?}")).or_default();
            if !ks.contains(&consts) {
                ks.push(consts);
            }
            nodes.push(n as *const Expr);
        });
        *self.tapped.borrow_mut() = seen
            .into_values()
            .filter(|(ks, _)| ks.len() >= 2)
            .flat_map(|(_, nodes)| nodes)
            .collect();
    }

    /// The stride in memory of a load evaluated in every lane whose first
    /// coordinate is a ramp of stride `r != 0` (not folded) and whose
    /// others are uniform: `r` times the stride of dimension 0. `None` for
    /// other loads and for loads of the buffer being written.
    pub(super) fn memory_step(&self, source: Source, args: &[Expr]) -> Option<(i128, usize)> {
        let (_, own) = self.view(source);
        if own || self.folds(source).first().copied().flatten().is_some() {
            return None;
        }
        if !args[1..]
            .iter()
            .all(|a| matches!(self.ramp(a), Some((_, 0))))
        {
            return None;
        }
        let (_, r) = self.ramp(&args[0])?;
        (r != 0).then_some((r, self.stride0(source)))
    }

    /// Groups the loads of stride 2, 3 or 4 in memory that `value`
    /// evaluates in every lane (outside `select` branches) and that read
    /// every phase of the same elements: `a(2 * x, y)` with `a(2 * x + 1,
    /// y)`, the three channels of interleaved RGB,
    /// `rgb(x, y, 0)`, `rgb(x, y, 1)`, `rgb(x, y, 2)` under
    /// `rgb.dim(0).set_stride(3).dim(2).set_stride(1)`, or `a(3 * x + k,
    /// y)`. Their coordinates differ by constants only, in dimensions whose
    /// strides are known here (dimension 0, and the declared ones of an
    /// input), so their elements' offsets differ by constants; when these
    /// are `o, o + 1, ..., o + S - 1` for a stride of `S`, the group's
    /// `S N` elements are read once (`Deinterleave::load_phases`), and
    /// they are all inside the buffer, each being a lane of one of the
    /// loads.
    pub(super) fn plan_phases(&self, value: &Expr) {
        self.phase_of.borrow_mut().clear();
        // The anchors are dropped: no entry of the cache of `is_uniform`
        // may outlive its node, whose address a later node may take.
        for g in self.phase_groups.borrow_mut().drain(..) {
            g.anchor.visit(&mut |n| {
                self.uniform.borrow_mut().remove(&(n as *const Expr));
            });
        }
        // Classifying now, before the `let`s of `value` are, would take
        // their variables for uniform (and remember that): planning
        // leaves the classifications as they were, and skips loads whose
        // coordinates use a `let`.
        let (uniform, let_uniform) = (
            self.uniform.borrow().clone(),
            self.let_uniform.borrow().clone(),
        );
        let mut keyed: HashMap<String, Vec<(i128, &Expr)>> = HashMap::default();
        visit_every_lane(value, &mut |n| {
            let ExprKind::Load { source, args, .. } = &n.kind else {
                return;
            };
            let mut uses_let = false;
            for a in args {
                a.visit(&mut |c| {
                    uses_let |= matches!(c.kind, ExprKind::LetVar(_) | ExprKind::Let { .. })
                });
            }
            if uses_let {
                return;
            }
            let Some((r, stride0)) = self.memory_step(*source, args) else {
                return;
            };
            if !(2..=4).contains(&(r * stride0 as i128)) {
                return;
            }
            let mut key = format!("{source:?} {r} {:?}", n.ty);
            let mut offset = 0i128;
            for (d, a) in args.iter().enumerate() {
                let (rest, k) = split_constant(a);
                key += &format!(" {rest:?}");
                let stride = match (d, *source) {
                    (0, _) => Some(stride0),
                    (_, Source::Input(i)) => self.g.input_strides[i].get(d).copied().flatten(),
                    _ => None,
                };
                match stride {
                    Some(s) => offset += k * s as i128,
                    None => key += &format!("+{k}"),
                }
            }
            keyed.entry(key).or_default().push((offset, n));
        });
        *self.uniform.borrow_mut() = uniform;
        *self.let_uniform.borrow_mut() = let_uniform;
        let mut phase_of = self.phase_of.borrow_mut();
        let mut groups = self.phase_groups.borrow_mut();
        for loads in keyed.values() {
            let step = match loads[0].1.kind {
                ExprKind::Load {
                    source, ref args, ..
                } => self.memory_step(source, args),
                _ => None,
            };
            let Some((r, stride0)) = step else { continue };
            let step = (r * stride0 as i128) as usize;
            let mut offsets: Vec<i128> = loads.iter().map(|&(o, _)| o).collect();
            offsets.sort_unstable();
            offsets.dedup();
            let mut taken: Vec<i128> = Vec::new();
            for &o in &offsets {
                let all = (0..step as i128)
                    .all(|j| offsets.contains(&(o + j)) && !taken.contains(&(o + j)));
                if !all {
                    continue;
                }
                taken.extend((0..step as i128).map(|j| o + j));
                let id = groups.len();
                let anchor = loads
                    .iter()
                    .find(|&&(x, _)| x == o)
                    .map(|&(_, n)| n.clone());
                let Some(anchor) = anchor else { continue };
                // The clone's nodes may sit where nodes classified earlier
                // and since dropped were: forget what the cache of
                // `is_uniform` says of those addresses (the arguments live
                // on the heap, so the move into `groups` keeps them).
                anchor.visit(&mut |n| {
                    self.uniform.borrow_mut().remove(&(n as *const Expr));
                });
                groups.push(PhaseGroup {
                    anchor,
                    step,
                    names: None,
                });
                for &(x, n) in loads {
                    if (o..o + step as i128).contains(&x) {
                        phase_of.insert(n as *const Expr, (id, (x - o) as usize));
                    }
                }
            }
        }
    }

    /// The array of load `e`'s phase when it belongs to a group of
    /// [`Lanes::plan_phases`], the group's one read emitted at its first
    /// load.
    fn phase_load(&self, e: &Expr) -> Option<Code> {
        let (id, phase) = *self.phase_of.borrow().get(&(e as *const Expr))?;
        if let Some(names) = &self.phase_groups.borrow()[id].names {
            return Some(names[phase].clone());
        }
        let groups = self.phase_groups.borrow();
        let (anchor, step) = (&groups[id].anchor, groups[id].step);
        let ExprKind::Load { source, args, .. } = &anchor.kind else {
            return None;
        };
        let (view, _) = self.view(*source);
        let folds = self.folds(*source);
        let fold = |d: usize| folds.get(d).copied().flatten();
        let ramps: Vec<Option<(Code, i128)>> = args.iter().map(|a| self.ramp(a)).collect();
        let (r, stride0) = self.memory_step(*source, args)?;
        let c = self.lane0(args, &ramps, &fold);
        let w = self.lanes_lit();
        let ty = rust_type(anchor.ty);
        let s = unsuffixed_lit!(step);
        // The group's `S N` elements run from the anchor's first lane to
        // the last lane of the load at the highest phase.
        let ptr = match stride0 {
            1 => {
                let n = unsuffixed_lit!(step * self.w);
                code!(#view.dense_ptr(__c, #n))
            }
            _ => {
                let r = r as i64;
                code!(#view.lanes_ptr(__c, #r, #w))
            }
        };
        if step > 2 {
            self.g.permutes_bytes();
        }
        let names: Vec<Code> = (0..step).map(|_| self.temp().1).collect();
        // SAFETY (of the generated block): every element read is a lane of
        // one of the group's loads, which bounds inference proved inside
        // the view.
        self.loads.borrow_mut().push(code! {
            let [#(#names),*]: [[#ty; #w]; #s] = {
                let __c = #c;
                unsafe {
                    ::pipeline::rt::simd::Deinterleave::<#ty>::load_phases::<#w, #s>(__isa, #ptr)
                }
            };
        });
        let name = names[phase].clone();
        drop(groups);
        self.phase_groups.borrow_mut()[id].names = Some(names);
        Some(name)
    }

    /// A load evaluated in every lane as one dense or strided vector load,
    /// bound to an array before the lanes, when its first coordinate is a
    /// ramp (not folded) and the others are uniform.
    pub(super) fn vector_load(&self, e: &Expr, source: Source, args: &[Expr]) -> Option<Code> {
        if e.ty == Type::Bool {
            // A `bool` func's buffer holds bytes: loaded lane by lane.
            return None;
        }
        if let Some(name) = self.phase_load(e) {
            return Some(name);
        }
        let (view, own) = self.view(source);
        let folds = self.folds(source);
        let fold = |d: usize| folds.get(d).copied().flatten();
        if fold(0).is_some() {
            return None;
        }
        let ramps: Vec<Option<(Code, i128)>> = args.iter().map(|a| self.ramp(a)).collect();
        if !ramps[1..].iter().all(|r| matches!(r, Some((_, 0)))) {
            return None;
        }
        let w = self.lanes_lit();
        let ty = rust_type(e.ty);
        // The lanes' step in memory, in elements: the ramp's stride times
        // the stride of dimension 0 (declared for an input read where it
        // lies, else 1). A span from the first lane to the last is then
        // read from the first lane's element.
        let stride0 = self.stride0(source);
        let step = ramps[0].as_ref().map(|(_, r)| r * stride0 as i128);
        let span_ptr = |span: &Code| match stride0 {
            1 => code!(#view.dense_ptr(__c, #span)),
            _ => {
                let r = ramps[0].as_ref().map_or(0, |(_, r)| *r as i64);
                code!(#view.lanes_ptr(__c, #r, #w))
            }
        };
        // SAFETY (of the generated blocks): every lane is an iteration of
        // the loop, whose coordinates bounds inference proved inside the
        // view, and the load is evaluated in every lane.
        let clamped = self.clamped_load(source, args, &ramps);
        let doubled = self.doubled_load(source, args, &ramps, &fold);
        let v = match (&ramps[0], step) {
            // An edge of a loop partitioned on `clamp_edge`.
            _ if clamped.is_some() => clamped.expect("just checked"),
            // At `x / 2 + k`.
            _ if doubled.is_some() => doubled.expect("just checked"),
            (Some((_, 1)), Some(1)) => {
                let c = self.lane0(args, &ramps, &fold);
                if let Source::Input(_) = source {
                    self.prefetch_next_row(&view, args, &c);
                }
                code!(unsafe { #view.load_dense(#c) })
            }
            // Stride 2: one dense load of the span from the first lane to
            // the last (inside the box bounds inference proved inside the
            // view, like both ends), deinterleaved.
            (_, Some(2)) if !own => {
                let c = self.lane0(args, &ramps, &fold);
                let ptr = span_ptr(&unsuffixed_lit!(2 * self.w - 1));
                code!({
                    let __c = #c;
                    unsafe {
                        ::pipeline::rt::simd::Deinterleave::<#ty>::load_every_2nd::<#w>(
                            __isa,
                            #ptr,
                        )
                    }
                })
            }
            // Stride -1 (a mirror image): one dense load of the same lanes,
            // from the last lane's coordinate, reversed in registers.
            (Some((_, -1)), Some(-1)) => {
                let c = self.lane0(args, &ramps, &fold);
                let last = suffixed_lit!(i64, self.w as i64 - 1);
                code!({
                    let mut __c = #c;
                    __c[0] -= #last;
                    ::pipeline::rt::simd::Reverse::<#ty>::reverse::<#w>(
                        __isa,
                        unsafe { #view.load_dense::<#w>(__c) },
                    )
                })
            }
            // Strides 3 and 4 (interleaved RGB or RGBA, downsampling by
            // 4): the span read once and the lanes picked by a constant
            // stride, which the compiler turns into shuffles.
            (_, Some(s)) if (3..=4).contains(&s) && !own => {
                self.g.permutes_bytes();
                let c = self.lane0(args, &ramps, &fold);
                let s = s as usize;
                let span = unsuffixed_lit!((self.w - 1) * s + 1);
                let ptr = span_ptr(&span);
                let s = unsuffixed_lit!(s);
                code!({
                    let __c = #c;
                    unsafe {
                        ::pipeline::rt::simd::Deinterleave::<#ty>::load_every::<#w, #span, #s>(
                            __isa,
                            #ptr,
                        )
                    }
                })
            }
            (Some((_, s)), _) if *s != 0 && !own => {
                let c = self.lane0(args, &ramps, &fold);
                let s = suffixed_lit!(i64, *s as i64);
                code!(unsafe { #view.load_strided::<#w>(#c, #s) })
            }
            _ => return None,
        };
        let (_, name) = self.temp();
        self.loads
            .borrow_mut()
            .push(code!(let #name: [#ty; #w] = #v;));
        Some(name)
    }

    /// A load evaluated in every lane at `r / 2 + k` in dimension 0, for a
    /// ramp `r` of stride 1 (`f(x / 2 - 1, y)` in a pyramid's EXPAND), from
    /// a dense dimension 0 (not folded, not the buffer being written), its
    /// other coordinates uniform: the `W / 2` or so elements that the lanes
    /// cover read once and doubled in registers (`View::load_doubled`),
    /// from lane 0's coordinates and the parity of `r` in lane 0.
    fn doubled_load(
        &self,
        source: Source,
        args: &[Expr],
        ramps: &[Option<(Code, i128)>],
        fold: &dyn Fn(usize) -> Option<i64>,
    ) -> Option<Code> {
        let (view, own) = self.view(source);
        if own || self.stride0(source) != 1 || ramps[0].is_some() || args[0].ty != Type::I32 {
            return None;
        }
        let (Some(rest), k) = split_constant(&args[0]) else {
            return None;
        };
        let ExprKind::Binary(BinOp::Div, r, two) = &rest.kind else {
            return None;
        };
        if two.as_int() != Some(2) {
            return None;
        }
        let (base, 1) = self.ramp(r)? else {
            return None;
        };
        // Euclidean division by 2 is a floor: an arithmetic shift, and the
        // parity is the low bit, also of negative coordinates.
        let k = suffixed_lit!(i64, i64::try_from(k).ok()?);
        let first = code!(((((#base) as i64) >> 1) + #k));
        let mut ramps = ramps.to_vec();
        ramps[0] = Some((first, 0));
        let c = self.lane0(args, &ramps, fold);
        let w = self.lanes_lit();
        // SAFETY (of the generated block): each element read is a lane's,
        // whose coordinates bounds inference proved inside the view.
        Some(code!({
            let __c = #c;
            unsafe { #view.load_doubled::<_, #w>(__isa, __c, (((#base) as i64) & 1) != 0) }
        }))
    }

    /// A load from an input through `clamp_edge` along dimension 0 of a
    /// ramp of stride 1 (the edges of a loop partitioned on it), its other
    /// coordinates the same in every lane: the lanes' coordinates clamped
    /// one by one, loaded with one dense load where none needed clamping
    /// ([`pipeline::View::load_dense_clamped`]), instead of a loop of loads
    /// over the lanes in the generated code.
    fn clamped_load(
        &self,
        source: Source,
        args: &[Expr],
        ramps: &[Option<(Code, i128)>],
    ) -> Option<Code> {
        let Source::Input(input) = source else {
            return None;
        };
        let ExprKind::Boundary {
            mode: BoundaryMode::ClampEdge,
            coord,
            min,
            extent,
        } = &args[0].kind
        else {
            return None;
        };
        if self.g.input_stride0(input) != 1 || ramps[0].is_some() {
            return None;
        }
        let (base, 1) = self.ramp(coord)? else {
            return None;
        };
        let (view, _) = self.view(source);
        let (f, k) = self.stage.get();
        let (min, extent) = (self.g.expr(min, f, k), self.g.expr(extent, f, k));
        let rest = ramps[1..].iter().map(|r| {
            let (b, _) = r.as_ref().expect("checked uniform");
            code!((#b) as i64)
        });
        let w = self.lanes_lit();
        // SAFETY (of the generated block): the clamped region is the
        // input's, which the entry checked.
        Some(code!({
            let __c = [(#base) as i64, #(#rest),*];
            unsafe { #view.load_dense_clamped::<#w>(__c, #min, #extent) }
        }))
    }

    /// Prefetches the next row of a dense load from an input, once per row
    /// (the taps `x - 1`, `x`, `x + 1` of a row share it), ahead of the
    /// store's loads. Rows are walked in order by most schedules, so the
    /// next row is what a later iteration of the loop around reads: its
    /// lines are then on their way while this row computes, also across
    /// 4 KiB pages, where the hardware's streaming prefetcher stops.
    fn prefetch_next_row(&self, view: &Code, args: &[Expr], c: &Code) {
        if args.len() < 2 {
            return;
        }
        let (f, k) = self.stage.get();
        let row: Vec<String> = args[1..]
            .iter()
            .map(|a| self.g.expr(a, f, k).to_string())
            .collect();
        let key = format!("{view} {}", row.join(", "));
        if self.prefetched.borrow().contains(&key) {
            return;
        }
        self.prefetched.borrow_mut().push(key);
        self.loads
            .borrow_mut()
            .push(code!(#view.prefetch_next_row(#c);));
    }

    /// `[i64; N]` of lane 0 of coordinates `args` that are ramps (folded
    /// dimensions wrap).
    pub(super) fn lane0(
        &self,
        args: &[Expr],
        ramps: &[Option<(Code, i128)>],
        fold: &dyn Fn(usize) -> Option<i64>,
    ) -> Code {
        let c = args.iter().zip(ramps).enumerate().map(|(d, (a, r))| {
            let (base, _) = r
                .as_ref()
                .expect("coordinates of a vector access are ramps");
            let c = match crate::deep(|| self.wide(a)) {
                Some((w, _)) => w,
                None => code!((#base) as i64),
            };
            wrap_fold(c, fold(d))
        });
        code!([#(#c),*])
    }
}
