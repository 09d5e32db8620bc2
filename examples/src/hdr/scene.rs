//! A procedurally generated high-dynamic-range scene: the default input of
//! HDR compression.
//!
//! A room with a window on a sunny day, in linear RGB radiance:
//!
//! - through the window, a sky whose blue deepens smoothly towards the top,
//!   the sun (about 1500, with a wide glow) and textured green hills;
//! - the window frame and its cross, backlit and dark, with sharp edges;
//! - inside, walls and a wooden floor lit by a dim ambient light, a floor lamp
//!   whose bulb (about 600) lights the wall around it, the window's sunlit
//!   patch on the floor with the shadow of the frame, a red sofa with a blue
//!   cushion, a chequered rug and a striped painting (coloured surfaces,
//!   texture and edges), and deep shadow under the sofa (about 0.01).
//!
//! The dynamic range (brightest over darkest pixel) is above 1e5 at any size
//! of at least 64x64; every value is finite and positive. Coordinates are
//! fractions of the image's width and height (distances to the sun and lamp
//! in units of the height), so any size shows the same scene, and the result
//! depends on nothing but the size.

use anyhow::Result;
use hipacc::core::{Image, Rgba};

/// The default width of the demo scene.
pub const DEMO_WIDTH: usize = 768;
/// The default height of the demo scene.
pub const DEMO_HEIGHT: usize = 512;

/// Linear RGB.
type Rgb = [f32; 3];

/// The window's opening, as fractions of width (u) and height (v).
const WINDOW: Rect = Rect {
    u0: 0.40,
    u1: 0.85,
    v0: 0.12,
    v1: 0.60,
};
/// Width of the window frame's bars, as a fraction of the height.
const BAR: f32 = 0.018;
/// The sun's centre (fractions of width and height) and radius (height).
const SUN: (f32, f32, f32) = (0.72, 0.23, 0.022);
/// The lamp bulb's centre and radius.
const BULB: (f32, f32, f32) = (0.14, 0.37, 0.012);
/// Where the floor begins.
const FLOOR_V: f32 = 0.78;
/// Light falling everywhere inside.
const AMBIENT: f32 = 0.12;

#[derive(Clone, Copy)]
struct Rect {
    u0: f32,
    u1: f32,
    v0: f32,
    v1: f32,
}

impl Rect {
    fn contains(&self, u: f32, v: f32) -> bool {
        (self.u0..self.u1).contains(&u) && (self.v0..self.v1).contains(&v)
    }
}

/// The demo scene at `width x height` (see the module docs); an error only
/// for an empty or impossibly large size.
pub fn demo_scene(width: usize, height: usize) -> Result<Image<Rgba<f32>>> {
    let aspect = width as f32 / height.max(1) as f32;
    let img = Image::from_fn(width, height, |x, y| {
        let u = (x as f32 + 0.5) / width as f32;
        let v = (y as f32 + 0.5) / height as f32;
        let [r, g, b] = radiance(u, v, aspect, height as f32);
        Rgba::new(r, g, b, 1.0)
    })?;
    Ok(img)
}

/// The radiance at `(u, v)`; `aspect` scales `u` distances into height
/// units, `pixels` is the height in pixels (for texture frequencies).
fn radiance(u: f32, v: f32, aspect: f32, pixels: f32) -> Rgb {
    if WINDOW.contains(u, v) && !on_window_bar(u, v, aspect) {
        return outside(u, v, aspect);
    }
    let (albedo, shade) = surface(u, v, aspect, pixels);
    let light = AMBIENT * shade + lamp_light(u, v, aspect);
    let mut rgb = albedo.map(|a| a * light);
    let bulb = distance(u, v, BULB.0, BULB.1, aspect);
    if bulb < BULB.2 {
        rgb = [600.0, 470.0, 300.0];
    }
    rgb
}

fn distance(u: f32, v: f32, cu: f32, cv: f32, aspect: f32) -> f32 {
    ((u - cu) * aspect).hypot(v - cv)
}

