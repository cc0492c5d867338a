//! Which instruction set the generated kernels run with.
//!
//! Every pipeline is compiled once per level ([`Isa`]); its entry function asks
//! [`isa`] which one to call. The answer is the best level the processor
//! supports (`is_x86_feature_detected!`, checked once and cached), lowered by
//! the environment variable `PIPELINE_ISA` (`scalar`, `sse4.1`, `avx2`,
//! `avx512`, `avx512vbmi`; read once) and, on the calling thread, by [`with_isa`] (for tests
//! and benchmarks that cover every level). A level above what the processor
//! supports is never used. A pipeline with tuned cache entries for some
//! levels asks it too, at each call, which schedule to run: its entry for
//! the level, or the auto-scheduler's (`pipeline::guide::scheduling`,
//! *Tuned schedules*); where an entry names a processor, it asks
//! [`processor`] as well.
//!
//! ```text
//! PIPELINE_ISA=sse4.1 cargo bench   // every pipeline runs its SSE4.1 kernel
//! ```

use std::cell::Cell;
use std::sync::atomic::{AtomicU8, Ordering};

/// An instruction-set level, lowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Isa {
    /// Plain Rust for the compilation target's baseline.
    Scalar,
    /// x86-64 with SSE4.1.
    Sse41,
    /// x86-64 with AVX2 and FMA.
    Avx2,
    /// x86-64 with AVX-512 F and BW.
    Avx512,
    /// x86-64 with AVX-512 F, BW and VBMI (byte permutes across the whole
    /// register: Ice Lake, Zen 4 and later).
    Avx512Vbmi,
}

impl Isa {
    /// Every level, lowest first.
    pub const ALL: [Isa; 5] = [
        Isa::Scalar,
        Isa::Sse41,
        Isa::Avx2,
        Isa::Avx512,
        Isa::Avx512Vbmi,
    ];

    /// The name `PIPELINE_ISA` uses.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Sse41 => "sse4.1",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
            Isa::Avx512Vbmi => "avx512vbmi",
        }
    }

    /// The level named `name` (as in `PIPELINE_ISA`).
    pub fn from_name(name: &str) -> Option<Isa> {
        Isa::ALL.into_iter().find(|i| i.name() == name.trim())
    }

    /// The levels this processor supports, lowest first.
    pub fn available() -> Vec<Isa> {
        let best = detected();
        Isa::ALL.into_iter().filter(|&i| i <= best).collect()
    }

    fn from_u8(v: u8) -> Isa {
        Isa::ALL[v as usize]
    }
}

/// The best level the processor supports.
pub(crate) fn detected() -> Isa {
    #[cfg(target_arch = "x86_64")]
    {
        // The AVX-512 kernels enable AVX2 and FMA too (and may run the
        // AVX2 kernel): every level implies the one below.
        let avx2 = std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma");
        if avx2
            && std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
        {
            if std::is_x86_feature_detected!("avx512vbmi") {
                return Isa::Avx512Vbmi;
            }
            return Isa::Avx512;
        }
        if avx2 {
            return Isa::Avx2;
        }
        if std::is_x86_feature_detected!("sse4.1") {
            return Isa::Sse41;
        }
    }
    Isa::Scalar
}

/// The process-wide level, `UNSET` until the first call.
static CHOSEN: AtomicU8 = AtomicU8::new(UNSET);
const UNSET: u8 = u8::MAX;

thread_local! {
    /// A lower level for this thread, set by [`with_isa`].
    static OVERRIDE: Cell<Option<Isa>> = const { Cell::new(None) };
}

/// The level kernels run with now (see the module docs).
#[inline]
pub fn isa() -> Isa {
    let chosen = Isa::from_u8(once(&CHOSEN, || {
        let best = detected();
        let asked = std::env::var("PIPELINE_ISA")
            .ok()
            .and_then(|s| Isa::from_name(&s));
        asked.map_or(best, |a| a.min(best)) as u8
    }));
    match OVERRIDE.with(Cell::get) {
        Some(o) => o.min(chosen),
        None => chosen,
    }
}

/// `cell`'s value, set by `init` at the first call (`UNSET` before; two
/// threads may both run `init`, which gives each the same answer).
#[inline]
fn once(cell: &AtomicU8, init: impl FnOnce() -> u8) -> u8 {
    match cell.load(Ordering::Relaxed) {
        UNSET => {
            let v = init();
            cell.store(v, Ordering::Relaxed);
            v
        }
        v => v,
    }
}

/// Whether groups of taps ([`crate::View::tap_offsets`]) are read by the
/// gather instructions (where a level has them and the taps fill its
/// registers) rather than a load a lane, whose lane offsets every tap of
/// the group shares. Gathers paid on a Xeon and not on a Zen 3: the
/// bilateral grid's slice (8 taps of two grids) took the pipeline from
/// 27.7-28.2 to 22.8-23.2 ms at AVX2 on the Xeon (2026-11-28), and from
/// 36.8-43.7 to 44.6-53.3 ms (medians of 10 runs, five rounds
/// alternating, 2 threads) at AVX2 on the Zen 3 (2026-11-29). So: gathers
/// on `GenuineIntel` processors, loads elsewhere (one processor of each
/// vendor measured; not Zen 4). The environment variable
/// `PIPELINE_TAP_GATHERS` (`on` or `off`, read once) overrides it. Lookup
/// tables ([`crate::View::gather`]) always use the gather instructions: on
/// the same Zen 3 they were as fast as loads or faster (a `u8` table
/// 3.0-3.3 against 3.8-4.3 ms).
#[inline]
pub fn tap_gathers() -> bool {
    once(&TAP_GATHERS, || {
        let on = match std::env::var("PIPELINE_TAP_GATHERS").as_deref() {
            Ok("on") => true,
            Ok("off") => false,
            _ => intel(),
        };
        on as u8
    }) == 1
}

