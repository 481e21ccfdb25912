//! The C front end of float kernels: parsing (the `lang-c` crate) and the kernel's
//! signature. The subset is one function returning `void` whose parameters are
//! fixed-size `float` arrays (or `float` scalars); `symbolic.rs` evaluates its body.
//!
//! The text is not run through a preprocessor: `#include` lines are ignored (the kernels
//! need at most `<math.h>`), and `#define NAME literal` defines a named integer or float
//! constant, so the sizes written as macros in ordinary C stay readable. Anything else
//! starting with `#` is an error at its place.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use lang_c::ast::{
    ArraySize, DeclarationSpecifier, Declarator, DeclaratorKind, DerivedDeclarator,
    ExternalDeclaration, FunctionDefinition, TypeQualifier, TypeSpecifier,
};
use lang_c::span::{Node, Span};

use crate::diag::{Diag, Source};

/// Deepest bracket nesting accepted: the generated parser recurses per level.
const MAX_NESTING: usize = 64;
/// Most operator characters in one statement (between `;`, `{` and `}`): the parser and
/// the evaluator recurse once per operator of a chain.
const MAX_STATEMENT_OPERATORS: usize = 2048;
/// Most elements of one array: float kernels are small and fixed-size (Diospyros' largest
/// are 16x16), and every output element becomes an e-graph lane.
pub const MAX_ELEMENTS: usize = 16384;
/// Most operator characters in a row (whitespace between them included).
const MAX_OPERATOR_RUN: usize = 6;
/// Most `else` branches in a file: an `else if` chain nests one level per branch.
const MAX_ELSES: usize = 256;

/// A parsed C file, with its `#define` constants.
pub struct CFile {
    /// The text (for diagnostics).
    pub source: Arc<Source>,
    /// The parsed translation unit.
    pub unit: lang_c::ast::TranslationUnit,
    /// `#define NAME expression` constants, each expression parsed where it is written.
    pub defines: HashMap<String, Node<lang_c::ast::Expression>>,
}

/// A kernel parameter: a fixed-size `float` array (or a scalar, with no dimensions).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// Its name in the C.
    pub name: String,
    /// Its dimensions, outermost first (empty for a scalar).
    pub dims: Vec<usize>,
    /// Declared `const` (then never written).
    pub is_const: bool,
    /// Where it is declared.
    pub span: Range<usize>,
}

impl Param {
    /// Number of `float` elements.
    pub fn len(&self) -> usize {
        self.dims.iter().product()
    }

