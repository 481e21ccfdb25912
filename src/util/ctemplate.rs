//! C templates: the fixed C harrow writes for its programs lives in template files
//! (`include_str!`), with `@NAME@` markers where per-program text goes. Filling checks
//! that every marker gets a value and every value a marker, so a template and its caller
//! cannot drift apart silently.

/// `template` (named `name` in messages) with each `@KEY@` replaced by its value.
///
/// # Panics
/// When a marker has no value or a value has no marker: templates are part of harrow,
/// so either is a bug in harrow, never bad input.
pub fn fill(name: &str, template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 256);
    let mut used = vec![false; values.len()];
    let mut rest = template;
    while let Some(start) = rest.find('@') {
        let after = &rest[start + 1..];
        let key_len = after
            .find(|c: char| !(c.is_ascii_uppercase() || c == '_'))
            .unwrap_or(after.len());
        let key = &after[..key_len];
        if key.is_empty() || !after[key_len..].starts_with('@') {
            // A lone `@` (in a comment, say) is text.
            out.push_str(&rest[..=start]);
            rest = after;
            continue;
        }
        let Some(k) = values.iter().position(|(n, _)| *n == key) else {
            panic!("template {name}: no value for @{key}@");
        };
        used[k] = true;
        out.push_str(&rest[..start]);
        out.push_str(values[k].1);
        rest = &after[key_len + 1..];
    }
    out.push_str(rest);
    if let Some(k) = used.iter().position(|u| !u) {
        panic!("template {name}: no marker @{}@", values[k].0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_filled_and_lone_at_signs_kept() {
        let t = "int x = @A@; /* mail@example */ @B_C@\n";
        assert_eq!(
            fill("t", t, &[("A", "1"), ("B_C", "int y;")]),
            "int x = 1; /* mail@example */ int y;\n"
        );
    }

    #[test]
    #[should_panic(expected = "no value for @A@")]
    fn a_marker_without_a_value_is_a_bug() {
        fill("t", "@A@", &[]);
    }

    #[test]
    #[should_panic(expected = "no marker @B@")]
    fn a_value_without_a_marker_is_a_bug() {
        fill("t", "@A@", &[("A", ""), ("B", "")]);
    }
}