/// [`tap_gathers`]' answer, `UNSET` until its first call.
static TAP_GATHERS: AtomicU8 = AtomicU8::new(UNSET);

/// The processor, as a tuned cache entry that serves it alone names it:
/// the vendor of CPUID leaf 0 and the family and model of leaf 1, as
/// Linux's `/proc/cpuinfo` gives them (`AuthenticAMD family 25 model 17`,
/// `GenuineIntel family 6 model 143`); empty off x86_64. The environment
/// variable `PIPELINE_PROCESSOR` (read once) replaces it, to run another
/// processor's entries. A pipeline whose cache has an entry for its level
/// and this processor runs that one, before an entry for the level alone
/// (`pipeline::guide::scheduling`, *Tuned schedules*).
pub fn processor() -> &'static str {
    static NAME: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    NAME.get_or_init(|| match std::env::var("PIPELINE_PROCESSOR") {
        Ok(name) => name.trim().to_string(),
        Err(_) => identified(),
    })
}

/// The processor's vendor, family and model, from CPUID.
fn identified() -> String {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: every x86-64 processor has CPUID and its leaf 1.
        #[allow(unused_unsafe)]
        let signature = unsafe { core::arch::x86_64::__cpuid(1).eax };
        let vendor: String = vendor()
            .iter()
            .map(|&b| if b.is_ascii_graphic() { b as char } else { ' ' })
            .collect();
        let vendor: Vec<&str> = vendor.split_whitespace().collect();
        let vendor = match vendor.is_empty() {
            true => "unknown".to_string(),
            false => vendor.join(" "),
        };
        let family = (signature >> 8) & 0xf;
        let model = (signature >> 4) & 0xf;
        // The extended fields count as Linux counts them.
        let (family, model) = match family {
            0xf => (
                family + ((signature >> 20) & 0xff),
                model | ((signature >> 12) & 0xf0),
            ),
            6.. => (family, model | ((signature >> 12) & 0xf0)),
            _ => (family, model),
        };
        format!("{vendor} family {family} model {model}")
    }
    #[cfg(not(target_arch = "x86_64"))]
    String::new()
}

/// CPUID leaf 0's vendor string (EBX, EDX, ECX).
#[cfg(target_arch = "x86_64")]
fn vendor() -> [u8; 12] {
    // SAFETY: every x86-64 processor has CPUID and its leaf 0.
    #[allow(unused_unsafe)]
    let r = unsafe { core::arch::x86_64::__cpuid(0) };
    let mut bytes = [0u8; 12];
    for (at, word) in [r.ebx, r.edx, r.ecx].into_iter().enumerate() {
        bytes[4 * at..4 * at + 4].copy_from_slice(&word.to_le_bytes());
    }
    bytes
}

/// Whether the processor's vendor is Intel.
fn intel() -> bool {
    #[cfg(target_arch = "x86_64")]
    return &vendor() == b"GenuineIntel";
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Runs `f` with kernels called on this thread using at most level `level`.
pub fn with_isa<R>(level: Isa, f: impl FnOnce() -> R) -> R {
    let previous = OVERRIDE.with(|o| o.replace(Some(level)));
    struct Restore(Option<Isa>);
    impl Drop for Restore {
        fn drop(&mut self) {
            OVERRIDE.with(|o| o.set(self.0));
        }
    }
    let _restore = Restore(previous);
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_levels_are_ordered() {
        for i in Isa::ALL {
            assert_eq!(Isa::from_name(i.name()), Some(i));
        }
        assert!(
            Isa::Scalar < Isa::Sse41 && Isa::Avx2 < Isa::Avx512 && Isa::Avx512 < Isa::Avx512Vbmi
        );
        assert_eq!(Isa::from_name("neon"), None);
    }

    #[test]
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    fn the_vendor_is_the_one_linux_reports() {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap();
        let vendor = cpuinfo
            .lines()
            .find_map(|l| l.strip_prefix("vendor_id"))
            .map(|v| v.trim_start_matches([' ', '\t', ':']).trim());
        assert_eq!(intel(), vendor == Some("GenuineIntel"), "{vendor:?}");
    }

    #[test]
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    fn the_processor_is_the_one_linux_reports() {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap();
        let field = |name: &str| {
            cpuinfo
                .lines()
                .find(|l| l.split(':').next().map(str::trim) == Some(name))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
                .unwrap()
        };
        let linux = format!(
            "{} family {} model {}",
            field("vendor_id"),
            field("cpu family"),
            field("model")
        );
        assert_eq!(identified(), linux);
    }

    #[test]
    fn with_isa_lowers_the_level_on_this_thread_only() {
        let best = isa();
        with_isa(Isa::Scalar, || {
            assert_eq!(isa(), Isa::Scalar);
            let other = std::thread::spawn(isa).join().unwrap();
            assert_eq!(other, best);
        });
        assert_eq!(isa(), best);
        // Asking for more than the processor has gives what it has.
        with_isa(Isa::Avx512Vbmi, || assert!(isa() <= best));
        assert!(Isa::available().contains(&best));
    }
}
