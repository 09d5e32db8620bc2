//! `Kernel::stable_hash`, the key of every compiled-code cache (on disk
//! too): equal IR hashes alike, any change to the IR changes it, and the
//! value itself is pinned, so that a change of encoding or hash function
//! (which would orphan every cache on disk) shows here first.

mod common;
use common::*;
use hipacc_core::ir::Kernel;
use hipacc_core::{Accessor, Bindings, Image};

/// The weighted Jacobi step, `c` the neighbours' weight.
fn jacobi(c: f64) -> Kernel {
    let mut b = Bindings::default();
    for name in ["sol", "rhs"] {
        bind(
            &mut b,
            name,
            &Accessor::new(&Image::<f32>::new(4, 4).unwrap()),
        );
    }
    bind(&mut b, "omega", &0.8f32);
    let nb = add(
        add(at_c("sol", -1, 0), at_c("sol", 1, 0)),
        add(at_c("sol", 0, -1), at_c("sol", 0, 1)),
    );
    let result = add(
        mul(at_c("sol", 0, 0), field("omega")),
        mul(float(c), add(at_c("rhs", 0, 0), local("nb"))),
    );
    lower::<f32>(&b, &block(vec![let_("nb", nb)], result)).unwrap()
}

#[test]
fn equal_kernels_hash_alike_and_any_change_shows() {
    let k = jacobi(0.25);
    assert_eq!(k.stable_hash(), k.clone().stable_hash());
    assert_eq!(k.stable_hash(), jacobi(0.25).stable_hash());
    // A literal's bits, a sign of zero, a name: each is part of the key.
    assert_ne!(k.stable_hash(), jacobi(0.5).stable_hash());
    assert_ne!(jacobi(0.0).stable_hash(), jacobi(-0.0).stable_hash());
    assert_ne!(
        jacobi(f64::NAN).stable_hash(),
        jacobi(f64::INFINITY).stable_hash()
    );
    let mut renamed = k.clone();
    renamed.name.push('2');
    assert_ne!(k.stable_hash(), renamed.stable_hash());
}

#[test]
fn the_hash_is_pinned_across_platforms_and_versions() {
    assert_eq!(jacobi(0.25).stable_hash(), PINNED);
}

/// `jacobi(0.25).stable_hash()` as first computed.
const PINNED: u64 = 0xde3b_efce_940b_4749;
