//! `KernelBody::cpu_pixel` computes the body's value on host images, with
//! the boundary condition applied on every read (`Border`).

use hipacc_core::cpu::{Border, Interior};
use hipacc_core::{
    kernel_body, Accessor, Boundary, Domain, Image, Kernel, KernelBody, KernelFields, Mask, Rgba,
};

/// Every pixel of a `width`x`height` output computed with `Border` reads.
fn run<K: KernelBody>(k: &K, width: usize, height: usize) -> Vec<K::Output> {
    let views = match k.cpu_views((0, 0)) {
        Ok(v) => v,
        Err(e) => panic!("cpu_views failed: {e}"),
    };
    let mut out = Vec::new();
    for y in 0..height as isize {
        for x in 0..width as isize {
            // SAFETY: `Border` checks every read.
            out.push(unsafe { K::cpu_pixel::<Border>(&views, x, y) });
        }
    }
    out
}

fn image<T: hipacc_core::Pixel>(width: usize, height: usize, data: Vec<T>) -> Image<T> {
    match Image::from_vec(width, height, data) {
        Ok(i) => i,
        Err(e) => panic!("image: {e}"),
    }
}

#[derive(Kernel)]
#[kernel(output = f32)]
struct Jacobi {
    sol: Accessor<f32>,
    rhs: Accessor<f32>,
    omega: f32,
}

#[kernel_body]
impl Jacobi {
    fn kernel(&self) -> f32 {
        let nb = self.sol.at(-1, 0) + self.sol.at(1, 0) + self.sol.at(0, -1) + self.sol.at(0, 1);
        (1.0 - self.omega) * self.sol() + self.omega * 0.25 * (self.rhs() + nb)
    }
}

#[test]
fn jacobi_with_constant_boundary() {
    let (w, h) = (3, 2);
    let u: Vec<f32> = (0..6).map(|i| i as f32).collect();
    let f = vec![1.0f32; 6];
    let k = Jacobi {
        sol: Accessor::new(&image(w, h, u.clone())).with_boundary(Boundary::Constant(10.0)),
        rhs: Accessor::new(&image(w, h, f.clone())),
        omega: 0.5,
    };
    let get = |x: i64, y: i64| {
        if x < 0 || y < 0 || x >= w as i64 || y >= h as i64 {
            10.0
        } else {
            u[(y * w as i64 + x) as usize]
        }
    };
    let mut expected = Vec::new();
    for y in 0..h as i64 {
        for x in 0..w as i64 {
            let nb = get(x - 1, y) + get(x + 1, y) + get(x, y - 1) + get(x, y + 1);
            expected.push(0.5 * get(x, y) + 0.5 * 0.25 * (1.0 + nb));
        }
    }
    assert_eq!(run(&k, w, h), expected);
    let b = k.bindings();
    assert_eq!(b.accessors.len(), 2);
    assert_eq!(b.accessors[0].slot.name, "sol");
    assert_eq!(b.params.len(), 1);
    assert_eq!(b.params[0].slot.name, "omega");
}

#[derive(Kernel)]
#[kernel(output = i32)]
struct Loops {
    input: Accessor<u8>,
    bias: i32,
}

#[kernel_body]
impl Loops {
    fn kernel(&self) -> i32 {
        let mut s: i32 = 0;
        for i in -2..=2 {
            s += self.input.at(i, 0) as i32 * (i + 3);
        }
        if x() == 0 {
            s = -s;
        }
        if y() == 1 {
            s + self.bias
        } else {
            s * 2 + x()
        }
    }
}

#[test]
fn loops_coordinates_and_clamp() {
    let data: Vec<u8> = vec![1, 2, 3, 4, 5, 6, 7, 8];
    let (w, h) = (4, 2);
    let k = Loops {
        input: Accessor::new(&image(w, h, data.clone())).with_boundary(Boundary::Clamp),
        bias: 100,
    };
    let mut expected = Vec::new();
    for y in 0..h as i32 {
        for x in 0..w as i32 {
            let mut s = 0;
            for i in -2..=2 {
                let cx = (x + i).clamp(0, w as i32 - 1);
                s += i32::from(data[(y * w as i32 + cx) as usize]) * (i + 3);
            }
            if x == 0 {
                s = -s;
            }
            expected.push(if y == 1 { s + 100 } else { s * 2 + x });
        }
    }
    assert_eq!(run(&k, w, h), expected);
}

/// Loops of every length the CPU emitter treats differently: short ones
/// (written out, nested here), a long one (kept a loop), an empty one, and
/// a loop variable that shadows a local for the loop only.
#[derive(Kernel)]
#[kernel(output = i32)]
struct LoopForms {
    input: Accessor<u8>,
}

#[kernel_body]
impl LoopForms {
    fn kernel(&self) -> i32 {
        let mut s: i32 = 0;
        for j in 0..2 {
            for i in -1..=1 {
                s += self.input.at(i, j) as i32 * (3 * j + i + 2);
            }
        }
        for k in 0..12 {
            s += k * x();
        }
        for k in 5..5 {
            s += 1000 * k;
        }
        let i: i32 = 7;
        for i in 3..4 {
            s += i;
        }
        s * 10 + i
    }
}

