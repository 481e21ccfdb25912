//! Source files and diagnostics that point at `file:line:col` with a caret.
//!
//! Every front end (Halide syntax, S-expressions, Rake specs, rule files) reports errors as a
//! [`Diag`]; rendering goes through codespan-reporting so all of them look the same.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use codespan_reporting::diagnostic::{Diagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, Config};

/// A named piece of source text.
#[derive(Debug)]
pub struct Source {
    /// Name shown in diagnostics (a path, or `<command line>`).
    pub name: String,
    /// The text.
    pub text: String,
    /// Byte offset of each line's start, built on first use: loading the built-in
    /// descriptions asks the line of every one (scanning from the start each time was
    /// quadratic in the file's length).
    line_starts: std::sync::OnceLock<Vec<usize>>,
}

impl Source {
    /// A shared source.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Arc<Source> {
        Arc::new(Source {
            name: name.into(),
            text: text.into(),
            line_starts: std::sync::OnceLock::new(),
        })
    }

    /// 1-based line and column of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let starts = self.line_starts.get_or_init(|| {
            std::iter::once(0)
                .chain(self.text.match_indices('\n').map(|(i, _)| i + 1))
                .collect()
        });
        // The last line starting at or before the offset.
        let line = starts.partition_point(|&s| s <= offset);
        (line, offset - starts[line - 1] + 1)
    }

    /// The text of 1-based line `n` (without its line break), if there is one.
    pub fn line(&self, n: usize) -> Option<&str> {
        self.line_col(0);
        let starts = self.line_starts.get().expect("line_col built the index");
        let start = *starts.get(n.checked_sub(1)?)?;
        let end = starts.get(n).map_or(self.text.len(), |&next| next - 1);
        let line = &self.text[start..end];
        Some(line.strip_suffix('\r').unwrap_or(line))
    }
}

/// An error (or note) about a span of a source.
#[derive(Clone)]
pub struct Diag {
    /// The source the span refers to.
    pub source: Arc<Source>,
    /// Byte range of the problem.
    pub span: Range<usize>,
    /// One-line description.
    pub message: String,
    /// Extra lines of explanation.
    pub notes: Vec<String>,
}

impl Diag {
    /// A diagnostic at `span`.
    pub fn new(source: &Arc<Source>, span: Range<usize>, message: impl Into<String>) -> Diag {
        Diag {
            source: source.clone(),
            span,
            message: message.into(),
            notes: Vec::new(),
        }
    }

    /// Adds an explanatory note.
    pub fn note(mut self, note: impl Into<String>) -> Diag {
        self.notes.push(note.into());
        self
    }

    /// `file:line:col` of the start of the span.
    pub fn location(&self) -> String {
        let (l, c) = self.source.line_col(self.span.start);
        format!("{}:{}:{}", self.source.name, l, c)
    }

    /// Renders the diagnostic: a `file:line:col: error: message` line, then the source line
    /// with a caret under the problem.
    pub fn render(&self) -> String {
        let file = SimpleFile::new(self.source.name.as_str(), self.source.text.as_str());
        let len = self.source.text.len();
        let start = self.span.start.min(len);
        let end = self.span.end.clamp(start, len);
        let diagnostic = Diagnostic::error()
            .with_message(&self.message)
            .with_labels(vec![Label::primary((), start..end)])
            .with_notes(self.notes.clone());
        let mut buf = String::new();
        let config = Config::default();
        let mut out = format!("{}: error: {}\n", self.location(), self.message);
        if term::emit_to_string(&mut buf, &config, &file, &diagnostic).is_ok() {
            // codespan repeats the message in its header; our first line already says it.
            let body: Vec<&str> = buf.lines().skip(1).collect();
            out.push_str(&body.join("\n"));
        }
        out
    }
}

impl fmt::Display for Diag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render())
    }
}

impl fmt::Debug for Diag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location(), self.message)
    }
}

impl std::error::Error for Diag {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_lines_and_columns_from_one() {
        let s = Source::new("t", "ab\ncd\n\nx");
        let expect = [
            (0, (1, 1)),
            (1, (1, 2)),
            (2, (1, 3)),
            (3, (2, 1)),
            (5, (2, 3)),
            (6, (3, 1)),
            (7, (4, 1)),
            (8, (4, 2)),
            (99, (4, 2)),
        ];
        for (offset, lc) in expect {
            assert_eq!(s.line_col(offset), lc, "offset {offset}");
        }
        assert_eq!(Source::new("e", "").line_col(0), (1, 1));
        assert_eq!(s.line(1), Some("ab"));
        assert_eq!(s.line(3), Some(""));
        assert_eq!(s.line(4), Some("x"));
        assert_eq!(s.line(5), None);
        assert_eq!(s.line(0), None);
        assert_eq!(Source::new("crlf", "a\r\nb").line(1), Some("a"));
    }
}
