//! The DSL kernels of gradient-domain compression (see [`super::fattal`]).
//!
//! All reads clamp at the edges (`H(-1) = H(0)`), the zero-flux boundary of
//! the Neumann problem: a forward difference across the last column is 0.

use hipacc::prelude::*;

/// Luminance `Y = s (0.2126 R + 0.7152 G + 0.0722 B)` (Rec. 709
/// primaries), `s` a power of two that brings an image of extreme scale
/// into the normal range of `f32` (see [`super::fattal`]).
#[derive(Kernel)]
#[kernel(output = f32)]
pub(crate) struct Luminance {
    pub(crate) rgb: Accessor<Rgba<f32>>,
    pub(crate) scale: f32,
}

#[kernel_body]
impl Luminance {
    fn kernel(&self) -> f32 {
        let p = self.rgb();
        0.2126 * (p.r * self.scale) + 0.7152 * (p.g * self.scale) + 0.0722 * (p.b * self.scale)
    }
}

/// `H = ln(100 (Y - lo) / (hi - lo) + 1e-4)`: log luminance normalised to
/// `[ln 1e-4, ln 100]`, as pfstmo_fattal02 does.
#[derive(Kernel)]
#[kernel(output = f32)]
pub(crate) struct LogLuminance {
    pub(crate) y: Accessor<f32>,
    pub(crate) lo: f32,
    /// `100 / (hi - lo)`.
    pub(crate) scale: f32,
}

#[kernel_body]
impl LogLuminance {
    fn kernel(&self) -> f32 {
        ((self.y() - self.lo) * self.scale + 0.0001).ln()
    }
}

/// The next Gaussian level: the `[1 2 1]/4` blur followed by the mean of
/// 2x2 pixels, fused: weights `[1 3 3 1]/8` per axis at `2x-1 ..= 2x+2`.
#[derive(Kernel)]
#[kernel(output = f32)]
pub(crate) struct Decimate {
    pub(crate) fine: Accessor<f32>,
}

#[kernel_body]
impl Decimate {
    fn kernel(&self) -> f32 {
        let mut s = 0.0f32;
        for j in -1..3 {
            let wy = if j == -1 || j == 2 { 1.0f32 } else { 3.0f32 };
            for i in -1..3 {
                let wx = if i == -1 || i == 2 { 1.0f32 } else { 3.0f32 };
                s += wx * wy * self.fine.at(x() + i, y() + j);
            }
        }
        s * 0.015625
    }
}

/// Gradient magnitude of level `k`: central differences divided by
/// `2^(k+1)`.
#[derive(Kernel)]
#[kernel(output = f32)]
pub(crate) struct GradientMagnitude {
    pub(crate) h: Accessor<f32>,
    /// `1 / 2^(k+1)`.
    pub(crate) inv_divider: f32,
}

#[kernel_body]
impl GradientMagnitude {
    fn kernel(&self) -> f32 {
        let gx = (self.h.at(1, 0) - self.h.at(-1, 0)) * self.inv_divider;
        let gy = (self.h.at(0, 1) - self.h.at(0, -1)) * self.inv_divider;
        (gx * gx + gy * gy).sqrt()
    }
}

/// The attenuation of the coarsest level: `φ = ((|∇H| + noise) / a)^(β-1)`
/// (the paper's `(a / |∇H|) (|∇H| / a)^β` with the noise term), `|∇H|`
/// at least 1e-4; `a = 0` (a flat level) attenuates nothing.
#[derive(Kernel)]
#[kernel(output = f32)]
pub(crate) struct Attenuation {
    pub(crate) grad: Accessor<f32>,
    pub(crate) a: f32,
    pub(crate) noise: f32,
    pub(crate) beta: f32,
}

#[kernel_body]
impl Attenuation {
    fn kernel(&self) -> f32 {
        let g = self.grad().max(0.0001);
        if self.a > 0.0 {
            ((g + self.noise) / self.a).powf(self.beta - 1.0)
        } else {
            1.0
        }
    }
}

/// The combined attenuation one level finer: the coarser `Φ` upsampled
/// (nearest) and blurred with `[1 2 1]/4`, times this level's `φ` when
/// `apply` is 1 (levels finer than the detail level are left alone). The
/// blur reads the upsampled image with clamping; with the coarse image
/// read through `Clamp` that is `coarse((x + i) / 2)` (`-1 / 2` truncates
/// to 0, `w / 2` is clamped to the last coarse pixel).
#[derive(Kernel)]
#[kernel(output = f32)]
pub(crate) struct PropagateAttenuation {
    pub(crate) coarse: Accessor<f32>,
    pub(crate) grad: Accessor<f32>,
    pub(crate) a: f32,
    pub(crate) noise: f32,
    pub(crate) beta: f32,
    pub(crate) apply: i32,
}

