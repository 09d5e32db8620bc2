//! An error accumulator: checks report every problem they find, not only the
//! first, and the caller turns them into one `syn::Error` at the end.
//!
//! A `Diag` must be consumed with [`Diag::finish`]; dropping one that still
//! holds its errors is a bug in the macro and panics, so no error is lost.

use proc_macro2::Span;
use quote::ToTokens;
use std::fmt::Display;

/// Collected errors of one macro invocation.
pub(crate) struct Diag {
    errors: Option<Vec<syn::Error>>,
}

impl Diag {
    /// An empty accumulator.
    pub(crate) fn new() -> Diag {
        Diag {
            errors: Some(Vec::new()),
        }
    }

    /// Records an error spanning the tokens of `at`.
    pub(crate) fn error(&mut self, at: impl ToTokens, msg: impl Display) {
        self.push(syn::Error::new_spanned(at.into_token_stream(), msg));
    }

    /// Records an error at `span`.
    pub(crate) fn error_at(&mut self, span: Span, msg: impl Display) {
        self.push(syn::Error::new(span, msg));
    }

    /// Records an error made elsewhere (a `syn` parse error).
    pub(crate) fn push(&mut self, e: syn::Error) {
        match &mut self.errors {
            Some(errors) => errors.push(e),
            None => unreachable!("bug: Diag used after finish()"),
        }
    }

    /// All recorded errors combined into one, or `Ok` if there were none.
    pub(crate) fn finish(mut self) -> syn::Result<()> {
        let mut errors = self.errors.take().unwrap_or_default().into_iter();
        let Some(mut first) = errors.next() else {
            return Ok(());
        };
        for e in errors {
            first.combine(e);
        }
        Err(first)
    }
}

impl Drop for Diag {
    fn drop(&mut self) {
        if self.errors.as_ref().is_some_and(|e| !e.is_empty()) && !std::thread::panicking() {
            panic!("bug: Diag dropped with unreported errors; call finish()");
        }
    }
}
