//! `harrow synth lift` end to end: it finds proved lifting rules for what the lifting rules
//! leave unlifted, carries them to other widths, the rules it writes change what `harrow
//! lift` gives, shards merge into the unsharded file, and the committed proposals from the
//! built-in fuzz-kernel corpus are what the command gives today.

use std::path::Path;
use std::process::Command;

mod common;

use common::harrow;

fn z3_or_fail() {
    if let Err(e) = harrow::verify::solver_available("z3") {
        panic!("{e}");
    }
}

fn temp(name: &str) -> String {
    std::env::temp_dir()
        .join(format!("harrow-synth-lift-{}-{name}", std::process::id()))
        .to_string_lossy()
        .into_owned()
}

#[test]
fn unlifted_idioms_become_proved_rules_that_lifting_then_applies() {
    z3_or_fail();
    let out = temp("idioms.rules");
    let (ok, summary, err) = harrow(&[
        "synth",
        "lift",
        "--terms",
        "tests/data/synth_lift/idioms.hl",
        "--out",
        &out,
    ]);
    assert!(ok, "{err}");
    let rules = std::fs::read_to_string(&out).unwrap();
    // `(a + b) - min(a, b)` is the larger of the two; the halving of their distance
    // added to the smaller is their halving add; a plain sum has nothing cheaper.
    assert!(
        rules.contains("((a + b) - min(a, b)) => max(a, b)"),
        "{rules}"
    );
    assert!(rules.contains("=> (uint8)halving_add(a, b)"), "{rules}");
    assert!(
        rules.contains("rule synth_lift_idioms_2_0_as_u16(a: u16, b: u16)"),
        "{rules}"
    );
    assert!(!rules.contains("idioms_4"), "{rules}");
    assert!(
        summary.contains("idioms_4") && summary.contains("not cheaper"),
        "{summary}"
    );
    // Every rule written is proved again by `harrow verify`.
    let (ok, proved, err) = harrow(&["verify", "--rules", &out, "--no-cache"]);
    assert!(ok && proved.contains("proved"), "{proved}{err}");
    // Loaded with `--rules`, lifting now finds them (at another lane count too).
    let before = harrow(&[
        "lift",
        "-i",
        "a:u16x8",
        "-i",
        "b:u16x8",
        "(a + b) - min(a, b)",
    ]);
    let after = harrow(&[
        "lift",
        "--rules",
        &out,
        "-i",
        "a:u16x8",
        "-i",
        "b:u16x8",
        "(a + b) - min(a, b)",
    ]);
    assert!(before.0 && after.0, "{} {}", before.2, after.2);
    assert!(!before.1.contains("max("), "{}", before.1);
    assert_eq!(after.1.trim(), "max(a, b)");
    let _ = std::fs::remove_file(&out);
}

#[test]
fn terms_come_from_kernels_without_reductions_or_lifted_roots() {
    let dir = temp("kernels");
    std::fs::create_dir_all(&dir).unwrap();
    let k = Path::new(&dir).join("k.hk");
    std::fs::write(
        &k,
        "kernel k\ninput a: u8[2]\ninput b: u8[2]\n\
         output o(x, y): u8 = u8(i16(a(x, y)) - i16(b(x, y)))\n",
    )
    .unwrap();
    let k = k.to_string_lossy().into_owned();
    let (ok, json, err) = harrow(&["synth", "lift", "--kernels", &k, "--json"]);
    assert!(ok, "{err}");
    let rows: serde_json::Value = serde_json::from_str(&json).unwrap();
    let rows = rows.as_array().unwrap();
    // The truncated widening difference is one term, over the two loads as variables.
    assert_eq!(rows.len(), 1, "{json}");
    assert_eq!(rows[0]["verdict"], "found", "{json}");
    assert_eq!(rows[0]["rhs"], "(a - b)", "{json}");
    let (ok, _, err) = harrow(&["synth", "lift"]);
    assert!(!ok && err.contains("no terms"), "{err}");
    let (ok, _, err) = harrow(&["synth", "lift", "--terms-from", "fuzz-kernels:x"]);
    assert!(!ok && err.contains("fuzz-kernels:SEED"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn shards_of_a_lift_run_merge_into_the_unsharded_file() {
    z3_or_fail();
    let corpus = ["--terms-from", "fuzz-kernels:1:60", "--budget-s", "600"];
    let run = |extra: &[&str], out: &str| {
        Command::new(env!("CARGO_BIN_EXE_harrow"))
            .args(["synth", "lift"])
            .args(corpus)
            .args(extra)
            .args(["--out", out])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .spawn()
            .expect("the harrow binary runs")
    };
    let whole = temp("whole.rules");
    let shards: Vec<String> = (0..2).map(|i| temp(&format!("shard-{i}.rules"))).collect();
    let mut children = vec![run(&[], &whole)];
    for (i, s) in shards.iter().enumerate() {
        children.push(run(&["--shard", &format!("{i}/2")], s));
    }
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let (ok, merged, err) = harrow(&["synth", "merge", &shards[1], &shards[0]]);
    assert!(ok, "{err}");
    let whole_text = std::fs::read_to_string(&whole).unwrap();
    assert!(whole_text.contains("rule synth_lift_"), "{whole_text}");
    assert_eq!(merged, whole_text);
    for f in shards.iter().chain([&whole]) {
        let _ = std::fs::remove_file(f);
    }
}

#[test]
fn committed_lift_proposals_regenerate() {
    z3_or_fail();
    let out = temp("fuzz.rules");
    let (ok, _, err) = harrow(&[
        "synth",
        "lift",
        "--terms-from",
        "fuzz-kernels",
        "--budget-s",
        "600",
        "--out",
        &out,
    ]);
    assert!(ok, "{err}");
    let got = std::fs::read_to_string(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules/synth/lift.rules");
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    if got != want {
        if std::env::var_os("UPDATE_EXPECT").is_some() {
            std::fs::write(&path, &got).unwrap();
            return;
        }
        let diff: Vec<String> = want
            .lines()
            .zip(got.lines())
            .filter(|(a, b)| a != b)
            .take(6)
            .map(|(a, b)| format!("- {a}\n+ {b}"))
            .collect();
        panic!(
            "rules/synth/lift.rules is not what `harrow synth lift --terms-from fuzz-kernels` \
             gives today ({} lines committed, {} now); first differences:\n{}\nre-bless with \
             UPDATE_EXPECT=1 cargo test --release --test synth_lift",
            want.lines().count(),
            got.lines().count(),
            diff.join("\n")
        );
    }
}
