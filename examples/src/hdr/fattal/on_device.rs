//! The reductions of the operator when it runs on a GPU backend: the fine
//! counts of the percentiles as two 64-bin windows of the device histogram,
//! so no image is read back. Min, max, means and the coarse histogram run on
//! the device through [`reduce`] itself (the images live there).

use super::{BINS, FINE};
use hipacc::prelude::*;
use hipacc::{reduce, BackendKind, Result};

/// True when the operator's reductions run on the device of `dev`.
pub(super) fn reduces_on_device(dev: &Device) -> bool {
    dev.kind() != BackendKind::Cpu
}

/// The counts of the 64 fine bins of each of coarse bins `bins` of the
/// [`BINS`]-bin histogram over `[lo, top)`, counted on the device: windows
/// of that histogram, so the counts equal the host's exactly.
pub(super) fn fine_counts(
    dev: &Device,
    u: &Image<f32>,
    lo: f64,
    top: f64,
    bins: [usize; 2],
) -> Result<[[u64; FINE]; 2]> {
    let mut counts = [[0u64; FINE]; 2];
    for (out, bin) in counts.iter_mut().zip(bins) {
        let window = bin * FINE..(bin + 1) * FINE;
        let got = reduce::histogram_window(dev, u, None, BINS, lo, top, window)?;
        out.copy_from_slice(&got);
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::super::percentiles;
    use hipacc::prelude::*;
    use hipacc::{reduce, Device};

    #[derive(Kernel)]
    #[kernel(output = f32)]
    struct Copy {
        input: Accessor<f32>,
    }

    #[kernel_body]
    impl Copy {
        fn kernel(&self) -> f32 {
            self.input()
        }
    }

    #[test]
    fn percentiles_and_extremes_on_gpu_devices_equal_the_host_bit_for_bit() {
        for (name, dev) in [("opencl", Device::opencl()), ("cuda", Device::cuda())] {
            match dev {
                Ok(dev) => percentiles_and_extremes_equal_the_host(&dev),
                Err(e) => println!("[SKIP] {name}: {e}"),
            }
        }
    }

    fn percentiles_and_extremes_equal_the_host(dev: &Device) {
        // A wide, uneven spread of log luminances, on a prime-sized image.
        let (w, h) = (211, 97);
        let mut s = 0x9e37_79b9_u32;
        let data: Vec<f32> = (0..w * h)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 17;
                s ^= s << 5;
                let u = (s >> 8) as f32 / (1u32 << 24) as f32;
                -4.0 + 9.0 * u * u * u
            })
            .collect();
        let host = Image::from_vec(w, h, data.clone()).unwrap();
        let u = Image::<f32>::new(w, h).unwrap();
        Copy {
            input: Accessor::new(&host),
        }
        .execute(dev, &IterationSpace::full(&u))
        .unwrap();
        let cpu = Device::cpu();
        for (black, white) in [(1.0, 5.0), (0.5, 0.5), (10.0, 20.0)] {
            let want = percentiles(&cpu, &host, black, white).unwrap();
            let got = percentiles(dev, &u, black, white).unwrap();
            assert_eq!(got.0.to_bits(), want.0.to_bits(), "{black}/{white}");
            assert_eq!(got.1.to_bits(), want.1.to_bits(), "{black}/{white}");
        }
        assert_eq!(
            reduce::min(dev, &u, None).unwrap(),
            reduce::min(&cpu, &host, None).unwrap()
        );
        assert!(
            !u.storage_read().host_valid,
            "the reductions read the image back"
        );
    }
}
