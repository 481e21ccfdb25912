//! Fuzz target: the Intel pseudocode importer (`harrow isa import --vendor intel`) gives a
//! translation or a reason for any text, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = harrow::targets::x86::import::exercise(text);
    }
});
