//! Snapshot-like checks of the printed C on small kernels.

use super::*;
use crate::config::{BoundaryScheme, MaskHandling, MemoryKind, PixelsPerThread};
use crate::test_kernels as tk;
use crate::BlockShape;

fn target(name: &str) -> &'static Target {
    Target::by_name(name).unwrap()
}

fn gen(k: &Kernel, c: &Config, t: &str, l: Language) -> Program {
    generate(k, c, target(t), l).unwrap()
}

/// Every family of every test kernel generates on every target and language.
/// With `HIPACC_CODEGEN_CHECK_DIR` set, the sources are also written there
/// for compiling with external tools.
#[test]
fn every_family_generates_everywhere() {
    let dir = std::env::var_os("HIPACC_CODEGEN_CHECK_DIR");
    for t in Target::all() {
        for &l in t.languages {
            for k in tk::all() {
                let fams = Config::families(&k, t);
                assert!(!fams.is_empty(), "{} on {}", k.name, t.name);
                let items: Vec<(&Kernel, &Config)> = fams.iter().map(|c| (&k, c)).collect();
                let p = generate_batch(&items, t, l).unwrap();
                assert_eq!(p.kernels.len(), fams.len());
                for info in &p.kernels {
                    assert_eq!(p.source.matches(&format!(" {}(\n", info.entry)).count(), 1);
                }
                if let Some(dir) = &dir {
                    crate::dump::dump(
                        std::path::Path::new(dir),
                        &format!("{}_{}", k.name, t.name),
                        "families",
                        l,
                        &p.source,
                    )
                    .unwrap();
                }
            }
        }
    }
}
