//! The CPU backend compiles its hot loops twice, for AVX2 + FMA and for the
//! x86-64 baseline, and promises the same bits from both (fused
//! multiply-adds only where the code asks for them, correctly rounded in
//! both copies). This test computes a set of kernels here and again in a
//! child process that `HIPACC_CPU_BASELINE` forces onto the baseline
//! copies, and compares the outputs bit for bit.
//!
//! The kernels: separable Gaussians in `f32` and `f64` (taps as fused
//! multiply-adds, the blocked vertical pass, the register blocks of masks
//! wider than 7) on every boundary mode, a
//! decimating one (a pyramid's reduce step), and a five-point stencil with
//! an explicit `mul_add` through the general pixel loop; odd sizes, so that
//! band remainders and vector tails run.

use hipacc::prelude::*;
use std::process::Command;

const CHILD_ENV: &str = "HIPACC_CPU_BASELINE";
const MARKER: &str = "cpu-baseline digest:";

#[derive(Kernel)]
#[kernel(output = f32)]
struct Blur32 {
    input: Accessor<f32>,
    mask: Mask<f32>,
}

#[kernel_body]
impl Blur32 {
    fn kernel(&self) -> f32 {
        convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.input.at(dx, dy)
        })
    }
}

#[derive(Kernel)]
#[kernel(output = f64)]
struct Blur64 {
    input: Accessor<f64>,
    mask: Mask<f64>,
}

#[kernel_body]
impl Blur64 {
    fn kernel(&self) -> f64 {
        convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.input.at(dx, dy)
        })
    }
}

#[derive(Kernel)]
#[kernel(output = f32)]
struct Reduce {
    input: Accessor<f32>,
    mask: Mask<f32>,
}

#[kernel_body]
impl Reduce {
    fn kernel(&self) -> f32 {
        convolve(&self.mask, Sum, |dx, dy| {
            self.mask.at(dx, dy) * self.input.at(x() + dx, y() + dy)
        })
    }
}

#[derive(Kernel)]
#[kernel(output = f32)]
struct Stencil {
    u: Accessor<f32>,
    weight: f32,
}

#[kernel_body]
impl Stencil {
    fn kernel(&self) -> f32 {
        let nb = self.u.at(-1, 0) + self.u.at(1, 0) + self.u.at(0, -1) + self.u.at(0, 1);
        self.weight.mul_add(nb, self.u())
    }
}

/// Inputs that are not exactly representable sums, so that a skipped or
/// added rounding shows in the bits.
fn value(x: usize, y: usize) -> f64 {
    ((x * 7919 + y * 104_729) % 1009) as f64 / 1009.0 + 0.1
}

fn binomial(n: usize) -> Vec<f64> {
    // The coefficients of (1 + x)^(n - 1), by Pascal's rule.
    let mut row = vec![1.0];
    for _ in 1..n {
        row = (0..=row.len())
            .map(|k| row.get(k).copied().unwrap_or(0.0) + k.checked_sub(1).map_or(0.0, |j| row[j]))
            .collect();
    }
    let s: f64 = row.iter().sum();
    (0..n * n)
        .map(|i| row[i / n] * row[i % n] / (s * s))
        .collect()
}

fn boundaries() -> Vec<Boundary<f64>> {
    vec![
        Boundary::Clamp,
        Boundary::Repeat,
        Boundary::Mirror,
        Boundary::MirrorInterior,
        Boundary::Constant(0.25),
    ]
}

fn as_f32(b: &Boundary<f64>) -> Boundary<f32> {
    match *b {
        Boundary::Constant(c) => Boundary::Constant(c as f32),
        Boundary::Clamp => Boundary::Clamp,
        Boundary::Repeat => Boundary::Repeat,
        Boundary::Mirror => Boundary::Mirror,
        Boundary::MirrorInterior => Boundary::MirrorInterior,
        Boundary::Undefined => Boundary::Undefined,
    }
}

/// FNV-1a over bytes.
fn fnv(hash: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *hash ^= u64::from(b);
        *hash = hash.wrapping_mul(0x100_0000_01b3);
    }
}

/// Every kernel's output bits, hashed, and how many pixels went in.
fn digest() -> (u64, usize) {
    let dev = Device::cpu_serial_below(0);
    let mut hash = 0xcbf2_9ce4_8422_2325;
    let mut pixels = 0;
    for (w, h) in [(203, 131), (67, 9), (5, 3)] {
        let src64 = Image::from_fn(w, h, value).expect("input");
        let src32 = Image::from_fn(w, h, |x, y| value(x, y) as f32).expect("input");
        for n in [3, 5, 7, 13] {
            let c64 = binomial(n);
            let c32: Vec<f32> = c64.iter().map(|&c| c as f32).collect();
            for b in boundaries() {
                let out32 = Image::<f32>::new(w, h).expect("out");
                let k = Blur32 {
                    input: Accessor::new(&src32).with_boundary(as_f32(&b)),
                    mask: Mask::from_vec(n, n, c32.clone()).expect("mask"),
                };
                k.execute(&dev, &IterationSpace::full(&out32)).expect("f32");
                let out64 = Image::<f64>::new(w, h).expect("out");
                let k = Blur64 {
                    input: Accessor::new(&src64).with_boundary(b),
                    mask: Mask::from_vec(n, n, c64.clone()).expect("mask"),
                };
                k.execute(&dev, &IterationSpace::full(&out64)).expect("f64");
                let coarse = Image::<f32>::new(w.div_ceil(2), h.div_ceil(2)).expect("out");
                let k = Reduce {
                    input: Accessor::new(&src32).with_boundary(as_f32(&b)),
                    mask: Mask::from_vec(n, n, c32.clone()).expect("mask"),
                };
                k.execute(&dev, &IterationSpace::full(&coarse))
                    .expect("reduce");
                for v in out32
                    .to_vec()
                    .expect("pixels")
                    .into_iter()
                    .chain(coarse.to_vec().expect("pixels"))
                {
                    fnv(&mut hash, &v.to_bits().to_le_bytes());
                    pixels += 1;
                }
                for v in out64.to_vec().expect("pixels") {
                    fnv(&mut hash, &v.to_bits().to_le_bytes());
                    pixels += 1;
                }
            }
        }
        let out = Image::<f32>::new(w, h).expect("out");
        let k = Stencil {
            u: Accessor::new(&src32).with_boundary(Boundary::Constant(0.0)),
            weight: 0.3,
        };
        k.execute(&dev, &IterationSpace::full(&out))
            .expect("stencil");
        for v in out.to_vec().expect("pixels") {
            fnv(&mut hash, &v.to_bits().to_le_bytes());
            pixels += 1;
        }
    }
    (hash, pixels)
}

#[test]
fn baseline_and_wide_copies_give_the_same_bits() {
    let name = Device::cpu().name();
    let (hash, pixels) = digest();
    if std::env::var_os(CHILD_ENV).is_some() {
        assert!(name.contains("baseline"), "{name}");
        println!("{MARKER} {hash:016x} {pixels}");
        return;
    }
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
        assert!(name.contains("AVX2+FMA"), "{name}");
    }
    let exe = std::env::current_exe().expect("test binary");
    let out = Command::new(exe)
        .args([
            "--exact",
            "baseline_and_wide_copies_give_the_same_bits",
            "--nocapture",
        ])
        .env(CHILD_ENV, "1")
        .output()
        .expect("child runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix(MARKER))
        .unwrap_or_else(|| panic!("child printed no digest:\n{stdout}"));
    assert_eq!(
        line.trim(),
        format!("{hash:016x} {pixels}"),
        "the baseline copies give other bits than the wide ones"
    );
}
