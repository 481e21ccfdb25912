//! The progress file of a synthesis run (`harrow synth lower --progress FILE`): one JSON
//! line naming the run, then one line per finished term, appended as each term finishes.
//! A run given the file of an interrupted run (a batch job past its time limit, a node
//! lost) takes the finished terms from it and searches only the others, so a shard is
//! resumable; the rule file it writes is the one an uninterrupted run writes, since every
//! term's rule text is recorded.
//!
//! A line cut short by the interruption is dropped on reading. A file of another run
//! (other options, another term list or harrow version) is refused rather than mixed in.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::{SearchStats, Term, TermReport, Verdict};

/// What makes two runs' results interchangeable: a progress file is reused only by a run
/// with the same key.
#[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug, Clone)]
pub struct RunKey {
    /// harrow's version (rules and costs change between versions).
    pub harrow: String,
    /// The target.
    pub target: String,
    /// `--max-instrs`.
    pub max_instrs: u32,
    /// `--budget-s`.
    pub budget_s: f64,
    /// Every term of the run as `index name = expr`, in list order.
    pub terms: Vec<String>,
}

impl RunKey {
    /// The key of a run over `terms` (each with its index in the whole list).
    pub fn new(target: &str, max_instrs: u32, budget_s: f64, terms: &[(usize, Term)]) -> RunKey {
        RunKey {
            harrow: env!("CARGO_PKG_VERSION").to_string(),
            target: target.to_string(),
            max_instrs,
            budget_s,
            terms: terms
                .iter()
                .map(|(k, t)| format!("{k} {} = {}", t.name, t.expr))
                .collect(),
        }
    }
}

/// One finished term, as recorded.
#[derive(serde::Serialize, serde::Deserialize, Debug, Clone)]
struct Entry {
    index: usize,
    term: String,
    today: f64,
    verdict: Verdict,
    #[serde(flatten)]
    stats: SearchStats,
}

/// An open progress file: the terms it already holds, and the file to append to.
pub struct Progress {
    path: PathBuf,
    done: HashMap<usize, Entry>,
    file: Mutex<std::fs::File>,
}

impl Progress {
    /// Opens `path` for the run `key`: reads the finished terms of an earlier run with the
    /// same key (a missing or empty file starts afresh), rewrites the file without a line
    /// the interruption cut short, and keeps it open for appending.
    pub fn open(path: &Path, key: &RunKey) -> Result<Progress, String> {
        let shown = path.display();
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(format!("cannot read {shown}: {e}")),
        };
        let mut done = HashMap::new();
        let mut lines = text.lines().filter(|l| !l.trim().is_empty());
        if let Some(first) = lines.next() {
            let theirs: RunKey = serde_json::from_str(first)
                .map_err(|_| format!("{shown} is not a progress file of `harrow synth lower`"))?;
            if theirs != *key {
                return Err(format!(
                    "{shown} records another run ({}): give the same options as that run, \
                     or another file (or delete it) to start afresh",
                    difference(&theirs, key)
                ));
            }
            for line in lines {
                // Only the last line can be cut short; any unreadable line is searched again.
                if let Ok(e) = serde_json::from_str::<Entry>(line)
                    && key
                        .terms
                        .iter()
                        .any(|t| t.starts_with(&format!("{} ", e.index)))
                {
                    done.insert(e.index, e);
                }
            }
        }
        let mut fresh = serde_json::to_string(key).map_err(|e| e.to_string())? + "\n";
        let mut indices: Vec<&usize> = done.keys().collect();
        indices.sort();
        for k in indices {
            fresh += &(serde_json::to_string(&done[k]).map_err(|e| e.to_string())? + "\n");
        }
        std::fs::write(path, fresh).map_err(|e| format!("cannot write {shown}: {e}"))?;
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| format!("cannot write {shown}: {e}"))?;
        Ok(Progress {
            path: path.to_path_buf(),
            done,
            file: Mutex::new(file),
        })
    }

    /// How many terms the file already holds.
    pub fn resumed(&self) -> usize {
        self.done.len()
    }

    /// The recorded report of term `index`, when the file holds it.
    pub fn report(&self, index: usize, term: &Term) -> Option<TermReport> {
        let e = self.done.get(&index)?;
        Some(TermReport {
            term: term.clone(),
            today: e.today,
            verdict: e.verdict.clone(),
            stats: e.stats.clone(),
        })
    }

    /// Appends a finished term, flushed at once so that an interruption loses at most
    /// the terms being searched.
    pub fn record(&self, index: usize, r: &TermReport) -> Result<(), String> {
        let e = Entry {
            index,
            term: r.term.name.clone(),
            today: r.today,
            verdict: r.verdict.clone(),
            stats: r.stats.clone(),
        };
        let line = serde_json::to_string(&e).map_err(|e| e.to_string())? + "\n";
        let mut f = self.file.lock().unwrap_or_else(|p| p.into_inner());
        f.write_all(line.as_bytes())
            .and_then(|_| f.flush())
            .map_err(|err| format!("cannot write {}: {err}", self.path.display()))
    }
}