/// Whether `(u, v)` is on the frame or cross of the window.
fn on_window_bar(u: f32, v: f32, aspect: f32) -> bool {
    let bar_u = BAR / aspect;
    let mid_u = 0.5 * (WINDOW.u0 + WINDOW.u1);
    let mid_v = 0.5 * (WINDOW.v0 + WINDOW.v1);
    !(WINDOW.u0 + bar_u..WINDOW.u1 - bar_u).contains(&u)
        || !(WINDOW.v0 + BAR..WINDOW.v1 - BAR).contains(&v)
        || (u - mid_u).abs() < 0.5 * bar_u
        || (v - mid_v).abs() < 0.5 * BAR
}

/// Sky, sun and hills seen through the window.
fn outside(u: f32, v: f32, aspect: f32) -> Rgb {
    let horizon = 0.47 + 0.03 * (u * 11.0).sin() + 0.012 * (u * 37.0 + 1.0).sin();
    if v > horizon {
        let depth = ((v - horizon) / 0.1).min(1.0);
        let texture = 0.75 + 0.5 * fractal_noise(u * 60.0, v * 60.0, 7);
        let green = [0.20, 0.42, 0.12].map(|c| c * (2.0 + 4.0 * depth) * texture);
        return green;
    }
    let t = (v / horizon).clamp(0.0, 1.0);
    let zenith = [0.25, 0.45, 1.0].map(|c| c * 8.0);
    let haze = [0.85, 0.92, 1.0].map(|c| c * 22.0);
    let mut sky: Rgb = std::array::from_fn(|i| zenith[i] + (haze[i] - zenith[i]) * t * t);
    let d = distance(u, v, SUN.0, SUN.1, aspect);
    if d < SUN.2 {
        return [1500.0, 1450.0, 1300.0];
    }
    let glow = 250.0 * (-(d - SUN.2) / 0.02).exp() + 25.0 * (-(d - SUN.2) / 0.12).exp();
    for (c, w) in sky.iter_mut().zip([1.0, 0.95, 0.8]) {
        *c += glow * w;
    }
    sky
}

/// The albedo of the indoor surface at `(u, v)` and the light falling on it
/// in units of the ambient light: below 1 in shadows, above on the floor's
/// sunlit patch.
fn surface(u: f32, v: f32, aspect: f32, pixels: f32) -> (Rgb, f32) {
    let fine = pixels / 4.0;
    let grain = fractal_noise(u * fine * aspect, v * fine, 3);
    // The lamp: pole and shade.
    if (v > 0.39 && v < 0.86 && (u - BULB.0).abs() * aspect < 0.004)
        || (v > 0.27 && v < 0.35 && (u - BULB.0).abs() * aspect < 0.03 + 0.3 * (v - 0.27))
    {
        let shade = if v < 0.35 && v > 0.27 { 2.5 } else { 0.05 };
        return ([0.9, 0.75, 0.5].map(|c| c * shade), 1.0);
    }
    // Window frame: white paint, lit only from inside.
    if WINDOW.contains(u, v) {
        return ([0.8, 0.8, 0.78], 0.4);
    }
    // The sofa, its cushion, and the deep shadow beneath it.
    if (0.04..0.34).contains(&u) && (0.62..0.82).contains(&v) {
        if (0.20..0.30).contains(&u) && (0.58..0.70).contains(&v) {
            return ([0.1, 0.2, 0.7].map(|c| c * (0.9 + 0.2 * grain)), 0.9);
        }
        let fold = if (u - 0.19).abs() < 0.002 { 0.4 } else { 1.0 };
        return (
            [0.7, 0.1, 0.08].map(|c| c * (0.85 + 0.3 * grain) * fold),
            0.8,
        );
    }
    if (0.20..0.30).contains(&u) && (0.58..0.62).contains(&v) {
        return ([0.1, 0.2, 0.7].map(|c| c * (0.9 + 0.2 * grain)), 0.9);
    }
    if (0.04..0.34).contains(&u) && (0.82..0.86).contains(&v) {
        return ([0.4, 0.25, 0.12], 0.06);
    }
    // The painting: hue stripes in a dark frame.
    if (0.90..0.97).contains(&u) && (0.20..0.46).contains(&v) {
        if (0.905..0.965).contains(&u) && (0.21..0.45).contains(&v) {
            let stripe = ((v - 0.21) / 0.24 * 6.0).floor();
            return (hue(stripe / 6.0).map(|c| 0.1 + 0.8 * c), 1.0);
        }
        return ([0.08, 0.06, 0.05], 1.0);
    }
    if v >= FLOOR_V {
        let sun = sun_patch(u, v, aspect) / AMBIENT;
        return (floor(u, v, aspect, pixels), 1.0 + sun);
    }
    // Plaster wall, a little darker towards the corners.
    let vignette = 1.0 - 0.35 * ((u - 0.5) * 2.0).powi(2);
    (
        [0.85, 0.78, 0.65].map(|c| c * (0.9 + 0.2 * grain) * vignette),
        1.0,
    )
}

