// The allocator of the `harrow` binary, included by `main.rs` and by the compile-time
// benchmark (`benches/compile.rs`), so that the benchmark's figures are the CLI's.

/// Compiling builds and drops many small hash-consed nodes; mimalloc's thread-local free
/// lists serve them faster than the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Has mimalloc keep the memory a compile frees for a second before returning it to the
/// system, instead of its default 10 ms: selection frees a variant's memo tables and the
/// next variant allocates as much again, so with the default the pages went back and were
/// faulted in (and zeroed by the kernel) anew, 8-12% of a compile's time. A harrow process
/// is short, or reuses what it keeps. `MIMALLOC_PURGE_DELAY` still overrides it.
fn keep_freed_memory_a_while() {
    // `mi_option_purge_delay` of mimalloc.h (its 16th option, in v2 and v3 alike).
    const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;
    unsafe extern "C" {
        /// Sets an option's value unless the environment or a call set it already.
        fn mi_option_set_default(option: std::ffi::c_int, value: std::ffi::c_long);
    }
    // SAFETY: a plain setter of mimalloc's (linked through the `mimalloc` crate), called
    // before any other thread exists; it only stores the value.
    unsafe { mi_option_set_default(MI_OPTION_PURGE_DELAY, 1000) }
}