    /// True for an array of no elements (never: sizes are checked positive).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The span of a lang-c node as a byte range (empty at 0 when unknown).
pub fn range(span: Span) -> Range<usize> {
    if span.is_none() {
        0..0
    } else {
        span.start..span.end
    }
}

/// An error at `span` of `src`.
pub fn err(src: &Arc<Source>, span: Span, msg: impl Into<String>) -> Diag {
    Diag::new(src, range(span), msg)
}

/// Parses `source` as C: preprocessor lines handled as the module says, then the
/// translation unit (C11 with GNU extensions, as clang reads it).
pub fn parse(source: &Arc<Source>) -> Result<CFile, Diag> {
    let text = strip_comments(source)?;
    let (text, raw_defines) = strip_directives(source, &text)?;
    check_nesting(source, &text)?;
    let unit = parse_text(source, text)?;
    let mut defines = HashMap::new();
    for (name, (value, at)) in raw_defines {
        defines.insert(name, define_expression(source, &value, at)?);
    }
    Ok(CFile {
        source: source.clone(),
        unit,
        defines,
    })
}

/// The expression of a `#define` whose value `value` starts at byte `at` of the source,
/// parsed so that its spans are its places in the source.
fn define_expression(
    source: &Arc<Source>,
    value: &str,
    at: usize,
) -> Result<Node<lang_c::ast::Expression>, Diag> {
    const HEAD: &str = "int _=";
    // `#define N ` is longer than the head, so the head fits before the value.
    let text = format!(
        "{}{HEAD}{value};",
        " ".repeat(at.saturating_sub(HEAD.len()))
    );
    let unit = parse_text(source, text)?;
    let init = unit.0.first().and_then(|d| match &d.node {
        ExternalDeclaration::Declaration(d) => d.node.declarators.first(),
        _ => None,
    });
    match init
        .and_then(|i| i.node.initializer.as_ref())
        .map(|i| &i.node)
    {
        Some(lang_c::ast::Initializer::Expression(e)) => Ok((**e).clone()),
        _ => Err(Diag::new(
            source,
            at..at + value.len(),
            "a #define's value must be an expression",
        )),
    }
}

fn parse_text(source: &Arc<Source>, text: String) -> Result<lang_c::ast::TranslationUnit, Diag> {
    check_nesting(source, &text)?;
    let config = lang_c::driver::Config::with_clang();
    Ok(lang_c::driver::parse_preprocessed(&config, text)
        .map_err(|e| {
            let offset = e.offset.min(source.text.len());
            let mut expected: Vec<&str> = e.expected.iter().copied().collect();
            expected.sort_unstable();
            let mut d = Diag::new(source, offset..offset + 1, "C syntax error");
            if !expected.is_empty() {
                d = d.note(format!("expected one of: {}", expected.join(" ")));
            }
            d
        })?
        .unit)
}

/// The text with comments blanked (newlines kept, so offsets and lines stay).
fn strip_comments(source: &Arc<Source>) -> Result<String, Diag> {
    let b = source.text.as_bytes();
    let mut out = String::with_capacity(b.len());
    let mut i = 0;
    let blank = |out: &mut String, s: &str| {
        out.extend(s.chars().map(|c| if c == '\n' { '\n' } else { ' ' }))
    };
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            let end = source.text[i..].find('\n').map_or(b.len(), |e| i + e);
            blank(&mut out, &source.text[i..end]);
            i = end;
        } else if b[i..].starts_with(b"/*") {
            let Some(e) = source.text[i + 2..].find("*/") else {
                return Err(Diag::new(source, i..i + 2, "unterminated comment"));
            };
            let end = i + 2 + e + 2;
            blank(&mut out, &source.text[i..end]);
            i = end;
        } else {
            let c = source.text[i..].chars().next().expect("in bounds");
            out.push(c);
            i += c.len_utf8();
        }
    }
    Ok(out)
}

/// A `#define`: its name, its value's text and the value's byte offset.
type RawDefine = (String, (String, usize));

/// The text with every preprocessor line blanked (offsets kept), and the `#define`
/// constants.
fn strip_directives(source: &Arc<Source>, text: &str) -> Result<(String, Vec<RawDefine>), Diag> {
    let mut out = String::with_capacity(text.len());
    let mut defines = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix('#') {
            let at = offset + (line.len() - trimmed.len());
            let span = at..offset + line.trim_end().len();
            let words: Vec<&str> = rest.split_whitespace().collect();
            match words.as_slice() {
                ["include", ..] | ["pragma", ..] => {}
                ["define", name, first, ..]
                    if name.chars().all(|c| c.is_alphanumeric() || c == '_') =>
                {
                    let value_at = line.find(first).expect("a word of the line");
                    let value = line[value_at..].trim_end();
                    defines.push((name.to_string(), (value.to_string(), offset + value_at)));
                }
                _ => {
                    return Err(
                        Diag::new(source, span, "unsupported preprocessor directive").note(
                            "float kernels accept #include, #pragma and `#define NAME expression`",
                        ),
                    );
                }
            }
            out.extend(line.chars().map(|c| if c == '\n' { '\n' } else { ' ' }));
        } else {
            out.push_str(line);
        }
        offset += line.len();
    }
    Ok((out, defines))
}