/// Wooden planks with seams, and the chequered rug.
fn floor(u: f32, v: f32, aspect: f32, pixels: f32) -> Rgb {
    if (0.38..0.78).contains(&u) && (0.86..0.97).contains(&v) {
        let check = ((u * 40.0).floor() + (v * 40.0 * aspect).floor()) as i32 % 2 == 0;
        return if check {
            [0.6, 0.5, 0.2]
        } else {
            [0.1, 0.3, 0.5]
        };
    }
    let plank = (u * aspect * 14.0).fract();
    let seam = if plank < 0.03 { 0.3 } else { 1.0 };
    let grain = fractal_noise(u * aspect * pixels / 2.0, v * pixels / 30.0, 11);
    [0.55, 0.32, 0.14].map(|c| c * seam * (0.8 + 0.4 * grain))
}

/// The lamp's light on the wall and floor around it.
fn lamp_light(u: f32, v: f32, aspect: f32) -> f32 {
    let d = distance(u, v, BULB.0, BULB.1, aspect);
    2.0 / (1.0 + (d / 0.08).powi(2))
}

/// Sunlight through the window onto the floor, the frame's bars casting
/// shadows: the window projected down and to the left.
fn sun_patch(u: f32, v: f32, aspect: f32) -> f32 {
    if v < FLOOR_V {
        return 0.0;
    }
    // Map the floor point back to the window plane along the sun's rays.
    let t = (v - FLOOR_V) / (1.0 - FLOOR_V);
    let wv = WINDOW.v0 + (WINDOW.v1 - WINDOW.v0) * t;
    let wu = u + 0.25 - 0.1 * t;
    if WINDOW.contains(wu, wv) && !on_window_bar(wu, wv, aspect) {
        40.0
    } else {
        0.0
    }
}

/// A fully saturated colour of hue `h` in `[0, 1)`.
fn hue(h: f32) -> Rgb {
    let h6 = h * 6.0;
    [h6, h6 - 2.0, h6 - 4.0].map(|x| {
        let d = (x.rem_euclid(6.0) - 1.0).abs();
        (2.0 - d).clamp(0.0, 1.0)
    })
}

/// Two octaves of value noise in `[0, 1]`.
fn fractal_noise(x: f32, y: f32, seed: u32) -> f32 {
    (2.0 * value_noise(x, y, seed) + value_noise(2.0 * x, 2.0 * y, seed + 1)) / 3.0
}

/// Smoothly interpolated lattice noise in `[0, 1]`.
fn value_noise(x: f32, y: f32, seed: u32) -> f32 {
    let (xf, yf) = (x.floor(), y.floor());
    let (ix, iy) = (xf as i32, yf as i32);
    let smooth = |t: f32| t * t * (3.0 - 2.0 * t);
    let (sx, sy) = (smooth(x - xf), smooth(y - yf));
    let lerp = |a: f32, b: f32, t: f32| a + (b - a) * t;
    let top = lerp(lattice(ix, iy, seed), lattice(ix + 1, iy, seed), sx);
    let bottom = lerp(lattice(ix, iy + 1, seed), lattice(ix + 1, iy + 1, seed), sx);
    lerp(top, bottom, sy)
}

