//! Pyramids and `traverse`: level sizes, relative indexing, the level
//! predicates, V- and W-cycle visiting orders (asserted on the recorded
//! trace), swap, nested traversals, and every misuse's error. Kernel
//! launches run on every backend present (the native CPU always; OpenCL,
//! CUDA and wgpu, the last with the crate's `wgpu` feature, print a skip
//! line when absent).

use hipacc::prelude::*;
use hipacc::{Error, PyramidError, Trace};

/// Keeps the finer level's even pixels: `out(x, y) = fine(2x, 2y)` (the
/// accessor reads position `x - sx + dx` with `sx = 0`, so offset `x` is `2x`).
#[derive(Kernel)]
#[kernel(output = f32)]
struct Decimate {
    fine: Accessor<f32>,
}

#[kernel_body]
impl Decimate {
    fn kernel(&self) -> f32 {
        self.fine.at(x(), y())
    }
}

/// Adds one to every pixel.
#[derive(Kernel)]
#[kernel(output = f32)]
struct AddOne {
    input: Accessor<f32>,
}

#[kernel_body]
impl AddOne {
    fn kernel(&self) -> f32 {
        self.input() + 1.0
    }
}

fn devices() -> Vec<Device> {
    let mut out = vec![Device::cpu()];
    for (name, d) in [
        ("opencl", Device::opencl()),
        ("cuda", Device::cuda()),
        ("wgpu", Device::wgpu()),
    ] {
        match d {
            Ok(d) => out.push(d),
            Err(e) => println!("[SKIP] {name}: {e}"),
        }
    }
    out
}

fn pyramid_err(e: Error) -> PyramidError {
    match e {
        Error::Pyramid(p) => p,
        other => panic!("expected a pyramid error, got {other}"),
    }
}

