//! Tells valgrind's memcheck what [`super::scratch`] does with the blocks it
//! keeps for reuse, so that `scripts/memcheck.sh` sees a reused block as it
//! would see a fresh allocation: its requested bytes undefined, the slack past
//! them (a block may be up to a quarter larger than asked) and every block
//! waiting in a cache not addressable. Without this, a read of an element that
//! generated code never wrote finds the last user's value, which memcheck
//! takes for defined.
//!
//! These are valgrind's client requests (`valgrind/memcheck.h`): a sequence of
//! rotations of `rdi` by 128 bits in all, then `xchg rbx, rbx`, which does
//! nothing on a processor and which valgrind's translator recognizes. Off
//! x86-64 they are empty.

/// `VG_USERREQ_TOOL_BASE('M', 'C')` and the requests after it
/// (`Vg_MemCheckClientRequest`).
#[cfg(target_arch = "x86_64")]
const MAKE_MEM_NOACCESS: usize = (b'M' as usize) << 24 | (b'C' as usize) << 16;
#[cfg(target_arch = "x86_64")]
const MAKE_MEM_UNDEFINED: usize = MAKE_MEM_NOACCESS + 1;

#[cfg(target_arch = "x86_64")]
fn request(code: usize, ptr: *const u8, bytes: usize) {
    if bytes == 0 {
        return;
    }
    let args: [usize; 6] = [code, ptr as usize, bytes, 0, 0, 0];
    // SAFETY: on a processor the sequence leaves every register as it was
    // (four rotations of rdi by 128 bits in all; rbx exchanged with itself)
    // and touches no memory; under valgrind it reads `args`, which lives
    // until the end of the call, and changes only memcheck's shadow state.
    unsafe {
        core::arch::asm!(
            "rol rdi, 3",
            "rol rdi, 13",
            "rol rdi, 61",
            "rol rdi, 51",
            "xchg rbx, rbx",
            in("rax") args.as_ptr(),
            inout("rdx") 0usize => _,
            inout("rdi") 0usize => _,
            options(nostack),
        );
    }
}

/// Marks `bytes` bytes at `ptr` as addressable and undefined (as a fresh
/// allocation is).
pub(super) fn undefined(ptr: *const u8, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    request(MAKE_MEM_UNDEFINED, ptr, bytes);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (ptr, bytes);
}

/// Marks `bytes` bytes at `ptr` as not addressable (as freed memory is).
pub(super) fn no_access(ptr: *const u8, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    request(MAKE_MEM_NOACCESS, ptr, bytes);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (ptr, bytes);
}
