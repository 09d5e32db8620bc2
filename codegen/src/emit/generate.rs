//! Printing kernels into programs: the entry points of code generation.

use super::c_common::Helpers;
use super::cuda::Cuda;
use super::dialect::Dialect;
use super::kernel::{emit_kernel, entry_name};
use super::opencl::OpenCl;
use super::prelude::header;
use super::program::{KernelInfo, Program};
use crate::arch::Target;
use crate::config::Config;
use crate::passes::analysis::uses_f64;
use crate::vocab::Language;
use crate::{Error, Result};
use hipacc_core::ir::Kernel;

/// Prints one kernel variant as a program in `language` for `target`. The
/// config is validated first.
pub fn generate(
    kernel: &Kernel,
    config: &Config,
    target: &Target,
    language: Language,
) -> Result<Program> {
    generate_batch(&[(kernel, config)], target, language)
}

/// Prints several kernels (or variants of one kernel) into one program, so
/// that a driver builds them at once. Kernels with the same IR and config are
/// printed once.
pub fn generate_batch(
    items: &[(&Kernel, &Config)],
    target: &Target,
    language: Language,
) -> Result<Program> {
    if !target.supports(language) {
        return Err(Error::InvalidConfig {
            config: String::new(),
            target: target.name.to_string(),
            reason: format!("the target's drivers do not compile {}", language.name()),
        });
    }
    if language == Language::Wgsl {
        return super::wgsl::generate_batch(items, target);
    }
    let d = for_language(language);
    let fp64 = items.iter().any(|(k, _)| uses_f64(k));
    let mut helpers = Helpers::default();
    let mut bodies = String::new();
    let mut kernels: Vec<KernelInfo> = Vec::new();
    for (k, c) in items {
        c.validate_for(k, target)?;
        if kernels.iter().any(|i| i.entry == entry_name(k, c)) {
            continue;
        }
        let (text, info) = emit_kernel(d, k, c, target, &mut helpers)?;
        bodies.push_str(&text);
        kernels.push(info);
    }
    let mut source = header(d, target, fp64);
    source.push_str(&helpers.text());
    source.push('\n');
    source.push_str(&bodies);
    Ok(Program {
        language,
        target: target.name,
        source,
        kernels,
    })
}

/// The dialect object of a language.
pub(super) fn for_language(l: Language) -> &'static dyn Dialect {
    match l {
        Language::OpenCl => &OpenCl,
        Language::Cuda => &Cuda,
        Language::Wgsl => unreachable!("bug: WGSL has its own printer"),
    }
}
