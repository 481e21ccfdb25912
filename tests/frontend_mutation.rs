//! Inputs never crash harrow: every front end is fed a few thousand seeded mutations of
//! real inputs (the repository's kernels, rule and description files, expression files,
//! and, when `../shared` is beside the repository, Rake specs and simd_op_check lines) and
//! must accept or refuse each with a diagnostic: no panic, no stack overflow, no abort.
//!
//! The same entry point (`harrow::frontends::exercise`) is what the coverage-guided fuzz
//! targets in `fuzz/` call; this test is their deterministic, always-on companion.
//! `HARROW_MUTATIONS=N` changes the number of cases per front end (default 500).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use harrow::frontends::{FrontEnd, Outcome, exercise};
use harrow::util::rng::SplitMix64;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()))
}

/// Files of a directory (recursively) whose name ends with `ext`, sorted.
fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files(&p, ext));
        } else if p.to_string_lossy().ends_with(ext) {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// Runs of consecutive blank-line-separated paragraphs (a few rules or descriptions each),
/// so that a seed is small enough to mutate meaningfully and cheap to load.
fn excerpts(text: &str, per: usize) -> Vec<String> {
    let paras: Vec<&str> = text
        .split("\n\n")
        .filter(|p| !p.trim().is_empty())
        .collect();
    paras.chunks(per).map(|c| c.join("\n\n")).collect()
}

/// The excerpts a front end accepts on their own (a paragraph may need a `for` block
/// opened in another), with a floor so that the filter cannot leave too few.
fn loadable(fe: FrontEnd, excerpts: Vec<String>) -> Vec<String> {
    let n = excerpts.len();
    let v: Vec<String> = excerpts
        .into_iter()
        .filter(|t| exercise(fe, t) == Outcome::Accepted)
        .collect();
    assert!(
        v.len() * 2 >= n,
        "{}: only {} of {n} excerpts load on their own",
        fe.name(),
        v.len()
    );
    v
}

/// The whole files seeds are cut from, which must load as they are.
fn whole_files(fe: FrontEnd) -> Vec<PathBuf> {
    let root = repo();
    match fe {
        FrontEnd::Rules => vec![
            root.join("rules/lift.rules"),
            root.join("src/targets/x86/lower.rules"),
        ],
        FrontEnd::Isa => files(&root.join("src/targets/x86/isa"), ".isa"),
        _ => Vec::new(),
    }
}

/// The seed inputs of a front end.
fn seeds(fe: FrontEnd) -> Vec<String> {
    let root = repo();
    let shared = harrow::util::shared::shared_dir();
    let data = root.join("tests/data");
    match fe {
        FrontEnd::HalideExpr => {
            // The expressions of the expression files, printed back one per line.
            let mut v = Vec::new();
            for p in files(&root.join("tests/golden/lift"), ".hl") {
                let src = harrow::diag::Source::new(p.display().to_string(), read(&p));
                let (items, _) = harrow::syntax::file::parse(&src, Default::default())
                    .unwrap_or_else(|d| panic!("{d}"));
                v.extend(items.iter().map(|it| it.expr.to_string()));
            }
            v.extend(
                [
                    "u8((u16(a) + u16(b) + 1) >> 1)",
                    "i16(min(max(i32(s) * i32(t) >> 15, -32768), 32767))",
                    "select(a > b, a - b, b - a)",
                ]
                .map(String::from),
            );
            v
        }
        FrontEnd::ExprFile => {
            let mut v: Vec<String> = files(&root.join("tests/golden/lift"), ".hl")
                .iter()
                .map(|p| read(p))
                .collect();
            v.push(read(&data.join("demo.hl")));
            v
        }
        FrontEnd::RakeSpec => {
            let mut v = vec![read(&data.join("frontend_seeds/spec.sexp"))];
            if let Some(s) = &shared {
                let specs = files(&s.join("corpus"), ".sexp");
                // Every 40th spec: both corpora, all sizes, a bounded cost.
                v.extend(specs.iter().step_by(40).map(|p| read(p)));
            }
            v
        }
        FrontEnd::OpCheck => {
            let mut v = vec![read(&data.join("frontend_seeds/opcheck.txt"))];
            if let Some(s) = &shared {
                for p in files(&s.join("peer/halide-simd-op-check"), ".txt") {
                    let text = read(&p);
                    let lines: Vec<&str> = text.lines().collect();
                    for chunk in lines.chunks(60).step_by(5) {
                        v.push(format!("{}\n{}\n", lines[0], chunk.join("\n")));
                    }
                }
            }
            v
        }
        FrontEnd::Rules => {
            let mut v = excerpts(&read(&root.join("rules/lift.rules")), 3);
            // Lowering rules are checked against the x86 instructions (what
            // `harrow::frontends` loads them with), so the x86 family's file seeds them.
            let x86 = read(&root.join("src/targets/x86/lower.rules"));
            v.extend(excerpts(&x86, 3).into_iter().step_by(2));
            v.push(read(&data.join("wrong.rules")));
            loadable(fe, v)
        }
        FrontEnd::Isa => loadable(
            fe,
            files(&root.join("src/targets/x86/isa"), ".isa")
                .iter()
                .flat_map(|p| excerpts(&read(p), 2).into_iter().step_by(3))
                .collect(),
        ),
        FrontEnd::Kernel => files(&root.join("benchmarks"), ".hk")
            .iter()
            .map(|p| read(p))
            .collect(),
        // The small float kernels (the large ones take long to evaluate per mutant).
        FrontEnd::FloatC => files(&root.join("benchmarks/float"), ".c")
            .iter()
            .filter(|p| {
                let n = p.to_string_lossy();
                !n.contains("10x10") && !n.contains("16x16")
            })
            .map(|p| read(p))
            .collect(),
    }
}

/// Fragments that tend to break parsers: extreme numbers, type names, deep nesting,
/// delimiters, non-ASCII text and control characters.
const FRAGMENTS: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ";",
    ":",
    "=",
    "<",
    ">>",
    "-",
    "*",
    "/",
    "%",
    "0",
    "1",
    "-1",
    "255",
    "65536",
    "2147483648",
    "-9223372036854775808",
    "340282366920938463463374607431768211456",
    "99999999999999999999999999999999999999999",
    "u8",
    "i16x0",
    "u64x4096",
    "i128",
    "x",
    "in(x + 1)",
    "select(",
    "((((((((((((((((((((((((((((((((",
    "\u{0}",
    "\t",
    "\r\n",
    "é",
    "🦀",
    "//",
    ";;",
    "#",
    "\"",
    "'",
    "$",
];