#[kernel_body]
impl PropagateAttenuation {
    fn kernel(&self) -> f32 {
        let mut s = 0.0f32;
        for j in -1..2 {
            let wy = if j == 0 { 2.0f32 } else { 1.0f32 };
            for i in -1..2 {
                let wx = if i == 0 { 2.0f32 } else { 1.0f32 };
                s += wx * wy * self.coarse.at((x() + i) / 2 - x(), (y() + j) / 2 - y());
            }
        }
        let up = s * 0.0625;
        let g = self.grad().max(0.0001);
        if self.apply == 1 && self.a > 0.0 {
            up * ((g + self.noise) / self.a).powf(self.beta - 1.0)
        } else {
            up
        }
    }
}

/// The right-hand side `-div G` of `-ΔU = -div G` for the attenuated
/// gradients `G = ∇H · Φ` (forward differences, `Φ` averaged between the
/// two pixels; zero across the image edge).
#[derive(Kernel)]
#[kernel(output = f32)]
pub(crate) struct NegDivergence {
    pub(crate) h: Accessor<f32>,
    pub(crate) fi: Accessor<f32>,
}

#[kernel_body]
impl NegDivergence {
    fn kernel(&self) -> f32 {
        let c = self.h();
        let fc = self.fi();
        let gx = (self.h.at(1, 0) - c) * 0.5 * (self.fi.at(1, 0) + fc);
        let gxw = (c - self.h.at(-1, 0)) * 0.5 * (self.fi.at(-1, 0) + fc);
        let gy = (self.h.at(0, 1) - c) * 0.5 * (self.fi.at(0, 1) + fc);
        let gyn = (c - self.h.at(0, -1)) * 0.5 * (self.fi.at(0, -1) + fc);
        gxw - gx + gyn - gy
    }
}

/// The output colour: `L = max(0, (exp(γ U) - lo) / (hi - lo))`, colour
/// restored as `(C / Y)^s · L` (0 where `Y` is 0). Display encoding
/// (`encode` 1) clamps to `[0, 1]` and applies `1 / display_gamma` as
/// `(C / Y)^(s / g) · L^(1 / g)` (one power per channel plus one for `L`);
/// with `srgb` 1 the sRGB curve instead. Linear output (`encode` 0) is
/// neither clamped nor encoded.
#[derive(Kernel)]
#[kernel(output = Rgba<f32>)]
pub(crate) struct Colour {
    pub(crate) rgb: Accessor<Rgba<f32>>,
    pub(crate) y: Accessor<f32>,
    pub(crate) u: Accessor<f32>,
    pub(crate) gamma: f32,
    pub(crate) lo: f32,
    /// `1 / (hi - lo)`, 0 when the result is flat.
    pub(crate) inv_range: f32,
    pub(crate) saturation: f32,
    pub(crate) inv_display_gamma: f32,
    pub(crate) encode: i32,
    pub(crate) srgb: i32,
    /// The scale `Y` was computed with.
    pub(crate) scale: f32,
}

#[kernel_body]
impl Colour {
    fn kernel(&self) -> Rgba<f32> {
        let lum = (self.gamma * self.u()).exp();
        let mut l = 1.0f32;
        if self.inv_range > 0.0 {
            l = ((lum - self.lo) * self.inv_range).max(0.0);
        }
        let yin = self.y();
        let c = self.rgb();
        let p = Rgba::new(c.r * self.scale, c.g * self.scale, c.b * self.scale, 1.0f32);
        let mut out = Rgba::new(0.0f32, 0.0f32, 0.0f32, 1.0f32);
        if yin > 0.0 {
            let inv_y = 1.0 / yin;
            if self.encode == 0 {
                out = Rgba::new(
                    (p.r * inv_y).powf(self.saturation) * l,
                    (p.g * inv_y).powf(self.saturation) * l,
                    (p.b * inv_y).powf(self.saturation) * l,
                    1.0f32,
                );
            } else if self.srgb == 1 {
                let r = ((p.r * inv_y).powf(self.saturation) * l).min(1.0);
                let g = ((p.g * inv_y).powf(self.saturation) * l).min(1.0);
                let b = ((p.b * inv_y).powf(self.saturation) * l).min(1.0);
                out = Rgba::new(
                    if r <= 0.0031308 {
                        12.92 * r
                    } else {
                        1.055 * r.powf(0.41666667) - 0.055
                    },
                    if g <= 0.0031308 {
                        12.92 * g
                    } else {
                        1.055 * g.powf(0.41666667) - 0.055
                    },
                    if b <= 0.0031308 {
                        12.92 * b
                    } else {
                        1.055 * b.powf(0.41666667) - 0.055
                    },
                    1.0f32,
                );
            } else {
                let e = self.saturation * self.inv_display_gamma;
                let le = l.powf(self.inv_display_gamma);
                out = Rgba::new(
                    ((p.r * inv_y).powf(e) * le).min(1.0),
                    ((p.g * inv_y).powf(e) * le).min(1.0),
                    ((p.b * inv_y).powf(e) * le).min(1.0),
                    1.0f32,
                );
            }
        }
        out
    }
}
