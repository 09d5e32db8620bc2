//! The evaluator's reads: every boundary mode at any distance, regions of
//! interest of accessors and iteration spaces, and Undefined reads.

mod common;
use common::*;
use hipacc_core::ir;
use hipacc_core::{Accessor, Bindings, Boundary, BoundaryMode, Error, Image, Rect};

/// The position a read at `i` in an extent `n` lands on, unfolded step by
/// step from the definitions (independent of `boundary.rs`).
fn reference(mode: BoundaryMode, mut i: i64, n: i64) -> Option<i64> {
    loop {
        if (0..n).contains(&i) {
            return Some(i);
        }
        i = match mode {
            BoundaryMode::Undefined | BoundaryMode::Constant => return None,
            BoundaryMode::Clamp => {
                if i < 0 {
                    0
                } else {
                    n - 1
                }
            }
            BoundaryMode::Repeat => i - n * i.signum(),
            BoundaryMode::Mirror => {
                if i < 0 {
                    -1 - i
                } else {
                    2 * n - 1 - i
                }
            }
            BoundaryMode::MirrorInterior if n == 1 => 0,
            BoundaryMode::MirrorInterior => {
                if i < 0 {
                    -i
                } else {
                    2 * n - 2 - i
                }
            }
        };
    }
}

fn boundary(mode: BoundaryMode, c: i32) -> Boundary<i32> {
    match mode {
        BoundaryMode::Undefined => Boundary::Undefined,
        BoundaryMode::Clamp => Boundary::Clamp,
        BoundaryMode::Repeat => Boundary::Repeat,
        BoundaryMode::Mirror => Boundary::Mirror,
        BoundaryMode::MirrorInterior => Boundary::MirrorInterior,
        BoundaryMode::Constant => Boundary::Constant(c),
    }
}

/// Reads accessor `a` (image `iw x ih`, region `region`, `mode`) at every
/// offset of a grid reaching several image widths outside, over an
/// iteration space at `(2, 1)` of a larger output, and compares each pixel
/// with the reference; pixels outside the space must keep their value.
fn check(mode: BoundaryMode, iw: usize, ih: usize, region: Rect) {
    let img = Image::from_fn(iw, ih, |x, y| (100 * y + x + 1) as i32).unwrap();
    let acc = Accessor::new(&img)
        .with_region(region)
        .with_boundary(boundary(mode, -7));
    let mut b = Bindings::default();
    bind(&mut b, "a", &acc);
    let (sx, sy, sw, sh) = (2usize, 1usize, region.width + 1, region.height);
    let (ow, oh) = (sx + sw + 1, sy + sh + 2);
    let span = 3 * (iw.max(ih) as i64) + 2;
    for dy in [-span, -4, -1, 0, 1, 3, span] {
        for dx in [-span, -5, -2, 0, 2, 7, span + 1] {
            let body = value(at_c("a", dx, dy));
            let k = lower::<i32>(&b, &body).unwrap();
            let out = Image::from_vec(ow, oh, vec![-5i32; ow * oh]).unwrap();
            let r = ir::evaluate(&k, &b, &*out.to_dyn(), Rect::new(sx, sy, sw, sh));
            let mut first_undefined = None;
            let mut expected = vec![-5i32; ow * oh];
            for y in sy..sy + sh {
                for x in sx..sx + sw {
                    let rx = x as i64 - sx as i64 + dx;
                    let ry = y as i64 - sy as i64 + dy;
                    let cx = reference(mode, rx, region.width as i64);
                    let cy = reference(mode, ry, region.height as i64);
                    expected[y * ow + x] = match (cx, cy) {
                        (Some(cx), Some(cy)) => {
                            let (px, py) = (region.x + cx as usize, region.y + cy as usize);
                            (100 * py + px + 1) as i32
                        }
                        _ if mode == BoundaryMode::Constant => -7,
                        _ => {
                            first_undefined.get_or_insert((x as i64, y as i64, rx, ry));
                            0
                        }
                    };
                }
            }
            let case = format!("{mode:?} {iw}x{ih} region {region:?} offset ({dx}, {dy})");
            match (first_undefined, r) {
                (None, Ok(())) => assert_eq!(out.to_vec().unwrap(), expected, "{case}"),
                (
                    Some((x, y, rx, ry)),
                    Err(Error::UndefinedRead {
                        accessor,
                        x: ex,
                        y: ey,
                        ax,
                        ay,
                        ..
                    }),
                ) => {
                    assert_eq!(
                        (accessor.as_str(), ex, ey, ax, ay),
                        ("a", x, y, rx, ry),
                        "{case}"
                    );
                }
                (want, got) => panic!("{case}: expected undefined read {want:?}, got {got:?}"),
            }
        }
    }
}

#[test]
fn every_mode_at_any_distance_on_whole_images() {
    for mode in BoundaryMode::ALL {
        for (w, h) in [(1, 1), (1, 4), (2, 3), (5, 3)] {
            check(mode, w, h, Rect::full(w, h));
        }
    }
}

#[test]
fn every_mode_on_an_accessor_region() {
    for mode in BoundaryMode::ALL {
        check(mode, 6, 5, Rect::new(1, 2, 3, 2));
        check(mode, 6, 5, Rect::new(5, 0, 1, 5));
    }
}

#[test]
fn undefined_read_message_names_pixel_and_accessor() {
    let img = Image::<i32>::new(3, 3).unwrap();
    let mut b = Bindings::default();
    bind(&mut b, "src", &Accessor::new(&img));
    let k = lower::<i32>(&b, &value(at_c("src", 2, 0))).unwrap();
    let out = Image::<i32>::new(3, 3).unwrap();
    let e = ir::evaluate(&k, &b, &*out.to_dyn(), Rect::full(3, 3)).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("output pixel (1, 0)") && text.contains("`src`") && text.contains("(3, 0)"),
        "{text}"
    );
}

#[test]
fn rgba_constant_boundary() {
    use hipacc_core::Rgba;
    let img = Image::from_fn(2, 2, |x, y| Rgba::new(x as f32, y as f32, 1.0, 2.0)).unwrap();
    let c = Rgba::new(-1.0f32, -2.0, -3.0, -4.0);
    let mut b = Bindings::default();
    bind(
        &mut b,
        "a",
        &Accessor::new(&img).with_boundary(Boundary::Constant(c)),
    );
    let px = run::<Rgba<f32>>(&b, &value(at_c("a", 1, 0)), 2, 2).unwrap();
    assert_eq!(
        px,
        [
            Rgba::new(1.0, 0.0, 1.0, 2.0),
            c,
            Rgba::new(1.0, 1.0, 1.0, 2.0),
            c
        ]
    );
}