/// Rejects bracket nesting deeper than [`MAX_NESTING`], statements of more than
/// [`MAX_STATEMENT_OPERATORS`] operators and more than [`MAX_ELSES`] `else` branches,
/// before the recursive parser sees them.
fn check_nesting(source: &Arc<Source>, text: &str) -> Result<(), Diag> {
    let mut depth = 0usize;
    let mut operators = 0usize;
    let elses = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| *w == "else")
        .count();
    if elses > MAX_ELSES {
        return Err(Diag::new(
            source,
            0..0,
            format!("more than {MAX_ELSES} `else` branches"),
        ));
    }
    let mut run = 0usize;
    for (i, c) in text.char_indices() {
        if "+-*/%<>=!&|^~?".contains(c) {
            // The generated parser backtracks exponentially over long runs of operator
            // characters (`i+++++...`); C never needs more than a few in a row.
            run += 1;
            if run > MAX_OPERATOR_RUN {
                return Err(Diag::new(
                    source,
                    i..i + 1,
                    format!("more than {MAX_OPERATOR_RUN} operator characters in a row"),
                ));
            }
            operators += 1;
            if operators > MAX_STATEMENT_OPERATORS {
                return Err(Diag::new(
                    source,
                    i..i + 1,
                    format!("a statement of more than {MAX_STATEMENT_OPERATORS} operators"),
                ));
            }
        }
        if matches!(c, ';' | '{' | '}') {
            operators = 0;
        }
        if !c.is_whitespace() && !"+-*/%<>=!&|^~?".contains(c) {
            run = 0;
        }
        match c {
            '(' | '[' | '{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(Diag::new(
                        source,
                        i..i + 1,
                        format!("brackets nested deeper than {MAX_NESTING}"),
                    ));
                }
            }
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// The kernel function of `file`: the one named `name`, or the only function defined.
pub fn kernel_function<'f>(
    file: &'f CFile,
    name: Option<&str>,
) -> Result<&'f Node<FunctionDefinition>, Diag> {
    let mut functions = Vec::new();
    for ext in &file.unit.0 {
        match &ext.node {
            ExternalDeclaration::FunctionDefinition(f) => functions.push(f),
            ExternalDeclaration::Declaration(_) => {}
            ExternalDeclaration::StaticAssert(s) => {
                return Err(err(
                    &file.source,
                    s.span,
                    "static assertions are not supported",
                ));
            }
        }
    }
    let named: Vec<_> = functions
        .iter()
        .filter(|f| name.is_none_or(|n| declarator_name(&f.node.declarator.node) == Some(n)))
        .collect();
    match (named.as_slice(), name) {
        ([f], _) => Ok(f),
        ([], Some(n)) => Err(Diag::new(
            &file.source,
            0..0,
            format!("no function named `{n}` is defined"),
        )),
        ([], None) => Err(Diag::new(&file.source, 0..0, "no function is defined")),
        (many, _) => Err(err(
            &file.source,
            many[1].span,
            "more than one function is defined",
        )
        .note("choose the kernel with --function NAME")),
    }
}

/// The name a declarator declares.
pub fn declarator_name(d: &Declarator) -> Option<&str> {
    match &d.kind.node {
        DeclaratorKind::Identifier(id) => Some(&id.node.name),
        DeclaratorKind::Declarator(inner) => declarator_name(&inner.node),
        DeclaratorKind::Abstract => None,
    }
}

/// The base type of a declaration's specifiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaseType {
    /// `float`.
    Float,
    /// `int` and the other integer types (index arithmetic only).
    Int,
    /// `void`.
    Void,
}

/// Reads the base type and constness of declaration specifiers.
pub fn base_type(
    src: &Arc<Source>,
    specs: &[Node<DeclarationSpecifier>],
    at: Span,
) -> Result<(BaseType, bool), Diag> {
    let mut ty = None;
    let mut is_const = false;
    for s in specs {
        match &s.node {
            DeclarationSpecifier::TypeSpecifier(t) => {
                let this = match &t.node {
                    TypeSpecifier::Float => BaseType::Float,
                    TypeSpecifier::Void => BaseType::Void,
                    TypeSpecifier::Int
                    | TypeSpecifier::Short
                    | TypeSpecifier::Long
                    | TypeSpecifier::Signed
                    | TypeSpecifier::Unsigned
                    | TypeSpecifier::Char => BaseType::Int,
                    TypeSpecifier::Double => {
                        return Err(err(src, t.span, "`double` is not supported")
                            .note("float kernels compute in IEEE single precision: use `float`"));
                    }
                    _ => return Err(err(src, t.span, "unsupported type")),
                };
                if ty.is_some_and(|t| t != this) {
                    return Err(err(src, t.span, "unsupported combination of types"));
                }
                ty = Some(this);
            }
            DeclarationSpecifier::TypeQualifier(q) => match q.node {
                TypeQualifier::Const => is_const = true,
                TypeQualifier::Restrict | TypeQualifier::Volatile => {}
                _ => return Err(err(src, q.span, "unsupported type qualifier")),
            },
            DeclarationSpecifier::StorageClass(_) | DeclarationSpecifier::Function(_) => {}
            _ => return Err(err(src, s.span, "unsupported declaration specifier")),
        }
    }
    let ty = ty.ok_or_else(|| err(src, at, "missing type"))?;
    Ok((ty, is_const))
}