/// The first field in which two run keys differ, for the refusal message.
fn difference(theirs: &RunKey, ours: &RunKey) -> String {
    if theirs.harrow != ours.harrow {
        format!("harrow {} instead of {}", theirs.harrow, ours.harrow)
    } else if theirs.target != ours.target {
        format!("--target {} instead of {}", theirs.target, ours.target)
    } else if theirs.max_instrs != ours.max_instrs {
        format!(
            "--max-instrs {} instead of {}",
            theirs.max_instrs, ours.max_instrs
        )
    } else if theirs.budget_s != ours.budget_s {
        format!(
            "--budget-s {} instead of {}",
            theirs.budget_s, ours.budget_s
        )
    } else {
        format!(
            "another list of terms: {} instead of {}",
            theirs.terms.len(),
            ours.terms.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Expr;
    use crate::types::Type;

    fn terms() -> Vec<(usize, Term)> {
        (0..3)
            .map(|k| {
                (
                    k,
                    Term {
                        name: format!("t{k}"),
                        expr: Expr::var("a", Type::vec(crate::types::Elem::U8, 16)),
                    },
                )
            })
            .collect()
    }

    fn report(t: &Term, verdict: Verdict) -> TermReport {
        TermReport {
            term: t.clone(),
            today: 2.5,
            verdict,
            stats: SearchStats {
                kept: 7,
                built: 9,
                levels_done: 2,
                stopped: false,
                refuted: 1,
                learned: 1,
                pruned: 0,
                abstracted: 0,
                rounds: 2,
                seconds: 0.25,
            },
        }
    }

    #[test]
    fn finished_terms_survive_an_interruption_and_other_runs_are_refused() {
        let path = std::env::temp_dir().join(format!("harrow-progress-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let ts = terms();
        let key = RunKey::new("x86-avx2", 2, 20.0, &ts);
        let p = Progress::open(&path, &key).unwrap();
        assert_eq!(p.resumed(), 0);
        let found = Verdict::Found {
            rhs: "x".into(),
            cost: 0.5,
            rule: "rule r(a: u8x16):\n    a => a\n".into(),
        };
        p.record(0, &report(&ts[0].1, found)).unwrap();
        p.record(2, &report(&ts[2].1, Verdict::NotCheaper { cost: 2.0 }))
            .unwrap();
        drop(p);
        // The interruption cut a third line short.
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"index\": 1, \"term\": \"t1\", \"tod");
        std::fs::write(&path, text).unwrap();
        let p = Progress::open(&path, &key).unwrap();
        assert_eq!(p.resumed(), 2);
        assert!(p.report(1, &ts[1].1).is_none());
        let r = p.report(0, &ts[0].1).unwrap();
        assert!(
            matches!(&r.verdict, Verdict::Found { rule, .. } if rule.contains("rule r(")),
            "{:?}",
            r.verdict
        );
        assert_eq!((r.stats.refuted, r.stats.rounds, r.stats.kept), (1, 2, 7));
        drop(p);
        // The cut line is gone from the file; a run with other options is refused.
        let kept = std::fs::read_to_string(&path).unwrap();
        assert_eq!(kept.lines().count(), 3, "{kept}");
        assert!(kept.lines().all(|l| l.ends_with('}')), "{kept}");
        let other = RunKey::new("x86-avx2", 3, 20.0, &ts);
        let err = Progress::open(&path, &other).err().unwrap();
        assert!(err.contains("--max-instrs 2 instead of 3"), "{err}");
        std::fs::write(&path, "not json\n").unwrap();
        let err = Progress::open(&path, &key).err().unwrap();
        assert!(err.contains("is not a progress file"), "{err}");
        let _ = std::fs::remove_file(&path);
    }
}
