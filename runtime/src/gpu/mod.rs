//! What the GPU backends share: everything but the calls into a driver.
//!
//! | file | concept |
//! |---|---|
//! | `backend` | the [`Backend`](backend::Backend) trait a driver implements: memory, build, enqueue, sync, facts |
//! | `device` | a backend with its generic state, and the object-safe face [`crate::Device`] holds |
//! | `errors` | the errors of failed driver calls |
//! | `config` | choosing the variant of a launch (heuristics, tuning, `HIPACC_CONFIG`, overrides) |
//! | `program` | the program cache: one build per kernel with the variants a launch may pick |
//! | `args` | resolving codegen's argument list against a launch's bindings |
//! | `limits` | the device's own launch limits and the check against them |
//! | `view` | image views of device memory (textures, image copies) |
//! | `residency` | keeping images current on a device |
//! | `masks` | device copies of mask coefficients, rewritten only when they change |
//! | `launch` | the one launch path |
//! | `global` | global operators (reductions, histograms) as device kernels |
//! | `timing` | the events of the last launch, for its duration |
//! | `replay` | recording launch sequences and replaying them |
//! | `dump` | writing generated sources to disk |

pub(crate) mod args;
pub(crate) mod backend;
pub(crate) mod config;
pub(crate) mod device;
pub(crate) mod dump;
pub(crate) mod errors;
pub(crate) mod global;
pub(crate) mod launch;
pub(crate) mod limits;
pub(crate) mod masks;
pub(crate) mod program;
pub(crate) mod replay;
pub(crate) mod residency;
pub(crate) mod timing;
pub(crate) mod view;

pub(crate) use config::{choose_config, pin};
pub(crate) use device::{Gpu, GpuDevice};
pub(crate) use launch::KernelLaunch;
pub(crate) use replay::Replay;
