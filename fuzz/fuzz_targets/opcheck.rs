//! Fuzz target: the `opcheck` front end (see `harrow::frontends`) never panics.
#![no_main]

use harrow::frontends::{FrontEnd, exercise_bytes};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let fe = FrontEnd::from_name("opcheck").expect("a front end of that name");
    let _ = exercise_bytes(fe, data);
});