#[test]
fn short_long_empty_and_shadowing_loops() {
    let data: Vec<u8> = (1..=15).collect();
    let (w, h) = (5, 3);
    let k = LoopForms {
        input: Accessor::new(&image(w, h, data.clone())).with_boundary(Boundary::Mirror),
    };
    let mirror = |v: i32, n: i32| {
        if v < 0 {
            -v - 1
        } else if v >= n {
            2 * n - v - 1
        } else {
            v
        }
    };
    let mut expected = Vec::new();
    for y in 0..h as i32 {
        for x in 0..w as i32 {
            let mut s = 0;
            for j in 0..2 {
                for i in -1..=1 {
                    let (cx, cy) = (mirror(x + i, w as i32), mirror(y + j, h as i32));
                    s += i32::from(data[(cy * w as i32 + cx) as usize]) * (3 * j + i + 2);
                }
            }
            s += 66 * x + 3;
            expected.push(s * 10 + 7);
        }
    }
    assert_eq!(run(&k, w, h), expected);
}

#[derive(Kernel)]
#[kernel(output = f32)]
struct Windows {
    input: Accessor<f32>,
    mask: Mask<f32>,
    dom: Domain,
}

#[kernel_body]
impl Windows {
    fn kernel(&self) -> f32 {
        let c = convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.input.at(dx, dy)
        });
        let m = reduce(&self.dom, Max, |dx, dy| self.input.at(dx, dy));
        let p = reduce(&self.dom, Prod, |dx, dy| self.input.at(dx, dy));
        let lo = reduce(&self.dom, Min, |dx, _| self.input.at(dx, 0));
        let mut s = 0.0f32;
        iterate(&self.dom, |dx, dy| {
            s += self.input.at(dx, dy);
        });
        c * 1000.0 + m * 100.0 + p * 10.0 + lo + s * 0.5
    }
}

#[test]
fn windows_follow_positions_with_mirror() {
    let (w, h) = (3, 3);
    let data: Vec<f32> = vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0];
    let mask = match Mask::new([[0.0f32, 1.0, 0.0], [2.0, 0.0, 3.0], [0.0, 0.0, 0.0]]) {
        Ok(m) => m,
        Err(e) => panic!("mask: {e}"),
    };
    let mut dom = match Domain::new(3, 1) {
        Ok(d) => d,
        Err(e) => panic!("domain: {e}"),
    };
    if let Err(e) = dom.set(0, 0, false) {
        panic!("domain: {e}");
    }
    let k = Windows {
        input: Accessor::new(&image(w, h, data.clone())).with_boundary(Boundary::Mirror),
        mask,
        dom,
    };
    let mirror = |i: i32, n: i32| {
        if i < 0 {
            -i - 1
        } else if i >= n {
            2 * n - i - 1
        } else {
            i
        }
    };
    let get = |x: i32, y: i32| data[(mirror(y, 3) * 3 + mirror(x, 3)) as usize];
    let mut expected = Vec::new();
    for y in 0..3 {
        for x in 0..3 {
            let c = get(x, y - 1) + 2.0 * get(x - 1, y) + 3.0 * get(x + 1, y);
            let (l, r) = (get(x - 1, y), get(x + 1, y));
            let v = c * 1000.0 + l.max(r) * 100.0 + l * r * 10.0 + l.min(r) + (l + r) * 0.5;
            expected.push(v);
        }
    }
    assert_eq!(run(&k, w, h), expected);
}

#[derive(Kernel)]
#[kernel(output = Rgba<f32>)]
struct Vectors {
    img: Accessor<Rgba<f32>>,
    gain: f32,
}

#[kernel_body]
impl Vectors {
    fn kernel(&self) -> Rgba<f32> {
        let p: Rgba<f32> = self.img.at(1, 0);
        let l = (p.r + p.g + p.b) / 3.0;
        Rgba::new(l, l * self.gain, p.b.sqrt(), p.a) * 2.0f32
    }
}

#[test]
fn vectors_with_repeat() {
    let data = vec![
        Rgba::new(1.0f32, 2.0, 9.0, 0.5),
        Rgba::new(3.0, 3.0, 16.0, 1.0),
    ];
    let k = Vectors {
        img: Accessor::new(&image(2, 1, data.clone())).with_boundary(Boundary::Repeat),
        gain: 3.0,
    };
    let expected: Vec<Rgba<f32>> = [1, 0]
        .iter()
        .map(|&i| {
            let p: Rgba<f32> = data[i];
            let l = (p.r + p.g + p.b) / 3.0;
            Rgba::new(l, l * 3.0, p.b.sqrt(), p.a) * 2.0
        })
        .collect();
    assert_eq!(run(&k, 2, 1), expected);
}