/// The array dimensions of a declarator (outermost first), each evaluated by `size`;
/// pointers and functions are errors.
pub fn array_dims(
    src: &Arc<Source>,
    d: &Node<Declarator>,
    mut size: impl FnMut(&Node<lang_c::ast::Expression>) -> Result<i64, Diag>,
) -> Result<Vec<usize>, Diag> {
    if let DeclaratorKind::Declarator(_) = d.node.kind.node {
        return Err(err(
            src,
            d.span,
            "parenthesized declarators are not supported",
        ));
    }
    let mut dims = Vec::new();
    for derived in &d.node.derived {
        match &derived.node {
            DerivedDeclarator::Array(a) => {
                let e = match &a.node.size {
                    ArraySize::VariableExpression(e) | ArraySize::StaticExpression(e) => e,
                    _ => {
                        return Err(err(src, a.span, "arrays need a constant size")
                            .note("write the size, as in `float a[4][4]`"));
                    }
                };
                let n = size(e)?;
                if !(1..=MAX_ELEMENTS as i64).contains(&n) {
                    return Err(err(
                        src,
                        e.span,
                        format!("array size {n} is outside 1..={MAX_ELEMENTS}"),
                    ));
                }
                dims.push(n as usize);
                // Checked as the dimensions come, so the product never overflows.
                if dims.iter().product::<usize>() > MAX_ELEMENTS {
                    return Err(err(
                        src,
                        d.span,
                        format!("array larger than {MAX_ELEMENTS} elements"),
                    ));
                }
            }
            DerivedDeclarator::Pointer(_) => {
                return Err(err(src, derived.span, "pointers are not supported")
                    .note("give the array's size, as in `float a[16]`"));
            }
            _ => return Err(err(src, derived.span, "unsupported declarator")),
        }
    }
    Ok(dims)
}

/// The kernel's parameters, in order.
pub fn params(
    src: &Arc<Source>,
    f: &Node<FunctionDefinition>,
    mut size: impl FnMut(&Node<lang_c::ast::Expression>) -> Result<i64, Diag>,
) -> Result<Vec<Param>, Diag> {
    let (ret, _) = base_type(src, &f.node.specifiers, f.span)?;
    if ret != BaseType::Void {
        return Err(
            err(src, f.node.declarator.span, "the kernel must return `void`")
                .note("outputs are arrays the kernel writes"),
        );
    }
    let decl = &f.node.declarator.node;
    let func = match decl.derived.as_slice() {
        [d] => match &d.node {
            DerivedDeclarator::Function(fd) => fd,
            _ => return Err(err(src, d.span, "expected a function declarator")),
        },
        _ => {
            return Err(err(
                src,
                f.node.declarator.span,
                "unsupported function declarator",
            ));
        }
    };
    if !f.node.declarations.is_empty() {
        return Err(err(
            src,
            f.span,
            "K&R parameter declarations are not supported",
        ));
    }
    let mut out: Vec<Param> = Vec::new();
    for p in &func.node.parameters {
        let (ty, is_const) = base_type(src, &p.node.specifiers, p.span)?;
        let Some(d) = &p.node.declarator else {
            if ty == BaseType::Void && func.node.parameters.len() == 1 {
                continue;
            }
            return Err(err(src, p.span, "parameters need names"));
        };
        let name = declarator_name(&d.node)
            .ok_or_else(|| err(src, p.span, "parameters need names"))?
            .to_string();
        if ty != BaseType::Float {
            return Err(
                err(src, p.span, "parameters must be `float` arrays or scalars")
                    .note("sizes are fixed in the text; integer parameters cannot be"),
            );
        }
        let dims = array_dims(src, d, &mut size)?;
        if out.iter().any(|q| q.name == name) {
            return Err(err(
                src,
                p.span,
                format!("parameter `{name}` declared twice"),
            ));
        }
        out.push(Param {
            name,
            dims,
            is_const,
            span: range(p.span),
        });
    }
    if out.len() > 16 {
        return Err(err(src, f.node.declarator.span, "more than 16 parameters"));
    }
    Ok(out)
}