/// One random edit of `text`, on character boundaries.
fn mutate(text: &str, rng: &mut SplitMix64, pool: &[String]) -> String {
    let chars: Vec<char> = text.chars().collect();
    let n = chars.len();
    let pick = |rng: &mut SplitMix64, m: usize| rng.below(m.max(1) as u64) as usize;
    let i = pick(rng, n + 1);
    let j = (i + 1 + pick(rng, 16)).min(n);
    let s = |a: usize, b: usize| chars[a.min(n)..b.min(n)].iter().collect::<String>();
    match rng.below(9) {
        // Delete a span.
        0 => format!("{}{}", s(0, i), s(j, n)),
        // Duplicate a span.
        1 => format!("{}{}{}", s(0, j), s(i, j), s(j, n)),
        // Insert a fragment.
        2 | 3 => {
            let f = FRAGMENTS[pick(rng, FRAGMENTS.len())];
            format!("{}{f}{}", s(0, i), s(i, n))
        }
        // Replace a span with a fragment.
        4 => {
            let f = FRAGMENTS[pick(rng, FRAGMENTS.len())];
            format!("{}{f}{}", s(0, i), s(j, n))
        }
        // Truncate.
        5 => s(0, i),
        // Splice in a span of another seed.
        6 => {
            let other: Vec<char> = pool[pick(rng, pool.len())].chars().collect();
            let a = pick(rng, other.len() + 1);
            let b = (a + pick(rng, 64)).min(other.len());
            let piece: String = other[a..b].iter().collect();
            format!("{}{piece}{}", s(0, i), s(j, n))
        }
        // Change one digit into a huge number.
        7 => match chars.iter().skip(i).position(|c| c.is_ascii_digit()) {
            Some(k) => format!("{}99999999999{}", s(0, i + k), s(i + k, n)),
            None => format!("{text}0"),
        },
        // Repeat a span many times (long inputs, deep nesting).
        _ => {
            let times = 1 + pick(rng, 400);
            format!("{}{}{}", s(0, i), s(i, j).repeat(times), s(j, n))
        }
    }
}

/// Feeds `cases` mutants of `fe`'s seeds to it; returns (accepted, refused).
fn hammer(fe: FrontEnd, cases: usize, seed: u64) -> (usize, usize) {
    let pool = seeds(fe);
    assert!(!pool.is_empty(), "no seeds for {}", fe.name());
    let mut rng = SplitMix64::new(seed ^ (fe as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let (mut accepted, mut refused) = (0, 0);
    // A front end that hangs fails as one that panics: a watchdog prints the input that
    // has run longer than the limit and aborts.
    let current: Arc<Mutex<(usize, String, Instant)>> =
        Arc::new(Mutex::new((usize::MAX, String::new(), Instant::now())));
    let done = Arc::new(AtomicBool::new(false));
    let watchdog = {
        let (current, done) = (current.clone(), done.clone());
        let name = fe.name();
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(200));
                let c = current.lock().unwrap_or_else(|p| p.into_inner());
                if c.0 != usize::MAX && c.2.elapsed() > CASE_LIMIT {
                    eprintln!(
                        "{name}: case {} ran longer than {CASE_LIMIT:?}; the input was:\n{}",
                        c.0, c.1
                    );
                    std::process::abort();
                }
            }
        })
    };
    for case in 0..cases {
        let base = &pool[case % pool.len()];
        let mut text = mutate(base, &mut rng, &pool);
        // Some mutants take several edits, to get far from the seeds.
        for _ in 0..rng.below(3) {
            text = mutate(&text, &mut rng, &pool);
        }
        *current.lock().unwrap_or_else(|p| p.into_inner()) = (case, text.clone(), Instant::now());
        let out = std::panic::catch_unwind(|| exercise(fe, &text));
        match out {
            Ok(Outcome::Accepted) => accepted += 1,
            Ok(Outcome::Refused(msg)) => {
                assert!(
                    !msg.trim().is_empty(),
                    "{}: case {case} refused with an empty message; input:\n{text}",
                    fe.name()
                );
                refused += 1;
            }
            Err(_) => panic!(
                "{} panicked on case {case} (seed {seed}); the input was:\n{text}",
                fe.name()
            ),
        }
    }
    done.store(true, Ordering::Relaxed);
    let _ = watchdog.join();
    (accepted, refused)
}