#[test]
fn interior_reads_match_border_reads_inside() {
    let data: Vec<f32> = (0..25).map(|i| (i * i % 7) as f32).collect();
    let k = Jacobi {
        sol: Accessor::new(&image(5, 5, data.clone())).with_boundary(Boundary::Clamp),
        rhs: Accessor::new(&image(5, 5, data)),
        omega: 0.8,
    };
    let views = match k.cpu_views((0, 0)) {
        Ok(v) => v,
        Err(e) => panic!("cpu_views failed: {e}"),
    };
    for y in 1..4 {
        for x in 1..4 {
            // SAFETY: the 3x3 footprint at (1..4, 1..4) is inside the 5x5 image.
            let (i, b) = unsafe {
                (
                    Jacobi::cpu_pixel::<Interior>(&views, x, y),
                    Jacobi::cpu_pixel::<Border>(&views, x, y),
                )
            };
            assert_eq!(i, b, "pixel ({x}, {y})");
        }
    }
}

/// Reads of a finer and a coarser image at positions affine in the
/// coordinates and their halves, as restriction and prolongation read.
#[derive(Kernel)]
#[kernel(output = f32)]
struct Resample {
    fine: Accessor<f32>,
    coarse: Accessor<f32>,
}

#[kernel_body]
impl Resample {
    fn kernel(&self) -> f32 {
        let mut s: f32 = 0.0;
        for i in 0..2 {
            let fx = 2 * x() + i;
            s += self.fine.at(fx - x(), 2 * y() - y() + 1) * (i as f32 + 1.0);
        }
        let cx = x() / 2;
        // `cx - 1` at even columns, `cx + 1` at odd ones.
        let nx = 2 * x() - 3 * cx - 1;
        let third = self.coarse.at(nx - x(), y() / 3 - y());
        s + 10.0 * self.coarse.at(cx - x(), y() / 2 - y()) + 100.0 * third
    }
}

#[test]
fn affine_reads_of_other_grids_match_checked_reads() {
    let (w, h) = (8usize, 7usize);
    let fine: Vec<f32> = (0..(2 * w * (2 * h + 1)))
        .map(|i| (i % 23) as f32)
        .collect();
    let coarse: Vec<f32> = (0..(w / 2 * h)).map(|i| (i % 11) as f32 * 0.5).collect();
    let k = Resample {
        fine: Accessor::new(&image(2 * w, 2 * h + 1, fine.clone())),
        coarse: Accessor::new(&image(w / 2, h, coarse.clone())),
    };
    let views = match k.cpu_views((0, 0)) {
        Ok(v) => v,
        Err(e) => panic!("cpu_views failed: {e}"),
    };
    let mut inside = 0;
    for y in 0..h {
        for x in 0..w {
            let nx = if x % 2 == 0 {
                (x / 2) as isize - 1
            } else {
                (x / 2 + 1) as isize
            };
            if !(0..(w / 2) as isize).contains(&nx) {
                continue;
            }
            inside += 1;
            let f = |c: usize| fine[(2 * y + 1) * 2 * w + c];
            let c = |cx: usize, cy: usize| coarse[cy * w / 2 + cx];
            let expected = f(2 * x)
                + 2.0 * f(2 * x + 1)
                + 10.0 * c(x / 2, y / 2)
                + 100.0 * c(nx as usize, y / 3);
            let (x, y) = (x as isize, y as isize);
            // SAFETY: every read of this pixel is inside its image (`nx`
            // checked above; the others by the images' sizes).
            let (i, b) = unsafe {
                (
                    Resample::cpu_pixel::<Interior>(&views, x, y),
                    Resample::cpu_pixel::<Border>(&views, x, y),
                )
            };
            assert_eq!(i, expected, "interior pixel ({x}, {y})");
            assert_eq!(b, expected, "border pixel ({x}, {y})");
        }
    }
    assert_eq!(inside, 6 * h);
}

/// A kernel stamped out per type by `macro_rules!`, whose `$t:ty` reaches
/// the macros wrapped in invisible groups.
macro_rules! scale_kernel {
    ($name:ident, $t:ty) => {
        #[derive(Kernel)]
        #[kernel(output = $t)]
        struct $name {
            input: Accessor<$t>,
            k: $t,
        }

        #[kernel_body]
        impl $name {
            fn kernel(&self) -> $t {
                let v: $t = self.input() * self.k;
                (v as f64 / 2.0) as $t
            }
        }
    };
}

scale_kernel!(ScaleU8, u8);
scale_kernel!(ScaleF64, f64);

#[test]
fn kernels_from_macro_rules_types() {
    let k = ScaleU8 {
        input: Accessor::new(&image(3, 1, vec![1u8, 2, 3])),
        k: 5,
    };
    assert_eq!(run(&k, 3, 1), vec![2u8, 5, 7]);
    let k = ScaleF64 {
        input: Accessor::new(&image(2, 1, vec![1.0f64, -4.0])),
        k: 0.5,
    };
    assert_eq!(run(&k, 2, 1), vec![0.25, -1.0]);
}
