//! Lowering: surface AST + bindings -> typed IR.

use super::surface::SBlock;
use super::{Kernel, Type};
use crate::{Bindings, Error, Result};

/// Resolves names of `body` against `bindings` and infers types as rustc does.
pub fn lower(name: &str, output: Type, bindings: &Bindings, body: &SBlock) -> Result<Kernel> {
    let _ = (output, bindings, body);
    Err(Error::InvalidKernel {
        kernel: name.into(),
        message: "lowering is not built yet".into(),
    })
}