/// The longest one mutant may take (any phase): far above any front end's normal time.
const CASE_LIMIT: Duration = Duration::from_secs(30);

#[test]
fn every_front_end_survives_mutated_inputs() {
    let cases: usize = std::env::var("HARROW_MUTATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);
    // The command line runs on the main thread's 8 MiB stack; so do the cases, so that a
    // nesting limit tuned for it is tested as it is used.
    let worker = std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(move || {
            let mut report = Vec::new();
            // `HARROW_MUTATION_FRONTENDS=float_c,kernel` hammers only those.
            let only = std::env::var("HARROW_MUTATION_FRONTENDS").unwrap_or_default();
            for fe in FrontEnd::ALL {
                if !only.is_empty() && !only.split(',').any(|n| n == fe.name()) {
                    continue;
                }
                let t = Instant::now();
                let (ok, refused) = hammer(fe, cases, 1);
                report.push(format!(
                    "{:<12} {cases} cases: {ok} accepted, {refused} refused, {:.1} s",
                    fe.name(),
                    t.elapsed().as_secs_f64()
                ));
                // Each front end must see both outcomes, or the mutations are not reaching it.
                assert!(refused > 0, "{}: every mutant was accepted", fe.name());
            }
            report
        })
        .expect("spawn the worker");
    match worker.join() {
        Ok(report) => eprintln!("{}", report.join("\n")),
        Err(e) => std::panic::resume_unwind(e),
    }
}

#[test]
fn unmutated_seeds_are_accepted() {
    // The seeds are real inputs: if they were refused, the mutations would only test the
    // error paths.
    for fe in FrontEnd::ALL {
        for (i, s) in seeds(fe).iter().enumerate() {
            if let Outcome::Refused(msg) = exercise(fe, s) {
                panic!("{} seed {i} refused:\n{msg}\n---\n{s}", fe.name());
            }
        }
        for p in whole_files(fe) {
            if let Outcome::Refused(msg) = exercise(fe, &read(&p)) {
                panic!("{} refused {}:\n{msg}", fe.name(), p.display());
            }
        }
    }
}

/// Inputs the fuzzers once crashed harrow with (`tests/data/frontend_seeds/regressions/
/// <front end>/`, minimized by hand): each must now be accepted or refused, not panic.
#[test]
fn inputs_that_once_crashed_are_handled() {
    let dir = repo().join("tests/data/frontend_seeds/regressions");
    let mut ran = 0;
    for fe in FrontEnd::ALL {
        for p in files(&dir.join(fe.name()), "") {
            let text = read(&p);
            if std::panic::catch_unwind(|| exercise(fe, &text)).is_err() {
                panic!("{} panicked on {}", fe.name(), p.display());
            }
            ran += 1;
        }
    }
    assert!(ran > 0, "no regression inputs under {}", dir.display());
}

/// Deep nesting and long operator chains are refused with a diagnostic before any phase
/// recurses over them (a sum of 200,000 terms used to overflow the stack and abort).
#[test]
fn deep_and_long_inputs_are_refused_not_overflowed() {
    let worker = std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(|| {
            let chain = vec!["a"; 200_000].join(" + ");
            let minus = format!("{}a", "-".repeat(200_000));
            let parens = format!("{}a{}", "(".repeat(100_000), ")".repeat(100_000));
            for text in [&chain, &minus, &parens] {
                let head = &text[..20];
                match exercise(FrontEnd::HalideExpr, text) {
                    Outcome::Refused(m) => assert!(m.contains("nests too deeply"), "{head}: {m}"),
                    Outcome::Accepted => panic!("{head}... was accepted"),
                }
                let file = format!("input a: u8x16\n{text}\n");
                assert!(matches!(
                    exercise(FrontEnd::ExprFile, &file),
                    Outcome::Refused(_)
                ));
                let kernel = format!(
                    "kernel k\ninput a: u8[1]\noutput o(x): u8 = {}\n",
                    text.replace('a', "a(x)")
                );
                assert!(matches!(
                    exercise(FrontEnd::Kernel, &kernel),
                    Outcome::Refused(_)
                ));
            }
            // Within the limit, a long chain still compiles.
            let ok = vec!["a"; 1500].join(" + ");
            assert_eq!(exercise(FrontEnd::HalideExpr, &ok), Outcome::Accepted);
        })
        .expect("spawn the worker");
    if let Err(e) = worker.join() {
        std::panic::resume_unwind(e);
    }
}
