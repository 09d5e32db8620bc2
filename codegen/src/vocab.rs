//! The words every part of code generation shares: the language printed,
//! the block shape and pixels per thread of a launch, and the operator
//! class the defaults are chosen by.
//!
//! They are plain data with no behaviour that needs the architecture model,
//! the configuration or the printer, so those modules all depend on this
//! one and none of them on each other because of it. Each is re-exported
//! where users look for it (`emit::Language`, `config::BlockShape`,
//! `arch::OperatorClass`) and at the crate root.

/// The C dialect generated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Language {
    /// OpenCL C 1.2.
    OpenCl,
    /// CUDA C++ for NVRTC.
    Cuda,
    /// WGSL compute shaders (wgpu: Vulkan, Metal, DirectX 12).
    Wgsl,
}

impl Language {
    /// The C languages (WGSL is printed by its own printer, not a C
    /// dialect).
    pub const ALL: [Language; 2] = [Language::OpenCl, Language::Cuda];
    /// `opencl` or `cuda`.
    pub fn name(self) -> &'static str {
        match self {
            Language::OpenCl => "opencl",
            Language::Cuda => "cuda",
            Language::Wgsl => "wgsl",
        }
    }
    /// The source file extension, `cl` or `cu`.
    pub fn extension(self) -> &'static str {
        match self {
            Language::OpenCl => "cl",
            Language::Cuda => "cu",
            Language::Wgsl => "wgsl",
        }
    }
}

/// Output rows computed by one thread (thread coarsening along y).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PixelsPerThread {
    /// One row.
    One,
    /// Four rows, a block height apart.
    Four,
    /// Eight rows, a block height apart.
    Eight,
}

/// Threads per block along x and y.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockShape {
    /// Threads along x (consecutive pixels of a row).
    pub x: u32,
    /// Threads along y.
    pub y: u32,
}

impl PixelsPerThread {
    /// Every value.
    pub const ALL: [PixelsPerThread; 3] = [
        PixelsPerThread::One,
        PixelsPerThread::Four,
        PixelsPerThread::Eight,
    ];
    /// The number of rows.
    pub const fn get(self) -> u32 {
        match self {
            PixelsPerThread::One => 1,
            PixelsPerThread::Four => 4,
            PixelsPerThread::Eight => 8,
        }
    }
    /// The value for a row count of 1, 4 or 8.
    pub fn from_count(n: u32) -> Option<PixelsPerThread> {
        PixelsPerThread::ALL.into_iter().find(|p| p.get() == n)
    }
}

impl BlockShape {
    /// The block shapes the explore mode tries (filtered by target limits).
    pub const CANDIDATES: &'static [BlockShape] = &[
        BlockShape { x: 32, y: 1 },
        BlockShape { x: 64, y: 1 },
        BlockShape { x: 128, y: 1 },
        BlockShape { x: 256, y: 1 },
        BlockShape { x: 16, y: 8 },
        BlockShape { x: 16, y: 16 },
        BlockShape { x: 32, y: 2 },
        BlockShape { x: 32, y: 4 },
        BlockShape { x: 32, y: 8 },
        BlockShape { x: 32, y: 16 },
        BlockShape { x: 64, y: 2 },
        BlockShape { x: 64, y: 4 },
        BlockShape { x: 128, y: 4 },
    ];
    /// Threads in the block.
    pub const fn threads(self) -> u32 {
        self.x * self.y
    }
}

/// What a kernel does per output pixel, for choosing defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OperatorClass {
    /// Reads only the pixel itself (`at(0, 0)`) of every accessor.
    Point,
    /// Reads a neighbourhood (a stencil, a mask, a domain).
    Local,
    /// Combines a whole image (global reductions).
    Global,
}
