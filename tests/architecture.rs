//! The architecture's written invariants hold in the code (ARCHITECTURE.md, "Dependency
//! order"):
//! - the top-level modules form the layers the document lists: a module uses (through
//!   `crate::` paths, outside its tests) only modules listed before it;
//! - within a module, the files other than `mod.rs` never use each other in a cycle;
//! - a target's folder never uses another target's folder.
//!
//! The code is read as text: `crate::NAME` and `super::NAME` paths, with comments and the
//! trailing `#[cfg(test)]` module of each file left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The text of a source file without line comments and without its test module.
fn code_of(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]"
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod "))
        {
            break;
        }
        let code = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// The identifiers that follow `prefix` in `code` (`crate::` gives `ir` in `crate::ir::X`),
/// and the names of a `prefix{a, b::c}` group.
fn names_after(code: &str, prefix: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    for (i, _) in code.match_indices(prefix) {
        // `a::crate::` is not a crate path; `super::super::` is handled by its first part.
        let before = code[..i].chars().last();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let rest = &code[i + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for part in group[..end].split(',') {
                let n = ident(part.trim());
                if !n.is_empty() {
                    out.insert(n);
                }
            }
        } else {
            let n = ident(rest);
            if !n.is_empty() {
                out.insert(n);
            }
        }
    }
    out
}

/// The layers written in ARCHITECTURE.md: the line `types < ... < cli`.
fn layers(root: &Path) -> Vec<String> {
    let doc = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let line = doc
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("types <"))
        .expect("ARCHITECTURE.md lists the layers on a line `types < ... < cli`");
    line.split('<').map(|s| s.trim().to_string()).collect()
}

/// The top-level module of a file under `src/` (`ir` for `src/ir/op.rs`).
fn top_module(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("under src");
    let first = rel.components().next().expect("a component");
    first
        .as_os_str()
        .to_string_lossy()
        .trim_end_matches(".rs")
        .to_string()
}

#[test]
fn modules_use_only_the_layers_below_them() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    let order = layers(root);
    let rank: BTreeMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(i, m)| (m.as_str(), i))
        .collect();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut problems = Vec::new();
    for f in &files {
        let module = top_module(&src, f);
        if module == "lib" || module == "main" {
            continue;
        }
        let Some(&mine) = rank.get(module.as_str()) else {
            problems.push(format!(
                "module `{module}` ({}) is not in ARCHITECTURE.md's layers",
                f.display()
            ));
            continue;
        };
        let code = code_of(&std::fs::read_to_string(f).expect("source"));
        for used in names_after(&code, "crate::") {
            if let Some(&theirs) = rank.get(used.as_str())
                && theirs > mine
            {
                problems.push(format!(
                    "{} (layer `{module}`) uses `crate::{used}`, a layer above it",
                    f.strip_prefix(root).unwrap_or(f).display()
                ));
            }
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// The strongly connected components with more than one file of a graph.
fn cycles(graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    // Two files are in one cycle when each reaches the other.
    let reach = |from: &PathBuf| -> BTreeSet<PathBuf> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(n) = stack.pop() {
            for m in graph.get(&n).into_iter().flatten() {
                if seen.insert(m.clone()) {
                    stack.push(m.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&PathBuf, BTreeSet<PathBuf>> =
        graph.keys().map(|k| (k, reach(k))).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for (a, ra) in &reaches {
        if done.contains(*a) || !ra.contains(*a) {
            continue;
        }
        let comp: Vec<PathBuf> = ra
            .iter()
            .filter(|b| reaches.get(b).is_some_and(|rb| rb.contains(*a)))
            .cloned()
            .collect();
        done.extend(comp.iter().cloned());
        if comp.len() > 1 {
            out.push(comp);
        }
    }
    out
}

#[test]
fn files_of_a_module_use_each_other_without_cycles() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    // The sibling files of each directory (a child directory counts as its `mod.rs`),
    // by module name.
    let sibling = |f: &Path, name: &str| -> Option<PathBuf> {
        let dir = f.parent()?;
        let dir = if f.file_name().is_some_and(|n| n == "mod.rs") {
            dir.parent()?
        } else {
            dir
        };
        let file = dir.join(format!("{name}.rs"));
        let sub = dir.join(name).join("mod.rs");
        [file, sub].into_iter().find(|p| p.is_file())
    };
    let mut graph: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for f in &files {
        if f.file_name()
            .is_some_and(|n| n == "mod.rs" || n == "lib.rs" || n == "main.rs")
        {
            continue;
        }
        let code = code_of(&std::fs::read_to_string(f).expect("source"));
        // The module path of the file's directory, to read `crate::lower::select` as a
        // sibling of `src/lower/emit.rs`.
        let dir = f.parent().expect("a parent");
        let module_path: Vec<String> = dir
            .strip_prefix(&src)
            .expect("under src")
            .components()
            .map(|c| c.as_os_str().to_string_lossy().to_string())
            .collect();
        let mut used = names_after(&code, "super::");
        if !module_path.is_empty() {
            used.extend(names_after(
                &code,
                &format!("crate::{}::", module_path.join("::")),
            ));
        }
        let edges = graph.entry(f.clone()).or_default();
        for name in used {
            if let Some(s) = sibling(f, &name)
                && &s != f
                && s.file_name().is_some_and(|n| n != "mod.rs")
            {
                edges.insert(s);
            }
        }
    }
    let found = cycles(&graph);
    let text: Vec<String> = found
        .iter()
        .map(|c| {
            c.iter()
                .map(|p| p.strip_prefix(root).unwrap_or(p).display().to_string())
                .collect::<Vec<_>>()
                .join(" <-> ")
        })
        .collect();
    assert!(text.is_empty(), "import cycles:\n{}", text.join("\n"));
}

#[test]
fn a_target_folder_never_uses_another_target() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let targets = root.join("src/targets");
    let folders: Vec<String> = std::fs::read_dir(&targets)
        .expect("src/targets")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_string_lossy().to_string())
        .collect();
    assert!(folders.len() >= 3, "{folders:?}");
    let mut problems = Vec::new();
    for folder in &folders {
        let mut files = Vec::new();
        rust_files(&targets.join(folder), &mut files);
        for f in files {
            let code = code_of(&std::fs::read_to_string(&f).expect("source"));
            let mut used = names_after(&code, "crate::targets::");
            used.extend(names_after(&code, "super::"));
            for other in folders.iter().filter(|o| *o != folder) {
                if used.contains(other) {
                    problems.push(format!(
                        "{} uses the target `{other}`",
                        f.strip_prefix(root).unwrap_or(&f).display()
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn the_reader_sees_paths_groups_and_skips_tests() {
    let code = code_of(
        "use crate::ir::{Expr, Op};\nuse super::{dot, lanes::x};\n// crate::cli in a comment\nfn f() { crate::lower::select::run(); }\n#[cfg(test)]\nmod tests {\n    use crate::kernel;\n}\n",
    );
    assert_eq!(
        names_after(&code, "crate::"),
        ["ir", "lower"].map(String::from).into_iter().collect()
    );
    assert_eq!(
        names_after(&code, "super::"),
        ["dot", "lanes"].map(String::from).into_iter().collect()
    );
    assert_eq!(
        names_after("use crate::ir::{a, b};", "crate::ir::"),
        ["a", "b"].map(String::from).into_iter().collect()
    );
}
