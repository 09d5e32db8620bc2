//! Messages for constructs outside the kernel subset: each names the
//! construct, says what is allowed instead, and spans the smallest token
//! that identifies it.

use super::MATH_METHODS;
use proc_macro2::TokenStream;
use quote::{quote, ToTokens};

/// Where and why an expression kind outside the subset is rejected.
pub(super) fn expr(e: &syn::Expr) -> (TokenStream, String) {
    use syn::Expr as E;
    let (at, msg): (TokenStream, &str) = match e {
        E::While(w) => (
            w.while_token.to_token_stream(),
            "`while` is not allowed in a kernel body; use `for i in A..B` with constant \
             integer bounds",
        ),
        E::Loop(l) => (
            l.loop_token.to_token_stream(),
            "`loop` is not allowed in a kernel body; use `for i in A..B` with constant integer \
             bounds",
        ),
        E::ForLoop(f) => (
            f.for_token.to_token_stream(),
            "a `for` loop has no value; write it as a statement and assign a `let mut` local \
             inside",
        ),
        E::Break(b) => (
            b.break_token.to_token_stream(),
            "`break` is not allowed in a kernel body; `for` loops always run their whole \
             constant range (use `if` inside the loop)",
        ),
        E::Continue(c) => (
            c.continue_token.to_token_stream(),
            "`continue` is not allowed in a kernel body; use `if` inside the loop",
        ),
        E::Return(r) => (
            r.return_token.to_token_stream(),
            "`return` is not allowed in a kernel body; the body's final expression is the \
             output value (choose it with `if`/`else`)",
        ),
        E::Match(m) => (
            m.match_token.to_token_stream(),
            "`match` is not allowed in a kernel body; use `if`/`else if`/`else`",
        ),
        E::Closure(c) => {
            let (or1, inputs, or2) = (&c.or1_token, &c.inputs, &c.or2_token);
            (
                quote!(#or1 #inputs #or2),
                "closures are only allowed as the last argument of `reduce`, `convolve` and \
                 `iterate`",
            )
        }
        E::Macro(m) => return macro_call(&m.mac),
        E::Index(_) => (
            e.to_token_stream(),
            "indexing (`a[i]`) is not allowed in a kernel body; read images with \
             `self.acc.at(dx, dy)` and masks with `self.mask.at(dx, dy)`",
        ),
        E::Reference(r) => (
            r.and_token.to_token_stream(),
            "references are not allowed in a kernel body; `&` appears only in \
             `&self.window` as the first argument of `reduce`, `convolve` and `iterate`",
        ),
        E::Unsafe(u) => (
            u.unsafe_token.to_token_stream(),
            "`unsafe` is not allowed in a kernel body",
        ),
        E::Struct(s) => (
            s.path.to_token_stream(),
            "struct literals are not allowed in a kernel body; build vectors with \
             `Rgba::new(r, g, b, a)`",
        ),
        E::Tuple(_) => (
            e.to_token_stream(),
            "tuples are not allowed in a kernel body; use one `let` binding per value",
        ),
        E::Array(_) | E::Repeat(_) => (
            e.to_token_stream(),
            "arrays are not allowed in a kernel body; use one `let` binding per value, or a \
             `Mask` field for coefficients",
        ),
        E::Range(_) => (
            e.to_token_stream(),
            "ranges are only allowed as the bounds of a `for` loop in a kernel body",
        ),
        E::Assign(a) => (
            a.eq_token.to_token_stream(),
            "assignment is a statement: write it on its own line, `name = value;`, with \
             `name` a `let mut` variable",
        ),
        E::Let(l) => (
            l.let_token.to_token_stream(),
            "`let` patterns in conditions are not allowed in a kernel body",
        ),
        E::Try(t) => (
            t.question_token.to_token_stream(),
            "`?` is not allowed in a kernel body; there are no errors to propagate",
        ),
        E::Async(a) => (
            a.async_token.to_token_stream(),
            "`async` is not allowed in a kernel body",
        ),
        E::Await(a) => (
            a.await_token.to_token_stream(),
            "`.await` is not allowed in a kernel body",
        ),
        _ => (
            e.to_token_stream(),
            "this expression is not allowed in a kernel body; a body uses literals, locals, \
             `self.field`, `self.field.at(dx, dy)`, operators, casts, `if`/`else`, blocks, \
             math methods, `Rgba::new`, `x()`, `y()` and `reduce`/`convolve`",
        ),
    };
    (at, msg.to_string())
}

/// Where and why a macro call is rejected.
pub(super) fn macro_call(mac: &syn::Macro) -> (TokenStream, String) {
    let path = &mac.path;
    let bang = &mac.bang_token;
    let at = quote!(#path #bang);
    let name = path
        .segments
        .last()
        .map(|s| s.ident.to_string())
        .unwrap_or_default();
    let msg = match name.as_str() {
        "vec" | "format" => format!(
            "heap allocation (`{name}!`) is not allowed in a kernel body: a kernel computes \
             one pixel from scalars and `Rgba` values"
        ),
        "println" | "print" | "eprintln" | "eprint" | "dbg" => format!(
            "printing (`{name}!`) is not possible in a kernel body: the body also runs on GPUs"
        ),
        _ => format!(
            "macro calls (`{name}!`) are not allowed in a kernel body; write the expression \
             out"
        ),
    };
    (at, msg)
}

/// Where and why a call to an unknown function is rejected.
pub(super) fn unknown_function(
    p: &syn::ExprPath,
    names: &[&str],
    known: &[&str],
) -> (TokenStream, String) {
    let shown = p.path.to_token_stream().to_string().replace(' ', "");
    let at = p.to_token_stream();
    let last = names.last().copied().unwrap_or_default();
    let heap = [
        "Box", "Vec", "String", "Rc", "Arc", "HashMap", "BTreeMap", "VecDeque",
    ];
    if names.iter().any(|n| heap.contains(n)) {
        return (
            at,
            format!(
                "heap allocation (`{shown}`) is not allowed in a kernel body: a kernel computes \
                 one pixel from scalars and `Rgba` values"
            ),
        );
    }
    if names.len() > 1 && MATH_METHODS.iter().any(|(m, _)| *m == last) {
        return (
            at,
            format!(
                "call `{last}` as a method in a kernel body: `value.{last}(..)` instead of \
                 `{shown}(..)`"
            ),
        );
    }
    let hint = match closest(last, known) {
        Some(c) if names.len() == 1 => format!(" (did you mean `{c}`?)"),
        _ => String::new(),
    };
    (
        at,
        format!(
            "unknown function `{shown}` in a kernel body{hint}; the functions are `x()`, `y()`, \
             `reduce(..)`, `convolve(..)`, `iterate(..)` and `Rgba::new(..)`, and values have \
             math methods like `v.sqrt()`"
        ),
    )
}

/// Where and why a call to an unknown method is rejected.
pub(super) fn unknown_method(name: &syn::Ident) -> (TokenStream, String) {
    let methods: Vec<&str> = MATH_METHODS.iter().map(|(m, _)| *m).collect();
    let hint = match closest(&name.to_string(), &methods) {
        Some(c) => format!(" (did you mean `{c}`?)"),
        None => String::new(),
    };
    (
        name.to_token_stream(),
        format!(
            "unknown method `{name}` in a kernel body{hint}; the math methods are {}, and \
             kernel fields are read with `self.field.at(dx, dy)`",
            methods.join(", ")
        ),
    )
}

/// The candidate closest to `name` by edit distance, if close enough to be
/// a likely typo.
fn closest<'a>(name: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let limit = (name.len() / 3).max(1);
    candidates
        .iter()
        .map(|c| (edit_distance(name, c), *c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::{closest, edit_distance};

    #[test]
    fn edit_distance_counts_single_edits() {
        assert_eq!(edit_distance("sqrt", "sqrt"), 0);
        assert_eq!(edit_distance("sqr", "sqrt"), 1);
        assert_eq!(edit_distance("sqtr", "sqrt"), 2);
        assert_eq!(edit_distance("", "abs"), 3);
    }

    #[test]
    fn closest_suggests_only_near_names() {
        assert_eq!(closest("sqr", &["sqrt", "abs"]), Some("sqrt"));
        assert_eq!(closest("reduse", &["reduce", "x"]), Some("reduce"));
        assert_eq!(closest("foo", &["sqrt", "abs"]), None);
    }
}