/// A hash of a lattice point to `[0, 1]`.
fn lattice(x: i32, y: i32, seed: u32) -> f32 {
    let mut h = (x as u32).wrapping_mul(0x8da6_b343)
        ^ (y as u32).wrapping_mul(0xd816_3841)
        ^ seed.wrapping_mul(0xcb1a_b31f);
    h ^= h >> 15;
    h = h.wrapping_mul(0x2c1b_3c6d);
    h ^= h >> 12;
    h = h.wrapping_mul(0x297a_2d39);
    h ^= h >> 15;
    (h >> 8) as f32 / (1u32 << 24) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn luminance(p: &Rgba<f32>) -> f32 {
        0.2126 * p.r + 0.7152 * p.g + 0.0722 * p.b
    }

    fn range(img: &Image<Rgba<f32>>) -> (f32, f32) {
        let pixels = img.to_vec().unwrap();
        let lum: Vec<f32> = pixels.iter().map(luminance).collect();
        let min = lum.iter().copied().fold(f32::MAX, f32::min);
        let max = lum.iter().copied().fold(0.0, f32::max);
        (min, max)
    }

    #[test]
    fn default_scene_is_finite_positive_and_high_range() {
        let img = demo_scene(DEMO_WIDTH, DEMO_HEIGHT).unwrap();
        assert_eq!((img.width(), img.height()), (768, 512));
        let pixels = img.to_vec().unwrap();
        for p in &pixels {
            for c in [p.r, p.g, p.b] {
                assert!(c.is_finite() && c > 0.0, "{p:?}");
            }
            assert_eq!(p.a, 1.0);
        }
        let (min, max) = range(&img);
        assert!(
            max / min >= 1e5,
            "dynamic range {} ({min} to {max})",
            max / min
        );
        assert!(
            max / min <= 1e7,
            "dynamic range {} ({min} to {max})",
            max / min
        );
        // The sun is the brightest thing and sits in the window.
        let at = |u: f32, v: f32| {
            let (x, y) = ((u * 768.0) as usize, (v * 512.0) as usize);
            luminance(&pixels[y * 768 + x])
        };
        assert_eq!(at(SUN.0, SUN.1), max);
    }

    #[test]
    fn has_colour_texture_and_edges() {
        let img = demo_scene(DEMO_WIDTH, DEMO_HEIGHT).unwrap();
        let pixels = img.to_vec().unwrap();
        let saturated = pixels
            .iter()
            .filter(|p| {
                let hi = p.r.max(p.g).max(p.b);
                let lo = p.r.min(p.g).min(p.b);
                hi > 2.0 * lo
            })
            .count();
        assert!(saturated > pixels.len() / 10, "{saturated} coloured pixels");
        // Sharp edges: neighbours differing by more than 10x in luminance.
        let mut edges = 0;
        let mut textured = 0;
        for y in 0..512 {
            for x in 1..768 {
                let (a, b) = (
                    luminance(&pixels[y * 768 + x - 1]),
                    luminance(&pixels[y * 768 + x]),
                );
                let ratio = a.max(b) / a.min(b);
                edges += usize::from(ratio > 10.0);
                textured += usize::from(ratio > 1.01 && ratio < 1.5);
            }
        }
        assert!(edges > 500, "{edges} sharp edges");
        assert!(
            textured > pixels.len() / 4,
            "{textured} textured neighbours"
        );
    }

    #[test]
    fn deterministic_and_any_size() {
        let a = demo_scene(96, 64).unwrap().to_vec().unwrap();
        let b = demo_scene(96, 64).unwrap().to_vec().unwrap();
        assert_eq!(a, b);
        for (w, h) in [(1, 1), (2, 3), (64, 64), (300, 100), (100, 300)] {
            let img = demo_scene(w, h).unwrap();
            assert_eq!((img.width(), img.height()), (w, h));
            let (min, max) = range(&img);
            assert!(min > 0.0 && max.is_finite(), "{w}x{h}");
            if w >= 64 && h >= 64 {
                assert!(max / min >= 1e5, "{w}x{h}: range {}", max / min);
            }
        }
        assert!(demo_scene(0, 10).is_err());
    }
}
