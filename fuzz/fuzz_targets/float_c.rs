//! Fuzz target: the `float_c` front end (C float kernels, `harrow float`) (see `harrow::frontends`) never panics.
#![no_main]

use harrow::frontends::{FrontEnd, exercise_bytes};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let fe = FrontEnd::from_name("float_c").expect("a front end of that name");
    let _ = exercise_bytes(fe, data);
});