/// Finest size, depth and the expected size of every level.
type SizeCase = ((usize, usize), usize, &'static [(usize, usize)]);

#[test]
fn level_sizes_halve_rounding_up() {
    let cases: [SizeCase; 4] = [
        ((16, 16), 5, &[(16, 16), (8, 8), (4, 4), (2, 2), (1, 1)]),
        ((17, 9), 4, &[(17, 9), (9, 5), (5, 3), (3, 2)]),
        (
            (40, 3),
            6,
            &[(40, 3), (20, 2), (10, 1), (5, 1), (3, 1), (2, 1)],
        ),
        ((1, 1), 1, &[(1, 1)]),
    ];
    for ((w, h), depth, sizes) in cases {
        let p = Pyramid::<f32>::zeros(w, h, depth).unwrap();
        assert_eq!(p.depth(), depth);
        for (k, &size) in sizes.iter().enumerate() {
            assert_eq!(p.size(k).unwrap(), size, "{w}x{h} level {k}");
            let img = p.level(k).unwrap();
            assert_eq!((img.width(), img.height()), size);
        }
        assert_eq!(hipacc::max_depth(w, h), {
            let mut n = w.max(h);
            let mut d = 1;
            while n > 1 {
                n = n.div_ceil(2);
                d += 1;
            }
            d
        });
    }
    // The finest level is the caller's image, not a copy.
    let fine = Image::<u8>::new(6, 5).unwrap();
    let p = Pyramid::new(&fine, 3).unwrap();
    assert_eq!(p.level(0).unwrap().id(), fine.id());
}

#[test]
fn bad_pyramids_are_clear_errors() {
    let fine = Image::<f32>::new(8, 5).unwrap();
    assert_eq!(
        pyramid_err(Pyramid::new(&fine, 0).unwrap_err()),
        PyramidError::ZeroDepth
    );
    let err = pyramid_err(Pyramid::new(&fine, 5).unwrap_err());
    assert_eq!(
        err,
        PyramidError::TooDeep {
            width: 8,
            height: 5,
            depth: 5,
            max: 4
        }
    );
    assert!(err.to_string().contains("at most 4"), "{err}");
    let err = pyramid_err(Pyramid::<f32>::zeros(0, 0, 1).unwrap_err());
    assert!(err.to_string().contains("empty 0x0"), "{err}");
    assert!(Pyramid::new(&fine, 4).is_ok());
}

#[test]
fn relative_indexing_and_predicates_at_every_level() {
    let p = Pyramid::<f32>::zeros(20, 12, 4).unwrap();
    let seen = std::cell::RefCell::new(Vec::new());
    traverse(&[&p], |t| {
        let k = t.level();
        assert_eq!(t.depth(), 4);
        assert_eq!(t.is_top_level(), k == 0);
        assert_eq!(t.is_bottom_level(), k == 3);
        let here = t.image(&p, 0)?;
        assert_eq!(here.id(), p.level(k)?.id());
        for rel in [-1i64, 1] {
            let target = k as i64 + rel;
            match t.image(&p, rel) {
                Ok(img) => assert_eq!(img.id(), p.level(target as usize)?.id()),
                Err(e) => {
                    assert!(!(0..4).contains(&target), "level {k} rel {rel}");
                    let msg = e.to_string();
                    assert!(msg.contains(&format!("{rel:+}")), "{msg}");
                }
            }
        }
        assert!(t.image(&p, 4).is_err() && t.image(&p, -4).is_err());
        assert!(t.image(&p, i64::MAX).is_err() && t.image(&p, i64::MIN).is_err());
        seen.borrow_mut().push(k);
        if !t.is_bottom_level() {
            t.recurse()?;
        }
        Ok(())
    })
    .unwrap();
    assert_eq!(*seen.borrow(), [0, 1, 2, 3]);
}

/// Runs `AddOne` at each visit (so each level's launches are in the trace)
/// and recurses `n(level)` times.
fn cycle(dev: &Device, depth: usize, n: impl Fn(usize) -> usize) -> Trace {
    let a = Pyramid::<f32>::zeros(32, 32, depth).unwrap();
    let b = Pyramid::<f32>::like(&a).unwrap();
    traverse(&[&a, &b], |t| {
        let (src, dst) = (t.image(&a, 0)?, t.image(&b, 0)?);
        AddOne {
            input: Accessor::new(&src),
        }
        .execute(dev, &IterationSpace::full(&dst))?;
        if !t.is_bottom_level() {
            t.recurse_n(n(t.level()), |_| Ok(()))?;
        }
        Ok(())
    })
    .unwrap()
}

#[test]
fn v_cycle_visits_levels_down_then_up() {
    for dev in devices() {
        let trace = cycle(&dev, 4, |_| 1);
        assert_eq!(trace.sync_levels(), [0, 1, 2, 3, 2, 1, 0], "{}", dev.name());
        let levels: Vec<usize> = trace.launches().map(|l| l.level).collect();
        assert_eq!(levels, [0, 1, 2, 3]);
        assert!(trace.launches().all(|l| l.kernel == "AddOne"));
        assert!(trace
            .launches()
            .all(|l| l.variant.starts_with(dev.kind().name())));
    }
}

#[test]
fn w_cycle_visits_levels_as_the_classic_figure() {
    for dev in devices() {
        // The W-cycle figure: one descent from the finest level, two
        // recursions at every coarser one.
        let trace = cycle(&dev, 4, |k| if k == 0 { 1 } else { 2 });
        assert_eq!(
            trace.sync_levels(),
            [0, 1, 2, 3, 2, 3, 2, 1, 2, 3, 2, 3, 2, 1, 0],
            "{}",
            dev.name()
        );
        assert_eq!(trace.kernel_launches(), 1 + 1 + 2 + 4);
    }
    // Two recursions at every level, finest included.
    let trace = cycle(&Device::cpu(), 3, |_| 2);
    assert_eq!(trace.sync_levels(), [0, 1, 2, 1, 2, 1, 0, 1, 2, 1, 2, 1, 0]);
}

#[test]
fn between_runs_at_the_recursing_level_between_descents() {
    let p = Pyramid::<f32>::zeros(16, 16, 3).unwrap();
    let calls = std::cell::RefCell::new(Vec::new());
    traverse(&[&p], |t| {
        if !t.is_bottom_level() {
            t.recurse_n(3, |t| {
                calls.borrow_mut().push(t.level());
                Ok(())
            })?;
        }
        Ok(())
    })
    .unwrap();
    // Level 0 runs `between` twice; each of its 3 level-1 visits twice more.
    assert_eq!(calls.borrow().len(), 2 + 3 * 2);
    assert_eq!(calls.borrow()[..3], [1, 1, 0]);
}

#[test]
fn trace_prints_a_table_and_dot() {
    let trace = cycle(&Device::cpu(), 3, |_| 1);
    let table = trace.timing_table();
    assert_eq!(table.lines().filter(|l| l.starts_with("AddOne")).count(), 3);
    let dot = trace.to_dot();
    assert!(dot.starts_with("digraph"), "{dot}");
    // Three launch edges and one dashed return edge without a launch.
    assert_eq!(dot.matches("-> ").count(), 3 + 1, "{dot}");
    assert_eq!(dot.matches("AddOne").count(), 3, "{dot}");
}

#[test]
fn swap_exchanges_storage_symmetrically() {
    let a = Pyramid::new(&Image::from_fn(8, 8, |_, _| 1.0f32).unwrap(), 3).unwrap();
    let b = Pyramid::new(&Image::from_fn(8, 8, |_, _| 2.0f32).unwrap(), 3).unwrap();
    let (a0, b0) = (a.level(0).unwrap().id(), b.level(0).unwrap().id());
    a.swap(&a).unwrap();
    a.swap(&a.clone()).unwrap();
    assert_eq!(a.level(0).unwrap().id(), a0);
    a.swap(&b).unwrap();
    assert_eq!(
        (a.level(0).unwrap().id(), b.level(0).unwrap().id()),
        (b0, a0)
    );
    assert_eq!(a.level(0).unwrap().get(0, 0).unwrap(), 2.0);
    b.swap(&a).unwrap();
    assert_eq!(
        (a.level(0).unwrap().id(), b.level(0).unwrap().id()),
        (a0, b0)
    );
    // Inside a traversal: relative reads see the swapped storage.
    traverse(&[&a, &b], |t| {
        t.swap(&a, &b)?;
        assert_eq!(t.image(&a, 0)?.id(), b0);
        t.swap(&b, &a)?;
        assert_eq!(t.image(&a, 0)?.id(), a0);
        Ok(())
    })
    .unwrap();
    let c = Pyramid::<f32>::zeros(8, 8, 2).unwrap();
    let err = pyramid_err(a.swap(&c).unwrap_err());
    assert!(matches!(err, PyramidError::Mismatch { .. }), "{err}");
}

#[test]
fn nested_traversal_runs_inside_a_level() {
    for dev in devices() {
        let fine = Image::from_fn(16, 16, |x, y| (x + 100 * y) as f32).unwrap();
        let outer = Pyramid::new(&fine, 3).unwrap();
        let inner = Pyramid::<f32>::zeros(8, 8, 3).unwrap();
        let outer_trace = traverse(&[&outer], |t| {
            if t.is_top_level() {
                // Inner level 0 decimates outer level 0; each coarser inner
                // level decimates the inner level above it.
                let trace = traverse(&[&inner], |u| {
                    let src = if u.is_top_level() {
                        t.image(&outer, 0)?
                    } else {
                        u.image(&inner, -1)?
                    };
                    Decimate {
                        fine: Accessor::new(&src),
                    }
                    .execute(&dev, &IterationSpace::full(&u.image(&inner, 0)?))?;
                    if !u.is_bottom_level() {
                        u.recurse()?;
                    }
                    Ok(())
                })?;
                assert_eq!(trace.sync_levels(), [0, 1, 2, 1, 0]);
                assert_eq!(trace.kernel_launches(), 3);
                // A pyramid of the enclosing traversal cannot be bound again.
                let err = pyramid_err(traverse(&[&outer], |_| Ok(())).unwrap_err());
                assert!(matches!(err, PyramidError::AlreadyBound { .. }), "{err}");
            }
            if !t.is_bottom_level() {
                t.recurse()?;
            }
            Ok(())
        })
        .unwrap();
        // The inner launches are also in the outer trace, at outer level 0.
        let levels: Vec<usize> = outer_trace.launches().map(|l| l.level).collect();
        assert_eq!(levels, [0, 0, 0]);
        assert_eq!(outer_trace.sync_levels(), [0, 1, 2, 1, 0]);
        for k in 0..3 {
            let s = 2usize << k;
            let img = inner.level(k).unwrap();
            let want: Vec<f32> = (0..img.height())
                .flat_map(|y| (0..img.width()).map(move |x| (s * x + 100 * s * y) as f32))
                .collect();
            assert_eq!(img.to_vec().unwrap(), want, "{} level {k}", dev.name());
        }
        // Both pyramids are free again.
        assert!(traverse(&[&outer], |_| Ok(())).is_ok());
        assert!(traverse(&[&inner], |_| Ok(())).is_ok());
    }
}

#[test]
fn decimation_through_relative_levels_on_every_backend() {
    for dev in devices() {
        let fine = Image::from_fn(13, 10, |x, y| (x * 100 + y) as f32).unwrap();
        let p = Pyramid::new(&fine, 4).unwrap();
        traverse(&[&p], |t| {
            if !t.is_top_level() {
                Decimate {
                    fine: Accessor::new(&t.image(&p, -1)?).with_boundary(Boundary::Clamp),
                }
                .execute(&dev, &IterationSpace::full(&t.image(&p, 0)?))?;
            }
            if !t.is_bottom_level() {
                t.recurse()?;
            }
            Ok(())
        })
        .unwrap();
        // Level k pixel (x, y) is fine pixel (2^k x, 2^k y), clamped.
        for k in 0..4 {
            let img = p.level(k).unwrap();
            let got = img.to_vec().unwrap();
            for y in 0..img.height() {
                for x in 0..img.width() {
                    let fx = (x << k).min(12);
                    let fy = (y << k).min(9);
                    assert_eq!(
                        got[y * img.width() + x],
                        (fx * 100 + fy) as f32,
                        "{} level {k} ({x}, {y})",
                        dev.name()
                    );
                }
            }
        }
    }
}

#[test]
fn misuse_is_an_error_and_unbinds() {
    let a = Pyramid::<f32>::zeros(8, 8, 3).unwrap();
    let b = Pyramid::<f32>::zeros(8, 6, 3).unwrap();
    let c = Pyramid::<f32>::zeros(8, 8, 2).unwrap();
    let d = Pyramid::<u8>::zeros(8, 8, 3).unwrap();
    // Different sizes or depths.
    for other in [&b as &dyn hipacc::BindPyramid, &c] {
        let err = pyramid_err(traverse(&[&a, other], |_| Ok(())).unwrap_err());
        assert!(matches!(err, PyramidError::Mismatch { .. }), "{err}");
        assert!(err.to_string().contains("8x8/3"), "{err}");
    }
    // Different pixel types of the same shape are fine.
    assert!(traverse(&[&a, &d], |_| Ok(())).is_ok());
    // The same pyramid twice (also through a clone).
    for twice in [a.clone(), a.clone().clone()] {
        let err = pyramid_err(traverse(&[&a, &twice], |_| Ok(())).unwrap_err());
        assert_eq!(err, PyramidError::AlreadyBound { id: a.id() });
    }
    // A pyramid not bound to the traversal.
    let err = traverse(&[&a], |t| t.image(&d, 0).map(|_| ())).unwrap_err();
    assert_eq!(pyramid_err(err), PyramidError::NotBound { id: d.id() });
    // Beyond the top and the bottom.
    let err = traverse(&[&a], |t| t.image(&a, -1).map(|_| ())).unwrap_err();
    assert_eq!(
        pyramid_err(err),
        PyramidError::LevelOutside {
            relative: -1,
            level: 0,
            depth: 3
        }
    );
    let err = traverse(&[&a], |t| {
        if t.is_bottom_level() {
            t.image(&a, 1).map(|_| ())
        } else {
            t.recurse()
        }
    })
    .unwrap_err();
    assert!(err.to_string().contains("+1 at level 2"), "{err}");
    // Recursing below the coarsest level.
    let err = traverse(&[&a], |t| t.recurse()).unwrap_err();
    assert_eq!(pyramid_err(err), PyramidError::RecurseAtBottom { level: 2 });
    // No pyramids.
    let err = pyramid_err(traverse(&[], |_| Ok(())).unwrap_err());
    assert_eq!(err, PyramidError::NoPyramids);
    // After every error above the pyramids are free to bind again.
    assert!(traverse(&[&a, &b.clone()], |_| Ok(())).is_err());
    assert!(traverse(&[&a], |_| Ok(())).is_ok());
    assert!(traverse(&[&b], |_| Ok(())).is_ok());
}
